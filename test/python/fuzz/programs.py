"""Random BUFFER-LEVEL programs (MLIR text) for the differential checker.

`generate_program(chooser, features)` builds a module of one to three kernels over one
random iteration shape (extents include 1 and primes), and sometimes a host `@main` that
allocates buffers and calls the kernels (the shape `physlayout run` executes). `programs()`
is the same generator as a Hypothesis strategy.

Buffers carry random layouts: permutations, splits `i floordiv k, i mod k` (k not a power
of two too, inner axis in place or last), `ceildiv` splits, fused axes `i * E + j`, shears
`(i, j) -> (i, i + j)`, reversals, strides `i * 2`, unit axes; lists of two transforms;
`pad_value`s where the map pads (and sometimes where it does not); axis separators (in the
map with `|`, or `axis_separators` without a transform); scopes `global`, `shared` and the
texture scopes (`f32`, innermost extent 4: NCHW4c-style channel splits or an innermost
axis of 4).

Kernel bodies are loop nests (`scf.for`, `affine.for`, `scf.parallel`, `affine.parallel`,
over full or partial ranges in any axis order) built from patterns: elementwise maps with
broadcasts, transposed and reversed reads, guards (`scf.if`) and double stores; fills from a
scalar parameter; delinearized single loops (`divui`/`remui`); `iter_args` reductions;
texel loops (`c = c4 * 4 + lane`, what `vectorize-texels` matches); `vector<4xf32>` loads
and stores of four innermost elements; and patterns whose
iterations communicate through memory: scans `y[i] = y[i - 1] + x[i]` (in the buffer or
carried in `iter_args`), in-place reversals, in-place stencils and last-writer-wins stores.
Scratch buffers are `layout.allocate` + `layout.decl_buffer` (initialized by a full write
first: upstream `memref.alloc` is not zeroed), with aliases: a second declaration, a flat
1-D view, a view at an element offset, and flat views of parameters through `layout.data`.
Kernels may call earlier kernels; `@main` only allocates and calls. Some programs are
*host style* (kernels without allocations, calls or results: what `physlayout run`
launches), some use upstream `memref`s with affine layout maps instead of buffers (what
`apply-layout` normalizes like `mlir-opt -normalize-memrefs`; `memref.load`/`store`).

Choices are made through a `Chooser` (`fuzz.choices`), with spans around every
repeated part, so a recorded program can be regenerated and shrunk.

Every program is valid by construction: it parses, verifies, passes `verify-buffers` and
runs in the numpy evaluator without out-of-bounds accesses (the checker counts violations
as generator bugs), except that the item-9 switch adds deliberately invalid aliases.
Features that hit bugs being fixed on other branches are switched by `Features` (one
switch per item of issue 12, and one per new bug this checker found);
`Features.safe()` turns them all off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from math import prod

import numpy as np
from hypothesis import strategies as st

from fuzz.choices import Chooser, DrawChooser
from physlayout.indexing.index_map import IndexMap

EXTENTS = (1, 2, 3, 4, 5, 7, 8, 11, 12, 13)
"""Iteration extents: 1, primes, powers of two and multiples of 4 (texture channels)."""
MAX_ELEMENTS = 360
"""Upper bound on the iteration space (the evaluator runs every program several times)."""
PAD_VALUES = (0.0, -1.0, 2.5, 7.0)
FLOAT_CONSTANTS = (0.5, 2.0, -1.5, 3.0)
TEXTURE_SCOPES = ("global.texture", "global.texture-nhwc", "global.texture-weight")
LOOP_KINDS = ("scf.for", "affine.for", "scf.parallel", "affine.parallel")
SEQUENTIAL = ("scf.for", "affine.for")


@dataclass(frozen=True)
class Features:
    """Program features that hit bugs being fixed on other branches, one switch per item of
    issue 12. `make test` runs with all of them off, `make fuzz` with all of them on."""

    item1_loop_dependences: bool = True
    """Memory- or iter_args-carried dependences in nests that store to a transformed
    buffer (`apply-layout{rewrite-loops=true}` re-iterates them)."""
    item2_physical_views: bool = True
    """A second `layout.decl_buffer` that views transformed storage in its physical shape."""
    item3_small_padded_tiles: bool = True
    """Padded splits of an axis smaller than one tile (`i mod 4` on [3])."""
    item4_padded_texels: bool = True
    """Texture channel counts that are not a multiple of 4 (padding lanes)."""
    item5_invariant_loads: bool = True
    """A scalar load before a loop nest whose value the nest uses."""
    item6_offset_alias_calls: bool = True
    """A `layout.decl_buffer` at an element offset passed to a `func.call`."""
    item8_nhwc_rank3_textures: bool = True
    """A rank-3 `global.texture-nhwc` buffer without explicit separators."""
    item9_dead_invalid_aliases: bool = True
    """A dead `layout.decl_buffer` that does not fit in its storage (an invalid program
    that every pass must refuse or keep invalid)."""
    item9a_unnormalizable_memrefs: bool = True
    """In memref-typed programs, a memref whose layout map cannot be normalized (a result
    with a negative minimum), beside others that can."""
    found_rank0_graph_transform: bool = True
    """Not an item of issue 12, found by this checker
    (`regressions/map-ndarray-rank0-result.mlir`): graph-level generics on one-element
    tensors, which `flow-layout-rewrites` may give a rank-0 operand transform."""
    found_piecewise_padding_fill: bool = True
    """Not an item of issue 12, found by this checker
    (`regressions/apply-layout-padding-fill-piecewise-inverse.mlir`): `ceildiv` splits of a
    compound expression, in the second map of a transform list, or followed by other
    steps, whose padded maps may only have a piecewise inverse."""

    @staticmethod
    def safe() -> Features:
        return Features(**{f.name: False for f in fields(Features)})

    @staticmethod
    def names() -> list[str]:
        return [f.name for f in fields(Features)]

    @staticmethod
    def parse(text: str) -> Features:
        """`all`, `none`, or a comma-separated list of the switches to turn on."""
        if text.strip() in ("", "all"):
            return Features()
        if text.strip() == "none":
            return Features.safe()
        wanted = {w.strip() for w in text.split(",") if w.strip()}
        unknown = wanted - set(Features.names())
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}; known: {Features.names()}")
        return Features(**{n: n in wanted for n in Features.names()})

    def enabled(self) -> list[str]:
        return [n for n in Features.names() if getattr(self, n)]


# Layouts ------------------------------------------------------------------------------------


def _fmt_float(value: float) -> str:
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
            parts.append(f"pad_value = {_fmt_float(self.pad_value)} : f32")
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


# Functions -----------------------------------------------------------------------------------


@dataclass
class Buf:
    """A buffer value a function body can access: `axes` are the iteration axes its axes
    follow (a permutation for full buffers, fewer for broadcast/reduced ones); a `flat`
    buffer is a 1-D row-major view of that shape; `root` names its storage."""

    ref: str
    axes: tuple[int, ...]
    view_shape: tuple[int, ...]
    layout: Layout
    root: str
    flat: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return (prod(self.view_shape),) if self.flat else self.view_shape

    @property
    def type(self) -> str:
        return self.layout.type_text(self.shape)

    @property
    def transformed(self) -> bool:
        return bool(self.layout.maps)


@dataclass
class FunctionInfo:
    """What the checker needs to know about a generated function."""

    name: str
    param_types: list[str]
    written_params: set[int]
    allocates: bool
    calls: bool
    result: bool


@dataclass
class Program:
    """A generated module: its text, per-function facts and the features it used."""

    text: str
    functions: list[FunctionInfo]
    features_used: set[str] = field(default_factory=set[str])
    choices: list[int] = field(default_factory=list[int])
    spans: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])


def _arg_list(names: Sequence[str]) -> str:
    return ", ".join(names)


class FunctionBuilder:
    """Emits one `func.func`: parameters appear as the body asks for them."""

    def __init__(
        self,
        c: Chooser,
        name: str,
        shape: tuple[int, ...],
        features: Features,
        used: set[str],
    ) -> None:
        self.c = c
        self.name = name
        self.shape = shape
        self.features = features
        self.used = used
        self.params: list[tuple[str, str]] = []
        self.param_bufs: list[Buf] = []
        self.bufs: list[Buf] = []
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0
        self.index_consts: dict[int, str] = {}
        self.float_consts: dict[float, str] = {}
        self.written: set[str] = set()
        self.allocates = False
        self.calls = False
        self.scalar: str | None = None
        self.result: str | None = None
        self.host_style = False
        """Kernels `physlayout run` can launch: no allocations, calls or results."""
        self.memref = False
        """Upstream memrefs with layout maps instead of `!layout.buffer`s (what
        `apply-layout` normalizes like `mlir-opt -normalize-memrefs`)."""

    # Text helpers --------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def index(self, value: int) -> str:
        if value not in self.index_consts:
            self.index_consts[value] = f"%c{value}" if value >= 0 else f"%cm{-value}"
        return self.index_consts[value]

    def fconst(self, value: float) -> str:
        if value not in self.float_consts:
            self.float_consts[value] = f"%f{len(self.float_consts)}"
        return self.float_consts[value]

    def arith(self, op: str, a: str, b: str, type_: str = "index") -> str:
        result = self.fresh("t" if type_ == "index" else "v")
        self.emit(f"{result} = arith.{op} {a}, {b} : {type_}")
        return result

    # Buffers --------------------------------------------------------------------------------

    def param_buffer(self, axes: tuple[int, ...], layout: Layout) -> Buf:
        name = f"%a{len(self.params)}"
        view = tuple(self.shape[a] for a in axes)
        buf = Buf(name, axes, view, layout, f"param{len(self.params)}")
        self.params.append((name, buf.type))
        self.param_bufs.append(buf)
        self.bufs.append(buf)
        return buf

    def param_of_type(self, type_text: str, template: Buf) -> Buf:
        name = f"%a{len(self.params)}"
        buf = replace(template, ref=name, root=f"param{len(self.params)}")
        self.params.append((name, type_text))
        self.param_bufs.append(buf)
        self.bufs.append(buf)
        return buf

    def scalar_param(self) -> str:
        if self.scalar is None:
            self.scalar = f"%s{len(self.params)}"
            self.params.append((self.scalar, "f32"))
        return self.scalar

    def random_layout_for(self, axes: tuple[int, ...], texture_ok: bool) -> Layout:
        with self.c.span():
            return self._random_layout_for(axes, texture_ok)

    def _random_layout_for(self, axes: tuple[int, ...], texture_ok: bool) -> Layout:
        view = [self.shape[a] for a in axes]
        if self.memref:
            return memref_layout(self.c, view, self.features, self.used)
        if texture_ok and axes and self.c.flag(30):
            layout = texture_layout(self.c, view, self.features, self.used)
            if layout is not None:
                return layout
        scope = "shared" if self.c.flag(5) else "global"
        layout = random_layout(self.c, view, self.features, scope, self.used)
        return layout

    def random_axes(self, full: bool) -> tuple[int, ...]:
        rank = len(self.shape)
        order = tuple(self.c.permutation(rank))
        if full or rank == 1 or not self.c.flag(30):
            return order
        drop = self.c.integer(0, rank - 1)
        return tuple(a for a in order if a != drop)

    def new_param(self, full: bool = True) -> Buf:
        axes = self.random_axes(full)
        return self.param_buffer(axes, self.random_layout_for(axes, texture_ok=True))

    def allocate(self, axes: tuple[int, ...]) -> Buf:
        """A scratch buffer over a new allocation (fully written before any other use)."""
        self.allocates = True
        layout = self.random_layout_for(axes, texture_ok=True)
        if self.c.flag(10) and not layout.is_texture:
            layout = replace(layout, scope="local")
        view = tuple(self.shape[a] for a in axes)
        ptr = self.fresh("p")
        ref = self.fresh("b")
        offset = 0
        if not layout.is_texture and self.c.flag(15) and (not layout.maps or self.c.flag(10)):
            offset = self.c.integer(1, 5)
            total = offset + layout.storage_elements(view)
            self.emit(f"{ptr} = layout.allocate [{total}] : {layout.ptr_text()}")
        else:
            extents = ", ".join(map(str, view))
            self.emit(f"{ptr} = layout.allocate [{extents}] : {layout.ptr_text()}")
        buf = Buf(ref, axes, view, layout, ptr)
        at = f" offset {offset}" if offset else ""
        self.emit(f"{ref} = layout.decl_buffer {ptr}{at} : {layout.ptr_text()} -> {buf.type}")
        if offset:
            buf.root = f"{ptr}+{offset}"
        self.full_write(buf)
        self.bufs.append(buf)
        return buf

    def dead_invalid_alias(self, param: Buf) -> None:
        """(item 9) An unused declaration past the end of a parameter's storage: the op
        verifier cannot see the parameter's size, `verify-buffers` can."""
        if param.layout.is_texture:
            return
        self.used.add("item9_dead_invalid_aliases")
        handle, dead = self.fresh("h"), self.fresh("dead")
        size = param.layout.storage_elements(param.shape)
        self.emit(f"{handle} = layout.data {param.ref} : {param.type} -> {param.layout.ptr_text()}")
        self.emit(
            f"{dead} = layout.decl_buffer {handle} offset {size} : {param.layout.ptr_text()} "
            f"-> !layout.buffer<{size}xf32{_scope_suffix(param.layout.scope)}>"
        )

    def alias(self, source: Buf) -> Buf | None:
        """A second declaration over `source`'s storage: the same type, a flat 1-D view, or
        (item 2) the physical view of transformed storage."""
        if "+" in source.root:
            return None
        kind = self.c.choice(["same", "flat", "physical"])
        if source.root.startswith("param"):
            handle = self.fresh("h")
            self.emit(
                f"{handle} = layout.data {source.ref} : {source.type} -> {source.layout.ptr_text()}"
            )
        else:
            handle = source.root
        if kind == "same" and not source.root.startswith("param"):
            ref = self.fresh("b")
            self.emit(
                f"{ref} = layout.decl_buffer {handle} : {source.layout.ptr_text()} -> {source.type}"
            )
            alias = replace(source, ref=ref)
        elif kind == "flat" or not source.transformed:
            if source.transformed or source.layout.is_texture or source.flat:
                return None
            layout = Layout(scope=source.layout.scope)
            alias = Buf(self.fresh("b"), source.axes, source.view_shape, layout, source.root, True)
            self.emit(
                f"{alias.ref} = layout.decl_buffer {handle} : {layout.ptr_text()} -> {alias.type}"
            )
        else:
            if not self.features.item2_physical_views or source.layout.physical is None:
                return None
            if prod(source.layout.physical) != prod(source.shape):
                return None  # a padded physical view does not fit the logical storage
            self.used.add("item2_physical_views")
            physical = source.layout.physical
            layout = Layout(scope=source.layout.scope)
            if source.layout.is_texture:
                return None
            ref = self.fresh("b")
            type_text = layout.type_text(physical)
            self.emit(f"{ref} = layout.decl_buffer {handle} : {layout.ptr_text()} -> {type_text}")
            # Read-only: a physical view is only ever read (one constant element).
            self.result_from(ref, layout.type_text(physical), physical)
            return None
        self.bufs.append(alias)
        return alias

    # Loops --------------------------------------------------------------------------------

    def open_nest(
        self, kind: str, axes: Sequence[int], ranges: dict[int, tuple[int, int, int]]
    ) -> dict[int, str]:
        """Open a nest over `axes` (outermost first); returns the loop variables."""
        ivs = {a: self.fresh("i") for a in axes}
        if not axes:
            self._closers.append([])
            return ivs
        if kind in ("scf.parallel", "affine.parallel"):
            names = [ivs[a] for a in axes]
            lbs = [ranges[a][0] for a in axes]
            ubs = [ranges[a][1] for a in axes]
            steps = [ranges[a][2] for a in axes]
            n = len(axes)
            args = ", ".join(f"{v}: index" for v in names)
            if kind == "scf.parallel":
                operands = ", ".join(self.index(v) for v in [*lbs, *ubs, *steps])
                self.emit(
                    f'"scf.parallel"({operands}) <{{operandSegmentSizes = array<i32: {n}, {n}, {n}, 0>}}> ({{'
                )
                close = ["  scf.reduce", f"}}) : ({', '.join(['index'] * 3 * n)}) -> ()"]
            else:
                groups = f"dense<1> : vector<{n}xi32>"
                self.emit(
                    f'"affine.parallel"() <{{lowerBoundsGroups = {groups}, '
                    f"lowerBoundsMap = affine_map<() -> ({', '.join(map(str, lbs))})>, "
                    f"reductions = [], steps = [{', '.join(map(str, steps))}], "
                    f"upperBoundsGroups = {groups}, "
                    f"upperBoundsMap = affine_map<() -> ({', '.join(map(str, ubs))})>}}> ({{"
                )
                close = ['  "affine.yield"() : () -> ()', "}) : () -> ()"]
            self.emit(f"^bb0({args}):")
            self.depth += 1
            self._closers.append([close[0].strip(), close[1]])
            return ivs
        closers: list[str] = []
        for a in axes:
            lb, ub, step = ranges[a]
            if kind == "scf.for":
                self.emit(
                    f"scf.for {ivs[a]} = {self.index(lb)} to {self.index(ub)} step {self.index(step)} {{"
                )
            else:
                suffix = f" step {step}" if step != 1 else ""
                self.emit(f"affine.for {ivs[a]} = {lb} to {ub}{suffix} {{")
            self.depth += 1
            closers.append("}")
        self._closers.append(closers)
        return ivs

    def close_nest(self) -> None:
        closers = self._closers.pop()
        if len(closers) == 2 and closers[0] in ("scf.reduce", '"affine.yield"() : () -> ()'):
            self.emit(closers[0])
            self.depth -= 1
            self.emit(closers[1])
            return
        for closer in closers:
            self.depth -= 1
            self.emit(closer)

    _closers: list[list[str]]

    # Accesses -------------------------------------------------------------------------------

    def indices(self, buf: Buf, point: dict[int, str]) -> list[str]:
        idx = [point[a] for a in buf.axes]
        if not buf.flat:
            return idx
        flat = idx[0] if idx else self.index(0)
        for k in range(1, len(idx)):
            scaled = self.arith("muli", flat, self.index(buf.view_shape[k]))
            flat = self.arith("addi", scaled, idx[k])
        return [flat]

    def load(self, buf: Buf, point: dict[int, str]) -> str:
        idx = self.indices(buf, point)
        value = self.fresh("v")
        if buf.layout.memref:
            self.emit(f"{value} = memref.load {buf.ref}[{_arg_list(idx)}] : {buf.type}")
            return value
        self.emit(f"{value} = layout.load {buf.ref}[{_arg_list(idx)}] : {buf.type}, f32")
        return value

    def store(self, value: str, buf: Buf, point: dict[int, str]) -> None:
        idx = self.indices(buf, point)
        if buf.layout.memref:
            self.emit(f"memref.store {value}, {buf.ref}[{_arg_list(idx)}] : {buf.type}")
        else:
            self.emit(f"layout.store {value}, {buf.ref}[{_arg_list(idx)}] : {buf.type}, f32")
        self.written.add(buf.root)

    def combine(self, values: list[str]) -> str:
        """A random float expression of `values` (exact in every backend: no
        transcendental functions)."""
        if not values:
            return self.fconst(self.c.choice(FLOAT_CONSTANTS))
        result = values[0]
        for value in values[1:]:
            op = self.c.choice(["addf", "mulf", "subf", "maximumf", "minimumf"])
            result = self.arith(op, result, value, "f32")
        if self.c.flag(30):
            op = self.c.choice(["mulf", "addf"])
            result = self.arith(op, result, self.fconst(self.c.choice(FLOAT_CONSTANTS)), "f32")
        if self.c.flag(10):
            negated = self.fresh("v")
            self.emit(f"{negated} = arith.negf {result} : f32")
            result = negated
        return result

    def shifted(self, point: dict[int, str], axis: int, delta: int) -> dict[int, str]:
        """`point` with `axis` moved by `delta`, clamped into range."""
        moved = self.arith("addi", point[axis], self.index(delta))
        bound = self.index(0) if delta < 0 else self.index(self.shape[axis] - 1)
        clamped = self.arith("maxsi" if delta < 0 else "minsi", moved, bound)
        return {**point, axis: clamped}

    def reversed_point(self, point: dict[int, str], axis: int) -> dict[int, str]:
        flipped = self.arith("subi", self.index(self.shape[axis] - 1), point[axis])
        return {**point, axis: flipped}

    # Nest patterns ------------------------------------------------------------------------------

    def ranges(self, partial: bool) -> dict[int, tuple[int, int, int]]:
        ranges = {a: (0, e, 1) for a, e in enumerate(self.shape)}
        if partial:
            a = self.c.integer(0, len(self.shape) - 1)
            ranges[a] = (self.c.integer(0, 1), self.shape[a], self.c.choice([1, 2, 3]))
        return ranges

    def readable(self, exclude_root: str | None = None) -> list[Buf]:
        return [b for b in self.bufs if b.root != exclude_root]

    def full_bufs(self) -> list[Buf]:
        rank = len(self.shape)
        return [b for b in self.bufs if len(b.axes) == rank]

    def dependent_target_ok(self, buf: Buf) -> bool:
        if buf.transformed and not self.features.item1_loop_dependences:
            return False
        if buf.transformed:
            self.used.add("item1_loop_dependences")
        return True

    def loop_kind(self, parallel_ok: bool) -> str:
        return self.c.choice(LOOP_KINDS if parallel_ok else SEQUENTIAL)

    def invariant(self) -> list[str]:
        """(item 5) Scalars loaded before the nest, used inside it."""
        if not self.features.item5_invariant_loads or not self.bufs or not self.c.flag(15):
            return []
        self.used.add("item5_invariant_loads")
        buf = self.c.choice(self.bufs)
        point = {
            a: self.index(self.c.integer(0, self.shape[a] - 1)) for a in range(len(self.shape))
        }
        return [self.load(buf, point)]

    def full_write(self, out: Buf) -> None:
        """Write every element of `out` (an elementwise map or a fill)."""
        sources = [b for b in self.readable(out.root) if self.c.flag(50)][:2]
        self.elementwise(out, sources, partial=False, in_place=False)

    def elementwise(self, out: Buf, sources: list[Buf], partial: bool, in_place: bool) -> None:
        extra = self.invariant()
        kind = self.loop_kind(parallel_ok=True)
        axes = self.c.permutation(len(self.shape))
        point = self.open_nest(kind, axes, self.ranges(partial))
        values = [self.load(b, self.maybe_moved(b, point)) for b in sources]
        if in_place:
            values.append(self.load(out, point))
        if not values and self.c.flag(40):
            values.append(self.scalar_param())
        value = self.combine(values + extra)
        if self.c.flag(15):
            value = self.guarded(point, value)
        if self.c.flag(10):
            self.store(self.combine([value]), out, point)
        self.store(value, out, point)
        self.close_nest()

    def maybe_moved(self, buf: Buf, point: dict[int, str]) -> dict[int, str]:
        """Read a source at the point, reversed along one axis, or shifted (clamped)."""
        if not self.c.flag(30):
            return point
        axis = self.c.choice(buf.axes) if buf.axes else 0
        if not buf.axes:
            return point
        if self.c.flag(50):
            return self.reversed_point(point, axis)
        return self.shifted(point, axis, self.c.choice([-1, 1]))

    def guarded(self, point: dict[int, str], value: str) -> str:
        axis = self.c.integer(0, len(self.shape) - 1)
        cond = self.fresh("t")
        bound = self.index(self.c.integer(0, self.shape[axis]))
        self.emit(f"{cond} = arith.cmpi slt, {point[axis]}, {bound} : index")
        result = self.fresh("v")
        other = self.combine([value])
        self.emit(f"{result} = scf.if {cond} -> (f32) {{")
        self.emit(f"  scf.yield {value} : f32")
        self.emit("} else {")
        self.emit(f"  scf.yield {other} : f32")
        self.emit("}")
        return result

    def scan(self, y: Buf, x: Buf | None) -> None:
        """y[p] = y[p - e_axis] (clamped at 0) + x[p]: a flow dependence along `axis`."""
        axis = self.c.integer(0, len(self.shape) - 1)
        axes = self.c.permutation(len(self.shape))
        point = self.open_nest(self.loop_kind(False), axes, self.ranges(False))
        previous = self.load(y, self.shifted(point, axis, -1))
        values = [previous] + ([self.load(x, point)] if x is not None else [])
        self.store(self.combine(values), y, point)
        self.close_nest()

    def iter_scan(self, y: Buf, x: Buf) -> None:
        """A running sum carried in `iter_args` along the innermost loop, stored at every
        step (a carried dependence through iter_args)."""
        axis = self.c.integer(0, len(self.shape) - 1)
        outer = [a for a in self.c.permutation(len(self.shape)) if a != axis]
        kind = self.loop_kind(False)
        point = self.open_nest(kind, outer, self.ranges(False))
        acc, init, iv = self.fresh("v"), self.fconst(0.0), self.fresh("i")
        result = self.fresh("v")
        extent = self.shape[axis]
        if kind == "scf.for":
            self.emit(
                f"{result} = scf.for {iv} = {self.index(0)} to {self.index(extent)} step "
                f"{self.index(1)} iter_args({acc} = {init}) -> (f32) {{"
            )
        else:
            self.emit(
                f"{result} = affine.for {iv} = 0 to {extent} iter_args({acc} = {init}) -> (f32) {{"
            )
        self.depth += 1
        inner = {**point, axis: iv}
        total = self.arith("addf", acc, self.load(x, inner), "f32")
        self.store(total, y, inner)
        self.emit(f"{'scf' if kind == 'scf.for' else 'affine'}.yield {total} : f32")
        self.depth -= 1
        self.emit("}")
        self.close_nest()

    def reverse_in_place(self, y: Buf) -> None:
        axis = self.c.integer(0, len(self.shape) - 1)
        point = self.open_nest(
            self.loop_kind(False), self.c.permutation(len(self.shape)), self.ranges(False)
        )
        value = self.load(y, self.reversed_point(point, axis))
        self.store(self.combine([value]), y, point)
        self.close_nest()

    def stencil(self, out: Buf, source: Buf) -> None:
        """out[p] = f(source[p - e], source[p], source[p + e]) (clamped); in place when
        `out` is `source` (a dependence in both directions)."""
        axis = self.c.integer(0, len(self.shape) - 1)
        in_place = out is source
        kind = self.loop_kind(parallel_ok=not in_place)
        point = self.open_nest(
            kind, self.c.permutation(len(self.shape)), self.ranges(self.c.flag(30))
        )
        values = [
            self.load(source, self.shifted(point, axis, -1)),
            self.load(source, point),
            self.load(source, self.shifted(point, axis, 1)),
        ]
        self.store(self.combine(values), out, point)
        self.close_nest()

    def last_writer(self, y: Buf, x: Buf) -> None:
        """Every iteration along one axis stores to the same element of `y` (the last
        writer wins): `y[..., c, ...] = x[p]` with a constant on that axis."""
        axis = self.c.integer(0, len(self.shape) - 1)
        point = self.open_nest(
            self.loop_kind(False), self.c.permutation(len(self.shape)), self.ranges(self.c.flag(30))
        )
        value = self.combine([self.load(x, point)])
        target = {**point, axis: self.index(self.c.integer(0, self.shape[axis] - 1))}
        self.store(value, y, target)
        self.close_nest()

    def reduce(self, out: Buf, x: Buf) -> None:
        """out[q] = sum over the dropped axis of x (an iter_args reduction per point)."""
        (axis,) = [a for a in range(len(self.shape)) if a not in out.axes]
        kind = self.loop_kind(parallel_ok=True)
        point = self.open_nest(kind, list(out.axes), self.ranges(False))
        acc, iv, result = self.fresh("v"), self.fresh("i"), self.fresh("v")
        init = self.fconst(self.c.choice([0.0, *FLOAT_CONSTANTS]))
        extent = self.shape[axis]
        if self.c.flag(50):
            self.emit(
                f"{result} = scf.for {iv} = {self.index(0)} to {self.index(extent)} step "
                f"{self.index(1)} iter_args({acc} = {init}) -> (f32) {{"
            )
            yield_op = "scf.yield"
        else:
            self.emit(
                f"{result} = affine.for {iv} = 0 to {extent} iter_args({acc} = {init}) -> (f32) {{"
            )
            yield_op = "affine.yield"
        self.depth += 1
        value = self.load(x, {**point, axis: iv})
        total = self.arith(self.c.choice(["addf", "maximumf"]), acc, value, "f32")
        self.emit(f"{yield_op} {total} : f32")
        self.depth -= 1
        self.emit("}")
        self.store(result, out, point)
        self.close_nest()

    def delinearized(self, out: Buf, sources: list[Buf]) -> None:
        """One loop over every element; the indices come from `divui`/`remui` (or the
        signed forms) of the linear position."""
        total = prod(self.shape)
        kind = self.loop_kind(parallel_ok=True)
        point1 = self.open_nest(kind, [0], {0: (0, total, 1)})
        linear = point1[0]
        point: dict[int, str] = {}
        rest = linear
        signed = self.c.flag(50)
        for a in reversed(range(len(self.shape))):
            extent = self.index(self.shape[a])
            if a == 0:
                point[a] = rest
                break
            point[a] = self.arith("remsi" if signed else "remui", rest, extent)
            rest = self.arith("divsi" if signed else "divui", rest, extent)
        values = [self.load(b, point) for b in sources]
        self.store(self.combine(values), out, point)
        self.close_nest()

    def vector_loop(self, out: Buf, sources: list[Buf]) -> None:
        """`vector<4xf32>` loads and stores of four consecutive innermost elements
        (`c = c4 * 4`), elementwise vector arithmetic; sources whose innermost axis is
        another iteration axis are read as scalars and broadcast."""
        axis = out.axes[-1]
        kind = self.loop_kind(parallel_ok=True)
        ranges = {a: (0, e, 1) for a, e in enumerate(self.shape)}
        ranges[axis] = (0, self.shape[axis] // 4, 1)
        point = self.open_nest(kind, self.c.permutation(len(self.shape)), ranges)
        full = {**point, axis: self.arith("muli", point[axis], self.index(4))}
        values: list[str] = []
        for source in sources:
            if source.axes and source.axes[-1] == axis and not source.flat:
                value = self.fresh("v")
                idx = _arg_list(self.indices(source, full))
                self.emit(
                    f"{value} = layout.load {source.ref}[{idx}] : {source.type}, vector<4xf32>"
                )
            else:
                scalar = self.load(source, full)
                value = self.fresh("v")
                self.emit(f"{value} = vector.broadcast {scalar} : f32 to vector<4xf32>")
            values.append(value)
        if not values:
            value = self.fresh("v")
            self.emit(f"{value} = vector.broadcast {self.scalar_param()} : f32 to vector<4xf32>")
            values.append(value)
        result = values[0]
        for value in values[1:]:
            op = self.c.choice(["addf", "mulf", "maximumf"])
            result = self.arith(op, result, value, "vector<4xf32>")
        idx = _arg_list(self.indices(out, full))
        self.emit(f"layout.store {result}, {out.ref}[{idx}] : {out.type}, vector<4xf32>")
        self.written.add(out.root)
        self.close_nest()

    def texel_loop(self, out: Buf, sources: list[Buf]) -> None:
        """The channel axis (innermost of a texture buffer) as `c4` and a lane loop
        `scf.for %l = 0 to 4`, `c = c4 * 4 + l`."""
        channel = out.axes[-1]
        blocks = self.shape[channel] // 4
        outer = [a for a in self.c.permutation(len(self.shape)) if a != channel]
        kind = self.loop_kind(parallel_ok=True)
        ranges = {a: (0, e, 1) for a, e in enumerate(self.shape)}
        ranges[channel] = (0, blocks, 1)
        point = self.open_nest(kind, [*outer, channel], ranges)
        lane = self.fresh("i")
        self.emit(f"scf.for {lane} = {self.index(0)} to {self.index(4)} step {self.index(1)} {{")
        self.depth += 1
        scaled = self.arith("muli", point[channel], self.index(4))
        full = {**point, channel: self.arith("addi", scaled, lane)}
        values = [self.load(b, full) for b in sources]
        self.store(self.combine(values), out, full)
        self.depth -= 1
        self.emit("}")
        self.close_nest()

    # Statements ---------------------------------------------------------------------------------

    def statement(self, callees: Sequence[Callee]) -> None:
        c = self.c
        kind = c.choice(
            [
                "elementwise",
                "elementwise",
                "fill",
                "reduce",
                "scan",
                "iter_scan",
                "reverse",
                "stencil",
                "last_writer",
                "delinearize",
                "texel",
                "vector",
                "call",
                "alloc",
                "alias",
            ]
        )
        if self.memref and kind in ("alloc", "alias"):
            kind = "elementwise"
        full = self.full_bufs()
        if kind == "call" and callees and not self.host_style:
            self.call(c.choice(list(callees)))
            return
        if kind == "alloc" and len(self.bufs) < 6 and not self.host_style:
            self.allocate(self.random_axes(full=True))
            return
        if kind == "alias" and self.features.item9_dead_invalid_aliases and c.flag(15):
            self.dead_invalid_alias(c.choice(self.param_bufs))
            return
        if kind == "alias" and self.bufs:
            self.alias(c.choice(self.bufs))
            return
        out = c.choice(full) if full and c.flag(70) else self.new_param()
        if len(out.axes) != len(self.shape):
            out = self.new_param()
        others = self.readable(out.root)
        if not others or c.flag(20):
            others = [*others, self.new_param(full=False)]
        source = c.choice(others)
        if kind == "fill":
            self.elementwise(out, [], partial=c.flag(30), in_place=False)
        elif kind == "reduce" and len(self.shape) > 1:
            drop = c.integer(0, len(self.shape) - 1)
            axes = tuple(a for a in out.axes if a != drop)
            target = self.param_buffer(axes, self.random_layout_for(axes, texture_ok=True))
            self.reduce(target, out if len(source.axes) != len(self.shape) else source)
        elif kind in ("scan", "iter_scan", "reverse", "stencil", "last_writer"):
            self.dependent(kind, out, source)
        elif kind == "delinearize" and not source.flat:
            self.delinearized(out, [source] if len(source.axes) else [])
        elif kind == "texel" and out.layout.is_texture and self.shape[out.axes[-1]] % 4 == 0:
            self.texel_loop(out, [source])
        elif (
            kind == "vector"
            and not self.memref
            and not out.flat
            and self.shape[out.axes[-1]] % 4 == 0
        ):
            self.vector_loop(out, [source])
        else:
            in_place = c.flag(25)
            sources = [source] + ([c.choice(others)] if c.flag(30) else [])
            self.elementwise(out, sources, partial=c.flag(25), in_place=in_place)

    def dependent(self, kind: str, out: Buf, source: Buf) -> None:
        """A nest whose iterations communicate through memory (or iter_args)."""
        if not self.dependent_target_ok(out):
            out = self.param_buffer(out.axes, Layout(memref=self.memref))
        if kind == "scan":
            self.scan(out, source)
        elif kind == "iter_scan":
            self.iter_scan(out, source)
        elif kind == "reverse":
            self.reverse_in_place(out)
        elif kind == "stencil":
            self.stencil(out, out if self.c.flag(50) else source)
        else:
            target = out
            self.last_writer(target, source)

    def call(self, callee: Callee) -> None:
        """Call `callee` with buffers of its parameter types (parameters of this function,
        scratch buffers, or (item 6) views at an offset)."""
        self.calls = True
        args: list[str] = []
        for position, (type_text, template) in enumerate(callee.params):
            if template is None:
                args.append(self.scalar_param() if self.c.flag(50) else self.fconst(2.0))
                continue
            same = [b for b in self.bufs if b.type == type_text and b.ref not in args]
            if same and self.c.flag(60):
                buf = self.c.choice(same)
            elif self.memref:
                buf = self.param_of_type(type_text, template)
            elif (
                self.features.item6_offset_alias_calls
                and self.c.flag(15)
                and not template.layout.is_texture
            ):
                self.used.add("item6_offset_alias_calls")
                buf = self.offset_view(template)
            elif self.c.flag(30):
                buf = self.scratch_like(template, initialize=self.name != "main")
            else:
                buf = self.param_of_type(type_text, template)
            if position in callee.written:
                self.written.add(buf.root)
            args.append(buf.ref)
        types = ", ".join(t for t, _ in callee.params)
        result = " -> f32" if callee.result else " -> ()"
        prefix = f"{self.fresh('v')} = " if callee.result else ""
        self.emit(f"{prefix}func.call @{callee.name}({_arg_list(args)}) : ({types}){result}")

    def scratch_like(self, template: Buf, initialize: bool) -> Buf:
        """A scratch buffer of `template`'s type over a new allocation (a host function
        leaves it as allocated: zero-filled)."""
        self.allocates = True
        ptr, ref = self.fresh("p"), self.fresh("b")
        extents = ", ".join(map(str, template.shape))
        self.emit(f"{ptr} = layout.allocate [{extents}] : {template.layout.ptr_text()}")
        buf = replace(template, ref=ref, root=ptr)
        self.emit(f"{ref} = layout.decl_buffer {ptr} : {template.layout.ptr_text()} -> {buf.type}")
        if initialize:
            self.full_write(buf)
        self.bufs.append(buf)
        return buf

    def offset_view(self, template: Buf) -> Buf:
        self.allocates = True
        ptr, ref = self.fresh("p"), self.fresh("b")
        offset = self.c.integer(1, 4)
        size = template.layout.storage_elements(template.shape) + offset
        self.emit(f"{ptr} = layout.allocate [{size}] : {template.layout.ptr_text()}")
        buf = replace(template, ref=ref, root=f"{ptr}+{offset}")
        self.emit(
            f"{ref} = layout.decl_buffer {ptr} offset {offset} : {template.layout.ptr_text()} -> {buf.type}"
        )
        self.bufs.append(buf)
        return buf

    def result_from(self, ref: str, type_text: str, shape: Sequence[int]) -> None:
        point = ", ".join(self.index(self.c.integer(0, e - 1)) for e in shape)
        value = self.fresh("v")
        self.emit(f"{value} = layout.load {ref}[{point}] : {type_text}, f32")
        self.result = value

    # Assembly ----------------------------------------------------------------------------------

    def finish(self) -> tuple[str, FunctionInfo]:
        if (
            self.result is None
            and self.bufs
            and self.name != "main"
            and not self.host_style
            and self.c.flag(15)
        ):
            buf = self.c.choice(self.bufs)
            point = {
                a: self.index(self.c.integer(0, self.shape[a] - 1)) for a in range(len(self.shape))
            }
            self.result = self.load(buf, point)
        if self.result is not None:
            self.emit(f"func.return {self.result} : f32")
        else:
            self.emit("func.return")
        consts = [
            f"  {name} = arith.constant {value} : index"
            for value, name in sorted(self.index_consts.items())
        ] + [
            f"  {name} = arith.constant {_fmt_float(value)} : f32"
            for value, name in self.float_consts.items()
        ]
        signature = ", ".join(f"{n}: {t}" for n, t in self.params)
        result = " -> f32" if self.result is not None else ""
        text = "\n".join(
            [f"func.func @{self.name}({signature}){result} {{", *consts, *self.lines, "}"]
        )
        by_ref = {b.ref: b for b in self.param_bufs}
        written_params = {
            position
            for position, (name, _) in enumerate(self.params)
            if name in by_ref and by_ref[name].root in self.written
        }
        info = FunctionInfo(
            self.name,
            [t for _, t in self.params],
            written_params,
            self.allocates,
            self.calls,
            self.result is not None,
        )
        return text, info


def _scope_suffix(scope: str) -> str:
    return "" if scope == "global" else f', scope = "{scope}"'


@dataclass
class Callee:
    """A generated function others may call: parameter types (with a template buffer, or
    None for a scalar), the positions it writes, whether it returns a value."""

    name: str
    params: list[tuple[str, Buf | None]]
    written: set[int]
    result: bool


def _callee(builder: FunctionBuilder, info: FunctionInfo) -> Callee:
    by_ref = {b.ref: b for b in builder.param_bufs}
    params = [(t, by_ref.get(n)) for n, t in builder.params]
    return Callee(info.name, params, info.written_params, info.result)


def random_shape(c: Chooser) -> tuple[int, ...]:
    rank = c.integer(1, 3)
    shape = [c.choice(EXTENTS) for _ in range(rank)]
    while prod(shape) > MAX_ELEMENTS:
        shape[shape.index(max(shape))] = max(1, max(shape) // 2)
    return tuple(shape)


def generate_program(c: Chooser, features: Features | None = None) -> Program:
    """A random buffer-level module (see the module docstring)."""
    features = features or Features()
    used: set[str] = set()
    shape = random_shape(c)
    texts: list[str] = []
    infos: list[FunctionInfo] = []
    callees: list[Callee] = []
    host_style = c.flag(40)
    memref_style = c.flag(15)
    for k in c.repeat(1, 3, 50):
        builder = FunctionBuilder(c, f"k{k}", shape, features, used)
        builder.host_style = host_style
        builder.memref = memref_style
        builder._closers = []
        builder.new_param()
        for _ in c.repeat(1, 4, 65):
            builder.statement(callees)
        text, info = builder.finish()
        texts.append(text)
        infos.append(info)
        callees.append(_callee(builder, info))
    if c.flag(30):
        main = FunctionBuilder(c, "main", shape, features, used)
        main.memref = memref_style
        main._closers = []
        for _ in c.repeat(1, 3, 50):
            main.call(c.choice(callees))
        text, info = main.finish()
        texts.append(text)
        infos.append(info)
    return Program("\n\n".join(texts) + "\n", infos, used, list(c.choices), list(c.spans))


@st.composite
def programs(draw: st.DrawFn, features: Features | None = None) -> Program:
    """Hypothesis strategy: random buffer-level programs (see `generate_program`)."""
    return generate_program(DrawChooser(draw), features)
