"""Loops and branches over SIMT lanes, shared by the `scf` and `affine` implementations.

A sequential loop iterates in Python, vectorized over the enclosing lanes; when its bounds
differ between lanes it runs to the largest trip count with the finished lanes masked off.
With `Simt.vectorize_loops`, a loop that `evaluator_analysis.loop_is_parallelizable`
accepts runs as a parallel one. A parallel loop runs its body once with one new lane axis
per dimension. A branch runs only the taken region when its condition is uniform over the
active lanes, else both under complementary masks, selecting the yielded values.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from physlayout.semantics.evaluator_analysis import (
    UNKNOWN,
    Root,
    external_memory_values,
    loop_is_parallelizable,
)
from physlayout.semantics.evaluator_frame import (
    Entry,
    function_named,
    lookup,
    run_block,
    run_region,
    simt,
)
from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    Lanes,
    View,
    active_values,
    and_masks,
    any_active,
    dtype_of,
    is_memory_type,
    to_depth,
    uniform_value,
    vector_shape,
    with_trailing,
)


def as_array(op: Operation, entry: Entry) -> Array:
    """`entry`, which must be a number."""
    if isinstance(entry, View | Handle):
        raise EvaluationError(f"'{op.name}': expected a number, got a buffer")
    return entry


def select(op: Operation, cond: Array, a: Entry, b: Entry) -> Entry:
    """`a` where `cond` (a lane mask) holds, else `b`."""
    if isinstance(a, View | Handle) or isinstance(b, View | Handle):
        if a is b:
            return a
        raise EvaluationError(f"'{op.name}': a buffer value that differs between lanes")
    return np.where(with_trailing(cond, max(np.ndim(a), np.ndim(b)) - cond.ndim), a, b)


def check_steps(op: Operation, step: Array, lanes: Lanes) -> None:
    """An error when a loop step is not positive on some active lane."""
    steps = active_values(step, lanes)
    if steps.size and int(steps.min()) <= 0:
        raise EvaluationError(f"'{op.name}': loop step must be positive, got {int(steps.min())}")


# Sequential loops -------------------------------------------------------------------------


def run_loop(
    interpreter: Interpreter,
    op: Operation,
    bounds: tuple[Array, Array, Array],
    inits: list[Entry],
) -> list[Entry]:
    """Run a sequential loop (scf.for / affine.for) and return its results."""
    lanes = simt(interpreter).lanes
    if not any_active(lanes):
        return inits
    lb, ub, step = (to_depth(b, b.ndim, lanes.depth) if b.ndim == 0 else b for b in bounds)
    check_steps(op, step, lanes)
    block = op.regions[0].blocks[0]
    iv_dtype = dtype_of(block.args[0].type)
    if not inits and simt(interpreter).vectorize_loops and _parallelizable(interpreter, op):
        run_parallel(interpreter, block, [(lb, ub, step)], [iv_dtype], lanes)
        return []
    low, high, stride = (uniform_value(b, lanes) for b in (lb, ub, step))
    if low is not None and high is not None and stride is not None:
        carried = inits
        shape = (1,) * lanes.depth
        for i in range(low, high, stride):
            iv = np.full(shape, i, dtype=iv_dtype)
            carried = run_block(interpreter, block, [iv, *carried], lanes)
        return carried
    return _masked_loop(interpreter, op, block, (lb, ub, step), iv_dtype, inits, lanes)


def _masked_loop(
    interpreter: Interpreter,
    op: Operation,
    block: Block,
    bounds: tuple[Array, Array, Array],
    iv_dtype: np.dtype[Any],
    inits: list[Entry],
    lanes: Lanes,
) -> list[Entry]:
    """A loop whose bounds differ between lanes: lanes drop out as they finish."""
    lb, ub, step = bounds
    iv = lb.astype(iv_dtype)
    carried = inits
    while True:
        active = and_masks(lanes.mask, iv < ub)
        assert active is not None
        if not bool(np.any(active)):
            return carried
        inner = Lanes(lanes.shape, active)
        new = run_block(interpreter, block, [iv, *carried], inner)
        carried = [select(op, active, n, c) for n, c in zip(new, carried, strict=True)]
        iv = (iv + step).astype(iv_dtype)


def _parallelizable(interpreter: Interpreter, op: Operation) -> bool:
    """The `vectorize_loops` rule for `op`, cached on the storages it depends on."""
    state = simt(interpreter)
    externals = state.externals.get(op)
    if externals is None:
        externals = external_memory_values(op)
        state.externals[op] = externals
    key = tuple(lookup(interpreter, v) for v in externals)
    cached = state.decisions.get(op)
    if (
        cached is not None
        and len(cached[0]) == len(key)
        and all(a is b for a, b in zip(cached[0], key, strict=True))
    ):
        return cached[1]

    def outside(value: SSAValue) -> Root:
        entry = lookup(interpreter, value)
        if isinstance(entry, View | Handle):
            return entry.storage
        return UNKNOWN

    def injective(value: SSAValue) -> bool:
        entry = lookup(interpreter, value)
        return isinstance(entry, View) and entry.is_injective()

    def functions(name: str) -> Operation | None:
        try:
            return function_named(interpreter, name)
        except EvaluationError:
            return None

    decision = loop_is_parallelizable(op, outside, injective, functions)
    state.decisions[op] = (key, decision)
    return decision


# Parallel loops ---------------------------------------------------------------------------


def run_parallel(
    interpreter: Interpreter,
    block: Block,
    bounds: Sequence[tuple[Array, Array, Array]],
    dtypes: Sequence[np.dtype[Any]],
    lanes: Lanes,
) -> tuple[Lanes, list[Entry]] | None:
    """Run `block` once with one new lane axis per bound triple (all iterations at once).

    Returns the inner lanes and the terminator's operands, or None when some axis has
    no iteration.
    """
    count = len(bounds)
    depth = lanes.depth
    ivs: list[Array] = []
    extents: list[int] = []
    mask: Array | None = None
    for axis, (lb, ub, step) in enumerate(bounds):
        shape = (1,) * (depth + axis), (1,) * (count - axis - 1)
        low, high, stride = (uniform_value(b, lanes) for b in (lb, ub, step))
        if low is not None and high is not None and stride is not None:
            trip = max(0, -(-(high - low) // stride))
            iv = low + np.arange(trip, dtype=np.int64) * stride
            iv = iv.reshape(shape[0] + (trip,) + shape[1])
        else:
            trips = active_values(-(-(ub - lb) // step), lanes)
            trip = max(0, int(trips.max())) if trips.size else 0
            ramp = np.arange(trip, dtype=np.int64).reshape(shape[0] + (trip,) + shape[1])
            iv = with_trailing(lb, count) + ramp * with_trailing(step, count)
            mask = and_masks(mask, iv < with_trailing(ub, count))
        if trip == 0:
            return None
        ivs.append(iv.astype(dtypes[axis]))
        extents.append(trip)
    inner = lanes.expand(extents, mask)
    if not any_active(inner):
        return None
    return inner, run_block(interpreter, block, ivs, inner)


def tree_reduce(
    interpreter: Interpreter,
    op: Operation,
    region: Region,
    value: Array,
    init: Array,
    inner: Lanes,
    lanes: Lanes,
) -> Array:
    """Combine `value` over the new lane axes of `inner` with the `scf.reduce` region,
    pairwise, then with `init`; inactive lanes do not take part."""
    depth = lanes.depth
    outer, new = inner.shape[:depth], inner.shape[depth:]
    tail = value.shape[len(inner.shape) :]
    count = prod(new)
    value = np.broadcast_to(value, inner.shape + tail).reshape((*outer, count, *tail))
    valid = (
        np.ones(inner.shape, dtype=np.bool_)
        if inner.mask is None
        else (np.broadcast_to(inner.mask, inner.shape))
    )
    valid = valid.reshape((*outer, count))
    pick = (slice(None),) * depth
    while count > 1:
        if count % 2:
            value = np.concatenate([value, value[(*pick, slice(-1, None))]], axis=depth)
            valid = np.concatenate([valid, np.zeros((*outer, 1), dtype=np.bool_)], axis=depth)
            count += 1
        a, b = value[(*pick, slice(0, None, 2))], value[(*pick, slice(1, None, 2))]
        va, vb = valid[(*pick, slice(0, None, 2))], valid[(*pick, slice(1, None, 2))]
        both = va & vb
        half = Lanes((*outer, count // 2), both)
        combined = as_array(op, run_region(interpreter, region, [a, b], half)[0])
        extra = len(tail)
        value = np.where(
            with_trailing(both, extra), combined, np.where(with_trailing(va, extra), a, b)
        )
        valid = va | vb
        count //= 2
    value = value.reshape(outer + tail)
    valid = valid.reshape(outer)
    final = Lanes(lanes.shape, valid)
    combined = as_array(op, run_region(interpreter, region, [init, value], final)[0])
    return np.where(with_trailing(valid, len(tail)), combined, init)


# Branches ---------------------------------------------------------------------------------


def run_branch(
    interpreter: Interpreter, op: Operation, cond: Array, then: Region, otherwise: Region
) -> list[Entry | None]:
    """Run an if: only the taken branch when `cond` is uniform, else both under masks."""
    lanes = simt(interpreter).lanes
    if not any_active(lanes):
        return [_placeholder(r.type) for r in op.results]
    uniform = uniform_value(cond, lanes)
    if uniform is not None:
        return run_region(interpreter, then if uniform else otherwise, [], lanes)
    taken = run_region(interpreter, then, [], lanes.with_mask(cond))
    skipped = run_region(interpreter, otherwise, [], lanes.with_mask(~cond))
    return [select(op, cond, t, e) for t, e in zip(taken, skipped, strict=True)]


def _placeholder(type_: Attribute) -> Array | None:
    """The value of a result computed on no active lane: zeros for numbers."""
    if is_memory_type(type_):
        return None
    return np.zeros(vector_shape(type_), dtype=dtype_of(type_))
