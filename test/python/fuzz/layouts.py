"""Random buffer LAYOUTS for the buffer-level program generator (`fuzz.programs`), and the
index-map steps the graph-level one (`fuzz.graphs`) reuses.

`_MapBuilder` composes elementary injective steps on quasi-affine result expressions:
permutations, splits `i floordiv k, i mod k` (k not a power of two too, inner axis in place
or last), `ceildiv` splits, fused axes `i * E + j`, shears `(i, j) -> (i, i + j)`,
reversals, strides `i * 2`, unit axes; it tracks each result's structural extent and
whether a step may pad. On it:

- `random_layout`: global/shared-scope layouts, lists of two transforms, `pad_value`s where
  the map pads (and sometimes where it does not), axis separators (in the map with `|`, or
  `axis_separators` without a transform);
- `texture_layout`: the texture scopes (`f32`, innermost extent 4: NCHW4c-style channel
  splits or an innermost axis of 4);
- `memref_layout`: an upstream memref's affine layout map (with item 9a, sometimes one
  that cannot be normalized).

`Layout` is the result: the map texts, pad value, separators, scope and the physical shape
as the generator computed it; it prints the buffer (or memref) type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import numpy as np

from fuzz.choices import Chooser
from fuzz.features import Features
from physlayout.indexing.index_map import IndexMap

MAX_ELEMENTS = 360
"""Upper bound on the iteration space (the evaluator runs every program several times); a
layout's physical storage stays under 8 times it."""
PAD_VALUES = (0.0, -1.0, 2.5, 7.0)
TEXTURE_SCOPES = ("global.texture", "global.texture-nhwc", "global.texture-weight")


def fmt_float(value: float) -> str:
    return f"{value:.6e}" if value != int(value) else f"{value:.1f}"


@dataclass(frozen=True)
class Layout:
    """A buffer type's layout: pending transforms (map texts), pad value, separators
    (only without transforms) and scope; `physical` is the transformed shape as the
    generator computed it (None without transforms)."""

    maps: tuple[str, ...] = ()
    pad_value: float | None = None
    separators: tuple[int, ...] = ()
    scope: str = "global"
    physical: tuple[int, ...] | None = None
    memref: bool = False
    """An upstream `memref` (its map is the memref's layout) instead of a `!layout.buffer`."""

    @property
    def is_texture(self) -> bool:
        return self.scope.startswith("global.texture")

    def type_text(self, shape: Sequence[int]) -> str:
        parts = ["x".join(str(e) for e in shape) + "xf32"]
        if self.memref:
            maps = [f"affine_map<{m}>" for m in self.maps]
            return f"memref<{', '.join(parts + maps)}>"
        if len(self.maps) == 1:
            parts.append(f"transform = #layout.index_map<{self.maps[0]}>")
        elif self.maps:
            inner = ", ".join(f"#layout.index_map<{m}>" for m in self.maps)
            parts.append(f"transform = [{inner}]")
        if self.pad_value is not None:
            parts.append(f"pad_value = {fmt_float(self.pad_value)} : f32")
        if self.separators:
            parts.append(f"axis_separators = [{', '.join(map(str, self.separators))}]")
        if self.scope != "global":
            parts.append(f'scope = "{self.scope}"')
        return f"!layout.buffer<{', '.join(parts)}>"

    def ptr_text(self) -> str:
        if self.scope == "global":
            return "!layout.ptr<f32>"
        return f'!layout.ptr<f32, scope = "{self.scope}">'

    def storage_elements(self, shape: Sequence[int]) -> int:
        return prod(self.physical if self.physical is not None else shape)


def _operand(expr: str) -> str:
    return expr if expr.isidentifier() or expr.isdigit() else f"({expr})"


