"""Bad input never crashes: every physlayout pass (and the OpenCL target) run on every lit
input and example, valid or not, either succeeds or raises one of xDSL's diagnostic
exceptions (DESIGN.md "Errors"). Any other exception type is a bug."""

from __future__ import annotations

import io
from collections.abc import Callable
from importlib import import_module
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from physlayout.indexing.index_map import IndexMap
from physlayout.universe import PASSES, TARGETS, make_context

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    [*ROOT.glob("test/**/*.mlir"), *ROOT.glob("examples/*.mlir")], key=lambda p: str(p)
)


def chunks() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for path in SOURCES:
        for index, chunk in enumerate(path.read_text().split("// -----")):
            found.append((f"{path.relative_to(ROOT)}#{index}", chunk))
    return found


CHUNKS = chunks()


def check_only_diagnostics(label: str, action: Callable[[Context, ModuleOp], object]) -> None:
    """Run `action` on every parsed and verified chunk; fail on a non-diagnostic exception."""
    for where, text in CHUNKS:
        ctx = make_context(allow_unregistered=True)
        try:
            module = Parser(ctx, text).parse_module()
            module.verify()
            action(ctx, module)
        except (ParseError, DiagnosticException):
            continue
        except Exception as err:
            pytest.fail(f"{label} on {where}: {type(err).__name__}: {err}")


@pytest.mark.parametrize("name", sorted(PASSES))
def test_passes_raise_only_diagnostics(name: str) -> None:
    module_name, class_name = PASSES[name]
    pass_class = getattr(import_module(f"physlayout.{module_name}"), class_name)
    check_only_diagnostics(name, lambda ctx, module: pass_class().apply(ctx, module))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_targets_raise_only_diagnostics(name: str) -> None:
    module_name, class_name = TARGETS[name]
    target_class = getattr(import_module(f"physlayout.{module_name}"), class_name)
    check_only_diagnostics(
        f"target {name}", lambda ctx, module: target_class().emit(ctx, module, io.StringIO())
    )


TOKENS = [
    "(",
    ")",
    ",",
    " ",
    "->",
    "|",
    "+",
    "-",
    "*",
    "floordiv",
    "mod",
    "ceildiv",
    "i",
    "j",
    "k",
    "0",
    "1",
    "4",
    "-3",
    "(i, j) -> (",
    "(i) -> (",
]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(TOKENS), max_size=14))
def test_index_map_text_raises_only_value_errors(tokens: list[str]) -> None:
    text = " ".join(tokens)
    try:
        IndexMap.parse_with_separators(text)
    except ValueError:
        return


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(TOKENS), max_size=14), st.sampled_from([[4], [3, 5], [2, 2, 2]]))
def test_index_map_queries_raise_only_value_errors(tokens: list[str], shape: list[int]) -> None:
    try:
        index_map = IndexMap.parse(" ".join(tokens))
        index_map.map_shape(shape)
        index_map.find_collision(shape)
        index_map.padding_predicate(shape)
        index_map.non_surjective_inverse(shape)
    except ValueError:
        return
