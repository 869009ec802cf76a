"""Simplification of quasi-affine expressions into a canonical small form.

`simplify` rewrites an expression into an equivalent sum of atoms (dimensions, floordiv,
ceildiv and mod terms) in canonical order, optionally using inclusive bounds of the
dimensions (the result then equals the input on that box only); `linear_terms` exposes the
same form as coefficients. The rules are listed in `simplify`'s docstring; each is a
method of `_Simplifier` (test_simplify_rules.py names every one). Results are memoized.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from physlayout.indexing.expr_range import (
    Interval,
    add_intervals,
    check_bounds,
    interval_of,
    scale_interval,
)
from physlayout.indexing.quasi_affine import (
    Add,
    Bounds,
    CeilDiv,
    Const,
    Dim,
    DivLike,
    Expr,
    FloorDiv,
    Mod,
    Mul,
)


@dataclass
class _Linear:
    """A linear combination ``sum(coef * atom) + const`` of atoms (Dim, FloorDiv, CeilDiv,
    Mod nodes whose operands are simplified). Mutable; internal to the simplifier."""

    terms: dict[Expr, int] = field(default_factory=dict[Expr, int])
    const: int = 0

    @staticmethod
    def constant(value: int) -> _Linear:
        """The form ``value``."""
        return _Linear({}, value)

    @staticmethod
    def atom(expr: Expr, coef: int = 1) -> _Linear:
        """The form ``coef * expr``."""
        return _Linear({expr: coef}, 0)

    def copy(self) -> _Linear:
        """An independent copy."""
        return _Linear(dict(self.terms), self.const)

    def add(self, other: _Linear, scale: int = 1) -> None:
        """In place: ``self += scale * other``."""
        for atom, coef in other.terms.items():
            self.add_term(atom, coef * scale)
        self.const += other.const * scale

    def add_term(self, atom: Expr, coef: int) -> None:
        """In place: ``self += coef * atom`` (dropping zero coefficients)."""
        new = self.terms.get(atom, 0) + coef
        if new:
            self.terms[atom] = new
        else:
            self.terms.pop(atom, None)

    def scaled(self, factor: int) -> _Linear:
        """A new form ``factor * self``."""
        if factor == 0:
            return _Linear()
        return _Linear({a: c * factor for a, c in self.terms.items()}, self.const * factor)

    def single_atom(self) -> Expr | None:
        """The atom if this form is exactly ``1 * atom + 0``."""
        if self.const == 0 and len(self.terms) == 1:
            ((atom, coef),) = self.terms.items()
            if coef == 1:
                return atom
        return None


def _symmetric_mod(value: int, k: int) -> int:
    """The representative of `value` modulo `k` in (-k/2, k/2]."""
    r = value % k
    return r - k if r > k // 2 else r


def _size(form: _Linear) -> int:
    """Node count of the expression built from `form` (a measure of simplicity)."""
    return _node_count(_build(form))


def _node_count(expr: Expr) -> int:
    match expr:
        case Add(lhs=lhs, rhs=rhs) | Mul(lhs=lhs, rhs=rhs):
            return 1 + _node_count(lhs) + _node_count(rhs)
        case DivLike(lhs=lhs):
            return 1 + _node_count(lhs)
        case _:
            return 1


@lru_cache(maxsize=16384)
def _natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders embedded numbers numerically (i2 < i10); cached, as the same
    atoms are ordered again in every expression that holds them."""
    parts = re.split(r"(\d+)", text)
    return tuple((1, int(p), "") if p.isdigit() else (0, 0, p) for p in parts if p)


_KIND_RANK: dict[type[Expr], int] = {Dim: 0, FloorDiv: 1, CeilDiv: 2, Mod: 3}


def _term_key(item: tuple[Expr, int]) -> tuple[object, ...]:
    """Canonical term order: larger |coefficient| first, positive before negative, then
    dimensions before floordiv, ceildiv and mod terms, then by printed form."""
    atom, coef = item
    return (-abs(coef), coef < 0, _KIND_RANK.get(type(atom), 9), _natural_key(str(atom)))


