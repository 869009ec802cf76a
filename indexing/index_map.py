"""IndexMap: a quasi-affine map from logical buffer indices to physical (transformed) ones.

An `IndexMap` names its input dimensions (``initial_indices``) and gives one quasi-affine
expression per output (``final_indices``), e.g.
``(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)`` (NHWC to NCHW4c). It is the RFC 0039
``IndexMap``, with exact reasoning:

* `IndexMap.map_shape` gives the structural extents of the transformed buffer;
* `IndexMap.is_injective`, `IndexMap.find_collision`, `IndexMap.padding_predicate`,
  `IndexMap.inverse` and `IndexMap.is_equivalent_to` are decided exactly with isl on the
  box domain ``0 <= x_k < shape_k`` (unlike TVM, a non-injective map such as
  ``i -> i floordiv 2`` is rejected, and "shears" such as ``(i, j) -> (i, i + j)`` invert);
* expressions the engine returns are simplified (`physlayout.indexing.simplify`).

Axis separators (API level only; they become a buffer's ``axis_separators``) are positions in
the output list: a separator value ``s`` starts a new physical axis at output ``s``. In text
they are written ``|`` between two outputs: ``(n, h, w, c) -> (n, c floordiv 4, h | w, c mod
4)`` has separators ``(3,)``.

This module holds the `IndexMap` value itself; the work behind its methods lives in the
modules beside it: `map_constructors` (text, layout strings, Python functions), `shapes`
(shapes, separators, flattening), `extents` (structural extents and padding), `proofs`
(injectivity, collisions, equivalence with isl), `inverse` (exact inversion) and
`bridges.affine` (xDSL affine maps). All errors are ValueError with a message that names
the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from xdsl.ir.affine import AffineMap

from physlayout.indexing.bridges.affine import affine_to_expr, expr_to_affine
from physlayout.indexing.extents import PaddingPredicate, padding_of, structural_extents
from physlayout.indexing.map_constructors import func_map, layout_map, parse_map
from physlayout.indexing.quasi_affine import (
    Bounds,
    Const,
    Dim,
    Expr,
    ExprLike,
    IndexValue,
    as_expr,
    is_int,
    is_valid_name,
)
from physlayout.indexing.shapes import Shape, check_shape, index_value, validate_axis_separators
from physlayout.indexing.simplify import clear_simplify_cache, simplify

if TYPE_CHECKING:
    import islpy as isl
    import numpy as np

# islpy and numpy load on first use: the methods that decide with isl import `proofs`,
# `inverse` and `bridges.isl` when called, and the ndarray methods import numpy, so parsing
# and printing IR that carries IndexMaps (and listing passes) imports neither.


@dataclass(frozen=True)
class IndexMap:
    """A quasi-affine map from logical indices (``initial_indices``, unique dimension names)
    to transformed indices (``final_indices``, one expression per output).

    Construction validates: names are unique identifiers (not ``floordiv``/``ceildiv``/
    ``mod``) and every output only uses those names. Lists are accepted and stored as
    tuples; int outputs become `Const`. The map is hashable (usable in xDSL attributes).
    ``str(m)`` is MLIR affine-map syntax with named dimensions; `IndexMap.parse` reads it
    back exactly.

    Raises:
        ValueError: duplicate or invalid names, outputs that are not expressions over the
            input names.
    """

    initial_indices: tuple[str, ...]
    final_indices: tuple[Expr, ...]

    def __post_init__(self) -> None:
        names = tuple(self.initial_indices)
        seen: set[str] = set()
        for name in names:
            if not isinstance(name, str) or not is_valid_name(name):
                raise ValueError(f"invalid dimension name {name!r}")
            if name in seen:
                raise ValueError(f"duplicate dimension name '{name}'")
            seen.add(name)
        finals = tuple(as_expr(e) for e in self.final_indices)
        for position, expr in enumerate(finals):
            unknown = sorted(expr.dims() - seen)
            if unknown:
                raise ValueError(
                    f"unknown dimension '{unknown[0]}' in output {position} ({expr}) of "
                    f"index map over ({', '.join(names)})"
                )
        object.__setattr__(self, "initial_indices", names)
        object.__setattr__(self, "final_indices", finals)

    # Basic properties --------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        """Number of inputs (rank of the logical buffer)."""
        return len(self.initial_indices)

    @property
    def final_ndim(self) -> int:
        """Number of outputs (rank of the transformed buffer)."""
        return len(self.final_indices)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"IndexMap.parse({self.to_string()!r})"

    def to_string(self, axis_separators: Sequence[int] = ()) -> str:
        """``(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)``: `|` before each output that
        starts a new physical axis. `parse_with_separators` reads it back exactly.

        Raises:
            ValueError: invalid separators for ``final_ndim``.
        """
        seps = set(validate_axis_separators(axis_separators, self.final_ndim))
        text = ""
        for position, expr in enumerate(self.final_indices):
            if position:
                text += " | " if position in seps else ", "
            text += str(expr)
        return f"({', '.join(self.initial_indices)}) -> ({text})"

    # Constructors -------------------------------------------------------------------------

    @staticmethod
    def identity(rank: int) -> IndexMap:
        """``(i0, ..., i{rank-1}) -> (i0, ..., i{rank-1})``."""
        if not is_int(rank) or rank < 0:
            raise ValueError(f"rank must be a non-negative integer, got {rank!r}")
        names = tuple(f"i{k}" for k in range(rank))
        return IndexMap(names, tuple(Dim(n) for n in names))

    @staticmethod
    def parse(text: str) -> IndexMap:
        """Parse ``(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)``.

        Raises:
            ValueError: bad syntax (naming the token and column), duplicate or unknown
                names, non quasi-affine outputs, non-positive divisors, or a ``|``
                separator (use `parse_with_separators`).
        """
        imap, separators = IndexMap.parse_with_separators(text)
        if separators:
            raise ValueError(
                f"axis separators '|' are not allowed in '{text}'; "
                "use IndexMap.parse_with_separators"
            )
        return imap

    @staticmethod
    def parse_with_separators(text: str) -> tuple[IndexMap, tuple[int, ...]]:
        """Parse a map whose outputs may be separated by ``|`` (axis separators).

        ``"(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)"`` gives separators ``(3,)``.

        Raises:
            ValueError: as `parse`, plus a leading, trailing or doubled ``|``.
        """
        if not isinstance(text, str):
            raise ValueError(f"index map text must be a string, got {text!r}")
        return _parse_with_separators(text)

    @staticmethod
    def from_func(
        func: Callable[..., Any], ndim: int | None = None, names: Sequence[str] | None = None
    ) -> IndexMap:
        """Build a map from a Python function of `Dim` objects, e.g.
        ``IndexMap.from_func(lambda n, h, w, c: [n, c // 4, h, w, c % 4])``.

        The number of inputs is the number of positional parameters (`ndim` must agree,
        and is required when the function takes ``*args``); the parameter names are the
        dimension names (``*args`` positions are named ``i0, i1, ...``), unless `names` is
        given. The function returns a list/tuple of expressions or ints (or a single one);
        ``//`` is floordiv and ``%`` is mod.

        Raises:
            ValueError: arity problems, a non quasi-affine result, the function failing,
                or an `AXIS_SEPARATOR` in the result (use `from_func_with_separators`).
        """
        imap, separators = IndexMap.from_func_with_separators(func, ndim, names)
        if separators:
            raise ValueError(
                "index map function returned AXIS_SEPARATOR; use IndexMap.from_func_with_separators"
            )
        return imap

    @staticmethod
    def from_func_with_separators(
        func: Callable[..., Any], ndim: int | None = None, names: Sequence[str] | None = None
    ) -> tuple[IndexMap, list[int]]:
        """Like `from_func`, but the result may contain `AXIS_SEPARATOR` between outputs.

        ``lambda n, h, w, c: [n, c // 4, h, AXIS_SEPARATOR, w, c % 4]`` gives separators
        ``[3]`` (the separator's position in the output list without separators).

        Raises:
            ValueError: as `from_func`, or a leading, trailing or doubled separator.
        """
        dims, outputs, separators = func_map(func, ndim, names)
        imap = IndexMap(dims, outputs)
        validate_axis_separators(separators, imap.final_ndim)
        return imap, separators

    @staticmethod
    def from_layouts(src: str, dst: str) -> IndexMap:
        """The map between two layout strings in TVM's notation.

        Upper-case letters are primal axes; a number followed by a lower-case letter is a
        split sub-axis of the primal axis of that letter (at most one per primal axis),
        e.g. ``NCHW4c``: ``C`` is the outer part and ``c`` (extent 4) the inner part of the
        logical channel ``C * 4 + c``. The map's inputs are the axes of `src` named by
        their letters; each output of `dst` is the matching part of the logical axis,
        simplified assuming every sub-axis lies in ``[0, factor)``.

        ``from_layouts("NCHW", "NCHW4c")`` is ``(N, C, H, W) -> (N, C floordiv 4, H, W,
        C mod 4)`` and ``from_layouts("NCHW4c", "NCHW")`` is ``(N, C, H, W, c) -> (N,
        C * 4 + c, H, W)``.

        Raises:
            ValueError: invalid characters, duplicate axes, a sub-axis without factor or
                without its primal axis, or layouts over different primal axes.
        """
        return IndexMap(*layout_map(src, dst))

    @staticmethod
    def from_affine_map(affine_map: AffineMap, names: Sequence[str] | None = None) -> IndexMap:
        """Convert an xDSL `AffineMap` without symbols (dimensions named `names`, default
        ``d0, d1, ...``).

        Raises:
            ValueError: symbols, or an expression that is not quasi-affine.
        """
        if affine_map.num_symbols:
            raise ValueError(f"affine map {affine_map} has symbols; index maps cannot")
        dims = list(names) if names is not None else [f"d{k}" for k in range(affine_map.num_dims)]
        if len(dims) != affine_map.num_dims:
            raise ValueError(f"expected {affine_map.num_dims} names, got {len(dims)}")
        return _from_affine_map(affine_map, tuple(dims))

    # Evaluation ---------------------------------------------------------------------------

    def _check_arity(self, count: int, what: str = "indices") -> None:
        """Raise ValueError unless `count` equals `ndim`."""
        if count != self.ndim:
            raise ValueError(f"index map expects {self.ndim} {what}, got {count}")

    def map_indices(self, indices: Sequence[IndexValue]) -> list[IndexValue]:
        """Apply the map to concrete indices (ints, or integer arrays that broadcast
        together; evaluated elementwise with floor semantics).

        Raises:
            ValueError: ``len(indices) != ndim`` ("index map expects 4 indices, got 3"),
                or non-integer indices.
        """
        self._check_arity(len(indices))
        env = {name: index_value(v) for name, v in zip(self.initial_indices, indices, strict=True)}
        return [expr.evaluate(env) for expr in self.final_indices]

    def map_exprs(self, indices: Sequence[ExprLike], bounds: Bounds | None = None) -> list[Expr]:
        """Apply the map to symbolic indices; the results are simplified (with `bounds`
        on the dimensions used by `indices`, if given).

        Raises:
            ValueError: wrong number of indices.
        """
        self._check_arity(len(indices))
        mapping = {name: as_expr(v) for name, v in zip(self.initial_indices, indices, strict=True)}
        return [simplify(expr.substitute(mapping), bounds) for expr in self.final_indices]

    def bounds(self, shape: Shape) -> dict[str, tuple[int, int]]:
        """The box ``{name: (0, extent - 1)}`` of the inputs for `shape`."""
        dims = check_shape(shape, self.ndim)
        return {
            name: (0, extent - 1) for name, extent in zip(self.initial_indices, dims, strict=True)
        }

    def simplify(self, shape: Shape | None = None) -> IndexMap:
        """The map with simplified outputs (using the box of `shape` when given; the result
        then equals this map on that box)."""
        bounds = None if shape is None else self.bounds(shape)
        return IndexMap(
            self.initial_indices, tuple(simplify(e, bounds) for e in self.final_indices)
        )

    def map_shape(self, shape: Shape) -> list[int]:
        """Structural extents of the transformed buffer (docs/semantics.md "Shapes and padding").

        An output whose simplified form (without bounds) is ``e mod k`` spans ``k`` (a tile
        is always whole); any other output spans ``max + 1`` where ``max`` comes from
        interval analysis of the output simplified on the box ``[0, shape_k - 1]``. The
        result is the same for a map and its `simplify()` without a shape (simplifying on
        the box may strip a ``mod``: use `transformed_shape` on the maps as written).
        ``(i) -> (i floordiv 4, i mod 4)`` gives ``[3, 4]`` on ``[10]`` and ``[1, 4]`` on
        ``[3]``; ``(i) -> (i mod 16)`` gives ``[16]`` on ``[14]``.

        Raises:
            ValueError: bad shape, or an output whose minimum is not 0.
        """
        return list(structural_extents(self, check_shape(shape, self.ndim)))

    # Exact reasoning (isl) ---------------------------------------------------------------

    def to_isl_map(self, shape: Shape | None = None) -> isl.Map:
        """The map as an isl map ``{ [x0, ...] -> [i0, ...] }`` (inputs renamed ``x<k>``,
        outputs ``i<k>``), on the box of `shape` when given, else on Z^ndim."""
        from physlayout.indexing import proofs
        from physlayout.indexing.bridges import isl as bridge

        if shape is None:
            return bridge.build_map(self.initial_indices, self.final_indices, None)
        return proofs.isl_map(self, check_shape(shape, self.ndim))

    def is_injective(self, shape: Shape) -> bool:
        """Exactly whether distinct indices of the box ``0 <= x_k < shape_k`` map to distinct
        transformed indices (decided by isl)."""
        from physlayout.indexing import proofs

        return proofs.is_injective(self, check_shape(shape, self.ndim))

    def find_collision(self, shape: Shape) -> tuple[list[int], list[int]] | None:
        """Two distinct in-box indices with the same image (the lexicographically smallest
        pair), or None when the map is injective on the box."""
        from physlayout.indexing import proofs

        return proofs.find_collision(self, check_shape(shape, self.ndim))

    def require_injective(self, shape: Shape) -> None:
        """Return when the map is injective on the box of `shape`.

        Raises:
            ValueError: bad shape, or the map is not injective on the box (naming the
                lexicographically smallest colliding pair and their common image).
        """
        from physlayout.indexing import proofs

        dims = check_shape(shape, self.ndim)
        collision = proofs.find_collision(self, dims)
        if collision is None:
            return
        first, second = collision
        image = [int(v) for v in self.map_indices(first)]  # type: ignore[arg-type]
        raise ValueError(
            f"index map {self} is not injective on shape {list(dims)}: indices {first} and "
            f"{second} both map to {image}"
        )

    def padding_predicate(
        self, shape: Shape, extents: Shape | None = None
    ) -> PaddingPredicate | None:
        """The points of the transformed box ``[0, extents)`` with no preimage in the box of
        `shape`, or None when there are none (exact, isl).

        `extents` defaults to ``map_shape(shape)``. A transform list passes its step-by-step
        extents (`transformed_shape`) for its composed map: composing and simplifying can
        give a map whose own structural extents are smaller (``(i) -> (i floordiv 4, i mod
        4)`` on [3] composes to ``(i) -> (0, i)``, structurally [1, 3], in the box [1, 4]).

        Raises:
            ValueError: bad shapes, or `extents` does not contain the image of the box.
        """
        dims = check_shape(shape, self.ndim)
        if extents is None:
            return padding_of(self, dims, structural_extents(self, dims))
        return padding_of(self, dims, check_shape(extents, self.final_ndim, "extents"))

    def inverse(self, shape: Shape) -> IndexMap:
        """The exact inverse (transformed -> logical indices) on the box of `shape`.

        The inverse's inputs are named ``i0, i1, ...`` (one per output of this map); its
        outputs are quasi-affine expressions computed by isl and simplified with the bounds
        of the transformed box ``[0, map_shape(shape))``. For example the inverse of
        ``(i, j) -> (i, i + j)`` on ``[4, 5]`` is ``(i0, i1) -> (i0, i1 - i0)``.

        Raises:
            ValueError: the map is not injective on the box (naming a colliding pair), it
                introduces padding (naming the padding predicate; use
                `non_surjective_inverse`), or the inverse is not one quasi-affine
                expression on the whole image.
        """
        from physlayout.indexing.inverse import inverse_outputs

        dims = check_shape(shape, self.ndim)
        predicate = padding_of(self, dims, structural_extents(self, dims))
        if predicate is not None:
            raise ValueError(
                f"index map {self} introduces padding on shape {list(dims)}: {predicate}; "
                "use non_surjective_inverse"
            )
        return IndexMap(*inverse_outputs(self, dims))

    def non_surjective_inverse(self, shape: Shape) -> tuple[IndexMap, PaddingPredicate | None]:
        """The inverse on the image and the padding predicate of the transformed box (None
        when the map pads nothing). On padding positions the inverse's values are
        unspecified.

        Raises:
            ValueError: the map is not injective on the box (unlike TVM), or the inverse is
                not quasi-affine.
        """
        from physlayout.indexing.inverse import inverse_outputs

        dims = check_shape(shape, self.ndim)
        inverse = IndexMap(*inverse_outputs(self, dims))
        return inverse, padding_of(self, dims, structural_extents(self, dims))

    def is_equivalent_to(self, other: IndexMap, shape: Shape | None = None) -> bool:
        """Exactly whether both maps give the same outputs (compared by position; names
        may differ): on the box of `shape` when given, else for all integer inputs.
        Maps with different numbers of inputs or outputs are never equivalent."""
        if not isinstance(other, IndexMap):
            raise ValueError(f"expected an IndexMap, got {other!r}")
        if self.ndim != other.ndim or self.final_ndim != other.final_ndim:
            return False
        from physlayout.indexing import proofs

        dims = None if shape is None else check_shape(shape, self.ndim)
        return proofs.equivalent(self, other, dims)

    def is_identity_on(self, shape: Shape) -> bool:
        """Exactly whether the map sends every index of the box of `shape` to itself (as many
        outputs as inputs, each output equal to its position's input; proven with isl).
        False, never an error, for a `shape` of the wrong rank or a map isl cannot decide."""
        if self.ndim != self.final_ndim or len(shape) != self.ndim:
            return False
        try:
            return self.is_equivalent_to(IndexMap.identity(self.ndim), shape)
        except ValueError:
            return False

    # Composition --------------------------------------------------------------------------

    def compose(self, other: IndexMap, shape: Shape | None = None) -> IndexMap:
        """Apply this map, then `other`: ``result(x) == other(self(x))``.

        The result has this map's inputs and `other`'s number of outputs; its outputs are
        simplified, using the box of `shape` (a shape of this map's inputs) when given; then
        an output ``k`` that is the constant value of an extent-1 input ``k`` is written as
        that input.
        ``m.compose(m.inverse(shape), shape=shape)`` is the identity for bijections.

        Raises:
            ValueError: ``other.ndim != self.final_ndim``.
        """
        if not isinstance(other, IndexMap):
            raise ValueError(f"expected an IndexMap, got {other!r}")
        if other.ndim != self.final_ndim:
            raise ValueError(
                f"cannot compose {self} ({self.final_ndim} outputs) with {other} "
                f"({other.ndim} inputs)"
            )
        bounds = None if shape is None else self.bounds(shape)
        mapping = dict(zip(other.initial_indices, self.final_indices, strict=True))
        outputs = [simplify(e.substitute(mapping), bounds) for e in other.final_indices]
        if bounds is not None:
            outputs = [
                _positional_dim(expr, k, self.initial_indices, bounds)
                for k, expr in enumerate(outputs)
            ]
        return IndexMap(self.initial_indices, tuple(outputs))

    # numpy --------------------------------------------------------------------------------

    def map_ndarray(self, x: np.ndarray, pad_value: Any = None) -> np.ndarray:
        """The array `x` (logical layout) rewritten into the transformed layout: a new array
        of shape ``map_shape(x.shape)`` with ``out[m(idx)] = x[idx]`` and padding positions
        set to `pad_value`. Vectorized (numpy fancy indexing).

        Raises:
            ValueError: wrong rank, a non-injective map (naming a collision), or padding
                without `pad_value` (naming the padding predicate).
        """
        import numpy as np

        array = np.asarray(x)
        dims = check_shape(array.shape, self.ndim, "array shape")
        self.require_injective(dims)
        out_shape = structural_extents(self, dims)
        predicate = padding_of(self, dims, out_shape)
        if predicate is not None and pad_value is None:
            raise ValueError(
                f"index map {self} introduces padding on shape {list(dims)}: {predicate}; "
                "a pad_value is required"
            )
        if predicate is None:
            out = np.empty(out_shape, dtype=array.dtype)
        else:
            out = np.full(out_shape, pad_value, dtype=array.dtype)
        index = self._gather_index(dims)
        # A rank-0 result (an injective map of a one-element box onto no axes) takes the
        # one element itself.
        out[index] = array if index else array.reshape(())
        return out

    def inverse_map_ndarray(self, y: np.ndarray, shape: Shape) -> np.ndarray:
        """The logical array of `shape` read from `y` in the transformed layout:
        ``out[idx] = y[m(idx)]``. `y` must have shape ``map_shape(shape)``.

        Raises:
            ValueError: bad shape or a `y` of the wrong shape.
        """
        import numpy as np

        array = np.asarray(y)
        dims = check_shape(shape, self.ndim)
        expected = structural_extents(self, dims)
        if tuple(array.shape) != expected:
            raise ValueError(
                f"expected an array of shape {list(expected)} (map_shape of {list(dims)}), "
                f"got {list(array.shape)}"
            )
        gathered = array[self._gather_index(dims)]
        return np.array(np.broadcast_to(gathered, dims))

    unmap_ndarray = inverse_map_ndarray

    def _gather_index(self, dims: tuple[int, ...]) -> tuple[Any, ...]:
        """The transformed index of every logical index of the box, as broadcastable
        arrays (one per output), broadcast to the full logical shape."""
        import numpy as np

        grids = np.indices(dims, dtype=np.int64, sparse=True) if dims else ()
        mapped = self.map_indices(list(grids))
        return tuple(np.broadcast_to(np.asarray(v, dtype=np.int64), dims) for v in mapped)

    # xDSL interop ------------------------------------------------------------------------

    def to_affine_map(self) -> AffineMap:
        """The map as an xDSL `AffineMap` (dimension k is ``initial_indices[k]``, no
        symbols; floordiv/ceildiv/mod become the matching AffineExpr operations)."""
        position = {name: k for k, name in enumerate(self.initial_indices)}
        return AffineMap(
            self.ndim, 0, tuple(expr_to_affine(e, position) for e in self.final_indices)
        )


@lru_cache(maxsize=4096)
def _from_affine_map(affine_map: AffineMap, dims: tuple[str, ...]) -> IndexMap:
    """`IndexMap.from_affine_map` after its checks, memoized: both maps are immutable, and
    the passes read the same few indexing maps of every `linalg.generic` again and again
    (fuse-elementwise alone converted about 29,000 on regnet_x_400mf; errors are not
    cached)."""
    outputs: list[Expr] = []
    for result in affine_map.results:
        output = affine_to_expr(result, [Dim(name) for name in dims])
        if output is None:
            raise ValueError(
                f"affine expression {result} is not a quasi-affine expression of dimensions"
            )
        outputs.append(output)
    return IndexMap(dims, tuple(outputs))


@lru_cache(maxsize=4096)
def _parse_with_separators(text: str) -> tuple[IndexMap, tuple[int, ...]]:
    """`IndexMap.parse_with_separators`, memoized: the map is immutable, and a module
    repeats the same map text in every buffer type that carries it (errors are not cached)."""
    names, outputs, separators = parse_map(text)
    return IndexMap(names, outputs), separators


def _positional_dim(expr: Expr, k: int, names: Sequence[str], bounds: Bounds) -> Expr:
    """Output `k` written as input `k` when it is the constant that input `k` always has
    on the box (an extent-1 input), so identities on the box print as identities."""
    if isinstance(expr, Const) and k < len(names) and bounds[names[k]] == (expr.value,) * 2:
        return Dim(names[k])
    return expr


def clear_caches() -> None:
    """Forget all cached shapes, proofs and inverses (for benchmarks measuring cold calls)."""
    from physlayout.indexing import proofs
    from physlayout.indexing.inverse import inverse_outputs

    for cached in (
        structural_extents,
        proofs.isl_map,
        proofs.is_injective,
        proofs.find_collision,
        padding_of,
        inverse_outputs,
        proofs.equivalent,
        proofs.image_within,
        _parse_with_separators,
        _from_affine_map,
    ):
        cached.cache_clear()
    clear_simplify_cache()

