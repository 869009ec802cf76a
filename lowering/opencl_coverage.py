"""Which buffer parameters a kernel overwrites whole (`KernelArg.covers`).

A launch plan fills every allocation (and every `out` parameter) before the body runs,
because allocations start as zeros (or the pad value) by semantics. That fill is dead when
the first thing that touches the storage is a kernel that writes every element of it and
reads none: the plan builder leaves such fills out (`runtime/plan_builder.py`). This module
gives the kernel half of that proof, for one buffer parameter of one kernel function.

The parameter is *covered* when the union of the elements written by its unconditional
stores contains every element of its physical storage:

- a store counts only when every op between it and the function is a loop with constant
  bounds and a positive step (`scf.for` / `affine.for`, with or without `iter_args`;
  `scf.parallel` / `affine.parallel` without reductions) or an `scf.if` whose condition
  is an `arith.cmpi` (signed or equality predicates; an `arith.andi` of them in the `then`
  region) of such index expressions: the store counts at the iterations where it holds
  (a tile's remainder guard). A store under an `scf.while` or any other region op, or a
  guard of anything else, is ignored (it may not run);
- the store's buffer is a view of the parameter itself, through `layout.decl_buffer` /
  `layout.data`, at element offset 0, without a pending transform, of exactly as many
  elements as the storage: its indices are then row-major positions in the storage;
- its index expressions (read by `IndexAnalysis`) are quasi-affine in the enclosing loops'
  induction variables and `arith.minsi`/`maxsi` of such (a clamp): any other leaf (a
  loaded value, a kernel argument) refuses the store. A loop variable takes exactly
  the values `lower + step * k`, `0 <= k < trip count`; a `vector<N>` store writes N
  consecutive innermost elements;
- the proof is exhaustive, so exact: every iteration of the store's loops is enumerated
  (numpy, all at once), its guards and indices evaluated, and the elements written are
  marked; the parameter is covered when every element is marked (an index outside the
  view is an out-of-bounds access, undefined behaviour, and never counts). A parameter
  whose stores run more than `MAX_POINTS` iterations in all is not examined (its fill
  stays).

Anything the rule does not model answers False: the fill is kept, which is always sound.
Whether the kernel also reads the parameter is the caller's business (`KernelArg.read`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import affine, arith, func, scf
from xdsl.ir import BlockArgument, Operation, SSAValue

from physlayout.dialects.layout import BufferType, StoreOp
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.lowering.opencl_parallel import LOOPS, BandDim, for_range, loop_dims
from physlayout.transforms.buffer_aliases import trace_declarations
from physlayout.transforms.dependence import access_lanes

MAX_POINTS = 1 << 22
"""The most store iterations (all stores of one parameter together) enumerated."""

Grid = Any
"""An integer or boolean numpy array over the iterations of one store's loops (one axis
per loop dimension, broadcast)."""


def covered_parameters(
    function: func.FuncOp,
    elements: Mapping[BlockArgument, int],
    ops: Iterable[Operation] | None = None,
) -> set[BlockArgument]:
    """The buffer parameters of the kernel `function` among `elements` (each with the
    element count of the storage bound to it) whose every element it writes (module
    docstring). One walk of the function for all of them (`ops`: its ops, when the caller
    has walked it already)."""
    stores: dict[BlockArgument, list[StoreOp]] = {}
    for op in function.walk() if ops is None else ops:
        if isinstance(op, StoreOp):
            root = trace_declarations(op.buffer)[0]
            if isinstance(root, BlockArgument) and root in elements:
                stores.setdefault(root, []).append(op)
    analysis = IndexAnalysis()
    return {
        param
        for param, found in stores.items()
        if _covers(function, found, elements[param], analysis)
    }


def writes_whole(function: func.FuncOp, param: BlockArgument, elements: int) -> bool:
    """Whether the kernel `function` writes every one of the `elements` elements of the
    storage bound to its buffer parameter `param` (module docstring)."""
    return param in covered_parameters(function, {param: elements})


def _covers(
    function: func.FuncOp, stores: Sequence[StoreOp], elements: int, analysis: IndexAnalysis
) -> bool:
    written = np.zeros(elements, dtype=bool)
    budget = MAX_POINTS
    for op in stores:
        offset = trace_declarations(op.buffer)[1]
        view = op.buffer.type
        if offset or not isinstance(view, BufferType):
            continue
        shape = tuple(view.get_shape())
        context = _context(op, function)
        if view.get_transforms() or prod(shape) != elements or context is None:
            continue
        budget -= prod(d.trip_count for d in context.dims)
        if budget < 0:
            return False
        flat = _stored_elements(op, shape, context, analysis)
        if flat is not None:
            written[flat] = True
    return bool(written.all())


_RELATIONS = {
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
    "sgt": np.greater, "sge": np.greater_equal,
}  # fmt: skip


@dataclass
class _Context:
    """The loops and guards around one store."""

    dims: list[BandDim] = field(default_factory=list[BandDim])
    guards: list[tuple[SSAValue, bool]] = field(default_factory=list[tuple[SSAValue, bool]])
    """`scf.if` conditions and whether the store is in their `then` region."""


def _context(op: Operation, function: func.FuncOp) -> _Context | None:
    """The loop dimensions and `scf.if` guards around `op` up to `function`, or None when
    some op between them is neither a loop with constant bounds nor an `scf.if`."""
    context = _Context()
    child, parent = op, op.parent_op()
    while parent is not None and parent is not function:
        if isinstance(parent, scf.IfOp):
            then = child.parent_region() is parent.true_region
            context.guards.append((parent.cond, then))
        elif isinstance(parent, LOOPS):
            found = loop_dims(parent)
            if found is None and isinstance(parent, scf.ForOp | affine.ForOp):
                single = for_range(parent)
                found = None if single is None else [single]
            if found is None:
                return None
            context.dims.extend(found)
        else:
            return None
        child, parent = parent, parent.parent_op()
    return context if parent is function else None


@dataclass
class _Evaluator:
    """Index values and conditions of one store over all iterations of its loops."""

    analysis: IndexAnalysis
    ivs: dict[SSAValue, Grid]
    """Each loop variable's values, on its own axis."""
    known: dict[str, Grid] = field(default_factory=dict[str, Grid])

    def value(self, value: SSAValue) -> Grid | None:
        """`value` at every iteration (None: it depends on a leaf that is neither a loop
        variable nor a `minsi`/`maxsi` of such)."""
        expr = self.analysis.expr_of(value)
        for name in expr.dims():
            if name in self.known:
                continue
            leaf = self.analysis.leaves[name]
            found = self.ivs.get(leaf)
            if found is None:
                op = leaf.owner
                if not isinstance(op, arith.MinSIOp | arith.MaxSIOp):
                    return None
                lhs, rhs = self.value(op.lhs), self.value(op.rhs)
                if lhs is None or rhs is None:
                    return None
                pick = np.minimum if isinstance(op, arith.MinSIOp) else np.maximum
                found = pick(lhs, rhs)
            self.known[name] = found
        return expr.evaluate(self.known)

    def condition(self, value: SSAValue, holds: bool) -> Grid | None:
        """Where "`value` is `holds`" (None: not modelled)."""
        op = value.owner
        if isinstance(op, arith.AndIOp) and holds:
            lhs, rhs = self.condition(op.lhs, True), self.condition(op.rhs, True)
            return None if lhs is None or rhs is None else np.logical_and(lhs, rhs)
        if not isinstance(op, arith.CmpiOp):
            return None
        relation = _RELATIONS.get(arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data])
        lhs, rhs = self.value(op.lhs), self.value(op.rhs)
        if relation is None or lhs is None or rhs is None:
            return None
        result = relation(lhs, rhs)
        return result if holds else np.logical_not(result)


