"""Every public API item of physlayout has a docstring.

Checked: every module of the package (test/ and bench/ are not part of it); in each, every
module-level function and class whose name does not start with `_` and that the module
defines (not re-exports); in each such class, every method, class method, static method and
property that the class itself introduces with a public, non-dunder name. A method that
overrides one of a base class (xDSL's `match_and_rewrite`, `apply`, `verify_`, ...) keeps the
base's contract and may go without one (`inspect.getdoc` shows the base's). `_` names,
dunders and inherited members are not checked.

`PENDING_MERGE_UNCHECKED_MODULES` is temporary: modules other sessions were restructuring when
this test was written. The lead empties it at merge (`missing_docstrings()` on one of them
lists what is left to write). Functions registered with xDSL's interpreter decorators
(`@impl`, `@impl_callable`, ...) are documented by the op they implement.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterator
from types import FunctionType, ModuleType

import pytest

import physlayout

PENDING_MERGE_UNCHECKED_MODULES: frozenset[str] = frozenset()
"""TEMPORARY (empty it at merge): modules whose docstrings other sessions' restructuring owns."""

SKIPPED_PACKAGES = ("physlayout.test", "physlayout.bench")


def package_modules() -> list[str]:
    """Names of every module of the physlayout package, subpackages included."""
    names = ["physlayout"]
    for info in pkgutil.walk_packages(physlayout.__path__, "physlayout."):
        if not info.name.startswith(SKIPPED_PACKAGES):
            names.append(info.name)
    return sorted(names)


def _member_function(member: object) -> object | None:
    """The function behind a class member (method, static/class method, property getter),
    None for data and nested classes."""
    if isinstance(member, staticmethod | classmethod):
        return member.__func__
    if isinstance(member, property):
        return member.fget
    if isinstance(member, FunctionType):
        return member
    return None


def _implements_op(function: object) -> bool:
    """Whether `function` is an xDSL interpreter implementation (`@impl`, `@impl_callable`,
    ...): its contract is the meaning of the op it implements, stated by the op's definition
    and the semantics module's docstring, as in xDSL's own `xdsl/interpreters`."""
    keys = (
        "__impl_op_type",
        "__callable_op_type",
        "__cast_impl_types",
        "__attr_impl_types",
        "__external_func_name",
    )
    return any(hasattr(function, key) for key in keys)


def _overrides(cls: type, name: str) -> bool:
    return any(name in vars(base) for base in cls.__mro__[1:])


def _public_items(module: ModuleType) -> Iterator[tuple[str, object]]:
    """(qualified name, object) of every item the module must document."""
    yield module.__name__, module
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value):
            yield f"{module.__name__}.{name}", value
        if not inspect.isclass(value):
            continue
        yield f"{module.__name__}.{name}", value
        for member_name, member in vars(value).items():
            function = _member_function(member)
            if function is None or member_name.startswith("_") or _overrides(value, member_name):
                continue
            if _implements_op(function):
                continue
            yield f"{module.__name__}.{name}.{member_name}", function


def _documented(item: object) -> bool:
    """Whether `item` has a docstring of its own: not empty, and for a dataclass not the
    `Name(field: type, ...)` signature `@dataclass` puts in when the class has none."""
    doc = (getattr(item, "__doc__", None) or "").strip()
    if isinstance(item, type) and dataclasses.is_dataclass(item):
        return bool(doc) and not doc.startswith(f"{item.__name__}(")
    return bool(doc)


def missing_docstrings(module_name: str) -> list[str]:
    """Qualified names of the public items of `module_name` without a docstring."""
    module = importlib.import_module(module_name)
    return [name for name, item in _public_items(module) if not _documented(item)]


def test_the_walk_finds_the_package() -> None:
    """The walk sees every subpackage (a package missing from it would go unchecked)."""
    modules = package_modules()
    for package in ("dialects", "indexing", "lowering", "runtime", "semantics", "transforms", "viz"):
        assert f"physlayout.{package}" in modules
    assert len(modules) > 60
    assert set(modules) >= PENDING_MERGE_UNCHECKED_MODULES, "stale allowlist entry"


@pytest.mark.parametrize(
    "module_name",
    [name for name in package_modules() if name not in PENDING_MERGE_UNCHECKED_MODULES],
)
def test_public_items_have_docstrings(module_name: str) -> None:
    assert missing_docstrings(module_name) == []


def test_the_checker_sees_a_missing_docstring(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself: an undocumented public function, class and method are reported;
    private, dunder and overriding members are not."""
    module = ModuleType("physlayout_docstring_probe")
    source = (
        '"""A probe."""\n'
        "def f(): pass\n"
        "def _g(): pass\n"
        "class Base:\n"
        '    """Documented."""\n'
        "    def run(self):\n"
        '        """Runs."""\n'
        "class C(Base):\n"
        "    def method(self): pass\n"
        "    def run(self): pass\n"
        "    def __len__(self): return 0\n"
        "    @property\n"
        "    def size(self): return 0\n"
        "import dataclasses\n"
        "@dataclasses.dataclass\n"
        "class D:\n"
        "    x: int\n"
        "@dataclasses.dataclass\n"
        "class E:\n"
        '    """Documented."""\n'
        "    x: int\n"
    )
    monkeypatch.setitem(sys.modules, module.__name__, module)  # for @dataclass
    exec(compile(source, "probe", "exec"), vars(module))
    found = {name for name, item in _public_items(module) if not _documented(item)}
    assert found == {
        "physlayout_docstring_probe.f",
        "physlayout_docstring_probe.D",
        "physlayout_docstring_probe.C",
        "physlayout_docstring_probe.C.method",
        "physlayout_docstring_probe.C.size",
    }
