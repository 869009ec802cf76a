"""The exact inverse of an injective `IndexMap` on a box.

`inverse_outputs` solves the outputs of a map for its inputs: first structurally (splits,
mixed-radix digits, congruences; see `_structural_inverse`), else from isl's closed form;
every candidate is verified before it is returned: the structural one by simplifying
`inverse(map(x))` to `x` on the box (no isl), else each with isl on the image of the box.
Results are cached per map and shape.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import islpy as isl

from physlayout.indexing.bridges import isl as bridge
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.extents import structural_extents
from physlayout.indexing.proofs import isl_map
from physlayout.indexing.quasi_affine import Bounds, Const, Dim, Expr, FloorDiv, Mod
from physlayout.indexing.simplify import linear_terms, simplify

if TYPE_CHECKING:
    from physlayout.indexing.index_map import IndexMap


@lru_cache(maxsize=1024)
def inverse_outputs(
    imap: IndexMap, dims: tuple[int, ...]
) -> tuple[tuple[str, ...], tuple[Expr, ...]]:
    """The input names ``i0, i1, ...`` and the outputs of the inverse of `imap` on the image
    of the box `dims`, verified (see `IndexMap.inverse`): the structural solution when it
    provably inverts the map on the box (`_structurally_verified_inverse`), else
    `inverse_outputs_isl`'s answer (the same one whenever the former gives one).

    Raises:
        ValueError: `imap` is not injective on the box, or no single quasi-affine
            expression per input was found.
    """
    imap.require_injective(dims)
    names = bridge.output_names(imap.final_ndim)
    outputs = _structurally_verified_inverse(imap, dims, names)
    if outputs is not None:
        return tuple(names), outputs
    return inverse_outputs_isl(imap, dims)


def _output_bounds(imap: IndexMap, dims: tuple[int, ...], names: list[str]) -> Bounds:
    """The box of the outputs named `names`, but extent-1 outputs are left unbounded so
    that they stay variables (not the constant 0)."""
    return {
        name: (0, extent - 1)
        for name, extent in zip(names, structural_extents(imap, dims), strict=True)
        if extent > 1
    }


def _structurally_verified_inverse(
    imap: IndexMap, dims: tuple[int, ...], names: list[str]
) -> tuple[Expr, ...] | None:
    """The structural solution (`_structural_inverse`, simplified as `inverse_outputs_isl`
    simplifies its candidates) when, composed after `imap`, it simplifies to every input on
    the box (`inverse(imap(x)) = x` for every x of the box); else None. `imap` must be
    injective on the box: then every point of the image has exactly one preimage, which
    the solution gives, so it is the inverse on the image, as isl's check of the same
    candidate (`_same_on`) finds; `inverse_outputs_isl` returns this solution then."""
    structural = _structural_inverse(imap, dims, names)
    if structural is None:
        return None
    out_bounds = _output_bounds(imap, dims, names)
    outputs = tuple(simplify(e, out_bounds) for e in structural)
    box = imap.bounds(dims)
    forward = dict(zip(names, imap.final_indices, strict=True))
    for name, output in zip(imap.initial_indices, outputs, strict=True):
        if simplify(output.substitute(forward), box) != simplify(Dim(name), box):
            return None
    return outputs


def inverse_outputs_isl(
    imap: IndexMap, dims: tuple[int, ...]
) -> tuple[tuple[str, ...], tuple[Expr, ...]]:
    """`inverse_outputs`, every candidate verified with isl (uncached; `imap` must be
    injective on the box)."""
    forward = isl_map(imap, dims)
    names = bridge.output_names(imap.final_ndim)
    with bridge.isl_errors(f"inverting {imap}"):
        image = forward.range()
        reverse = forward.reverse()
    out_bounds = _output_bounds(imap, dims, names)
    for exprs in _inverse_candidates(imap, dims, names, reverse):
        outputs = tuple(simplify(e, out_bounds) for e in exprs)
        if _same_on(names, outputs, image, reverse):
            return tuple(names), outputs
    raise ValueError(
        f"no single quasi-affine expression was found for the inverse of index map {imap} "
        f"on shape {list(dims)} (isl gives a piecewise inverse)"
    )


def _inverse_candidates(
    imap: IndexMap, dims: tuple[int, ...], names: list[str], reverse: isl.Map
) -> Iterator[list[Expr]]:
    """Candidate inverse expressions, best first: the structural solution; isl's closed
    form of the inverse on the unbounded image when the map is injective on all of Z^n
    (it does not specialize to the shape, e.g. an extent-1 input stays a variable); isl's
    closed form on the image of the box."""
    structural = _structural_inverse(imap, dims, names)
    if structural is not None:
        yield structural
    unbounded = bridge.build_map(imap.initial_indices, imap.final_indices, None)
    with bridge.isl_errors(f"checking injectivity of {imap} on Z^n"):
        injective_everywhere = bool(unbounded.is_injective())
        unbounded_reverse = unbounded.reverse()
    relations = [unbounded_reverse, reverse] if injective_everywhere else [reverse]
    for relation in relations:
        exprs = _single_expressions(relation, names, imap.ndim)
        if exprs is not None:
            yield exprs


def _structural_inverse(
    imap: IndexMap, dims: tuple[int, ...], names: list[str]
) -> list[Expr] | None:
    """Solve the outputs for the inputs by pattern (the result is verified by the caller).

    Starting from ``known[output_j(x)] = i_j`` (outputs simplified on the box), repeat:

    * split pairs: ``known[y floordiv f] = A`` and ``known[y mod f] = B`` give
      ``known[y] = A * f + B``; ``known[(y floordiv a) mod b] = A`` and
      ``known[y mod a] = B`` give ``known[y mod (a*b)] = A * a + B``;
    * mixed-radix digits: for ``known[sum(c_t * t) + c] = Y``, an atom ``t`` whose lower
      terms stay below ``c_t`` and whose higher coefficients are multiples of
      ``c_t * extent(t)`` is ``((Y - C) floordiv c_t) mod extent(t) + min(t)``;
    * congruences: modulo the gcd of the other coefficients of a known sum, an atom with an
      invertible coefficient and few values is determined;
    * partial solving: subtracting the known atoms of a known sum gives the sum of the
      others (solved directly when only one atom with coefficient +-1 remains).

    Returns one expression (over `names`) per input, or None when some input stays unknown.
    """
    bounds = imap.bounds(dims)
    known: dict[Expr, Expr] = {}
    for name, expr in zip(names, imap.final_indices, strict=True):
        key = simplify(expr, _unbound_singletons(bounds))
        if isinstance(key, Const):
            continue
        known.setdefault(key, Dim(name))
        terms, _ = linear_terms(key)
        if terms and all(coef < 0 for _, coef in terms):
            # a reversed axis (e.g. 7 - 4i - 2j - k): solve its negation as digits
            known.setdefault(simplify(-key, _unbound_singletons(bounds)), -Dim(name))
    for name, extent in zip(imap.initial_indices, dims, strict=True):
        if extent == 1:
            known.setdefault(Dim(name), Const(0))
    targets = [Dim(name) for name in imap.initial_indices]
    for _ in range(4 * len(targets) + 8):
        if all(t in known for t in targets):
            return [known[t] for t in targets]
        if not _learn(known, bounds):
            return None
    return None


def _unbound_singletons(bounds: Bounds) -> dict[str, tuple[int, int]]:
    """`bounds` without the single-value dimensions (so simplification keeps them)."""
    return {name: bound for name, bound in bounds.items() if bound[0] != bound[1]}


def _learn(known: dict[Expr, Expr], bounds: Bounds) -> bool:
    """Apply the rules of `_structural_inverse` once; whether something was learned."""
    learned: dict[Expr, Expr] = {}
    keep = _unbound_singletons(bounds)  # keys keep their extent-1 dimensions
    for key, value in list(known.items()):
        if isinstance(key, FloorDiv):
            operand = simplify(key.lhs, keep)
            remainder = known.get(simplify(key.lhs % key.divisor, keep))
            if remainder is not None and operand not in known:
                learned.setdefault(operand, value * key.divisor + remainder)
        if isinstance(key, Mod) and isinstance(key.lhs, FloorDiv):
            # (y floordiv a) mod b and y mod a give y mod (a*b)
            a, b, operand = key.lhs.divisor, key.divisor, key.lhs.lhs
            low = known.get(simplify(operand % a, keep))
            if low is not None:
                learned.setdefault(simplify(operand % (a * b), keep), value * a + low)
        terms, const = linear_terms(key, keep)
        if len(terms) == 1 and terms[0][1] == 1:
            continue
        for atom, expr in _digits(terms, const, value, bounds):
            if atom not in known:
                learned.setdefault(atom, expr)
        unknown = [(a, c) for a, c in terms if a not in known]
        if not unknown or len(unknown) == len(terms):
            continue
        rest: Expr = value - const
        for atom, coef in terms:
            if atom in known:
                rest = rest - known[atom] * coef
        if len(unknown) == 1 and abs(unknown[0][1]) == 1:
            learned.setdefault(unknown[0][0], rest * unknown[0][1])
        else:
            remaining: Expr = Const(0)
            for atom, coef in unknown:
                remaining = remaining + atom * coef
            learned.setdefault(simplify(remaining, keep), rest)
    fresh = {k: v for k, v in learned.items() if k not in known}
    known.update(fresh)
    return bool(fresh)


def _digits(
    terms: Sequence[tuple[Expr, int]], const: int, value: Expr, bounds: Bounds
) -> list[tuple[Expr, Expr]]:
    """Mixed-radix digit extraction for ``value == sum(c * atom) + const``.

    An atom with a negative coefficient is read reflected: ``c * t == c * (lo + hi) +
    |c| * (lo + hi - t)``, where ``lo + hi - t`` spans the same range as ``t``."""
    ranges = {atom: expr_range(atom, bounds) for atom, _ in terms}
    reflected = {atom for atom, coef in terms if coef < 0}
    shift = sum(coef * sum(ranges[atom]) for atom, coef in terms if atom in reflected)
    positive = [(atom, abs(coef)) for atom, coef in terms]
    digits = [
        (atom, sum(ranges[atom]) - digit if atom in reflected else digit)
        for atom, digit in _positive_digits(positive, const + shift, value, ranges)
    ]
    return digits + _congruence_digits(terms, const, value, ranges)


def _positive_digits(
    terms: Sequence[tuple[Expr, int]],
    const: int,
    value: Expr,
    ranges: dict[Expr, tuple[int, int]],
) -> list[tuple[Expr, Expr]]:
    """`_digits` for positive coefficients."""
    base = const + sum(coef * ranges[atom][0] for atom, coef in terms)
    shifted: Expr = value - base
    result: list[tuple[Expr, Expr]] = []
    for atom, coef in terms:
        if coef <= 0:
            continue
        lo, hi = ranges[atom]
        extent = hi - lo + 1
        low = sum((c * (ranges[a][1] - ranges[a][0]) for a, c in terms if 0 < c < coef), 0)
        others = [c for a, c in terms if a != atom and not 0 < c < coef]
        if low >= coef or any(c % (coef * extent) for c in others):
            continue
        digit = shifted // coef if coef > 1 else shifted
        if others:
            digit = digit % extent
        result.append((atom, digit + lo))
    return result


def _congruence_digits(
    terms: Sequence[tuple[Expr, int]],
    const: int,
    value: Expr,
    ranges: dict[Expr, tuple[int, int]],
) -> list[tuple[Expr, Expr]]:
    """Digits found modulo the gcd ``g`` of the other coefficients: when ``coef`` is
    invertible modulo ``g`` and ``atom`` spans at most ``g`` values,
    ``atom == ((value - const) * coef^-1 - min) mod g + min``."""
    result: list[tuple[Expr, Expr]] = []
    for atom, coef in terms:
        g = math.gcd(*(c for a, c in terms if a != atom))
        lo, hi = ranges[atom]
        if g <= 1 or hi - lo + 1 > g or math.gcd(coef, g) != 1:
            continue
        inverse = pow(coef, -1, g)
        result.append((atom, ((value - const) * inverse - lo) % g + lo))
    return result


def _single_expressions(relation: isl.Map, names: list[str], count: int) -> list[Expr] | None:
    """One expression per output of the single-valued `relation`, each valid on its whole
    domain (chosen among the pieces of isl's piecewise closed form), or None."""
    with bridge.isl_errors("computing a closed-form inverse"):
        found = bridge.pieces(relation.as_pw_multi_aff())
    if not found:
        return None
    per_piece = [
        [bridge.aff_to_expr(ma.get_aff(k), names) for k in range(count)] for _, ma in found
    ]
    if len(per_piece) == 1:
        return per_piece[0]
    with bridge.isl_errors("computing the domain of the inverse"):
        domain = relation.domain()
    result: list[Expr] = []
    for k in range(count):
        with bridge.isl_errors("projecting the inverse"):
            target = relation.project_out(isl.dim_type.out, k + 1, count - k - 1).project_out(
                isl.dim_type.out, 0, k
            )
        options = list(dict.fromkeys(simplify(piece[k]) for piece in per_piece))
        chosen = next(
            (e for e in options if _same_on(names, (e,), domain, target)), None
        )
        if chosen is None:
            return None
        result.append(chosen)
    return result


def _same_on(
    names: Sequence[str], outputs: Sequence[Expr], domain: isl.Set, relation: isl.Map
) -> bool:
    """Whether the map ``names -> outputs`` restricted to `domain` is exactly `relation`."""
    built = bridge.build_map(names, outputs, None)
    with bridge.isl_errors("comparing maps"):
        return bool(built.intersect_domain(domain).is_equal(relation))
