"""Unit and property tests of physlayout.indexing.bridges: every conversion between
quasi-affine expressions and another form agrees with `Expr.evaluate`."""

from __future__ import annotations

import itertools
import re

import islpy as isl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineDimExpr

from physlayout.indexing.bridges import isl as isl_bridge
from physlayout.indexing.bridges.affine import affine_to_expr, expr_to_affine
from physlayout.indexing.bridges.c_text import expr_to_c
from physlayout.indexing.expr_parser import parse_expr
from physlayout.indexing.quasi_affine import CeilDiv, Const, Dim, Expr, FloorDiv, Mod

PROPERTY = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

NAMES = ("i", "j")
DIVISORS = st.sampled_from([1, 2, 3, 4])


def _extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        st.builds(lambda e, c: e * c, children, st.integers(-3, 5)),
        st.builds(lambda e, c: c * e, children, st.integers(-3, 5)),
        st.builds(FloorDiv, children, DIVISORS),
        st.builds(CeilDiv, children, DIVISORS),
        st.builds(Mod, children, DIVISORS),
        st.builds(lambda a, b: a + b, children, children),
        st.builds(lambda a, b: a - b, children, children),
    )


EXPRS: st.SearchStrategy[Expr] = st.recursive(
    st.one_of(st.sampled_from([Dim(n) for n in NAMES]), st.integers(-4, 6).map(Const)),
    _extend,
    max_leaves=6,
)

POINTS = list(itertools.product(range(-3, 4), repeat=2))


@PROPERTY
@given(EXPRS)
def test_affine_round_trip_is_exact(expr: Expr) -> None:
    position = {name: k for k, name in enumerate(NAMES)}
    plain = expr_to_affine(expr, position)
    assert affine_to_expr(plain, [Dim(n) for n in NAMES]) == expr
    folded = expr_to_affine(expr, position, fold=True)
    back = affine_to_expr(folded, [Dim(n) for n in NAMES])
    assert back is not None
    for point in POINTS:
        env = dict(zip(NAMES, point, strict=True))
        assert back.evaluate(env) == expr.evaluate(env)


def test_affine_symbols_and_refusals() -> None:
    expr = parse_expr("i * 4 + j mod 3", ["i", "j"])
    affine = expr_to_affine(expr, {"i": 0}, {"j": 0})
    assert str(affine) == "((d0 * 4) + (s0 mod 3))"
    assert affine_to_expr(affine, [Dim("a")], [Dim("b")]) == parse_expr("a * 4 + b mod 3", ["a", "b"])
    with pytest.raises(ValueError, match="cannot express k as an affine expression"):
        expr_to_affine(Dim("k"), {"i": 0})
    d0, d1 = AffineDimExpr(0), AffineDimExpr(1)
    product = AffineBinaryOpExpr(AffineBinaryOpKind.Mul, d0, d1)
    assert affine_to_expr(product, [Dim("i"), Dim("j")]) is None
    assert affine_to_expr(d1, [Dim("i")]) is None


class _CInt(int):
    """A C `int` (no overflow in these tests): `/` and `%` truncate toward zero."""

    def __add__(self, other: int) -> _CInt:  # type: ignore[override]
        return _CInt(int(self) + int(other))

    def __sub__(self, other: int) -> _CInt:  # type: ignore[override]
        return _CInt(int(self) - int(other))

    def __mul__(self, other: int) -> _CInt:  # type: ignore[override]
        return _CInt(int(self) * int(other))

    def __neg__(self) -> _CInt:
        return _CInt(-int(self))

    def __truediv__(self, other: int) -> _CInt:  # type: ignore[override]
        quotient = abs(int(self)) // abs(int(other))
        return _CInt(quotient if (int(self) >= 0) == (int(other) > 0) else -quotient)

    def __mod__(self, other: int) -> _CInt:  # type: ignore[override]
        return _CInt(int(self) - int(self / other) * int(other))