def _build(form: _Linear) -> Expr:
    """Turn a linear form into an expression: terms in canonical order, constant last."""
    result: Expr | None = None
    for atom, coef in sorted(form.terms.items(), key=_term_key):
        term = atom if coef == 1 else Mul(atom, Const(coef))
        result = term if result is None else Add(result, term)
    if result is None:
        return Const(form.const)
    if form.const:
        result = Add(result, Const(form.const))
    return result


@dataclass
class _Simplifier:
    """One simplification run: the bounds and a memo of simplified sub-expressions."""

    bounds: Bounds
    memo: dict[Expr, _Linear] = field(default_factory=dict[Expr, _Linear])

    # Entry points -------------------------------------------------------------------

    def linear(self, expr: Expr) -> _Linear:
        """The simplified linear form of `expr` (a fresh copy the caller may modify)."""
        cached = self.memo.get(expr)
        if cached is None:
            cached = self._linear_uncached(expr)
            self.memo[expr] = cached
        return cached.copy()

    def _linear_uncached(self, expr: Expr) -> _Linear:
        """`linear` without the memo; sum rules applied to the result."""
        form = self._linear_node(expr)
        return self._sum_rules(form) if len(form.terms) > 1 else form

    def _linear_node(self, expr: Expr) -> _Linear:
        """The linear form of one node (operands simplified recursively)."""
        match expr:
            case Const(value=value):
                return _Linear.constant(value)
            case Dim(name=name):
                lo, hi = self.bounds.get(name, (None, None))
                if lo is not None and lo == hi:
                    return _Linear.constant(lo)
                return _Linear.atom(expr)
            case Add() | Mul():
                form = _Linear()
                self._collect(expr, 1, form)
                return form
            case FloorDiv(lhs=lhs, divisor=k):
                return self.floordiv(self.linear(lhs), k)
            case CeilDiv(lhs=lhs, divisor=k):
                return self.ceildiv(self.linear(lhs), k)
            case Mod(lhs=lhs, divisor=k):
                return self.mod(self.linear(lhs), k)
            case _:
                raise ValueError(f"not a quasi-affine expression: {expr!r}")

    def _collect(self, expr: Expr, scale: int, acc: _Linear) -> None:
        """Add ``scale * expr`` to `acc`, descending through sums and constant products."""
        match expr:
            case Add(lhs=lhs, rhs=rhs):
                self._collect(lhs, scale, acc)
                self._collect(rhs, scale, acc)
            case Mul(lhs=Const(value=c), rhs=rhs):
                self._collect(rhs, scale * c, acc)
            case Mul(lhs=lhs, rhs=Const(value=c)):
                self._collect(lhs, scale * c, acc)
            case _:
                if scale:
                    acc.add(self.linear(expr), scale)

    def interval(self, form: _Linear) -> Interval:
        """Interval of a linear form under the bounds."""
        result: Interval = (form.const, form.const)
        for atom, coef in form.terms.items():
            result = add_intervals(result, scale_interval(interval_of(atom, self.bounds), coef))
        return result

    # Sum-level rules -----------------------------------------------------------------

    def _sum_rules(self, form: _Linear) -> _Linear:
        """In place: recombine ``(e floordiv k)*k*a + (e mod k)*a -> e*a`` and introduce
        ``e*a - (e floordiv k)*k*a -> (e mod k)*a`` until nothing changes."""
        if len(form.terms) < 2:
            return form
        for _ in range(64):
            if not self._apply_one_sum_rule(form):
                break
        return form

    def _apply_one_sum_rule(self, form: _Linear) -> bool:
        """Apply the first sum-level rule that matches (in place); whether one did."""
        floordivs = [(a, c) for a, c in form.terms.items() if isinstance(a, FloorDiv)]
        if self._merge_congruent(form, [a for a, _ in floordivs]):
            return True
        if self._recombine_digits(form) or self._recombine_quotient(form):
            return True
        for atom, coef in sorted(floordivs, key=_term_key):
            assert isinstance(atom, FloorDiv)
            k = atom.divisor
            if coef % k:
                continue
            if self._recombine(form, atom, coef // k) or self._introduce_mod(
                form, atom, -(coef // k)
            ):
                return True
        return any(
            self._absorb(form, atom, coef) for atom, coef in sorted(floordivs, key=_term_key)
        )

    def _absorb(self, form: _Linear, atom: Expr, scale: int) -> bool:
        """``t*c + (y floordiv k)*s -> ((y + t*k*c/s) floordiv k)*s`` when ``t`` occurs in
        ``y`` and its new coefficient in ``y`` lies in [0, k) (removes the term ``t*c``)."""
        assert isinstance(atom, FloorDiv)
        k = atom.divisor
        operand = self.linear(atom.lhs)
        for term, inner in sorted(operand.terms.items(), key=_term_key):
            outer = form.terms.get(term)
            if outer is None or outer % scale or not 0 <= inner + k * (outer // scale) < k:
                continue
            form.add_term(term, -outer)
            form.add_term(atom, -scale)
            operand.add_term(term, k * (outer // scale))
            form.add(self.floordiv(operand, k), scale)
            return True
        return False

    def _merge_congruent(self, form: _Linear, floordivs: list[Expr]) -> bool:
        """``(y1 floordiv k)*a + (y2 floordiv k)*b -> (y2 floordiv k)*(a + b) + t*a`` when
        ``y1 == y2 + k*t`` for a linear form ``t`` (keeps the smaller of the two atoms)."""
        ordered = sorted(floordivs, key=lambda a: (_node_count(a), _natural_key(str(a))))
        for index, keep in enumerate(ordered):
            assert isinstance(keep, FloorDiv)
            for other in ordered[index + 1 :]:
                assert isinstance(other, FloorDiv)
                if other.divisor != keep.divisor:
                    continue
                shift = self._exact_quotient(other.lhs, keep.lhs, keep.divisor)
                if shift is None:
                    continue
                coef = form.terms[other]
                form.add_term(other, -coef)
                form.add_term(keep, coef)
                form.add(shift, coef)
                return True
        return False

    def _exact_quotient(self, lhs: Expr, rhs: Expr, k: int) -> _Linear | None:
        """``(lhs - rhs) / k`` as a linear form if every coefficient and the constant of
        ``lhs - rhs`` is a multiple of `k`, else None."""
        diff = self.linear(lhs)
        diff.add(self.linear(rhs), -1)
        if diff.const % k or any(c % k for c in diff.terms.values()):
            return None
        return _Linear({a: c // k for a, c in diff.terms.items()}, diff.const // k)

    def _recombine_digits(self, form: _Linear) -> bool:
        """``((y floordiv a) mod b)*a*s + (y mod a)*s -> (y mod (a*b))*s``."""
        for atom, coef in sorted(form.terms.items(), key=_term_key):
            if not isinstance(atom, Mod) or not isinstance(atom.lhs, FloorDiv):
                continue
            inner = atom.lhs
            if coef % inner.divisor:
                continue
            scale = coef // inner.divisor
            operand = self.linear(inner.lhs)
            low = self.mod(operand.copy(), inner.divisor).single_atom()
            if low is None or form.terms.get(low) != scale:
                continue
            form.add_term(atom, -coef)
            form.add_term(low, -scale)
            form.add(self.mod(operand, inner.divisor * atom.divisor), scale)
            return True
        return False

    def _recombine_quotient(self, form: _Linear) -> bool:
        """``(y floordiv (a*b))*b*s + ((y mod (a*b)) floordiv a)*s -> (y floordiv a)*s``
        (the high digits of ``y`` in base ``a*b`` and the middle digit in base ``a``)."""
        for atom, scale in sorted(form.terms.items(), key=_term_key):
            if not isinstance(atom, FloorDiv) or not isinstance(atom.lhs, Mod):
                continue
            modulus, a = atom.lhs.divisor, atom.divisor
            if modulus % a:
                continue
            operand = self.linear(atom.lhs.lhs)
            high = self.floordiv(operand.copy(), modulus).single_atom()
            if high is None or form.terms.get(high) != scale * (modulus // a):
                continue
            form.add_term(atom, -scale)
            form.add_term(high, -scale * (modulus // a))
            form.add(self.floordiv(operand, a), scale)
            return True
        return False

    def _recombine(self, form: _Linear, atom: FloorDiv, scale: int) -> bool:
        """``(e fd k)*k*s + (e mod k)*s -> e*s`` when both terms are in `form`."""
        operand = self.linear(atom.lhs)
        mod_atom = self.mod(operand.copy(), atom.divisor).single_atom()
        if mod_atom is None or form.terms.get(mod_atom) != scale:
            return False
        form.add_term(atom, -scale * atom.divisor)
        form.add_term(mod_atom, -scale)
        form.add(operand, scale)
        return True

    def _introduce_mod(self, form: _Linear, atom: FloorDiv, scale: int) -> bool:
        """``e*s - (e fd k)*k*s -> (e mod k)*s`` when all terms of ``e*s`` are in `form`."""
        operand = self.linear(atom.lhs)
        if not operand.terms:
            return False
        if any(form.terms.get(t) != c * scale for t, c in operand.terms.items()):
            return False
        form.add(operand, -scale)
        form.add_term(atom, scale * atom.divisor)
        form.add(self.mod(operand, atom.divisor), scale)
        return True

    # floordiv / ceildiv / mod ----------------------------------------------------------

    def _one_period(self, form: _Linear, k: int) -> int | None:
        """The q with ``q*k <= form <= q*k + k - 1`` on the bounds, if there is one."""
        lo, hi = self.interval(form)
        if lo is None or hi is None or lo // k != hi // k:
            return None
        return lo // k

    def _small_remainder(self, form: _Linear, k: int) -> tuple[int, _Linear, _Linear] | None:
        """Write ``form == g*H + L`` with ``1 < g < k`` dividing k and ``0 <= L < g`` on the
        bounds (the largest such g); returns ``(g, H, L)`` or None."""
        divisors = sorted({math.gcd(k, c) for c in form.terms.values()} - {1, k}, reverse=True)
        for g in divisors:
            high = _Linear({a: c // g for a, c in form.terms.items() if c % g == 0})
            low = _Linear({a: c for a, c in form.terms.items() if c % g}, form.const)
            lo, hi = self.interval(low)
            if lo is not None and hi is not None and lo >= 0 and hi < g:
                return g, high, low
        return None

    @staticmethod
    def _split_multiples(form: _Linear, k: int) -> tuple[_Linear, _Linear]:
        """Split ``form = k*q + r``: q gets the terms whose coefficient is a multiple of k
        and ``const floordiv k``; r keeps the other terms and ``const mod k``."""
        quotient = _Linear(
            {a: c // k for a, c in form.terms.items() if c % k == 0}, form.const // k
        )
        rest = _Linear({a: c for a, c in form.terms.items() if c % k}, form.const % k)
        return quotient, rest

    def floordiv(self, form: _Linear, k: int) -> _Linear:
        """Simplified ``form floordiv k`` (the smaller of the results for `form` and for
        `form` with its mod terms expanded)."""
        return self._smaller_with_mods_expanded(self._floordiv_plain, self._sum_rules(form), k)

    def _floordiv_plain(self, form: _Linear, k: int) -> _Linear:
        """``form floordiv k`` by multiples, common factors, nesting and bounds."""
        if k == 1:
            return form
        period = self._one_period(form, k)
        if period is not None:
            return _Linear.constant(period)
        quotient, rest = self._split_multiples(form, k)
        if not rest.terms:
            return quotient
        g = math.gcd(k, *rest.terms.values())
        if g > 1:
            # floor((g*A + r) / (g*k')) == floor((A + r floordiv g) / k')
            reduced = _Linear({a: c // g for a, c in rest.terms.items()}, rest.const // g)
            quotient.add(self.floordiv(reduced, k // g))
            return quotient
        period = self._one_period(rest, k)
        if period is not None:
            quotient.const += period
            return quotient
        split = self._small_remainder(rest, k)
        if split is not None:
            # floor((g*H + L) / (g*k')) == floor(H / k') when 0 <= L < g
            g, high, _ = split
            quotient.add(self.floordiv(high, k // g))
            return quotient
        return self._nested_division(quotient, rest, k, FloorDiv)

    def ceildiv(self, form: _Linear, k: int) -> _Linear:
        """Simplified ``form ceildiv k``."""
        form = self._sum_rules(form)
        if k == 1:
            return form
        lo, hi = self.interval(form)
        if lo is not None and hi is not None and -(-lo // k) == -(-hi // k):
            return _Linear.constant(-(-lo // k))
        quotient, rest = self._split_multiples(form, k)
        if not rest.terms:
            quotient.const += -(-rest.const // k)
            return quotient
        g = math.gcd(k, *rest.terms.values())
        if g > 1:
            # ceil((g*A + r) / (g*k')) == ceil((A + r ceildiv g) / k')
            reduced = _Linear({a: c // g for a, c in rest.terms.items()}, -(-rest.const // g))
            quotient.add(self.ceildiv(reduced, k // g))
            return quotient
        lo, hi = self.interval(rest)
        if lo is not None and hi is not None and -(-lo // k) == -(-hi // k):
            quotient.const += -(-lo // k)
            return quotient
        return self._nested_division(quotient, rest, k, CeilDiv)

    def _nested_division(
        self, quotient: _Linear, rest: _Linear, k: int, kind: type[FloorDiv] | type[CeilDiv]
    ) -> _Linear:
        """The last rule of `floordiv` and `ceildiv` (`kind`): `quotient` plus ``rest kind
        k``, a nested division of the same kind folded into one, else kept as an atom."""
        inner = _Linear(dict(rest.terms), 0).single_atom()
        if isinstance(inner, kind):
            # (y op k2 + r) op k == (y + r*k2) op (k2*k), op floordiv or ceildiv
            nested = self.linear(inner.lhs)
            nested.const += rest.const * inner.divisor
            divide = self.floordiv if kind is FloorDiv else self.ceildiv
            quotient.add(divide(nested, inner.divisor * k))
        else:
            quotient.add_term(kind(_build(rest), k), 1)
        return quotient

    def mod(self, form: _Linear, k: int) -> _Linear:
        """Simplified ``form mod k``."""
        if k == 1:
            return _Linear()
        form = self._sum_rules(form)
        period = self._one_period(form, k)
        if period is not None:
            form.const -= period * k
            return form
        form = self._modular_recombine(self._strip_inner_mods(form, k), k)
        return self._smaller_with_mods_expanded(self._mod_reduced, form, k)

    def _mod_reduced(self, form: _Linear, k: int) -> _Linear:
        """``form mod k`` with coefficients reduced to (-k/2, k/2] and the constant to
        [0, k), common factors and bounds applied."""
        nonnegative = _Linear({a: c % k for a, c in form.terms.items() if c % k}, form.const % k)
        period = self._one_period(nonnegative, k)
        if period is not None:
            nonnegative.const -= period * k
            return nonnegative
        reduced = _Linear(
            {a: _symmetric_mod(c, k) for a, c in form.terms.items() if c % k}, form.const % k
        )
        g = math.gcd(k, *reduced.terms.values())
        if g > 1:
            # (g*A + r) mod (g*k') == g * ((A + r floordiv g) mod k') + r mod g
            inner = _Linear({a: c // g for a, c in reduced.terms.items()}, reduced.const // g)
            result = self.mod(inner, k // g).scaled(g)
            result.const += reduced.const % g
            return result
        period = self._one_period(reduced, k)
        if period is not None:
            reduced.const -= period * k
            return reduced
        split = self._small_remainder(nonnegative, k)
        if split is not None:
            # (g*H + L) mod (g*k') == g * (H mod k') + L when 0 <= L < g
            g, high, low = split
            result = self.mod(high, k // g).scaled(g)
            result.add(low)
            return result
        return _Linear.atom(Mod(_build(reduced), k))

    def _modular_recombine(self, form: _Linear, k: int) -> _Linear:
        """Inside ``mod k``, change coefficients by multiples of k where that lets a
        recombination rule fire (``(y floordiv a)*c + (y mod a)*s`` with
        ``c == a*s (mod k)``)."""
        for _ in range(64):
            if not self._lift_one(form, k):
                break
        return form

    def _lift_one(self, form: _Linear, k: int) -> bool:
        """One step of `_modular_recombine` (in place); whether it changed `form`."""
        for atom, coef in sorted(form.terms.items(), key=_term_key):
            if isinstance(atom, FloorDiv):
                operand, a = atom.lhs, atom.divisor
            elif isinstance(atom, Mod) and isinstance(atom.lhs, FloorDiv):
                operand, a = atom.lhs.lhs, atom.lhs.divisor
            else:
                continue
            partner = self.mod(self.linear(operand), a).single_atom()
            if partner is None or partner not in form.terms:
                continue
            wanted = a * form.terms[partner]
            if wanted != coef and (wanted - coef) % k == 0:
                trial = form.copy()
                trial.terms[atom] = wanted
                self._sum_rules(trial)
                if _size(trial) < _size(form):
                    form.terms, form.const = trial.terms, trial.const
                    return True
        return False

    def _smaller_with_mods_expanded(
        self, rule: Callable[[_Linear, int], _Linear], form: _Linear, k: int
    ) -> _Linear:
        """The smaller of ``rule(form, k)`` and `rule` on `form` with its mod terms expanded
        (`_expand_mods`; the first when as small)."""
        best = rule(form, k)
        expanded = self._expand_mods(form)
        if expanded is not None:
            alternative = rule(expanded, k)
            if _size(alternative) < _size(best):
                best = alternative
        return best

    def _expand_mods(self, form: _Linear) -> _Linear | None:
        """`form` with every ``y mod K`` term rewritten as ``y - K * (y floordiv K)``, or
        None when it has no mod term."""
        mods = [(a, c) for a, c in form.terms.items() if isinstance(a, Mod)]
        if not mods:
            return None
        expanded = form.copy()
        for atom, coef in mods:
            assert isinstance(atom, Mod)
            operand = self._mod_partner(form, atom)
            expanded.add_term(atom, -coef)
            expanded.add(operand, coef)
            expanded.add(self.floordiv(operand.copy(), atom.divisor), -coef * atom.divisor)
        return expanded

    def _mod_partner(self, form: _Linear, atom: Mod) -> _Linear:
        """An operand ``y`` with ``y mod K == atom`` (K the divisor of `atom`): the operand
        of a ``y floordiv K`` term of `form` if there is one, else the operand of `atom`."""
        for other in sorted(form.terms, key=str):
            if not isinstance(other, FloorDiv) or other.divisor != atom.divisor:
                continue
            operand = self.linear(other.lhs)
            if self.mod(operand.copy(), atom.divisor).single_atom() == atom:
                return operand
        return self.linear(atom.lhs)

    def _strip_inner_mods(self, form: _Linear, k: int) -> _Linear:
        """Inside ``mod k``, replace ``y mod K`` (K a multiple of k) by ``y``."""
        for _ in range(64):
            inner = next((a for a in form.terms if isinstance(a, Mod) and a.divisor % k == 0), None)
            if inner is None:
                return form
            assert isinstance(inner, Mod)
            coef = form.terms.pop(inner)
            form.add(self.linear(inner.lhs), coef)
        return form


def linear_terms(
    expr: Expr, bounds: Bounds | None = None
) -> tuple[tuple[tuple[Expr, int], ...], int]:
    """The simplified `expr` as ``(((atom, coefficient), ...), constant)``.

    Atoms are `Dim`, `FloorDiv`, `CeilDiv` and `Mod` expressions, in the canonical term
    order of `simplify`; coefficients are non-zero; ``simplify(expr, bounds)`` is the sum
    of the terms and the constant. Raises ValueError for malformed bounds.
    """
    if bounds is not None:
        check_bounds(bounds)
    form = _Simplifier(dict(bounds or {})).linear(expr)
    return tuple(sorted(form.terms.items(), key=_term_key)), form.const


def simplify(expr: Expr, bounds: Bounds | None = None) -> Expr:
    """Rewrite `expr` into a canonical, small, equivalent form.

    Without `bounds` the result equals `expr` for all integer values of the dimensions;
    with `bounds` (inclusive ``(min, max)`` per dimension; dimensions not listed are
    unbounded) it equals `expr` at every point of that box and may differ outside.

    The result is a sum of terms in canonical order (larger absolute coefficient first,
    positive before negative, dimensions before floordiv/ceildiv/mod terms, then by printed
    form), with merged coefficients and the constant last. Rules applied:

    * constant folding, flattening of nested sums and constant products; a dimension whose
      bounds hold a single value is replaced by that value;
    * ``(e floordiv k)*k*a + (e mod k)*a -> e*a`` and ``e*a - (e floordiv k)*k*a ->
      (e mod k)*a`` inside any sum (``(c floordiv 4)*4 + c mod 4 -> c``), and
      ``((e floordiv a) mod b)*a + e mod a -> e mod (a*b)``, ``(e floordiv (a*b))*b +
      (e mod (a*b)) floordiv a -> e floordiv a``;
    * pulling multiples of the divisor out: ``(i*4 + j) floordiv 4 -> i + j floordiv 4``,
      ``(i*4 + j) mod 4 -> j mod 4``, ``(i + 5) mod 4 -> (i + 1) mod 4``; inside ``mod k``
      coefficients are reduced to (-k/2, k/2] (``(i*3) mod 4 -> -i mod 4``), after changing
      them by multiples of k where that enables one of the recombinations above;
    * absorbing a term into a floordiv when that makes its coefficient there lie in
      [0, k): ``i + (j - i*2) floordiv 6 -> (i*4 + j) floordiv 6``;
    * inside floordiv and mod, ``y mod K`` is also tried as ``y - K*(y floordiv K)`` and the
      smaller result kept: ``((y floordiv 4)*-2 + y mod 4) mod 6 -> y mod 6``;
    * common factors: ``(i*2) floordiv 4 -> i floordiv 2``,
      ``(i*2) mod 4 -> (i mod 2) * 2``, and with bounds ``(i*2 + j) floordiv 4 -> i
      floordiv 2``, ``(i*2 + j) mod 4 -> (i mod 2) * 2 + j`` when ``0 <= j < 2``;
    * nesting: ``(i floordiv 4) floordiv 2 -> i floordiv 8``, ``(i mod 8) mod 4 -> i mod 4``
      (when the inner modulus is a multiple of the outer one), likewise for ceildiv;
    * bounds: ``e floordiv k -> q`` and ``e mod k -> e - q*k`` when ``e`` lies in one period
      ``[q*k, q*k + k - 1]`` (``i floordiv 4 -> 0`` for ``0 <= i < 4``), also after pulling
      out multiples (``(i*4 + j) floordiv 4 -> i`` for ``0 <= j < 4``); ``mod`` results are
      known to lie in ``[0, k)`` even without bounds.

    The result is deterministic and does not depend on the order of the terms of `expr`
    beyond what the rules see; it never changes a value on the given box.

    Raises:
        ValueError: malformed or empty bounds of a dimension of `expr` (the bounds of other
        names are not read).
    """
    if bounds is None:
        return _simplify_cached(expr, ())
    # only the bounds of `expr`'s dimensions matter (and are checked): a kernel writer's
    # bounds name every leaf of its kernel, a simplified index a few of them. A pair of
    # Python ints in order is taken as it is; anything else goes through `check_bounds`
    # (which raises for malformed bounds, in the same order). This is the cost of a call
    # that the memo answers, the most common kind (a kernel writer's thousands).
    key: list[tuple[str, tuple[int, int]]] = []
    for name in expr.dims():
        if name not in bounds:
            continue
        bound = bounds[name]
        if not (
            type(bound) is tuple and len(bound) == 2 and type(bound[0]) is int
            and type(bound[1]) is int and bound[0] <= bound[1]
        ):  # fmt: skip
            check_bounds({name: bound})
            bound = (int(bound[0]), int(bound[1]))
        key.append((name, bound))
    key.sort()
    return _simplify_cached(expr, tuple(key))


@lru_cache(maxsize=8192)
def _simplify_cached(expr: Expr, bounds: tuple[tuple[str, tuple[int, int]], ...]) -> Expr:
    simplifier = _Simplifier(dict(bounds))
    return _build(simplifier.linear(expr))


def clear_simplify_cache() -> None:
    """Forget the memoized results of `simplify` (for benchmarks measuring cold calls)."""
    _simplify_cached.cache_clear()
    _natural_key.cache_clear()
