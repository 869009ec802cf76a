"""Unit tests of physlayout.indexing.quasi_affine (AST, printer, parser, evaluation,
interval analysis and simplification)."""

from __future__ import annotations

import numpy as np
import pytest

from physlayout.indexing.expr_parser import parse_expr
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.quasi_affine import (
    Add,
    CeilDiv,
    Const,
    Dim,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    ceildiv,
)
from physlayout.indexing.simplify import linear_terms, simplify

i, j, k, c, n, e = (Dim(name) for name in ("i", "j", "k", "c", "n", "e"))
NAMES = ["i", "j", "k", "c", "n", "e"]


def p(text: str) -> Expr:
    return parse_expr(text, NAMES)


# Construction and operators ---------------------------------------------------------------


def test_operators_build_nodes() -> None:
    assert i + j == Add(i, j)
    assert i * 4 == Mul(i, Const(4))
    assert 4 * i == Mul(Const(4), i)
    assert i // 4 == FloorDiv(i, 4)
    assert i % 4 == Mod(i, 4)
    assert -i == Mul(i, Const(-1))
    assert i - j == Add(i, Mul(j, Const(-1)))
    assert i - 3 == Add(i, Const(-3))
    assert 3 - i == Add(Const(3), Mul(i, Const(-1)))
    assert ceildiv(i, 4) == CeilDiv(i, 4)
    assert +i is i


def test_operators_fold_constants() -> None:
    assert Const(2) + 3 == Const(5)
    assert Const(7) // 2 == Const(3)
    assert Const(-7) // 2 == Const(-4)
    assert Const(-7) % 2 == Const(1)
    assert ceildiv(Const(7), 2) == Const(4)
    assert 10 // Const(3) == Const(3)


def test_numpy_integers_are_accepted() -> None:
    assert np.int64(2) * i == Mul(Const(2), i)
    assert i + np.int32(1) == Add(i, Const(1))


def test_mul_folds_constant_side() -> None:
    product = Mul(i, Add(Const(2), Const(3)))
    assert product.rhs == Const(5)


def test_product_of_non_constants_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"expression 'i \* j' is not quasi-affine: product"):
        _ = i * j
    with pytest.raises(ValueError, match="product of two non-constant terms"):
        Mul(i + 1, j)


@pytest.mark.parametrize("divisor", [0, -4, 2.5, True])
def test_bad_divisors(divisor: object) -> None:
    with pytest.raises(ValueError, match="divisor must be a positive constant, got"):
        FloorDiv(i, divisor)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="divisor must be a positive constant"):
        Mod(i, divisor)  # type: ignore[arg-type]


def test_non_constant_divisor_and_true_division() -> None:
    with pytest.raises(ValueError, match="divisor of floordiv must be a constant"):
        _ = i // j
    with pytest.raises(ValueError, match="divisor of mod must be a constant"):
        _ = 7 % i
    with pytest.raises(ValueError, match="true division"):
        _ = i / 2