def _stored_elements(
    store: StoreOp, shape: tuple[int, ...], context: _Context, analysis: IndexAnalysis
) -> Grid | None:
    """The flat (row-major) positions in a view of `shape` that `store` writes at the
    iterations where its guards hold (None: not modelled)."""
    rank = len(context.dims)
    ivs: dict[SSAValue, Grid] = {}
    for axis, dim in enumerate(context.dims):
        values = np.arange(dim.lower, dim.upper, dim.step, dtype=np.int64)
        ivs[dim.iv] = values.reshape([-1 if k == axis else 1 for k in range(rank)])
    evaluator = _Evaluator(analysis, ivs)
    grid = tuple(d.trip_count for d in context.dims)
    runs: Grid = np.ones(grid, dtype=bool)
    for value, holds in context.guards:
        condition = evaluator.condition(value, holds)
        if condition is None:
            return None
        runs = runs & condition
    indices: list[Grid] = []
    for index in store.indices:
        found = evaluator.value(index)
        if found is None:
            return None
        indices.append(np.broadcast_to(found, grid)[runs])
    lanes = access_lanes(store)
    if not indices:  # a rank-0 view: its one element, when the store runs at all
        return np.zeros(1, dtype=np.int64) if runs.any() else np.zeros(0, dtype=np.int64)
    if lanes > 1:
        indices = [np.repeat(i, lanes) for i in indices]
        indices[-1] = indices[-1] + np.tile(np.arange(lanes), len(indices[-1]) // lanes)
    inside = np.ones(len(indices[0]), dtype=bool)
    for index, extent in zip(indices, shape, strict=True):
        inside &= (index >= 0) & (index < extent)
    return np.ravel_multi_index(tuple(i[inside] for i in indices), shape)
