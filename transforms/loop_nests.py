"""Building blocks for passes that create loop nests over a buffer's transformed box.

`build_scf_nest` creates a perfect `scf.for` nest (or one `scf.parallel`) over constant
extents and returns the induction variables and an insertion point in the innermost body.
`padding_condition` emits the exact "is padding" test for a transformed index: an index
`p` of the transformed box has a preimage iff `x = inverse(p)` lies in the logical box and
`map(x) == p` (the inverse is exact on the image, so both hold exactly on the image).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.indexing.simplify import simplify

PHYSICAL_ACCESS = "layout.physical"
"""Discardable unit attribute on a `layout.store` whose indices are already in the buffer's
transformed layout (written by apply-layout for padding); consumed by apply-layout."""


def build_scf_nest(
    extents: Sequence[int], insert_point: InsertPoint, parallel: bool = False
) -> tuple[list[SSAValue], InsertPoint]:
    """Create a loop nest over `[0, extents)` at `insert_point`.

    Returns the induction variables (outermost first) and an insertion point before the
    innermost body's terminator.
    """
    constants: dict[int, SSAValue] = {}

    def constant(value: int) -> SSAValue:
        if value not in constants:
            op = arith.ConstantOp.from_int_and_width(value, IndexType())
            Rewriter.insert_op(op, insert_point)
            constants[value] = op.result
        return constants[value]

    zero, one = constant(0), constant(1)
    names = physical_names(len(extents))
    uppers = [constant(e) for e in extents]
    if parallel:
        body = Block(arg_types=[IndexType()] * len(extents))
        body.add_op(scf.ReduceOp())
        for arg, name in zip(body.args, names, strict=True):
            arg.name_hint = name
        loop = scf.ParallelOp([zero] * len(extents), uppers, [one] * len(extents), Region(body))
        Rewriter.insert_op(loop, insert_point)
        return list(body.args), InsertPoint.before(body.ops.last)  # type: ignore[arg-type]
    ivs: list[SSAValue] = []
    point = insert_point
    for upper, name in zip(uppers, names, strict=True):
        body = Block(arg_types=[IndexType()])
        body.args[0].name_hint = name
        body.add_op(scf.YieldOp())
        loop = scf.ForOp(zero, upper, one, [], Region(body))
        Rewriter.insert_op(loop, point)
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
    emitter: ExprEmitter,
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
        Rewriter.insert_op(cmp, emitter.insert_point)
        if result is None:
            result = cmp.result
            continue
        either = arith.OrIOp(result, cmp.result)
        Rewriter.insert_op(either, emitter.insert_point)
        result = either.result
    return result
