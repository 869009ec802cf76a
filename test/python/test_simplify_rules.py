"""The simplifier (`physlayout.indexing.simplify`) checked rule by rule against brute force.

- `RULES`: at least one case per rewrite rule of `_Simplifier` (named after the method or
  branch that applies it), each checked for its exact simplified text AND for equal values
  at every point of its box.
- `test_simplify_agrees_with_brute_force`: a hypothesis generator of nested
  mod / floordiv / ceildiv expressions with constant offsets, negative coefficients and
  coefficients sharing factors with the divisors, over variables with random ranges
  (negative lower bounds included); `simplify(e, box)` and `simplify(e)` must equal `e` at
  every point of the box. Derandomized.

Both were checked to fail when plausible bugs are planted in the simplifier, e.g. stripping
``y mod K`` inside ``mod k`` when k is a multiple of K instead of the converse
(``(i mod 4 + j) mod 8``), or rounding the constant up in the common-factor rule of
floordiv (``(2*i + 1) floordiv 4``), which the older tests did not see.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from physlayout.indexing.expr_parser import parse_expr
from physlayout.indexing.quasi_affine import CeilDiv, Const, Dim, Expr, FloorDiv, Mod
from physlayout.indexing.simplify import simplify

NAMES = ("i", "j", "k")

Box = dict[str, tuple[int, int]]

WIDE: Box = {"i": (-13, 13), "j": (-11, 11), "k": (-7, 7)}
"""The box on which rules without bounds are checked (negative values included)."""


def _points(bounds: Box) -> dict[str, np.ndarray]:
    names = sorted(bounds)
    axes = [np.arange(bounds[n][0], bounds[n][1] + 1, dtype=np.int64) for n in names]
    grids = np.meshgrid(*axes, indexing="ij")
    return {name: grid.ravel() for name, grid in zip(names, grids, strict=True)}


def _values(expr: Expr, env: dict[str, np.ndarray]) -> np.ndarray:
    size = len(next(iter(env.values())))
    return np.broadcast_to(np.asarray(expr.evaluate(env), dtype=np.int64), (size,))


def assert_same_values(before: Expr, after: Expr, bounds: Box) -> None:
    """`before` and `after` agree at every point of `bounds` (names the first difference)."""
    env = _points(bounds)
    expected, actual = _values(before, env), _values(after, env)
    wrong = np.flatnonzero(expected != actual)
    if wrong.size:
        at = {name: int(values[wrong[0]]) for name, values in env.items()}
        pytest.fail(
            f"simplify({before}) = {after} differs at {at}: "
            f"{int(expected[wrong[0]])} != {int(actual[wrong[0]])}"
        )


# One case per rule -------------------------------------------------------------------------

RULES: list[tuple[str, str, Box | None, str]] = [
    # (rule, expression, bounds or None, expected simplified text)
    ("fold constants and flatten sums", "2 + 3 * 4 - 1 + (i * 2) * -3 + i * 6", None, "13"),
    ("singleton bounds are constants", "i + j", {"i": (5, 5), "j": (-3, 3)}, "j + 5"),
    ("merge congruent floordivs", "(i * 3 + j) floordiv 4 - (j - i) floordiv 4", None, "i"),
    ("recombine digits", "((i floordiv 2) mod 2) * 2 + i mod 2", None, "i mod 4"),
    ("recombine quotient", "(i floordiv 16) * 4 + (i mod 16) floordiv 4", None, "i floordiv 4"),
    ("recombine quotient, scaled", "(i floordiv 6) * -6 + ((i mod 6) floordiv 2) * -2", None,
     "(i floordiv 2) * -2"),
    ("recombine digits, scaled", "((i floordiv 3) mod 4) * 6 + (i mod 3) * 2", None,
     "(i mod 12) * 2"),
    ("recombine floordiv and mod", "(i floordiv 4) * 4 + i mod 4", None, "i"),
    ("recombine floordiv and mod, scaled", "(i floordiv 4) * -8 + (i mod 4) * -2 + j", None,
     "i * -2 + j"),
    ("introduce mod", "i - (i floordiv 4) * 4", None, "i mod 4"),
    ("introduce mod, scaled", "(i + j) * 3 - ((i + j) floordiv 5) * 15", None,
     "((i + j) mod 5) * 3"),
    ("absorb a term into a floordiv", "i + (j - i * 2) floordiv 6", None,
     "(i * 4 + j) floordiv 6"),
    ("floordiv by 1", "(i + j) floordiv 1", None, "i + j"),
    ("floordiv within one period", "i floordiv 4", {"i": (-4, -1)}, "-1"),
    ("floordiv pulls out multiples", "(i * 4 + j) floordiv 4", None, "i + j floordiv 4"),
    ("floordiv pulls out multiples and a constant", "(i * 4 + 9) floordiv 4", None, "i + 2"),
    ("floordiv pulls out a negative constant", "(i * -4 + j - 5) floordiv 4", None,
     "(j + 3) floordiv 4 - i - 2"),
    ("floordiv common factor, odd constant", "(i * 2 + 1) floordiv 4", None, "i floordiv 2"),
    ("floordiv common factor, negative constant", "(i * 2 - 1) floordiv 4", None,
     "(i + 1) floordiv 2 - 1"),
    ("floordiv common factor 3", "(i * 6 + j * 3 - 2) floordiv 9", None,
     "(i * 2 + j + 2) floordiv 3 - 1"),
    ("floordiv remainder within one period", "(i * 4 + j + 5) floordiv 4", {"j": (-1, 2)},
     "i + 1"),
    ("floordiv small remainder", "(i * 2 + j) floordiv 4", {"j": (0, 1)}, "i floordiv 2"),
    ("floordiv small remainder only below the factor", "(i * 2 + j) floordiv 4",
     {"j": (0, 2)}, "(i * 2 + j) floordiv 4"),
    ("floordiv of floordiv", "(i floordiv 4) floordiv 2", None, "i floordiv 8"),
    ("floordiv of floordiv with offset", "(i floordiv 4 - 1) floordiv 3", None,
     "(i + 8) floordiv 12 - 1"),
    ("floordiv with mods expanded", "(i * 4 + j mod 4) floordiv 4", None, "i"),
    ("floordiv kept", "(i + j) floordiv 4", None, "(i + j) floordiv 4"),
    ("ceildiv by 1", "(i - j) ceildiv 1", None, "i - j"),
    ("ceildiv within one period", "i ceildiv 4", {"i": (-3, 0)}, "0"),
    ("ceildiv pulls out multiples", "(i * 4 + j) ceildiv 4", None, "i + j ceildiv 4"),
    ("ceildiv of multiples and a constant", "(i * 4 + 5) ceildiv 4", None, "i + 2"),
    ("ceildiv common factor, odd constant", "(i * 2 + 1) ceildiv 4", None,
     "(i + 1) ceildiv 2"),
    ("ceildiv common factor, negative constant", "(i * 2 - 1) ceildiv 4", None,
     "i ceildiv 2"),
    ("ceildiv remainder within one period", "(i * 4 + j) ceildiv 4", {"j": (1, 4)}, "i + 1"),
    ("ceildiv of ceildiv", "(i ceildiv 2) ceildiv 3", None, "i ceildiv 6"),
    ("ceildiv of ceildiv with offset", "(i ceildiv 2 + 1) ceildiv 3", None,
     "(i + 2) ceildiv 6"),
    ("ceildiv kept", "(i + j) ceildiv 4", None, "(i + j) ceildiv 4"),
    ("mod by 1", "(i + j) mod 1", None, "0"),
    ("mod within one period", "i mod 4", {"i": (4, 7)}, "i - 4"),
    ("mod within one period, negative", "(i + j) mod 4", {"i": (-4, -3), "j": (0, 1)},
     "i + j + 4"),
    ("strip an inner mod whose modulus is a multiple", "(i mod 8 + j) mod 4", None,
     "(i + j) mod 4"),
    ("keep an inner mod whose modulus divides", "(i mod 4 + j) mod 8", None,
     "(j + i mod 4) mod 8"),
    ("keep an inner mod whose modulus is coprime", "(i mod 3 + j) mod 4", None,
     "(j + i mod 3) mod 4"),
    ("lift coefficients by multiples of k", "((i floordiv 4) * 20 + i mod 4) mod 16", None,
     "i mod 16"),
    ("lift only by multiples of k", "((i floordiv 4) * 3 + i mod 4) mod 16", None,
     "(i - i floordiv 4) mod 16"),
    ("mod reduces coefficients", "(i * 5 + 6) mod 4", None, "(i + 2) mod 4"),
    ("mod symmetric coefficients", "(i * 3) mod 4", None, "-i mod 4"),
    ("mod of nonnegative form within one period", "(i * 3 + 1) mod 16", {"i": (0, 4)},
     "i * 3 + 1"),
    ("mod of reduced form within one period", "(-i + 3) mod 4", {"i": (0, 3)}, "-i + 3"),
    ("mod common factor", "(i * 2) mod 4", None, "(i mod 2) * 2"),
    ("mod common factor, odd constant", "(i * 2 + 1) mod 4", None, "(i mod 2) * 2 + 1"),
    ("mod common factor, negative constant", "(i * 2 - 1) mod 4", None,
     "((i + 1) mod 2) * 2 + 1"),
    ("mod small remainder", "(i * 2 + j) mod 4", {"j": (0, 1)}, "(i mod 2) * 2 + j"),
    ("mod small remainder only below the factor", "(i * 2 + j) mod 4", {"j": (0, 2)},
     "(i * 2 + j) mod 4"),
    ("mod with mods expanded", "((i floordiv 4) * -2 + i mod 4) mod 6", None, "i mod 6"),
    ("mod kept", "(i + j) mod 4", None, "(i + j) mod 4"),
]


@pytest.mark.parametrize(
    ("text", "bounds", "expected"),
    [pytest.param(t, b, e, id=rule) for rule, t, b, e in RULES],
)
def test_rule(text: str, bounds: Box | None, expected: str) -> None:
    expr = parse_expr(text, NAMES)
    simplified = simplify(expr, bounds)
    box = {**WIDE, **(bounds or {})}
    assert_same_values(expr, simplified, box)
    assert str(simplified) == expected
    # Simplified text is a fixed point.
    assert simplify(simplified, bounds) == simplified


def test_every_rule_has_a_case() -> None:
    """The table names every rewrite of `_Simplifier` (guards against a rule added without a
    case: update both together)."""
    import inspect

    from physlayout.indexing import simplify as simplify_module

    methods = {
        name
        for name, _ in inspect.getmembers(simplify_module._Simplifier, inspect.isfunction)  # pyright: ignore[reportPrivateUsage]
    }
    assert methods == {
        "__eq__", "__init__", "__repr__",  # dataclass
        "linear", "_linear_uncached", "_linear_node", "_collect", "interval",  # plumbing
        "_sum_rules", "_apply_one_sum_rule", "_absorb", "_merge_congruent",
        "_exact_quotient", "_recombine_digits", "_recombine_quotient", "_recombine", "_introduce_mod",
        "_one_period", "_small_remainder", "_split_multiples",
        "floordiv", "_floordiv_plain", "ceildiv", "_nested_division", "mod", "_mod_reduced",
        "_modular_recombine", "_lift_one", "_smaller_with_mods_expanded", "_expand_mods",
        "_mod_partner", "_strip_inner_mods",
    }
    assert len(RULES) >= 45


# Generated expressions ---------------------------------------------------------------------

DIVISORS = st.sampled_from([2, 3, 4, 6, 8, 12, 16])
COEFFICIENTS = st.sampled_from([1, 1, -1, 2, -2, 3, -3, 4, -4, 6, 8, -8, 12, 5])
OFFSETS = st.integers(-17, 17)


@st.composite
def sums(draw: st.DrawFn, depth: int) -> Expr:
    """``c1*t1 + ... + cn*tn + offset`` with 1-3 terms; a term is a variable or (while
    `depth` > 0) a floordiv / ceildiv / mod of a smaller sum, or a digit pair."""
    expr: Expr = Const(draw(OFFSETS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 2)) if depth > 0 else 0
        if kind == 1:
            term = draw(divisions(depth - 1))
        elif kind == 2:
            term = draw(digit_pairs(depth - 1))
        else:
            term = Dim(draw(st.sampled_from(NAMES)))
        expr = expr + term * draw(COEFFICIENTS)
    return expr


@st.composite
def digit_pairs(draw: st.DrawFn, depth: int) -> Expr:
    """``(y floordiv a)*c1 + (y mod a)*c2`` for one sum ``y``, with ``c1`` equal to ``a*c2``
    or off by an amount that some moduli divide (the recombination rules act on these)."""
    operand = draw(sums(depth))
    a = draw(DIVISORS)
    low = draw(COEFFICIENTS)
    high = a * low + draw(st.sampled_from([0, 0, 1, -1, 3, 4, 8, -8, 12, 16]))
    return FloorDiv(operand, a) * high + Mod(operand, a) * low


@st.composite
def divisions(draw: st.DrawFn, depth: int) -> Expr:
    """``s floordiv k``, ``s ceildiv k`` or ``s mod k`` of a sum `s`; half of the time the
    sum's coefficients are multiples of a factor of k (common factors)."""
    k = draw(DIVISORS)
    operand = draw(sums(depth))
    if draw(st.booleans()):
        factor = draw(st.sampled_from([f for f in range(2, k + 1) if k % f == 0]))
        operand = _scale_terms(operand, factor) + draw(OFFSETS)
    kind = draw(st.sampled_from([FloorDiv, CeilDiv, Mod]))
    return kind(operand, k)


def _scale_terms(expr: Expr, factor: int) -> Expr:
    """`expr` with every variable multiplied by `factor` (constants kept)."""
    return expr.substitute({name: Dim(name) * factor for name in NAMES})


@st.composite
def boxes(draw: st.DrawFn) -> Box:
    result: Box = {}
    for name in NAMES:
        low = draw(st.integers(-9, 9))
        result[name] = (low, low + draw(st.integers(0, 11)))
    return result


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.one_of(divisions(2), sums(2)), boxes())
def test_simplify_agrees_with_brute_force(expr: Expr, bounds: Box) -> None:
    assert_same_values(expr, simplify(expr, bounds), bounds)
    assert_same_values(expr, simplify(expr), bounds)
