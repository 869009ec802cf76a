"""Inputs and value comparison for the differential checker: the arguments a generated
function runs on, running it with each argument in its logical or physical layout, and
comparing what two runs computed.

Buffer-level (`fuzz.checker.Checker`): `random_inputs` gives seeded logical arguments and
their layouts (a buffer's pending layout, a memref's affine map as `MemrefLayout`);
`run_with_layouts` runs a function in the numpy evaluator with the flagged arguments in
their transformed layout, padding holding GARBAGE, and maps them back; `compare` checks
every buffer argument and result (exactly, or within `rtol` of max|reference| for the
OpenCL device) and that the padding of every written transformed argument holds its pad
value. Graph-level: `graph_inputs`, and `compare_results` (exact). Models
(`fuzz.model_checker`): `model_inputs` (by argument name, as the shared models' `inputs.py`
makes them) and `relative_error`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp, TensorType

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import BufferType
from physlayout.indexing.index_map import IndexMap
from physlayout.semantics.evaluator import run_function

GARBAGE = 12345.0
"""What the padding of every argument holds before a run."""


@dataclass
class Inputs:
    """Logical arguments of one function (seeded)."""

    values: list[Any]
    layouts: list[PendingLayout | MemrefLayout | None]


@dataclass(frozen=True)
class MemrefLayout:
    """A memref's affine layout map. Normalization gives the memref the map's extents as
    upstream computes them (not always the engine's structural shape), so the physical
    shape is read from the normalized type; nothing fills the padding of a normalized
    memref, so it is not checked."""

    logical_shape: tuple[int, ...]
    index_map: IndexMap
    padding: None = None
    pad_value: None = None

    def positions(self) -> tuple[np.ndarray, ...]:
        grids = np.indices(self.logical_shape, dtype=np.int64) if self.logical_shape else []
        mapped = self.index_map.map_indices([np.asarray(g) for g in grids])
        return tuple(np.broadcast_to(np.asarray(m), self.logical_shape) for m in mapped)

    def to_physical(self, x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        out = np.full(tuple(shape), GARBAGE, dtype=x.dtype)
        out[self.positions()] = x
        return out

    def to_logical(self, y: np.ndarray) -> np.ndarray:
        return np.array(y[self.positions()])


def memref_layout(memref_type: MemRefType) -> MemrefLayout | None:
    """None for memrefs without an affine map, and maps the engine cannot read."""
    layout = memref_type.layout
    if not isinstance(layout, AffineMapAttr):
        return None
    try:
        return MemrefLayout(tuple(memref_type.get_shape()), IndexMap.parse(str(layout.data)))
    except ValueError:
        return None


def random_inputs(function: func.FuncOp, seed: int) -> Inputs:
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    layouts: list[PendingLayout | MemrefLayout | None] = []
    for arg_type in function.function_type.inputs.data:
        if isinstance(arg_type, MemRefType):
            values.append(rng.standard_normal(arg_type.get_shape()).astype(np.float32))
            layouts.append(memref_layout(arg_type))
        elif isinstance(arg_type, BufferType):
            values.append(rng.standard_normal(arg_type.get_shape()).astype(np.float32))
            try:
                layouts.append(PendingLayout.of(arg_type))
            except ValueError:
                # The engine rejects the layout: every pass must refuse it too.
                layouts.append(None)
        else:
            values.append(np.float32(rng.standard_normal()))
            layouts.append(None)
    return Inputs(values, layouts)


@dataclass
class Outcome:
    buffers: list[np.ndarray]
    physical: list[np.ndarray]
    results: list[Any]


def is_pending(type_: Any) -> bool:
    """Whether an argument of this type still takes its LOGICAL layout."""
    if isinstance(type_, MemRefType):
        return isinstance(type_.layout, AffineMapAttr)
    return isinstance(type_, BufferType) and bool(type_.get_transforms())


def run_with_layouts(
    module: ModuleOp, name: str, inputs: Inputs, physical: Sequence[bool]
) -> Outcome:
    """Run `name`; arguments flagged in `physical` are passed in their transformed layout
    (padding holds GARBAGE) and mapped back afterwards."""
    function = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    types = function.function_type.inputs.data
    args: list[Any] = []
    for value, layout, phys, type_ in zip(
        inputs.values, inputs.layouts, physical, types, strict=True
    ):
        if not isinstance(value, np.ndarray):
            args.append(value)
        elif layout is None or not phys:
            args.append(value.copy())
        elif isinstance(layout, MemrefLayout):
            shape = type_.get_shape() if isinstance(type_, MemRefType) else ()
            args.append(layout.to_physical(value, shape))
        else:
            mapped = layout.map_ndarray(value, pad_value=GARBAGE)
            args.append(np.ascontiguousarray(mapped, dtype=np.float32))
    results = run_function(module, name, args)
    buffers: list[np.ndarray] = []
    raw: list[np.ndarray] = []
    for arg, layout, phys in zip(args, inputs.layouts, physical, strict=True):
        if not isinstance(arg, np.ndarray):
            continue
        raw.append(arg)
        if layout is None or not phys:
            buffers.append(arg)
        elif isinstance(layout, MemrefLayout):
            buffers.append(layout.to_logical(arg))
        else:
            buffers.append(layout.unmap_ndarray(arg))
    return Outcome(buffers, raw, list(results))


def padding_mask(layout: PendingLayout) -> np.ndarray:
    ones = np.ones(layout.logical_shape, dtype=np.float32)
    return layout.map_ndarray(ones, pad_value=0.0) == 0.0


def compare(
    reference: Outcome,
    got: Outcome,
    inputs: Inputs,
    written: set[int],
    physical: Sequence[bool],
    rtol: float = 0.0,
) -> str | None:
    """None when `got` matches `reference`, else what differs."""
    buffer_params = [k for k, v in enumerate(inputs.values) if isinstance(v, np.ndarray)]
    for position, (want, have) in enumerate(zip(reference.buffers, got.buffers, strict=True)):
        param = buffer_params[position]
        if want.shape != have.shape:
            return f"argument {param}: shape {have.shape} instead of {want.shape}"
        if not all_close(want, have, rtol):
            diff = np.argwhere(~close_mask(want, have, rtol))
            index = tuple(int(i) for i in diff[0])
            return (
                f"argument {param}: {len(diff)} element(s) differ, e.g. at {list(index)}: "
                f"{have[index]!r} instead of {want[index]!r}"
            )
        layout = inputs.layouts[param]
        if layout is None or layout.padding is None or not physical[param]:
            continue
        if param in written:
            mask = padding_mask(layout)
            raw = got.physical[position]
            pad = np.float32(layout.pad_value if layout.pad_value is not None else 0)
            if mask.shape == raw.shape and not np.all(raw[mask] == pad):
                count = int(np.sum(raw[mask] != pad))
                return f"argument {param}: {count} padding element(s) do not hold {pad}"
    for k, (want, have) in enumerate(zip(reference.results, got.results, strict=True)):
        if not all_close(np.asarray(want), np.asarray(have), rtol):
            return f"result {k}: {have!r} instead of {want!r}"
    return None


def close_mask(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    if rtol == 0:
        return (a == b) | (np.isnan(a) & np.isnan(b))
    scale = max(1.0, float(np.nanmax(np.abs(a)))) if a.size else 1.0
    return (np.abs(a - b) <= rtol * scale) | (np.isnan(a) & np.isnan(b))


def all_close(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    return bool(np.all(close_mask(a, b, rtol)))


def graph_inputs(function: func.FuncOp, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    args: list[np.ndarray] = []
    for arg_type in function.function_type.inputs.data:
        shape = tuple(arg_type.get_shape())  # type: ignore[attr-defined]
        args.append(np.asarray(rng.standard_normal(shape)).astype(np.float32))
    return args


def compare_results(reference: Sequence[Any], got: Sequence[Any]) -> str | None:
    if len(reference) != len(got):
        return f"{len(got)} results instead of {len(reference)}"
    for k, (want, have) in enumerate(zip(reference, got, strict=True)):
        want, have = np.asarray(want), np.asarray(have)
        if want.shape != have.shape:
            return f"result {k}: shape {have.shape} instead of {want.shape}"
        if not all_close(want, have, 0.0):
            diff = np.argwhere(~close_mask(want, have, 0.0))
            index = tuple(int(i) for i in diff[0])
            return (
                f"result {k}: {len(diff)} element(s) differ, e.g. at {list(index)}: "
                f"{have[index]!r} instead of {want[index]!r}"
            )
    return None


def model_inputs(function: func.FuncOp, seed: int) -> list[np.ndarray]:
    """Arguments of a torch-mlir-style `@main`, by name as the shared models' `inputs.py`
    makes them (each from `default_rng([seed, position])`): the input uniform in [-1, 1),
    running variances in [0.5, 1.5) (so `sqrt(var + eps)` is real), running means in
    [-0.5, 0.5), 1-D weights (norm scales) in [0.5, 1.5), biases in [-0.1, 0.1), other
    weights uniform in [-1, 1) * sqrt(3 / fan_in)."""
    args: list[np.ndarray] = []
    block = function.body.blocks[0]
    for position, (arg, arg_type) in enumerate(
        zip(block.args, function.function_type.inputs.data, strict=True)
    ):
        rng = np.random.default_rng([seed, position])
        assert isinstance(arg_type, TensorType)
        shape: tuple[int, ...] = tuple(arg_type.get_shape())
        name = arg.name_hint or ""
        if position == 0:
            values = rng.uniform(-1.0, 1.0, shape)
        elif name.endswith("running_var"):
            values = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("running_mean"):
            values = rng.uniform(-0.5, 0.5, shape)
        elif len(shape) == 1 and name.endswith("weight"):
            values = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("bias"):
            values = rng.uniform(-0.1, 0.1, shape)
        elif len(shape) >= 2:
            fan_in = max(int(np.prod(shape[1:])), 1)
            values = rng.uniform(-1.0, 1.0, shape) * np.sqrt(3.0 / fan_in)
        else:
            values = rng.uniform(-0.1, 0.1, shape)
        args.append(np.asarray(values, dtype=np.float32))
    return args


def relative_error(want: np.ndarray, got: np.ndarray) -> float:
    """max|got - want| / max|want| (1 when `want` is all zeros); infinite where the shapes
    differ or where one of them is NaN or infinite and the other is not the same."""
    want = np.asarray(want, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if want.shape != got.shape:
        return float("inf")
    same = (want == got) | (np.isnan(want) & np.isnan(got))
    if not np.all(np.isfinite(got) | same):
        return float("inf")
    finite = np.isfinite(want) & np.isfinite(got)
    if not finite.any():
        return 0.0
    scale = float(np.max(np.abs(want[finite]))) or 1.0
    return float(np.max(np.abs(got[finite] - want[finite]))) / scale
