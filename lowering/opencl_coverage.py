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
  loaded value, a kernel argument) refuses the store. A loop variable ranges exactly
  over `lower + step * k`, `0 <= k < trip count`; a `vector<N>` store writes N
  consecutive innermost elements;
- isl decides exactly whether the box of the view's shape is a subset of the union of the
  stored points (points outside the box are out-of-bounds accesses, undefined behaviour,
  and never count).

Anything the rule does not model answers False: the fill is kept, which is always sound.
Whether the kernel also reads the parameter is the caller's business (`KernelArg.read`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

import islpy as isl
from xdsl.dialects import affine, arith, func, scf
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


_RELATIONS = {"eq": "=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
_NEGATED = {"eq": "ne", "ne": "eq", "slt": "sge", "sge": "slt", "sle": "sgt", "sgt": "sle"}


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
class _Printer:
    """Index values and conditions of one store as isl text over its loop variables."""

    analysis: IndexAnalysis
    by_iv: dict[SSAValue, int]
    rename: dict[str, str] = field(default_factory=dict[str, str])

    def expr(self, value: SSAValue) -> Expr | None:
        """`value` as an expression whose leaves `rename` prints over the loop variables
        (None: a leaf that is neither a loop variable nor a `minsi`/`maxsi` of such)."""
        expr = self.analysis.expr_of(value)
        for name in expr.dims():
            if name in self.rename:
                continue
            leaf = self.analysis.leaves[name]
            position = self.by_iv.get(leaf)
            if position is not None:
                self.rename[name] = f"iv{position}"
                continue
            op = leaf.owner
            if not isinstance(op, arith.MinSIOp | arith.MaxSIOp):
                return None
            lhs, rhs = self.expr(op.lhs), self.expr(op.rhs)
            if lhs is None or rhs is None:
                return None
            which = "min" if isinstance(op, arith.MinSIOp) else "max"
            left, right = expr_to_isl(lhs, self.rename), expr_to_isl(rhs, self.rename)
            self.rename[name] = f"{which}({left}, {right})"
        return expr

    def condition(self, value: SSAValue, holds: bool) -> str | None:
        """The isl constraint for "`value` is `holds`" (None: not modelled)."""
        op = value.owner
        if isinstance(op, arith.AndIOp) and holds:
            lhs, rhs = self.condition(op.lhs, True), self.condition(op.rhs, True)
            return None if lhs is None or rhs is None else f"({lhs} and {rhs})"
        if not isinstance(op, arith.CmpiOp):
            return None
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        if not holds:
            predicate = _NEGATED.get(predicate, "")
        lhs, rhs = self.expr(op.lhs), self.expr(op.rhs)
        if lhs is None or rhs is None or predicate not in (*_RELATIONS, "ne"):
            return None
        left, right = expr_to_isl(lhs, self.rename), expr_to_isl(rhs, self.rename)
        if predicate == "ne":
            return f"({left} < {right} or {left} > {right})"
        return f"{left} {_RELATIONS[predicate]} {right}"


def _stored_points(
    store: StoreOp, function: func.FuncOp, analysis: IndexAnalysis
) -> isl.Set | None:
    """The index tuples `store` writes over the iterations of its loops where its guards
    hold (None: not modelled)."""
    context = _context(store, function)
    if context is None:
        return None
    printer = _Printer(analysis, {d.iv: k for k, d in enumerate(context.dims)})
    exprs: list[Expr] = []
    for index in store.indices:
        expr = printer.expr(index)
        if expr is None:
            return None
        exprs.append(expr)
    constraints: list[str] = []
    for value, holds in context.guards:
        condition = printer.condition(value, holds)
        if condition is None:
            return None
        constraints.append(condition)
    lanes = access_lanes(store)
    if lanes > 1 and exprs:
        exprs[-1] = Add(exprs[-1], Dim("lane"))
        printer.rename["lane"] = "ln"
    return _points_set(exprs, printer.rename, context.dims, lanes, constraints)


def _points_set(
    exprs: Sequence[Expr],
    rename: dict[str, str],
    dims: Sequence[BandDim],
    lanes: int,
    guards: Sequence[str],
) -> isl.Set | None:
    outs = [f"o{k}" for k in range(len(exprs))]
    constraints = [
        f"{out} = {expr_to_isl(expr, rename)}" for out, expr in zip(outs, exprs, strict=True)
    ]
    constraints += guards
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
