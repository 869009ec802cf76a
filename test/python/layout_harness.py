"""Test harness: run buffer-level IR before and after physlayout passes on the same logical
data and compare.

Buffers are handed to a function in the layout its *current* type says: before
`apply-layout` in the logical layout, afterwards in the transformed layout (computed from
the pending layout recorded before the pass with `PendingLayout.map_ndarray`). After the run,
transformed buffers are mapped back to the logical layout and compared element-wise; the
padding of transformed buffers is returned separately so tests can check it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import BufferType
from physlayout.runtime.evaluator import run_function
from physlayout.universe import make_context


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


@dataclass
class Outcome:
    """Logical buffer contents after a run, the scalar results, and transformed buffers'
    raw (physical) arrays."""

    buffers: list[np.ndarray]
    results: list[Any]
    physical: list[np.ndarray]


def _dtype(element_type: Any) -> Any:
    return {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32}.get(
        str(element_type), np.float32
    )


def random_inputs(function: func.FuncOp, seed: int = 0) -> list[Any]:
    """Seeded random arguments: logical arrays for buffers, small values for scalars."""
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for arg_type in function.function_type.inputs.data:
        if isinstance(arg_type, BufferType):
            values = rng.standard_normal(arg_type.get_shape()).astype(_dtype(arg_type.element_type))
            args.append(values)
        elif isinstance(arg_type, IndexType):
            args.append(1)
        else:
            args.append(np.float32(rng.standard_normal()))
    return args


def run_logical(
    module: ModuleOp,
    name: str,
    logical_args: Sequence[Any],
    layouts: Sequence[PendingLayout | None],
) -> Outcome:
    """Run `name` with `logical_args` laid out as `layouts` say (None: as is)."""
    args: list[Any] = []
    for value, layout in zip(logical_args, layouts, strict=True):
        if layout is None or not isinstance(value, np.ndarray):
            args.append(value.copy() if isinstance(value, np.ndarray) else value)
            continue
        args.append(np.ascontiguousarray(layout.map_ndarray(value)))
    results = run_function(module, name, args)
    buffers: list[np.ndarray] = []
    physical: list[np.ndarray] = []
    for value, layout in zip(args, layouts, strict=True):
        if not isinstance(value, np.ndarray):
            continue
        physical.append(value)
        if layout is None:
            buffers.append(value)
        else:
            buffers.append(layout.unmap_ndarray(value))
    return Outcome(buffers, list(results), physical)


def pending_layouts(function: func.FuncOp) -> list[PendingLayout | None]:
    return [
        PendingLayout.of(t) if isinstance(t, BufferType) else None
        for t in function.function_type.inputs.data
    ]


def compare_before_after(
    text: str, passes: Sequence[ModulePass], seed: int = 0
) -> dict[str, tuple[Outcome, Outcome]]:
    """Run every function of `text` with a body before and after `passes`."""
    before = parse(text)
    after = parse(text)
    ctx = make_context()
    for one_pass in passes:
        one_pass.apply(ctx, after)
        after.verify()
    outcomes: dict[str, tuple[Outcome, Outcome]] = {}
    for function in before.walk():
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        if not list(function.body.blocks[0].ops)[:-1]:
            continue
        name = function.sym_name.data
        inputs = random_inputs(function, seed)
        layouts = pending_layouts(function)
        first = run_logical(before, name, inputs, [None] * len(layouts))
        second = run_logical(after, name, inputs, layouts)
        outcomes[name] = (first, second)
    return outcomes
