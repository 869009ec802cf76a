"""Building blocks for passes that read or create loop nests over a buffer's box.

`loop_nest_at` recognizes a perfect nest of unit-step loops with constant bounds starting
at 0 (`scf.for`, `scf.parallel`, `affine.for`). `build_scf_nest` creates a perfect `scf.for`
nest (or one `scf.parallel`) over constant extents and returns the induction variables and
an insertion point in the innermost body. `padding_condition` emits the exact "is padding"
test for a transformed index: an index `p` of the transformed box has a preimage iff
`x = inverse(p)` lies in the logical box and `map(x) == p` (the inverse is exact on the
image, so both hold exactly on the image). Everything they create goes through the
`PatternRewriter` they are given (`RewritingEmitter` for index arithmetic).
`rebuild_access` re-creates a load or store on another buffer or at other indices, and
`erase_dead_index_math` erases the index arithmetic an access no longer uses, for the
passes that move accesses (flatten-buffers, normalize-memref-layouts, lower-layout).
`in_reduction` tells whether an op lies in a reduction loop (an `scf.for` with `iter_args`)
below a root.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from physlayout.dialects.layout import LoadOp, StoreOp
from physlayout.dialects.scf_syntax import ParallelOp, ReduceOp
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.indexing.simplify import simplify


@dataclass
class RewritingEmitter(ExprEmitter):
    """An `ExprEmitter` that inserts its ops through `rewriter` (so the driving walker is
    notified of every op it creates)."""

    rewriter: PatternRewriter = field(kw_only=True)

    def _insert(self, op: Operation) -> SSAValue:
        self.insert(op)
        return op.results[0]

    def insert(self, op: Operation) -> None:
        """Insert `op` at the emitter's insertion point, through the rewriter."""
        self.rewriter.insert(op, self.insert_point)


