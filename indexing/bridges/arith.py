"""Quasi-affine expressions <-> index arithmetic in IR (`arith`, `affine.apply`).

`IndexAnalysis` reads the `index` values feeding an access as quasi-affine expressions over
*leaf* values (loop induction variables, function arguments, anything it cannot see
through), with the leaves' ranges taken from constant loop bounds. `ExprEmitter` writes a
quasi-affine expression back as `arith` ops. Passes use the pair to compose an access with
an IndexMap, simplify the composition with the known ranges, and rebuild the index math.

Emitted semantics are exact: `floordiv`/`mod`/`ceildiv` of operands proven non-negative
become `arith.divsi`/`arith.remsi`/(`x + k - 1`)`divsi` (truncation equals floor there, and
every backend has them); otherwise `arith.floordivsi`, `arith.ceildivsi` and a
remainder-plus-select sequence give the floor semantics of MLIR's affine expressions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from xdsl.dialects import affine, arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from physlayout.indexing.bridges.affine import affine_to_expr
from physlayout.indexing.expr_range import expr_range, interval_of, is_non_negative
from physlayout.indexing.quasi_affine import Add, CeilDiv, Const, Dim, Expr, FloorDiv, Mod, Mul

Bounds = dict[str, tuple[int, int]]


def constant_bounds_of(value: SSAValue) -> tuple[int, int] | None:
    """The inclusive range of a loop induction variable with constant bounds, else None
    (with a constant step, the last value the variable takes)."""
    if not isinstance(value, BlockArgument):
        return None
    loop = value.block.parent_op()
    step: int | None = 1
    match loop:
        case scf.ForOp() if value.index == 0:
            lb, ub = const_evaluate_operand(loop.lb), const_evaluate_operand(loop.ub)
            step = const_evaluate_operand(loop.step)
        case affine.ForOp() if value.index == 0:
            lb = _const_map(loop.lowerBoundMap.data.results, 0, loop.lowerBoundOperands)
            ub = _const_map(loop.upperBoundMap.data.results, 0, loop.upperBoundOperands)
            step = loop.step.value.data
        case scf.ParallelOp():
            lb = const_evaluate_operand(loop.lowerBound[value.index])
            ub = const_evaluate_operand(loop.upperBound[value.index])
            step = const_evaluate_operand(loop.step[value.index])
        case affine.ParallelOp():
            lb = _const_map(loop.lowerBoundsMap.data.results, value.index, loop.map_operands)
            ub = _const_map(loop.upperBoundsMap.data.results, value.index, loop.map_operands)
        case _:
            return None
    if lb is None or ub is None or ub <= lb:
        return None
    if step is None or step < 1:
        return (lb, ub - 1)
    return (lb, lb + (ub - 1 - lb) // step * step)


def _pick(
    pick: Callable[[int, int], int], a: int | None, b: int | None, unbounded_wins: bool
) -> int | None:
    """`pick(a, b)` of two interval ends, None standing for an infinity: an unbounded end
    decides when `unbounded_wins` (min of a lower end, max of an upper), else the other."""
    if a is None or b is None:
        return None if unbounded_wins else a if b is None else b
    return pick(a, b)


def _const_map(results: tuple[AffineExpr, ...], index: int, operands: object) -> int | None:
    if index >= len(results):
        return None
    result = results[index]
    if isinstance(result, AffineConstantExpr):
        return result.value
    return None


@dataclass
class IndexAnalysis:
    """Reads index values as quasi-affine expressions over named leaf values.

    Leaves get the names `v0, v1, ...` in order of discovery; `leaves` maps a name back to
    its value and `bounds` holds the inclusive range of each leaf whose range is known.
    """

    see_floor_mods: bool = False
    """Read `ExprEmitter`'s sign-fixed remainder (remsi, cmpi slt, addi, select) as a
    ``mod`` instead of a leaf (vectorize-texels, which re-emits lane indices from the
    expressions; passes that rewrite every index they read keep it off, so that a second
    run leaves their output as it is)."""
    leaves: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    bounds: Bounds = field(default_factory=dict[str, tuple[int, int]])
    _cache: dict[SSAValue, Expr] = field(default_factory=dict[SSAValue, Expr])

    def leaf(self, value: SSAValue) -> Dim:
        """The dimension naming `value` as an opaque leaf."""
        name = self.names.get(value)
        if name is None:
            name = f"v{len(self.leaves)}"
            self.names[value] = name
            self.leaves[name] = value
            known = constant_bounds_of(value)
            if known is not None:
                self.bounds[name] = known
        return Dim(name)

    def expr_of(self, value: SSAValue) -> Expr:
        """`value` as a quasi-affine expression over leaves."""
        cached = self._cache.get(value)
        if cached is None:
            cached = self._analyze(value)
            self._cache[value] = cached
        return cached

    def _analyze(self, value: SSAValue) -> Expr:
        op = value.owner
        if not isinstance(op, Operation) or not isinstance(value.type, IndexType):
            return self.leaf(value)
        match op:
            case arith.ConstantOp(value=IntegerAttr() as attr):
                return Const(attr.value.data)
            case arith.AddiOp():
                return Add(self.expr_of(op.lhs), self.expr_of(op.rhs))
            case arith.SubiOp():
                return Add(self.expr_of(op.lhs), Mul(self.expr_of(op.rhs), Const(-1)))
            case arith.MuliOp():
                return self._product(value, op.lhs, op.rhs)
            case arith.FloorDivSIOp() | arith.CeilDivSIOp():
                return self._division(value, op)
            case arith.DivSIOp() | arith.DivUIOp() | arith.RemSIOp() | arith.RemUIOp():
                return self._truncating(value, op)
            case affine.ApplyOp():
                return self._apply(value, op)
            case arith.SelectOp() if self.see_floor_mods:
                return self._floor_mod(value, op)
            case arith.MinSIOp() | arith.MaxSIOp():
                return self._clamp(value, op)
            case _:
                return self.leaf(value)

    def _clamp(self, value: SSAValue, op: arith.MinSIOp | arith.MaxSIOp) -> Expr:
        """A leaf for `minsi`/`maxsi`, bounded by its operands' ranges (a tile's clamped
        index `min(i + k, last)` stays within `last`)."""
        leaf = self.leaf(value)
        lhs = interval_of(self.expr_of(op.lhs), self.bounds)
        rhs = interval_of(self.expr_of(op.rhs), self.bounds)
        pick = min if isinstance(op, arith.MinSIOp) else max
        low = _pick(pick, lhs[0], rhs[0], unbounded_wins=pick is min)
        high = _pick(pick, lhs[1], rhs[1], unbounded_wins=pick is max)
        if low is not None and high is not None:
            self.bounds[leaf.name] = (low, high)
        return leaf

    def _floor_mod(self, value: SSAValue, op: arith.SelectOp) -> Expr:
        """``select(remsi(x, k) < 0, remsi(x, k) + k, remsi(x, k))`` (what `ExprEmitter`
        writes for ``x mod k`` of a possibly negative ``x``) -> ``x mod k``; else a leaf."""
        remainder = op.rhs.owner
        compare, shifted = op.cond.owner, op.lhs.owner
        if not isinstance(remainder, arith.RemSIOp) or not isinstance(compare, arith.CmpiOp):
            return self.leaf(value)
        k = self._divisor(remainder.rhs)
        fixup = (
            isinstance(shifted, arith.AddiOp)
            and {shifted.lhs, shifted.rhs} >= {op.rhs}
            and compare.predicate.value.data == arith.CMPI_COMPARISON_OPERATIONS.index("slt")
            and compare.lhs is op.rhs
            and self.expr_of(compare.rhs) == Const(0)
        )
        if k is None or not fixup:
            return self.leaf(value)
        assert isinstance(shifted, arith.AddiOp)
        other = shifted.rhs if shifted.lhs is op.rhs else shifted.lhs
        if self.expr_of(other) != Const(k):
            return self.leaf(value)
        return Mod(self.expr_of(remainder.lhs), k)

    def _product(self, value: SSAValue, lhs: SSAValue, rhs: SSAValue) -> Expr:
        left, right = self.expr_of(lhs), self.expr_of(rhs)
        if isinstance(left, Const) or isinstance(right, Const):
            return Mul(left, right)
        return self.leaf(value)

    def _divisor(self, value: SSAValue) -> int | None:
        divisor = self.expr_of(value)
        if isinstance(divisor, Const) and divisor.value > 0:
            return divisor.value
        return None

    def _division(self, value: SSAValue, op: arith.FloorDivSIOp | arith.CeilDivSIOp) -> Expr:
        k = self._divisor(op.rhs)
        if k is None:
            return self.leaf(value)
        lhs = self.expr_of(op.lhs)
        return FloorDiv(lhs, k) if isinstance(op, arith.FloorDivSIOp) else CeilDiv(lhs, k)

    def _truncating(
        self, value: SSAValue, op: arith.DivSIOp | arith.DivUIOp | arith.RemSIOp | arith.RemUIOp
    ) -> Expr:
        """Truncating division equals floor division only for a non-negative dividend."""
        k = self._divisor(op.rhs)
        lhs = self.expr_of(op.lhs)
        if k is None or self.range_of(lhs)[0] < 0:
            return self.leaf(value)
        if isinstance(op, arith.DivSIOp | arith.DivUIOp):
            return FloorDiv(lhs, k)
        return Mod(lhs, k)

    def _apply(self, value: SSAValue, op: affine.ApplyOp) -> Expr:
        results = op.map.data.results
        if len(results) != 1:
            return self.leaf(value)
        num_dims = op.map.data.num_dims
        operands = [self.expr_of(v) for v in op.mapOperands]
        converted = affine_to_expr(results[0], operands[:num_dims], operands[num_dims:])
        return self.leaf(value) if converted is None else converted

    def range_of(self, expr: Expr) -> tuple[int, int]:
        """Inclusive range of `expr` under the known leaf bounds (unbounded leaves widen it)."""
        unknown = {name for name in expr.dims() if name not in self.bounds}
        if unknown:
            return (-(2**62), 2**62)
        return expr_range(expr, self.bounds)


@dataclass
class ExprEmitter:
    """Emits quasi-affine expressions as `arith` ops at an insertion point.

    `values` binds dimension names to SSA values; `bounds` gives their inclusive ranges
    (used to choose cheap truncating ops when an operand is provably non-negative).
    Structurally equal sub-expressions are emitted once per emitter.
    """

    insert_point: InsertPoint
    values: Mapping[str, SSAValue]
    bounds: Mapping[str, tuple[int, int]]
    _memo: dict[Expr, SSAValue] = field(default_factory=dict[Expr, SSAValue])

    def emit(self, expr: Expr) -> SSAValue:
        """The `index` value of `expr` (one op sequence per distinct subexpression)."""
        cached = self._memo.get(expr)
        if cached is None:
            cached = self._emit(expr)
            self._memo[expr] = cached
        return cached

    def insert(self, op: Operation) -> None:
        """Insert `op` (built by the caller from emitted values) at the insertion point."""
        Rewriter.insert_op(op, self.insert_point)

    def _insert(self, op: Operation) -> SSAValue:
        self.insert(op)
        return op.results[0]

    def constant(self, value: int) -> SSAValue:
        """The `index` constant `value`."""
        return self.emit(Const(value))

    def _emit(self, expr: Expr) -> SSAValue:
        match expr:
            case Dim(name=name):
                return self.values[name]
            case Const(value=value):
                return self._insert(arith.ConstantOp.from_int_and_width(value, IndexType()))
            case Add(lhs=lhs, rhs=Mul(lhs=rhs, rhs=Const(value=-1))):
                return self._insert(arith.SubiOp(self.emit(lhs), self.emit(rhs)))
            case Add(lhs=lhs, rhs=rhs):
                return self._insert(arith.AddiOp(self.emit(lhs), self.emit(rhs)))
            case Mul(lhs=lhs, rhs=rhs):
                return self._insert(arith.MuliOp(self.emit(lhs), self.emit(rhs)))
            case FloorDiv(lhs=lhs, divisor=k):
                if is_non_negative(lhs, self.bounds):
                    return self._insert(arith.DivSIOp(self.emit(lhs), self.constant(k)))
                return self._insert(arith.FloorDivSIOp(self.emit(lhs), self.constant(k)))
            case CeilDiv(lhs=lhs, divisor=k):
                if is_non_negative(lhs, self.bounds):
                    return self.emit(FloorDiv(Add(lhs, Const(k - 1)), k))
                return self._insert(arith.CeilDivSIOp(self.emit(lhs), self.constant(k)))
            case Mod(lhs=lhs, divisor=k):
                remainder = self._insert(arith.RemSIOp(self.emit(lhs), self.constant(k)))
                if is_non_negative(lhs, self.bounds):
                    return remainder
                return self._floor_mod_fixup(remainder, k)
            case _:
                raise ValueError(f"cannot emit expression {expr}")

    def _floor_mod_fixup(self, remainder: SSAValue, k: int) -> SSAValue:
        shifted = self._insert(arith.AddiOp(remainder, self.constant(k)))
        negative = self._insert(arith.CmpiOp(remainder, self.constant(0), "slt"))
        return self._insert(arith.SelectOp(negative, shifted, remainder))
