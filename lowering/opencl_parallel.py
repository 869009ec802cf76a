"""Which loops of a kernel become OpenCL work-items (the work-item rule of `-t opencl`).

A *band* is a perfect nest of loops with constant bounds, starting at a top-level loop of
a kernel: between two band loops there may only be side-effect-free ops without regions
and loads of storage that nothing in the nest stores to (each work-item repeats them; the
data they read does not change during the launch).
The band is grown from the outside in, one loop op at a time; a loop joins it when it is
*parallel given the loops outside it*:

- `scf.parallel` / `affine.parallel` without reductions are parallel by definition;
- an `scf.for` / `affine.for` without `iter_args` is parallel when its iterations touch
  disjoint data (proven, not assumed). Inside the loop, for every storage that is stored
  to (a buffer traced through `layout.decl_buffer`/`layout.data` to its parameter or
  allocation):
  1. every access to it (stores and loads) goes through the same buffer value, with the
     same access width and the same index expressions (quasi-affine, read by
     `indexing.bridges.arith.IndexAnalysis`), and
  2. those expressions are injective in the loop's induction variable(s): isl proves that
     `(fixed, iv) -> (fixed, index + lane)` is injective, where `fixed` are the values
     defined outside the loop (outer loop variables, kernel arguments: the same for every
     iteration), with their known ranges, and the values defined inside the loop (inner
     loop variables, lanes of a vector access, anything the analysis cannot see through)
     are existentially quantified over their ranges (unbounded when unknown).
  Two different iterations therefore never touch the same element of a written storage;
  storages that are only read impose nothing.

A loop that does not join stops the band. The band (at most all of its loops) is parallel
as a whole: two distinct points first differ at some band loop, whose proof holds with
the outer loops fixed. Distinct buffer parameters of a kernel are assumed not to overlap
(as for OpenCL kernel arguments; the host runtime refuses to pass one storage twice to a
kernel that writes it).

The *launches* of a kernel (`Segment`: each top-level loop, or a run of top-level memory
ops) and the loads that may be read again by each launch (`is_invariant_load`) are
defined here too; `opencl_kernels.KernelWriter.segments` cuts the body with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl
from xdsl.dialects import affine, scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr
from xdsl.traits import IsTerminator
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from physlayout.dialects.layout import LoadOp, StoreOp
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.bridges.isl import expr_to_isl
from physlayout.indexing.quasi_affine import Add, Dim
from physlayout.transforms.buffer_aliases import buffer_root
from physlayout.transforms.dependence import Access, collect_accesses, is_pure_op

LOOPS = (scf.ForOp, affine.ForOp, scf.ParallelOp, affine.ParallelOp)


@dataclass(frozen=True)
class BandDim:
    """One loop dimension `for iv = lower; iv < upper; iv += step` of a band."""

    loop: Operation
    iv: SSAValue
    lower: int
    upper: int
    step: int

    @property
    def trip_count(self) -> int:
        """The number of iterations, `ceil((upper - lower) / step)`; 0 for an empty range."""
        return max(0, -(-(self.upper - self.lower) // self.step))


def _const_results(results: Sequence[object]) -> list[int] | None:
    values: list[int] = []
    for result in results:
        if not isinstance(result, AffineConstantExpr):
            return None
        values.append(result.value)
    return values


def for_range(op: scf.ForOp | affine.ForOp) -> BandDim | None:
    """The dimension of an `scf.for` / `affine.for` with constant bounds and a positive step,
    with or without `iter_args` (None otherwise)."""
    if isinstance(op, scf.ForOp):
        lower, upper, step = const_evaluate_operand(op.lb), const_evaluate_operand(op.ub), const_evaluate_operand(op.step)
    else:
        lowers = _const_results(op.lowerBoundMap.data.results)
        uppers = _const_results(op.upperBoundMap.data.results)
        if lowers is None or uppers is None or len(lowers) != 1 or len(uppers) != 1:
            return None
        lower, upper, step = lowers[0], uppers[0], op.step.value.data
    if lower is None or upper is None or step is None or step <= 0:
        return None
    return BandDim(op, op.body.block.args[0], lower, upper, step)


def loop_dims(op: Operation) -> list[BandDim] | None:
    """The dimensions of a loop op with constant bounds and positive steps that carries no
    values (no iter_args, no reductions); None for anything else."""
    match op:
        case scf.ForOp() if not op.iter_args:
            bounds = [
                (
                    const_evaluate_operand(op.lb),
                    const_evaluate_operand(op.ub),
                    const_evaluate_operand(op.step),
                )
            ]
        case scf.ParallelOp() if not op.initVals:
            bounds = [
                (const_evaluate_operand(lb), const_evaluate_operand(ub), const_evaluate_operand(st))
                for lb, ub, st in zip(op.lowerBound, op.upperBound, op.step, strict=True)
            ]
        case affine.ForOp() if not op.inits:
            lower = _const_results(op.lowerBoundMap.data.results)
            upper = _const_results(op.upperBoundMap.data.results)
            if lower is None or upper is None or len(lower) != 1 or len(upper) != 1:
                return None
            bounds = [(lower[0], upper[0], op.step.value.data)]
        case affine.ParallelOp() if not op.res and not op.reductions.data:
            lower = _const_results(op.lowerBoundsMap.data.results)
            upper = _const_results(op.upperBoundsMap.data.results)
            rank = len(op.body.block.args)
            if lower is None or upper is None or len(lower) != rank or len(upper) != rank:
                return None
            steps = [s.value.data for s in op.steps.data]
            bounds = list(zip(lower, upper, steps, strict=True))
        case _:
            return None
    args = op.regions[0].blocks[0].args
    dims: list[BandDim] = []
    for iv, (lower, upper, step) in zip(args, bounds, strict=False):
        if lower is None or upper is None or step is None or step <= 0:
            return None
        dims.append(BandDim(op, iv, lower, upper, step))
    return dims


def _only_inner_loop(block: Block, written: set[SSAValue]) -> Operation | None:
    """The single loop op of `block` when every other op is pure or a load of storage
    outside `written` (a perfect nest up to reads of unchanging data)."""
    loops = [op for op in block.ops if isinstance(op, LOOPS)]
    if len(loops) != 1:
        return None
    others = [op for op in block.ops if op is not loops[0] and op is not block.last_op]
    for op in others:
        if isinstance(op, LoadOp) and buffer_root(op.buffer) not in written:
            continue
        if not is_pure_op(op):
            return None
    return loops[0]


def parallel_band(top: Operation) -> list[BandDim]:
    """The band of loops rooted at the loop op `top` (empty when `top` is not parallel)."""
    written = {buffer_root(op.buffer) for op in top.walk() if isinstance(op, StoreOp)}
    band: list[BandDim] = []
    op: Operation | None = top
    while op is not None:
        dims = loop_dims(op)
        if dims is None:
            break
        by_definition = isinstance(op, scf.ParallelOp | affine.ParallelOp)
        if not by_definition and not iterations_are_disjoint(op, [d.iv for d in dims]):
            break
        band.extend(dims)
        op = _only_inner_loop(op.regions[0].blocks[0], written)
    return band


# The proof --------------------------------------------------------------------------------


def _unmodelled(op: Operation) -> str | None:
    """The ops the rule does not model (`collect_accesses` refusal): any op without regions
    that may touch memory, calls and allocations included."""
    if op.regions or is_pure_op(op) or op.has_trait(IsTerminator):
        return None
    return f"'{op.name}' may touch memory"


def _defined_inside(value: SSAValue, scope: Operation) -> bool:
    if isinstance(value, BlockArgument):
        return scope.is_ancestor(value.block)
    owner = value.owner
    return isinstance(owner, Operation) and owner is not scope and scope.is_ancestor(owner)


def iterations_are_disjoint(scope: Operation, ivs: Sequence[SSAValue]) -> bool:
    """The rule of this module for the loop op `scope` with induction variables `ivs`."""
    analysis = IndexAnalysis()
    accesses = collect_accesses(scope, analysis, _unmodelled)
    if isinstance(accesses, str):
        return False
    groups: dict[SSAValue, list[Access]] = {}
    for access in accesses:
        groups.setdefault(buffer_root(access.buffer), []).append(access)
    for group in groups.values():
        stores = [a for a in group if a.is_store]
        if not stores:
            continue
        first = stores[0]
        if any(
            a.buffer is not first.buffer or a.indices != first.indices or a.lanes != first.lanes
            for a in group
        ):
            return False
        if not _injective(first, scope, ivs, analysis):
            return False
    return True


def _injective(
    access: Access, scope: Operation, ivs: Sequence[SSAValue], analysis: IndexAnalysis
) -> bool:
    exprs = list(access.indices)
    lane = "lane"
    if access.lanes > 1:
        exprs[-1] = Add(exprs[-1], Dim(lane))
    used = sorted({name for e in exprs for name in e.dims()} - {lane})
    iv_names = [analysis.leaf(iv).name for iv in ivs]
    fixed = [
        n for n in used if n not in iv_names and not _defined_inside(analysis.leaves[n], scope)
    ]
    hidden = [n for n in used if n not in iv_names and n not in fixed]
    rename = {n: f"f{k}" for k, n in enumerate(fixed)}
    rename |= {n: f"b{k}" for k, n in enumerate(iv_names)}
    rename |= {n: f"h{k}" for k, n in enumerate(hidden)}
    rename[lane] = "ln"
    constraints = [
        f"o{k} = {expr_to_isl(e, rename)}" for k, e in enumerate(exprs)
    ]
    for name in [*fixed, *iv_names, *hidden]:
        bounds = analysis.bounds.get(name)
        if bounds is not None:
            constraints.append(f"{bounds[0]} <= {rename[name]} <= {bounds[1]}")
    if access.lanes > 1:
        constraints.append(f"0 <= ln <= {access.lanes - 1}")
    existential = [rename[n] for n in hidden] + (["ln"] if access.lanes > 1 else [])
    body = " and ".join(constraints)
    if existential:
        body = f"exists ({', '.join(existential)} : {body})"
    ins = [rename[n] for n in fixed] + [rename[n] for n in iv_names]
    outs = [rename[n] for n in fixed] + [f"o{k}" for k in range(len(exprs))]
    text = f"{{ [{', '.join(ins)}] -> [{', '.join(outs)}] : {body} }}"
    try:
        return bool(isl.Map(text).is_injective())
    except isl.Error:
        return False


# Launches --------------------------------------------------------------------------------


@dataclass
class Segment:
    """Top-level ops of a kernel executed by one OpenCL kernel launch."""

    ops: list[Operation]
    loop: bool


def stored_roots(op: Operation) -> set[SSAValue]:
    """The storage roots (`buffer_root`: the buffer under every `layout.decl_buffer` view) of
    every `layout.store` in `op`, nested ones included."""
    return {buffer_root(s.buffer) for s in op.walk() if isinstance(s, StoreOp)}


def roots_stored_after(ops: Sequence[Operation]) -> dict[Operation, set[SSAValue]]:
    """For each top-level op, the storage roots stored to by the top-level ops after it."""
    after: dict[Operation, set[SSAValue]] = {}
    stored: set[SSAValue] = set()
    for op in reversed(ops):
        after[op] = set(stored)
        stored |= stored_roots(op)
    return after


def is_invariant_load(
    load: LoadOp, stored_later: set[SSAValue], open_segment: Segment | None
) -> bool:
    """A top-level load whose storage nothing stores to from its position until the end
    of the kernel (launches run in order, so stores of earlier launches are visible; a
    store earlier in the single-work-item launch it would join is not, so that keeps it
    there). Its value is then the same wherever it is read: it is a setup value, read by
    each work-item of every launch that uses it."""
    root = buffer_root(load.buffer)
    if root in stored_later:
        return False
    return open_segment is None or all(root not in stored_roots(op) for op in open_segment.ops)