def rebuild_access(
    op: LoadOp | StoreOp | memref.LoadOp | memref.StoreOp,
    buffer: SSAValue,
    indices: Sequence[SSAValue],
) -> Operation:
    """A new access of `op`'s kind on `buffer` at `indices`: the stored value, result
    type, properties, attributes and result name of `op` are kept (`op` is untouched)."""
    stored = [op.value] if isinstance(op, StoreOp | memref.StoreOp) else []
    new = type(op).create(
        operands=[*stored, buffer, *indices],
        result_types=op.result_types,
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    for old, result in zip(op.results, new.results, strict=True):
        result.name_hint = old.name_hint
    return new


def erase_dead_index_math(values: Iterable[SSAValue], rewriter: PatternRewriter) -> None:
    """Erase, through `rewriter`, the pure `index` computations among the definers of
    `values` (and, transitively, of their operands) that no longer have uses."""
    pending = [v.owner for v in values if isinstance(v.owner, Operation)]
    while pending:
        op = pending.pop()
        if op.parent is None or not is_trivially_dead(op):
            continue
        if not all(isinstance(r.type, IndexType) for r in op.results):
            continue
        operands = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
        rewriter.erase(op)
        pending.extend(operands)


# Recognizing loop nests ---------------------------------------------------------------------


@dataclass
class LoopNest:
    """A perfect nest of unit-step loops with constant bounds starting at 0."""

    outer: Operation
    ivs: list[SSAValue]
    extents: list[int]
    body: Block
    parallel: bool
    carried: SSAValue | None
    """An induction variable of a loop of the nest that carries values (iter_args)."""


def _carries_values(op: Operation) -> bool:
    match op:
        case scf.ForOp():
            return bool(op.iter_args)
        case scf.ParallelOp():
            return bool(op.initVals)
        case affine.ForOp():
            return bool(op.inits)
        case _:
            return False


def _loop_dims(op: Operation) -> tuple[list[SSAValue], list[int], Block] | None:
    """The ivs, extents and body of one loop op with bounds 0..E, step 1."""
    match op:
        case scf.ForOp():
            lowers, uppers, steps = [op.lb], [op.ub], [op.step]
        case scf.ParallelOp():
            lowers, uppers, steps = list(op.lowerBound), list(op.upperBound), list(op.step)
        case affine.ForOp() if op.step.value.data == 1:
            lower = op.lowerBoundMap.data.results
            upper = op.upperBoundMap.data.results
            if len(lower) != 1 or len(upper) != 1 or lower[0] != AffineConstantExpr(0):
                return None
            if not isinstance(upper[0], AffineConstantExpr):
                return None
            return [op.body.block.args[0]], [upper[0].value], op.body.block
        case _:
            return None
    if any(const_evaluate_operand(v) != 0 for v in lowers) or any(
        const_evaluate_operand(v) != 1 for v in steps
    ):
        return None
    extents = [const_evaluate_operand(v) for v in uppers]
    if any(e is None for e in extents):
        return None
    ivs = list[SSAValue](op.regions[0].block.args)[: len(extents)]
    return ivs, [e for e in extents if e is not None], op.regions[0].block


def is_loop(op: Operation | None) -> bool:
    """Whether `op` is a loop `loop_nest_at` may take as part of a nest."""
    return isinstance(op, scf.ForOp | scf.ParallelOp | affine.ForOp)


def loop_nest_at(op: Operation) -> LoopNest | None:
    """The perfect loop nest rooted at `op`, if `op` is a supported loop."""
    dims = _loop_dims(op)
    if dims is None:
        return None
    ivs, extents, body = dims
    carried = ivs[0] if _carries_values(op) else None
    parallel = isinstance(op, scf.ParallelOp)
    while True:
        inner = [o for o in body.ops if o is not body.last_op]
        if len(inner) != 1 or (nested := _loop_dims(inner[0])) is None:
            break
        if carried is None and _carries_values(inner[0]):
            carried = nested[0][0]
        ivs, extents, body = ivs + nested[0], extents + nested[1], nested[2]
    return LoopNest(op, ivs, extents, body, parallel, carried)


# Building loop nests ------------------------------------------------------------------------


def build_scf_nest(
    extents: Sequence[int],
    insert_point: InsertPoint,
    rewriter: PatternRewriter,
    parallel: bool = False,
) -> tuple[list[SSAValue], InsertPoint]:
    """Create a loop nest over `[0, extents)` at `insert_point` through `rewriter`.

    Returns the induction variables (outermost first, named `physical_names`) and an
    insertion point before the innermost body's terminator.
    """
    constants: dict[int, SSAValue] = {}

    def constant(value: int) -> SSAValue:
        if value not in constants:
            op = arith.ConstantOp.from_int_and_width(value, IndexType())
            rewriter.insert(op, insert_point)
            constants[value] = op.result
        return constants[value]

    zero, one = constant(0), constant(1)
    names = physical_names(len(extents))
    uppers = [constant(e) for e in extents]
    if parallel:
        body = Block(arg_types=[IndexType()] * len(extents))
        body.add_op(ReduceOp())
        for arg, name in zip(body.args, names, strict=True):
            arg.name_hint = name
        loop = ParallelOp([zero] * len(extents), uppers, [one] * len(extents), Region(body))
        rewriter.insert(loop, insert_point)
        return list(body.args), InsertPoint.before(body.ops.last)  # type: ignore[arg-type]
    ivs: list[SSAValue] = []
    point = insert_point
    for upper, name in zip(uppers, names, strict=True):
        body = Block(arg_types=[IndexType()])
        body.args[0].name_hint = name
        body.add_op(scf.YieldOp())
        loop = scf.ForOp(zero, upper, one, [], Region(body))
        rewriter.insert(loop, point)
        ivs.append(body.args[0])
        point = InsertPoint.before(body.ops.last)  # type: ignore[arg-type]
    return ivs, point


def physical_names(rank: int) -> list[str]:
    """Names of the transformed-box coordinates used in emitted expressions."""
    return [f"p{k}" for k in range(rank)]


def padding_condition(
    index_map: IndexMap,
    inverse: IndexMap,
    logical_shape: Sequence[int],
    physical_shape: Sequence[int],
    emitter: RewritingEmitter,
) -> SSAValue | None:
    """Emit an `i1` that is true exactly when the transformed index is padding.

    The emitter must bind `physical_names(len(physical_shape))` with their box bounds.
    Returns None when no transformed index is padding (all checks simplify away).
    """
    names = physical_names(len(physical_shape))
    bounds = {n: (0, e - 1) for n, e in zip(names, physical_shape, strict=True)}
    point = {d: Dim(n) for d, n in zip(inverse.initial_indices, names, strict=True)}
    logical = [simplify(e.substitute(point), bounds) for e in inverse.final_indices]
    checks: list[tuple[str, Expr, Expr]] = []
    for expr, extent in zip(logical, logical_shape, strict=True):
        low, high = expr_range(expr, bounds)
        if low < 0:
            checks.append(("slt", expr, Const(0)))
        if high > extent - 1:
            checks.append(("sge", expr, Const(extent)))
    back = {d: e for d, e in zip(index_map.initial_indices, logical, strict=True)}
    for name, expr in zip(names, index_map.final_indices, strict=True):
        image = simplify(expr.substitute(back), bounds)
        if simplify(image - Dim(name), bounds) != Const(0):
            checks.append(("ne", image, Dim(name)))
    if not checks:
        return None
    result: SSAValue | None = None
    for predicate, lhs, rhs in checks:
        cmp = arith.CmpiOp(emitter.emit(lhs), emitter.emit(rhs), predicate)
        emitter.insert(cmp)
        if result is None:
            result = cmp.result
            continue
        either = arith.OrIOp(result, cmp.result)
        emitter.insert(either)
        result = either.result
    return result


def in_reduction(op: Operation, root: Operation) -> bool:
    """Whether `op` lies in an `scf.for` with `iter_args` (a reduction) below `root`."""
    parent = op.parent_op()
    while parent is not None and parent is not root:
        if isinstance(parent, scf.ForOp) and parent.iter_args:
            return True
        parent = parent.parent_op()
    return False
