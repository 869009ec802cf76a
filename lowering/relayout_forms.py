"""The upstream relayout ops as IndexMaps, and the proven recognition of an IndexMap as one
of them (shared by `lower-layout-rewrites` and `raise-layout-rewrites`).

Maps (logical -> transformed indices, the convention of `layout.transform`):

- `transpose_map(perm)`: `linalg.transpose` with `permutation = perm`,
  ``(x0, ..., x{n-1}) -> (x_perm[0], ..., x_perm[n-1])``;
- `reshape_map(src, dst)`: the row-major reshape of `tensor.expand_shape` /
  `tensor.collapse_shape` (linear index ``L`` of `src`, output ``j`` = ``(L floordiv
  stride_j) mod dst_j``, simplified on the box);
- `physlayout.dialects.linalg_pack.pack_map` / `unpack_map`: `linalg.pack` / an
  untruncated `linalg.unpack`.

Recognition (`match_transpose`, `match_reshape`, `match_pack`, `match_unpack`) reads
candidate parameters off the map's outputs, builds the candidate form's IndexMap and
returns the form only when isl proves the two maps equal on the box of the input shape and
the form's result shape is the map's structural shape. A map no form matches is lowered to
the generic fallback, which is always exact.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from physlayout.dialects.linalg_pack import pack_map, packed_shape, unpack_map
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr, FloorDiv, Mod
from physlayout.indexing.simplify import linear_terms

Shape = tuple[int, ...]


# Maps of the upstream ops ------------------------------------------------------------------


def _names(count: int, prefix: str = "x") -> tuple[str, ...]:
    return tuple(f"{prefix}{k}" for k in range(count))


def transpose_map(perm: Sequence[int]) -> IndexMap:
    """`linalg.transpose` with `permutation = perm` (result dimension ``i`` is input
    dimension ``perm[i]``)."""
    names = _names(len(perm))
    return IndexMap(names, tuple(Dim(names[p]) for p in perm))


def reshape_map(src: Sequence[int], dst: Sequence[int]) -> IndexMap:
    """The row-major reshape from `src` to `dst` (same number of elements)."""
    names = _names(len(src))
    linear: Expr = Const(0)
    for name, stride in zip(names, _strides(src), strict=True):
        linear = linear + Dim(name) * stride
    outputs: list[Expr] = []
    for k, (extent, stride) in enumerate(zip(dst, _strides(dst), strict=True)):
        part = linear if stride == 1 else linear // stride
        outputs.append(part if k == 0 else part % extent)
    return IndexMap(names, tuple(outputs)).simplify(src)


def grouped_reshape_map(
    src: Sequence[int], dst: Sequence[int], groups: Sequence[Sequence[int]], expand: bool
) -> IndexMap:
    """The row-major reshape of `tensor.expand_shape` (`expand`) or `tensor.collapse_shape`
    with reassociation `groups` (the axes of the larger shape each axis of the smaller one
    stands for): `reshape_map` group by group, where an axis that stands for one axis alone
    stays that input (a unit batch axis stays ``x0``, not the constant 0)."""
    names = _names(len(src))
    outputs: list[Expr] = [Const(0)] * len(dst)
    for small, group in enumerate(groups):
        if expand:
            inputs, results = [small], list(group)
        else:
            inputs, results = list(group), [small]
        if len(inputs) == 1 and len(results) == 1:
            outputs[results[0]] = Dim(names[inputs[0]])
            continue
        part = reshape_map([src[k] for k in inputs], [dst[k] for k in results])
        rename = {n: Dim(names[k]) for n, k in zip(part.initial_indices, inputs, strict=True)}
        for k, expr in zip(results, part.final_indices, strict=True):
            outputs[k] = expr.substitute(rename)
    return IndexMap(names, tuple(outputs))


def _strides(shape: Sequence[int]) -> list[int]:
    return [prod(shape[k + 1 :]) for k in range(len(shape))]


def _proven(imap: IndexMap, candidate: IndexMap, shape: Shape, result: Shape) -> bool:
    """Whether `candidate` equals `imap` on the box of `shape` and has the structural result
    shape `result` (exact; False on any engine error)."""
    try:
        return tuple(candidate.map_shape(shape)) == result and imap.is_equivalent_to(
            candidate, shape
        )
    except ValueError:
        return False


def _result_shape(imap: IndexMap, shape: Shape) -> Shape | None:
    try:
        return tuple(imap.map_shape(shape))
    except ValueError:
        return None


def _matches(imap: IndexMap, candidate: IndexMap, shape: Shape) -> bool:
    """`_proven` against the result shape of `imap` itself (False when it has none)."""
    result = _result_shape(imap, shape)
    return result is not None and _proven(imap, candidate, shape, result)


def _unless_identity(perm: tuple[int, ...]) -> tuple[int, ...] | None:
    """`perm`, or None for the identity permutation."""
    return None if perm == tuple(range(len(perm))) else perm


# Transpose --------------------------------------------------------------------------------


def match_transpose(imap: IndexMap, shape: Shape) -> tuple[int, ...] | None:
    """The permutation of a map proven to be a transpose on the box of `shape`."""
    if imap.ndim != imap.final_ndim:
        return None
    position = {name: k for k, name in enumerate(imap.initial_indices)}
    perm: list[int] = []
    for expr in imap.final_indices:
        if not isinstance(expr, Dim) or position[expr.name] in perm:
            return None
        perm.append(position[expr.name])
    return tuple(perm) if _matches(imap, transpose_map(perm), shape) else None


# Reshape ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reshape:
    """A row-major reshape as `tensor.collapse_shape` to `middle` (groups `collapse`, None
    when `middle` is the source shape) then `tensor.expand_shape` to the result (groups
    `expand`, None when the result is `middle`)."""

    middle: Shape
    collapse: tuple[tuple[int, ...], ...] | None
    expand: tuple[tuple[int, ...], ...] | None


def match_reshape(imap: IndexMap, shape: Shape) -> Reshape | None:
    """The reshape a map is proven to be on the box of `shape` (same element count)."""
    result = _result_shape(imap, shape)
    if result is None or not shape or not result or prod(shape) != prod(result):
        return None
    if not _proven(imap, reshape_map(shape, result), shape, result):
        return None
    return reshape_groups(shape, result)


def reshape_groups(src: Shape, dst: Shape) -> Reshape | None:
    """Collapse-then-expand groups for a row-major reshape of `src` into `dst`: the
    coarsest common refinement of both shapes (unit extents join a neighbouring group)."""
    src_groups: list[list[int]] = []
    dst_groups: list[list[int]] = []
    i = j = 0
    while i < len(src) and j < len(dst):
        src_group, dst_group = [i], [j]
        size_src, size_dst = src[i], dst[j]
        i, j = i + 1, j + 1
        while size_src != size_dst:
            if size_src < size_dst and i < len(src):
                size_src *= src[i]
                src_group.append(i)
                i += 1
            elif size_dst < size_src and j < len(dst):
                size_dst *= dst[j]
                dst_group.append(j)
                j += 1
            else:
                return None
        src_groups.append(src_group)
        dst_groups.append(dst_group)
    src_groups[-1].extend(range(i, len(src)))
    dst_groups[-1].extend(range(j, len(dst)))
    if any(src[k] != 1 for k in range(i, len(src))) or any(dst[k] != 1 for k in range(j, len(dst))):
        return None
    middle = tuple(prod(src[k] for k in group) for group in src_groups)
    collapse = None if len(middle) == len(src) else tuple(tuple(g) for g in src_groups)
    expand = None if len(middle) == len(dst) else tuple(tuple(g) for g in dst_groups)
    return Reshape(middle, collapse, expand)


# Pack -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pack:
    """`linalg.pack` with these parameters, then `linalg.transpose` by `transpose` (None
    when the packed layout is already the result's)."""

    inner_dims_pos: tuple[int, ...]
    tiles: tuple[int, ...]
    outer_dims_perm: tuple[int, ...]
    transpose: tuple[int, ...] | None

    def packed_shape(self, shape: Shape) -> Shape:
        """The shape of this `linalg.pack`'s result (before `transpose`) for a source of shape
        `shape`: outer dimensions `ceil(shape[d] / tile)` for the tiled ones, permuted by
        `outer_dims_perm`, followed by the tile sizes."""
        return packed_shape(shape, self.inner_dims_pos, self.tiles, self.outer_dims_perm)


def _classify(expr: Expr, position: dict[str, int]) -> tuple[str, int, int] | None:
    """An output as ``("plain", d, 1)`` (``x_d``), ``("outer", d, t)`` (``x_d floordiv
    t``) or ``("inner", d, t)`` (``x_d mod t``)."""
    match expr:
        case Dim(name=name):
            return ("plain", position[name], 1)
        case FloorDiv(lhs=Dim(name=name), divisor=t):
            return ("outer", position[name], t)
        case Mod(lhs=Dim(name=name), divisor=t):
            return ("inner", position[name], t)
        case _:
            return None


def match_pack(imap: IndexMap, shape: Shape) -> Pack | None:
    """The pack (+ transpose) a map is proven to be on the box of `shape`: every input
    dimension is either one plain output, or one ``floordiv t`` and one ``mod t`` output;
    at least one is tiled."""
    position = {name: k for k, name in enumerate(imap.initial_indices)}
    parts = [_classify(e, position) for e in imap.final_indices]
    if any(p is None for p in parts):
        return None
    known = [p for p in parts if p is not None]
    outer = [(d, t) for kind, d, t in known if kind != "inner"]
    inner = [(d, t) for kind, d, t in known if kind == "inner"]
    tiled = {d: t for kind, d, t in known if kind == "outer"}
    if not inner or sorted(d for d, _ in outer) != list(range(imap.ndim)):
        return None
    if dict(inner) != tiled or len(inner) != len(tiled):
        return None
    outer_perm = tuple(d for d, _ in outer)
    inner_dims_pos = tuple(d for d, _ in inner)
    tiles = tuple(t for _, t in inner)
    packed_position = {("inner", d): imap.ndim + i for i, d in enumerate(inner_dims_pos)}
    packed_position.update({("outer", d): j for j, d in enumerate(outer_perm)})
    perm = tuple(
        packed_position[("inner" if kind == "inner" else "outer", d)] for kind, d, _ in known
    )
    form = Pack(inner_dims_pos, tiles, _unless_identity(outer_perm) or (), _unless_identity(perm))
    candidate = pack_map(imap.ndim, inner_dims_pos, tiles, outer_perm)
    if form.transpose is not None:
        candidate = candidate.compose(transpose_map(form.transpose))
    return form if _matches(imap, candidate, shape) else None


# Unpack -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unpack:
    """`linalg.transpose` by `transpose` (None when not needed) then an untruncated
    `linalg.unpack` with these parameters."""

    inner_dims_pos: tuple[int, ...]
    tiles: tuple[int, ...]
    outer_dims_perm: tuple[int, ...]
    transpose: tuple[int, ...] | None


def _split_sum(expr: Expr, position: dict[str, int], shape: Shape) -> tuple[int, int, int] | None:
    """``y_a * t + y_b`` with ``extent(y_b) == t`` as ``(a, b, t)``."""
    terms, const = linear_terms(expr)
    if const or len(terms) != 2:
        return None
    dims = [(position[atom.name], c) for atom, c in terms if isinstance(atom, Dim)]
    if len(dims) != 2:
        return None
    for (a, ca), (b, cb) in (tuple(dims), tuple(reversed(dims))):
        if cb == 1 and ca == shape[b] and ca > 0:
            return a, b, ca
    return None


def match_unpack(imap: IndexMap, shape: Shape) -> Unpack | None:
    """The (transpose +) untruncated unpack a map is proven to be on the box of the packed
    `shape`: every output is a plain input ``y_a`` or ``y_a * t + y_b`` with ``y_b`` of
    extent ``t``, every input used once, at least one sum."""
    position = {name: k for k, name in enumerate(imap.initial_indices)}
    outer_of: list[int] = []
    inner_of: dict[int, tuple[int, int]] = {}
    for k, expr in enumerate(imap.final_indices):
        if isinstance(expr, Dim):
            outer_of.append(position[expr.name])
            continue
        split = _split_sum(expr, position, shape)
        if split is None:
            return None
        outer_of.append(split[0])
        inner_of[k] = (split[1], split[2])
    rank = imap.final_ndim
    used = [*outer_of, *(b for b, _ in inner_of.values())]
    if not inner_of or sorted(used) != list(range(imap.ndim)):
        return None
    outer_dims = sorted(outer_of)
    inner_dims = sorted(b for b, _ in inner_of.values())
    order = (*outer_dims, *inner_dims)
    outer_perm = tuple(outer_of.index(old) for old in outer_dims)
    by_inner = {b: (k, t) for k, (b, t) in inner_of.items()}
    inner_dims_pos = tuple(by_inner[b][0] for b in inner_dims)
    tiles = tuple(by_inner[b][1] for b in inner_dims)
    form = Unpack(
        inner_dims_pos, tiles, _unless_identity(outer_perm) or (), _unless_identity(order)
    )
    candidate = unpack_map(rank, inner_dims_pos, tiles, outer_perm)
    if form.transpose is not None:
        candidate = transpose_map(order).compose(candidate)
    return form if _matches(imap, candidate, shape) else None


# Digit permutation ------------------------------------------------------------------------


@dataclass(frozen=True)
class DigitPermutation:
    """A bijection that splits axes into digits, permutes the digits and fuses them again:
    `tensor.expand_shape` to `digits` (groups `expand`, None when no axis splits), a
    `linalg.transpose` by `transpose` (None for the identity), `tensor.collapse_shape` with
    groups `collapse` (None when no output fuses digits). TVM's "reshape, transpose,
    reshape" for layout maps without padding."""

    digits: Shape
    expand: tuple[tuple[int, ...], ...] | None
    transpose: tuple[int, ...] | None
    collapse: tuple[tuple[int, ...], ...] | None


def _cuts(expr: Expr, cuts: dict[str, set[int]]) -> tuple[str, int] | None:
    """Record in `cuts` the digit boundaries that floordiv / mod chains on a bare input put
    in its value; returns ``(name, m)`` when `expr` is ``x floordiv m`` (``m = 1``: ``x``)."""
    match expr:
        case Dim(name=name):
            return (name, 1)
        case FloorDiv(lhs=lhs, divisor=k):
            inner = _cuts(lhs, cuts)
            if inner is None:
                return None
            cuts.setdefault(inner[0], set()).update({inner[1], inner[1] * k})
            return (inner[0], inner[1] * k)
        case Mod(lhs=lhs, divisor=k):
            inner = _cuts(lhs, cuts)
            if inner is not None:
                cuts.setdefault(inner[0], set()).update({inner[1], inner[1] * k})
            return None
        case _:
            for child in _children(expr):
                _cuts(child, cuts)
            return None


def _children(expr: Expr) -> tuple[Expr, ...]:
    return tuple(getattr(expr, field) for field in ("lhs", "rhs") if hasattr(expr, field))


def _radices(extent: int, cuts: set[int]) -> list[int] | None:
    """The digit extents (outermost first) of an axis of `extent` cut at `cuts`, or None
    when a cut does not divide the next one."""
    inner = sorted(c for c in cuts if 1 < c < extent)
    bounds = [1, *inner, extent]
    if any(b % a for a, b in itertools.pairwise(bounds)):
        return None
    return [b // a for a, b in reversed(list(itertools.pairwise(bounds)))]


def match_digit_permutation(imap: IndexMap, shape: Shape) -> DigitPermutation | None:
    """The expand / transpose / collapse a bijective map without padding is proven to be on
    the box of `shape`: every output must be a mixed-radix number of digits of the inputs
    (the digits being cut at the map's own floordiv / mod divisors), each digit used once."""
    result = _result_shape(imap, shape)
    if result is None or not shape or not result or prod(shape) != prod(result):
        return None
    cuts: dict[str, set[int]] = {}
    for expr in imap.final_indices:
        _cuts(expr, cuts)
    digits: list[tuple[str, int]] = []
    groups: list[tuple[int, ...]] = []
    mapping: dict[str, Expr] = {}
    for name, extent in zip(imap.initial_indices, shape, strict=True):
        radices = _radices(extent, cuts.get(name, set()))
        if radices is None:
            return None
        first = len(digits)
        value: Expr = Const(0)
        for k, radix in enumerate(radices):
            digit = f"{name}_{k}"
            digits.append((digit, radix))
            value = value + Dim(digit) * prod(radices[k + 1 :])
        groups.append(tuple(range(first, len(digits))))
        mapping[name] = value
    position = {name: k for k, (name, _) in enumerate(digits)}
    bounds = {name: (0, radix - 1) for name, radix in digits if radix > 1}
    order: list[list[int]] = []
    for expr in imap.final_indices:
        used = _mixed_radix(expr.substitute(mapping), bounds, dict(digits))
        if used is None:
            return None
        order.append([position[name] for name in used])
    flat = [k for group in order for k in group]
    unused = [k for k in range(len(digits)) if k not in flat]
    if len(set(flat)) != len(flat) or any(digits[k][1] != 1 for k in unused):
        return None
    for group in order:
        if not group and unused:
            group.append(unused.pop())
    if not order or not all(order):
        return None
    order[0] = [*unused, *order[0]]
    perm = tuple(k for group in order for k in group)
    collapse: list[tuple[int, ...]] = []
    start = 0
    for group in order:
        collapse.append(tuple(range(start, start + len(group))))
        start += len(group)
    extents = tuple(radix for _, radix in digits)
    form = DigitPermutation(
        extents,
        None if len(digits) == len(shape) else tuple(groups),
        _unless_identity(perm),
        None if len(collapse) == len(perm) else tuple(collapse),
    )
    permuted = tuple(extents[k] for k in perm)
    candidate = reshape_map(shape, extents).compose(transpose_map(perm))
    candidate = candidate.compose(reshape_map(permuted, result))
    if not _proven(imap, candidate, shape, result):
        return None
    return form


def _mixed_radix(
    expr: Expr, bounds: dict[str, tuple[int, int]], radix: dict[str, int]
) -> list[str] | None:
    """The digits of `expr` from most to least significant, when it is exactly
    ``sum(d_i * prod(radix of later digits))``; None otherwise."""
    terms, const = linear_terms(expr, bounds)
    if const:
        return None
    names: list[tuple[int, str]] = []
    for atom, coefficient in terms:
        if not isinstance(atom, Dim) or coefficient <= 0:
            return None
        names.append((coefficient, atom.name))
    names.sort(reverse=True)
    weight = 1
    for coefficient, name in reversed(names):
        if coefficient != weight:
            return None
        weight *= radix[name]
    return [name for _, name in names]