_C_HELPERS = {
    "px_floordiv": lambda a, b: _CInt(int(a) // int(b)),
    "px_ceildiv": lambda a, b: _CInt(-(-int(a) // int(b))),
    "px_mod": lambda a, b: _CInt(int(a) % int(b)),
}


def _c_value(text: str, env: dict[str, int]) -> int:
    """Evaluate the C text of an index expression with C's semantics."""
    python = re.sub(r"\b(\d+)\b", r"_CInt(\1)", text)
    names = {name: _CInt(value) for name, value in env.items()}
    return int(eval(python, {"_CInt": _CInt, **_C_HELPERS}, names))


@PROPERTY
@given(EXPRS)
def test_c_text_agrees_with_evaluation(expr: Expr) -> None:
    bounds = {"i": (0, 3)}  # `i` is provably non-negative, `j` is not bounded
    helpers: set[str] = set()
    text = expr_to_c(expr, {"i": "i", "j": "j"}, bounds, helpers)
    for point in POINTS:
        env = dict(zip(NAMES, point, strict=True))
        if env["i"] < 0:
            continue
        assert _c_value(text, env) == expr.evaluate(env), text


def test_c_text_uses_truncation_only_when_proven_non_negative() -> None:
    helpers: set[str] = set()
    expr = parse_expr("(i floordiv 4) * 2 - j mod 3", ["i", "j"])
    assert expr_to_c(expr, {"i": "x", "j": "y"}, {"i": (0, 7)}, helpers) == (
        "x / 4 * 2 - px_mod(y, 3)"
    )
    assert helpers == {"px_mod"}
    with pytest.raises(ValueError, match="cannot print index expression"):
        expr_to_c("i", {}, {}, set())  # type: ignore[arg-type]


def test_isl_conjunction_round_trip() -> None:
    names = ["i0", "i1"]
    conjunction = [(parse_expr("i0 - 2", names), True), (parse_expr("i1 mod 2 - 1", names), True)]
    text = isl_bridge.conjunction_to_isl(conjunction, names)
    assert isl_bridge.conjunction_to_isl([], names) == "0 = 0"
    built = isl_bridge.build_set(names, [4, 4], text)
    assert built.is_equal(isl.Set("{ [i0, i1] : i0 = 2 and 0 <= i1 <= 3 and i1 mod 2 = 1 }"))
    disjuncts = isl_bridge.set_to_disjuncts(built, names)
    again = isl_bridge.build_set(
        names, [4, 4], " or ".join(f"({isl_bridge.conjunction_to_isl(c, names)})" for c in disjuncts)
    )
    assert again.is_equal(built)


# arith: IndexAnalysis reads back what ExprEmitter writes -------------------------------------


@pytest.mark.parametrize("text", ["(i - j) mod 4", "(j - i * 3) mod 4", "(i - 5) mod 3"])
def test_index_analysis_reads_emitted_mods(text: str) -> None:
    """A `mod` of a possibly negative value is emitted as remsi + a sign fix (cmpi slt,
    addi, select); the analysis reads that sequence back as the same `mod` (vectorize-texels
    needs it to see a lane's texel in a grouped conv's data access), and a select that is
    not such a fix stays a leaf."""
    from xdsl.dialects import arith as arith_dialect
    from xdsl.dialects.builtin import IndexType
    from xdsl.ir import Block
    from xdsl.rewriter import InsertPoint

    from physlayout.indexing.bridges.arith import ExprEmitter, IndexAnalysis
    from physlayout.indexing.simplify import simplify

    block = Block(arg_types=[IndexType(), IndexType()])
    i, j = block.args
    expr = parse_expr(text, ["i", "j"])
    emitter = ExprEmitter(InsertPoint.at_end(block), {"i": i, "j": j}, {"i": (0, 7), "j": (0, 7)})
    value = emitter.emit(expr)
    analysis = IndexAnalysis(see_floor_mods=True)
    read = analysis.expr_of(value)
    assert isinstance(IndexAnalysis().expr_of(value), Dim)  # off by default: a leaf
    names = {analysis.names[v]: Dim(n) for v, n in ((i, "i"), (j, "j")) if v in analysis.names}
    assert simplify(read.substitute(names)) == simplify(expr)
    assert any(isinstance(op, arith_dialect.SelectOp) for op in block.ops)
    # a select of the same values under another predicate is not a mod
    selects = [op for op in block.ops if isinstance(op, arith_dialect.SelectOp)]
    for select in selects:
        compare = select.cond.owner
        assert isinstance(compare, arith_dialect.CmpiOp)
        other = arith_dialect.CmpiOp(compare.lhs, compare.rhs, "sgt")
        block.insert_op_before(other, select)
        wrong = arith_dialect.SelectOp(other.result, select.lhs, select.rhs)
        block.insert_op_after(wrong, select)
        assert isinstance(IndexAnalysis(see_floor_mods=True).expr_of(wrong.result), Dim)
