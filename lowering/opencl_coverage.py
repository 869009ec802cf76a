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
  `scf.parallel` / `affine.parallel` without reductions). A store under an `scf.if`, an
  `scf.while` or any other region op is ignored (it may not run);
- the store's buffer is a view of the parameter itself, through `layout.decl_buffer` /
  `layout.data`, at element offset 0, without a pending transform, of exactly as many
  elements as the storage: its indices are then row-major positions in the storage;
- its index expressions (read by `IndexAnalysis`) are quasi-affine in the enclosing loops'
  induction variables alone: any other leaf (a loaded value, a clamp, a kernel argument)
  refuses the store. A loop variable ranges exactly over `lower + step * k`,
  `0 <= k < trip count`; a `vector<N>` store writes N consecutive innermost elements;
- isl decides exactly whether the box of the view's shape is a subset of the union of the
  stored points (points outside the box are out-of-bounds accesses, undefined behaviour,
  and never count).

Anything the rule does not model answers False: the fill is kept, which is always sound.
Whether the kernel also reads the parameter is the caller's business (`KernelArg.read`).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

import islpy as isl
from xdsl.dialects import affine, func, scf
from xdsl.ir import BlockArgument, Operation, SSAValue

from physlayout.dialects.layout import BufferType, StoreOp
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.bridges.isl import build_box, expr_to_isl
from physlayout.indexing.quasi_affine import Add, Dim, Expr
from physlayout.lowering.opencl_parallel import LOOPS, BandDim, for_range, loop_dims
from physlayout.transforms.buffer_aliases import trace_declarations
from physlayout.transforms.dependence import access_lanes


def writes_whole(function: func.FuncOp, param: BlockArgument, elements: int) -> bool:
    """Whether the kernel `function` writes every one of the `elements` elements of the
    storage bound to its buffer parameter `param` (module docstring)."""
    analysis = IndexAnalysis()
    written: isl.Set | None = None
    box_shape: tuple[int, ...] | None = None
    for op in function.walk():
        if not isinstance(op, StoreOp):
            continue
        root, offset = trace_declarations(op.buffer)
        view = op.buffer.type
        if root is not param or offset or not isinstance(view, BufferType):
            continue
        shape = tuple(view.get_shape())
        if view.get_transforms() or prod(shape) != elements:
            continue
        if box_shape is not None and shape != box_shape:
            return False  # two views of one storage: not compared here
        points = _stored_points(op, function, analysis)
        if points is None:
            continue
        box_shape = shape
        written = points if written is None else written.union(points)
    if written is None or box_shape is None:
        return False
    return bool(build_box(box_shape).is_subset(written))


def _enclosing_dims(op: Operation, function: func.FuncOp) -> list[BandDim] | None:
    """The loop dimensions around `op` up to `function`, or None when some op between them
    is not a loop with constant bounds (the store may not run)."""
    dims: list[BandDim] = []
    parent = op.parent_op()
    while parent is not None and parent is not function:
        if not isinstance(parent, LOOPS):
            return None
        found = loop_dims(parent)
        if found is None and isinstance(parent, scf.ForOp | affine.ForOp):
            single = for_range(parent)
            found = None if single is None else [single]
        if found is None:
            return None
        dims.extend(found)
        parent = parent.parent_op()
    return dims if parent is function else None


def _stored_points(
    store: StoreOp, function: func.FuncOp, analysis: IndexAnalysis
) -> isl.Set | None:
    """The index tuples `store` writes over all iterations of its loops (None: not
    modelled)."""
    dims = _enclosing_dims(store, function)
    if dims is None:
        return None
    by_iv: dict[SSAValue, int] = {d.iv: k for k, d in enumerate(dims)}
    exprs = [analysis.expr_of(index) for index in store.indices]
    rename: dict[str, str] = {}
    for expr in exprs:
        for name in expr.dims():
            position = by_iv.get(analysis.leaves[name])
            if position is None:
                return None
            rename[name] = f"iv{position}"
    lanes = access_lanes(store)
    if lanes > 1 and exprs:
        exprs[-1] = Add(exprs[-1], Dim("lane"))
        rename["lane"] = "ln"
    return _points_set(exprs, rename, dims, lanes)


def _points_set(
    exprs: Sequence[Expr], rename: dict[str, str], dims: Sequence[BandDim], lanes: int
) -> isl.Set | None:
    outs = [f"o{k}" for k in range(len(exprs))]
    constraints = [
        f"{out} = {expr_to_isl(expr, rename)}" for out, expr in zip(outs, exprs, strict=True)
    ]
    hidden: list[str] = ["ln"] if lanes > 1 else []
    if lanes > 1:
        constraints.append(f"0 <= ln <= {lanes - 1}")
    for k, dim in enumerate(dims):
        hidden += [f"iv{k}", f"t{k}"]
        constraints.append(f"iv{k} = {dim.lower} + {dim.step} * t{k}")
        constraints.append(f"0 <= t{k} <= {dim.trip_count - 1}")
    body = " and ".join(constraints) if constraints else "true"
    if hidden:
        body = f"exists ({', '.join(hidden)} : {body})"
    try:
        return isl.Set(f"{{ [{', '.join(outs)}] : {body} }}")
    except isl.Error:
        return None
