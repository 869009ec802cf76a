"""Pass and target options read as `mlir-opt` reads them.

- A bare boolean option means true: `apply-layout{rewrite-loops}` is
  `apply-layout{rewrite-loops=true}` (xDSL alone refuses it: "given (), expected bool").
- A misspelt pass or option name is refused naming the closest known name
  (`unknown option rewrite-loop (did you mean rewrite-loops?); the options are ...`).

Every physlayout pass derives from `PhyslayoutPass` (and the `opencl` target from
`PhyslayoutTarget`), so both rules hold for them in stock `xdsl-opt` too; `physlayout-opt`,
`physlayout run --pipeline` and `physlayout viz --pipeline` build their pipelines with
`pipeline_passes`, so there they hold for every pass, xDSL's own included.

A `PhyslayoutPass` can also say that it changed nothing (`apply_and_report`), as an MLIR
pass does by preserving all analyses: the declared pipelines then skip the verification
after it, since the module is the one they verified after the pass before.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Self, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, ArgSpecConvertible, parse_pipeline
from xdsl.utils.target import Target

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp


def did_you_mean(name: str, known: Iterable[str], quote: str = "") -> str:
    """` (did you mean X?)` naming the known name closest to `name` (between `quote`s), or
    '' when none is close (difflib's similarity ratio below 0.6)."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {quote}{close[0]}{quote}?)" if close else ""


def option_names(kind: type[ArgSpecConvertible]) -> list[str]:
    """The options of a pass or target class, spelled as on the command line."""
    return [
        field.name.replace("_", "-")
        for field in dataclasses.fields(kind)
        if field.init and field.name != "name"
    ]


def checked_spec(kind: type[ArgSpecConvertible], spec: ArgSpec) -> ArgSpec:
    """`spec` with every bare boolean option (`{flag}`) given as true. Raises ValueError for
    an option `kind` does not have, naming the closest one and all of them."""
    known = option_names(kind)
    hints = get_type_hints(kind)
    parameters: dict[str, Any] = {}
    for key, value in spec.parameters.items():
        option = key.replace("_", "-")
        if option not in known:
            raise ValueError(
                f"unknown option {option}{did_you_mean(option, known)}; "
                f"the options are {', '.join(known) or 'none'}"
            )
        flag = hints.get(option.replace("-", "_")) in (bool, bool | None)
        parameters[key] = (True,) if flag and value == () else value
    return ArgSpec(spec.name, parameters)


def pipeline_passes(
    available: Mapping[str, Callable[[], type[ModulePass]]],
    text: str,
    defaults: Mapping[str, tuple[Any, ...]] | None = None,
) -> tuple[ModulePass, ...]:
    """The passes of the xDSL pipeline `text` (`pass{opt=v},pass`), each option checked and
    bare flags read as true (`checked_spec`); `defaults` (option field name -> value) go to
    every pass that has such an option and is not given it. Raises ValueError for an
    unknown pass (naming the closest one) or option, and xDSL's errors for bad values;
    ArgSpecParseError when `text` does not parse."""
    passes: list[ModulePass] = []
    for spec in parse_pipeline(text):
        factory = available.get(spec.name)
        if factory is None:
            hint = did_you_mean(spec.name, available, quote="'")
            raise ValueError(f"unknown pass '{spec.name}'{hint}")
        kind = factory()
        spec = checked_spec(kind, spec)
        given = spec.normalize_parameter_names().parameters
        fields = {field.name for field in dataclasses.fields(kind)}
        extra = {k: v for k, v in (defaults or {}).items() if k in fields and k not in given}
        passes.append(kind.from_pass_spec(ArgSpec(spec.name, {**given, **extra})))
    return tuple(passes)


class PhyslayoutPass(ModulePass):
    """A physlayout pass: its options read bare flags as true and suggest the closest name
    for a misspelt one (`checked_spec`), in stock `xdsl-opt` as in `physlayout-opt`."""

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        return super().from_spec(checked_spec(cls, spec))

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        """Run the pass (`apply`); False only when it changed nothing, neither an op nor a
        value nor an attribute. A pass that can tell (its rewrites all go through xDSL's
        `PatternRewriteWalker`, whose `rewrite_module` answers whether the IR was mutated)
        overrides this; this default cannot tell and answers True."""
        self.apply(ctx, op)
        return True


def apply_and_report(pass_: ModulePass, ctx: Context, op: ModuleOp) -> bool:
    """Run any pass; whether it changed `op` as far as it can tell (a `PhyslayoutPass`'s
    `apply_and_report`; any other pass cannot tell: True)."""
    if isinstance(pass_, PhyslayoutPass):
        return pass_.apply_and_report(ctx, op)
    pass_.apply(ctx, op)
    return True


class PhyslayoutTarget(Target):
    """A physlayout `-t` target whose options are read as `PhyslayoutPass`'s are."""

    @classmethod
    def from_spec(cls, spec: ArgSpec) -> Self:
        return super().from_spec(checked_spec(cls, spec))
