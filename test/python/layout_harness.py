"""Test harness: run buffer-level IR before and after physlayout passes on the same logical
data and compare.

Buffers are handed to a function in the layout its *current* type says: before
`apply-layout` in the logical layout, afterwards in the transformed layout (computed from
the pending layout recorded before the pass with `PendingLayout.map_ndarray`). Every padding
position of a transformed buffer starts from GARBAGE (NaN, or a sentinel for integers), so
a pass that never writes the padding, or reads it, is seen. After the run, transformed
buffers are mapped back to the logical layout and compared element-wise, and
`compare_before_after` checks each WHOLE physical array against the one the logical result
implies: logical values at `map(idx)`; in the padding the pad value where the function
writes the buffer (docs/semantics.md: `apply-layout` fills it), else the untouched garbage.
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
from physlayout.dialects.layout import BufferType, StoreOp
from physlayout.semantics.evaluator import run_function
from physlayout.universe import make_context


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


@dataclass
class Outcome:
    """Logical buffer contents after a run, the scalar results, and the buffers' raw
    (physical) arrays."""

    buffers: list[np.ndarray]
    results: list[Any]
    physical: list[np.ndarray]
    params: list[int]
    """The parameter index of each buffer."""


def garbage(dtype: Any, pad_value: Any = None) -> Any:
    """A value that no correct program leaves in padding: NaN for floats, a sentinel for
    integers (another one when it happens to be the pad value)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return 1234.5 if pad_value is not None and np.isnan(pad_value) else np.nan
    if dtype.kind == "b":
        return not pad_value
    sentinel = -97 if dtype.itemsize == 1 else -12347
    return sentinel + 1 if pad_value == sentinel else sentinel


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
        fill = garbage(value.dtype, layout.pad_value)
        args.append(np.ascontiguousarray(layout.map_ndarray(value, pad_value=fill)))
    results = run_function(module, name, args)
    buffers: list[np.ndarray] = []
    physical: list[np.ndarray] = []
    params: list[int] = []
    for index, (value, layout) in enumerate(zip(args, layouts, strict=True)):
        if not isinstance(value, np.ndarray):
            continue
        params.append(index)
        physical.append(value)
        if layout is None:
            buffers.append(value)
        else:
            buffers.append(layout.unmap_ndarray(value))
    return Outcome(buffers, list(results), physical, params)


def pending_layouts(function: func.FuncOp) -> list[PendingLayout | None]:
    return [
        PendingLayout.of(t) if isinstance(t, BufferType) else None
        for t in function.function_type.inputs.data
    ]


def written_params(module: ModuleOp, name: str) -> set[int]:
    """The parameters of function `name` that it writes with a `layout.store`, itself or in
    a function it passes them to (transitively)."""
    functions = {
        f.sym_name.data: f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks
    }
    memo: dict[str, set[int]] = {}

    def written(callee: str) -> set[int]:
        if callee in memo:
            return memo[callee]
        memo[callee] = set()
        function = functions.get(callee)
        if function is None:
            return set()
        params = list(function.body.blocks[0].args)
        found: set[int] = set()
        for op in function.walk():
            if isinstance(op, StoreOp) and op.buffer in params:
                found.add(params.index(op.buffer))
            if isinstance(op, func.CallOp):
                inner = written(op.callee.root_reference.data)
                found |= {params.index(op.arguments[k]) for k in inner if op.arguments[k] in params}
        memo[callee] = found
        return found

    return written(name)


def expected_physical(
    before: Outcome, layouts: Sequence[PendingLayout | None], written: set[int]
) -> dict[int, np.ndarray]:
    """Per parameter with a pending layout, the physical array the transformed program must
    leave: the logical result of the source program (`before`) mapped, with the pad value in
    the padding of written parameters and the initial garbage in the others."""
    expected: dict[int, np.ndarray] = {}
    for index, value in zip(before.params, before.buffers, strict=True):
        layout = layouts[index]
        if layout is None:
            continue
        fill = layout.pad_value if index in written else garbage(value.dtype, layout.pad_value)
        expected[index] = layout.map_ndarray(value, pad_value=fill)
    return expected


def assert_physical_as_expected(
    name: str,
    before: Outcome,
    after: Outcome,
    layouts: Sequence[PendingLayout | None],
    written: set[int],
) -> None:
    """The whole physical array of every transformed parameter after the transformed run
    equals `expected_physical` (padding included; NaN garbage equals NaN)."""
    physical = dict(zip(after.params, after.physical, strict=True))
    for index, want in expected_physical(before, layouts, written).items():
        np.testing.assert_array_equal(
            physical[index], want, err_msg=f"@{name}: physical array of parameter #{index}"
        )


def compare_before_after(
    text: str, passes: Sequence[ModulePass], seed: int = 0
) -> dict[str, tuple[Outcome, Outcome]]:
    """Run every function of `text` with a body before and after `passes`; assert that
    every transformed buffer's whole physical array is the one expected (see the module
    docstring) and return both outcomes for further checks."""
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
        written = written_params(before, name)
        assert_physical_as_expected(name, first, second, layouts, written)
        outcomes[name] = (first, second)
    return outcomes