def test_invalid_nodes() -> None:
    with pytest.raises(ValueError, match="invalid dimension name"):
        Dim("floordiv")
    with pytest.raises(ValueError, match="invalid dimension name"):
        Dim("1x")
    with pytest.raises(ValueError, match="constant must be an integer"):
        Const(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot use"):
        _ = i + 1.5  # type: ignore[operator]


def test_hash_and_structural_equality() -> None:
    assert hash(i + j) == hash(Dim("i") + Dim("j"))
    assert i + j != j + i
    assert len({i + j, Dim("i") + Dim("j"), j + i}) == 2


def test_dims_and_substitute() -> None:
    assert (n * 32 + c // 4).dims() == frozenset({"n", "c"})
    assert Const(3).dims() == frozenset()
    assert (i + j).substitute({"i": k * 2, "j": 3}) == Add(Mul(k, Const(2)), Const(3))
    assert (i // 4).substitute({"i": Const(9)}) == Const(2)


# Evaluation -------------------------------------------------------------------------------


def test_evaluate_floor_semantics() -> None:
    env = {"i": -7}
    assert (i // 2).evaluate(env) == -4
    assert (i % 2).evaluate(env) == 1
    assert ceildiv(i, 2).evaluate(env) == -3
    assert ceildiv(Dim("i"), 2).evaluate({"i": 7}) == 4
    assert (n * 32 + c // 4).evaluate({"n": 2, "c": 13}) == 67


def test_evaluate_numpy_arrays() -> None:
    values = np.arange(-8, 8, dtype=np.int32)
    expr = i // 4 * 10 + i % 4 + ceildiv(i, 3)
    out = expr.evaluate({"i": values})
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.int64
    expected = [(v // 4) * 10 + v % 4 - (-v // 3) for v in range(-8, 8)]
    assert out.tolist() == expected


def test_evaluate_broadcasts() -> None:
    out = (i * 10 + j).evaluate({"i": np.arange(3)[:, None], "j": np.arange(2)[None, :]})
    assert isinstance(out, np.ndarray)
    assert out.tolist() == [[0, 1], [10, 11], [20, 21]]


def test_evaluate_errors() -> None:
    with pytest.raises(ValueError, match="no value for dimension 'j'"):
        (i + j).evaluate({"i": 1})
    with pytest.raises(ValueError, match="must be an integer array"):
        i.evaluate({"i": np.zeros(3)})
    with pytest.raises(ValueError, match="must be an integer"):
        i.evaluate({"i": 1.5})  # type: ignore[dict-item]


# Printing and parsing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (n * 32 + c // 4, "n * 32 + c floordiv 4"),
        ((i + j) // 4, "(i + j) floordiv 4"),
        (c % 4, "c mod 4"),
        (i - j, "i - j"),
        (-i, "-i"),
        ((c // 4) * 4 + c % 4, "(c floordiv 4) * 4 + c mod 4"),
        (i - j * 3, "i - j * 3"),
        (i - 3, "i - 3"),
        (Const(-5), "-5"),
        (Mul(Const(5), Const(-1)), "5 * -1"),
        (-(i + j), "-(i + j)"),
        (-(i // 2), "-(i floordiv 2)"),
        (ceildiv(i * 3, 4), "(i * 3) ceildiv 4"),
        (i + (j + k), "i + (j + k)"),
        (i // 2 // 3, "(i floordiv 2) floordiv 3"),
        (-i * 3, "-i * 3"),
        (Add(i, Mul(Mul(j, Const(2)), Const(-1))), "i + -(j * 2)"),
    ],
)
def test_print_and_round_trip(expr: Expr, text: str) -> None:
    assert str(expr) == text
    assert p(text) == expr


def test_parse_precedence_and_associativity() -> None:
    assert p("i + j * 2") == i + j * 2
    assert p("i - j - k") == (i - j) - k
    assert p("i floordiv 2 mod 3") == (i // 2) % 3
    assert p("i * 2 floordiv 3") == (i * 2) // 3
    assert p("-i floordiv 2") == (-i) // 2
    assert p("  i+j  ") == i + j
    assert p("i floordiv (2 * 2)") == i // 4
    assert p("(2 + 3) * i") == Mul(Const(5), i)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("i + x", r"unknown dimension 'x' at 'x' \(column 5\)"),
        ("i * j", r"not quasi-affine: product of two non-constant terms at '\*' \(column 3\)"),
        ("i floordiv 0", r"divisor must be a positive constant, got 0 at '0' \(column 12\)"),
        ("i mod -2", "divisor must be a positive constant, got -2"),
        ("i floordiv j", "the divisor of floordiv must be an integer constant"),
        ("i + ", r"expected an expression at end of input \(column 5\)"),
        ("i j", "unexpected token at 'j'"),
        ("(i + j", "expected '\\)' at end of input"),
        ("i $ j", r"unexpected character '\$' at column 3"),
        ("floordiv 2", "expected an expression before 'floordiv'"),
        ("", "expected an expression"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        p(text)


# Interval analysis ------------------------------------------------------------------------


def test_expr_range() -> None:
    assert expr_range(i % 16, {"i": (0, 13)}) == (0, 13)
    assert expr_range(i % 4, {"i": (0, 13)}) == (0, 3)
    assert expr_range(i % 4, {"i": (5, 6)}) == (1, 2)
    assert expr_range(i // 4, {"i": (0, 9)}) == (0, 2)
    assert expr_range(ceildiv(i, 4), {"i": (0, 9)}) == (0, 3)
    assert expr_range(n * 32 + c // 4, {"n": (0, 3), "c": (0, 127)}) == (0, 127)
    assert expr_range(i - j, {"i": (0, 3), "j": (0, 4)}) == (-4, 3)
    assert expr_range(Const(7), {}) == (7, 7)


def test_expr_range_errors() -> None:
    with pytest.raises(ValueError, match="no bounds given for dimension 'j'"):
        expr_range(i + j, {"i": (0, 3)})
    with pytest.raises(ValueError, match="bounds of 'i' are empty"):
        expr_range(i, {"i": (3, 2)})
    with pytest.raises(ValueError, match="must be a pair of integers"):
        expr_range(i, {"i": (0,)})  # type: ignore[dict-item]


def test_simplify_checks_the_bounds_it_reads() -> None:
    """`simplify` validates the bounds of the expression's dimensions only, whatever their
    kind: Python ints (its fast path), numpy integers and lists are accepted and give the
    same memo entry; bools, empty and malformed pairs are refused (ValueError)."""
    expr = (i * 4 + j) // 4
    assert simplify(expr, {"i": (0, 3), "j": (0, 3), "k": (5, 1)}) == i
    assert simplify(expr, {"i": (np.int64(0), np.int64(3)), "j": [0, 3]}) == i  # type: ignore[dict-item]
    assert simplify(j // 4, {"j": (0, 5)}) == j // 4
    with pytest.raises(ValueError, match="bounds of 'j' are empty"):
        simplify(expr, {"i": (0, 3), "j": (3, 0)})
    with pytest.raises(ValueError, match="must be a pair of integers"):
        simplify(expr, {"i": (0, 3), "j": (False, True)})
    with pytest.raises(ValueError, match="must be a pair of integers"):
        simplify(expr, {"j": (0, 1, 2)})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="must be a pair of integers"):
        simplify(expr, {"j": None})  # type: ignore[dict-item]


# Simplification ---------------------------------------------------------------------------

BOX = {"i": (0, 3), "j": (0, 3), "k": (0, 7), "c": (0, 127), "n": (0, 15), "e": (0, 63)}


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("2 + 3 * 4 - 1", "13"),
        ("j + i + i * 2 - 1 + 3", "i * 3 + j + 2"),
        ("i - i", "0"),
        ("(c floordiv 4) * 4 + c mod 4", "c"),
        ("n * 32 + (c floordiv 4) * 4 + c mod 4", "n * 32 + c"),
        ("(e floordiv 4) * 8 + (e mod 4) * 2", "e * 2"),
        ("(i floordiv 4) floordiv 2", "i floordiv 8"),
        ("(i ceildiv 2) ceildiv 3", "i ceildiv 6"),
        ("(i mod 8) mod 4", "i mod 4"),
        ("(i mod 6) mod 4", "(i mod 6) mod 4"),
        ("(i * 4 + j) floordiv 4", "i + j floordiv 4"),
        ("(i * 4 + j) mod 4", "j mod 4"),
        ("(i + 5) mod 4", "(i + 1) mod 4"),
        ("(i * 2) floordiv 4", "i floordiv 2"),
        ("(i * 2) mod 4", "(i mod 2) * 2"),
        ("i - (i floordiv 4) * 4", "i mod 4"),
        ("((i mod 8) floordiv 4) * 4 + i mod 4 + (i floordiv 8) * 8", "i"),
        ("((i floordiv 2) mod 2) * 2 + i mod 2", "i mod 4"),
        ("i + (j - i * 2) floordiv 6", "(i * 4 + j) floordiv 6"),
        ("i mod 1 + i floordiv 1", "i"),
        ("(i * 4 + j mod 4) floordiv 4", "i"),
        ("b - a", "b - a"),
    ],
)
def test_simplify_rules(before: str, after: str) -> None:
    names = [*NAMES, "a", "b"]
    assert str(simplify(parse_expr(before, names))) == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("i floordiv 4", "0"),
        ("i mod 4", "i"),
        ("(i + 4) floordiv 4", "1"),
        ("(i + 4) mod 4", "i"),
        ("(k * 4 + j) floordiv 4", "k"),
        ("(k * 4 + j) mod 4", "j"),
        ("(c floordiv 4) floordiv 32", "0"),
        ("(k * 2 + i floordiv 2) floordiv 4", "k floordiv 2"),
        ("(c mod 128) floordiv 4", "c floordiv 4"),
        ("(i * 3) mod 16", "i * 3"),
        ("(-i + 3) mod 4", "-i + 3"),
    ],
)
def test_simplify_with_bounds(before: str, after: str) -> None:
    assert str(simplify(p(before), BOX)) == after


def test_simplify_singleton_bounds_and_partial_bounds() -> None:
    assert simplify(n + c, {"n": (0, 0)}) == c
    assert simplify(i // 4 + j // 4, {"i": (0, 3)}) == j // 4


def test_simplify_is_canonical_and_deterministic() -> None:
    assert simplify(i + j) == simplify(j + i)
    assert simplify(i * 2 + j + 3) == simplify(3 + j + 2 * i)
    flat = simplify(n * 262144 + j * 4096 + k * 64 + c)
    assert str(flat) == "n * 262144 + j * 4096 + k * 64 + c"


def test_simplify_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError, match="empty"):
        simplify(i, {"i": (1, 0)})


def test_linear_terms() -> None:
    terms, const = linear_terms(i - 2 + j * 3)
    assert terms == ((j, 3), (i, 1))
    assert const == -2