@dataclass
class _MapBuilder:
    """Composes elementary injective steps on quasi-affine result expressions, tracking
    each result's structural extent and whether any step may pad."""

    names: tuple[str, ...]
    exprs: list[str]
    extents: list[int]
    features: Features
    used: set[str]
    pads: bool = False
    composed: bool = False
    """The second map of a transform list (its inputs are the first map's results)."""
    ceil: bool = False
    """A `ceildiv` split was made (without `found_piecewise_padding_fill`, no step may
    follow it)."""
    box: tuple[int, ...] = ()
    """The extents of the map's inputs."""

    @staticmethod
    def start(
        names: Sequence[str], shape: Sequence[int], features: Features, used: set[str]
    ) -> _MapBuilder:
        return _MapBuilder(tuple(names), list(names), list(shape), features, used, box=tuple(shape))

    def values(self, expr: str) -> np.ndarray:
        """The values `expr` (over the map's inputs) takes on the input box."""
        index_map = IndexMap.parse(f"({', '.join(self.names)}) -> ({expr})")
        grid = list(np.indices(self.box, dtype=np.int64)) if self.box else []
        (values,) = index_map.map_indices(grid)
        return np.asarray(values)

    def largest(self, k: int) -> int:
        """The largest value result `k` takes on the input box (below its structural
        extent minus one when a tile is larger than the axis it splits, or a stride leaves
        gaps)."""
        return int(np.max(self.values(self.exprs[k])))

    def starts_at_zero(self, expr: str) -> bool:
        """Whether `expr` takes the value 0 on the input box: the sum of two results that
        share an input (after a shear or a reversal) may not, e.g. `i + (12 - (i + j))`."""
        return int(np.min(self.values(expr))) == 0

    def structurally_starts_at_zero(self, expr: str) -> bool:
        """Whether the engine's structural range of `expr` on the input box starts at 0."""
        index_map = IndexMap.parse(f"({', '.join(self.names)}) -> ({expr})")
        try:
            index_map.map_shape(list(self.box))
        except ValueError:
            return False
        return True

    def permute(self, order: Sequence[int]) -> None:
        self.exprs = [self.exprs[k] for k in order]
        self.extents = [self.extents[k] for k in order]

    def can_split(self, k: int, factor: int) -> bool:
        extent = self.extents[k]
        if extent % factor == 0 or extent > factor:
            return True
        if self.features.item3_small_padded_tiles:
            self.used.add("item3_small_padded_tiles")
            return True
        return False

    def split(self, k: int, factor: int, inner_last: bool, ceil: bool = False) -> None:
        expr, extent = _operand(self.exprs[k]), self.extents[k]
        if ceil:
            outer = f"{expr} ceildiv {factor}"
            outer_extent = -(-(extent - 1) // factor) + 1
            self.pads = self.pads or factor > 1
        else:
            outer = f"{expr} floordiv {factor}"
            outer_extent = -(-extent // factor)
            self.pads = self.pads or extent % factor != 0
        inner = f"{expr} mod {factor}"
        exprs = [*self.exprs[:k], outer, *self.exprs[k + 1 :]]
        extents = [*self.extents[:k], outer_extent, *self.extents[k + 1 :]]
        where = len(exprs) if inner_last else k + 1
        exprs.insert(where, inner)
        extents.insert(where, factor)
        self.exprs, self.extents = exprs, extents

    def fuse(self, k: int) -> None:
        inner_extent = self.extents[k + 1]
        fused = f"{_operand(self.exprs[k])} * {inner_extent} + {_operand(self.exprs[k + 1])}"
        if not self.starts_at_zero(fused):
            return
        self.exprs[k : k + 2] = [fused]
        self.extents[k : k + 2] = [self.extents[k] * inner_extent]

    def shear(self, k: int) -> None:
        sheared = f"{_operand(self.exprs[k])} + {_operand(self.exprs[k + 1])}"
        if not self.starts_at_zero(sheared):
            return
        self.exprs[k + 1] = sheared
        self.pads = self.pads or (self.extents[k] > 1 and self.extents[k + 1] > 0)
        self.extents[k + 1] = self.extents[k] + self.extents[k + 1] - 1

    def reverse(self, k: int) -> None:
        # Reverse against the largest value taken, not the structural extent: the smallest
        # result of a map must be 0 (DESIGN.md), and `1 - i mod 2` on `[1]` is never 0.
        # The structural range (DESIGN.md "Shapes and padding") may exceed the largest value
        # taken (`i ceildiv 7 + i mod 7` on [11]: structurally 8, at most 7): such a
        # reversal's structural minimum is below 0, an error, so it is skipped.
        reversed_expr = f"{self.largest(k)} - {_operand(self.exprs[k])}"
        if not self.structurally_starts_at_zero(reversed_expr):
            return
        self.exprs[k] = reversed_expr

    def stride(self, k: int) -> None:
        self.exprs[k] = f"{_operand(self.exprs[k])} * 2"
        self.pads = self.pads or self.extents[k] > 1
        self.extents[k] = 2 * self.extents[k] - 1

    def unit_axis(self, k: int) -> None:
        self.exprs.insert(k, "0")
        self.extents.insert(k, 1)

    def random_step(self, c: Chooser) -> None:
        with c.span():
            self._random_step(c)

    def _random_step(self, c: Chooser) -> None:
        if self.ceil and not self.features.found_piecewise_padding_fill:
            return
        rank = len(self.exprs)
        kind = c.choice(["permute", "split", "fuse", "shear", "reverse", "stride", "ceil", "unit"])
        k = c.integer(0, rank - 1)
        if kind == "permute":
            self.permute(c.permutation(rank))
        elif kind in ("split", "ceil"):
            factor = c.choice([4, 3, 2, 5, 6, 7])
            if kind == "ceil" and (self.composed or not self.exprs[k].isidentifier()):
                if not self.features.found_piecewise_padding_fill:
                    return
                self.used.add("found_piecewise_padding_fill")
            if self.can_split(k, factor):
                self.split(k, factor, c.flag(50), ceil=kind == "ceil")
                self.ceil = self.ceil or kind == "ceil"
        elif kind == "fuse" and k + 1 < rank:
            self.fuse(k)
        elif kind == "shear" and k + 1 < rank:
            self.shear(k)
        elif kind == "reverse":
            self.reverse(k)
        elif kind == "stride":
            self.stride(k)
        elif kind == "unit" and rank < 5:
            self.unit_axis(k)

    def text(self, separators: Sequence[int] = ()) -> str:
        results = ""
        for position, expr in enumerate(self.exprs):
            if position:
                results += " | " if position in separators else ", "
            results += expr
        return f"({', '.join(self.names)}) -> ({results})"


DIM_NAMES = ("i", "j", "k", "l", "m")
SECOND_NAMES = ("a", "b", "c", "d", "e", "f")


def _separators(c: Chooser, rank: int, most: int) -> tuple[int, ...]:
    if rank < 2 or most == 0 or not c.flag(40):
        return ()
    chosen = sorted(set(c.integer(1, rank - 1) for _ in range(c.integer(1, most))))
    return tuple(chosen)


def random_layout(
    c: Chooser, shape: Sequence[int], features: Features, scope: str, used: set[str]
) -> Layout:
    """A random (global/shared-scope) layout for a buffer of `shape`."""
    rank = len(shape)
    if not c.flag(70):
        return Layout(separators=_separators(c, rank, 2), scope=scope)
    maps: list[str] = []
    current = list(shape)
    pads = False
    builder = _MapBuilder.start(DIM_NAMES[:rank], current, features, used)
    for _ in c.repeat(1, 3, 50):
        builder.random_step(c)
    if len(builder.exprs) > 6 or prod(builder.extents) > 8 * MAX_ELEMENTS:
        return Layout(scope=scope)
    if c.flag(20):
        maps.append(builder.text())
        pads = builder.pads
        current = builder.extents
        builder = _MapBuilder.start(SECOND_NAMES[: len(current)], current, features, used)
        # The second map's inputs range over the first map's actual extents (the engine's,
        # which may be below the structural ones), e.g. [1, 11, 12] for a structural 17.
        builder.box = tuple(IndexMap.parse(maps[-1]).map_shape(shape))
        builder.composed = True
        builder.random_step(c)
        if len(builder.exprs) > 6 or prod(builder.extents) > 8 * MAX_ELEMENTS:
            return Layout(scope=scope)
    maps.append(builder.text(_separators(c, len(builder.exprs), 2)))
    pads = pads or builder.pads
    pad_value = c.choice(PAD_VALUES) if pads or c.flag(20) else None
    return Layout(tuple(maps), pad_value, (), scope, tuple(builder.extents))


def memref_layout(c: Chooser, shape: Sequence[int], features: Features, used: set[str]) -> Layout:
    """A memref layout: none, or one affine map (no separators, no pad value); with item 9a
    sometimes a map with a negative result that cannot be normalized."""
    rank = len(shape)
    if not c.flag(70):
        return Layout(memref=True)
    builder = _MapBuilder.start([f"d{k}" for k in range(rank)], shape, features, used)
    for _ in c.repeat(1, 3, 50):
        builder.random_step(c)
    if len(builder.exprs) > 6 or prod(builder.extents) > 8 * MAX_ELEMENTS:
        return Layout(memref=True)
    if features.item9a_unnormalizable_memrefs and c.flag(4):
        used.add("item9a_unnormalizable_memrefs")
        builder.exprs[-1] = f"{_operand(builder.exprs[-1])} - 1"
        return Layout((builder.text(),), memref=True)
    return Layout((builder.text(),), physical=tuple(builder.extents), memref=True)


def texture_layout(
    c: Chooser, shape: Sequence[int], features: Features, used: set[str]
) -> Layout | None:
    """A texture layout for a buffer whose innermost axis holds the channels, or None when
    `shape` cannot be one (with the features enabled)."""
    rank = len(shape)
    channels = shape[-1]
    scope = c.choice(TEXTURE_SCOPES)
    if channels % 4 and not features.item4_padded_texels:
        return None
    if channels < 4 and not features.item3_small_padded_tiles:
        return None
    if channels == 4 and rank >= 2 and c.flag(30):
        separators = _separators(c, rank - 1, 1)
        if not _texture_separators_ok(scope, rank, separators, features, used):
            return None
        return Layout(separators=separators, scope=scope)
    if channels % 4:
        used.add("item4_padded_texels")
    if channels < 4:
        used.add("item3_small_padded_tiles")
    builder = _MapBuilder.start(DIM_NAMES[:rank], shape, features, used)
    outer = list(range(rank - 1))
    order = [outer[k] for k in c.permutation(len(outer))]
    builder.permute([*order, rank - 1])
    if rank >= 3 and c.flag(25):
        builder.reverse(c.integer(0, rank - 2))
    builder.split(rank - 1, 4, inner_last=True)
    # Move the channel-block axis (just before the lanes) to a random outer position.
    block = c.integer(0, rank - 1)
    exprs, extents = builder.exprs, builder.extents
    exprs.insert(block, exprs.pop(rank - 1))
    extents.insert(block, extents.pop(rank - 1))
    out_rank = len(exprs)
    separators = _separators(c, out_rank - 1, 1)
    if not _texture_separators_ok(scope, out_rank, separators, features, used):
        return None
    pad_value = c.choice(PAD_VALUES) if builder.pads or c.flag(15) else None
    return Layout((builder.text(separators),), pad_value, (), scope, tuple(extents))


def _texture_separators_ok(
    scope: str, rank: int, separators: Sequence[int], features: Features, used: set[str]
) -> bool:
    if separators or not (scope == "global.texture-nhwc" and rank == 3):
        return True
    if features.item8_nhwc_rank3_textures:
        used.add("item8_nhwc_rank3_textures")
        return True
    return False
