"""The default schedule of a kernel (the analysis half of `apply-schedules{default=true}`).

`default_schedule(loop, device)` reads a kernel's top-level `scf.parallel` and returns the
`#layout.schedule` that `apply-schedules` gives it when none is written, or None (the
kernel is best left one iteration per work-item: it has no reduction worth tiling). It
never changes the IR.

The rule (as TVM's fallback configs and TFLite's block choice, from the shape alone):
every load inside the kernel's reduction loops (`scf.for`s with `iter_args`) is weighed by
how often one iteration runs it, and depends on some of the parallel axes (through its
indices). A tile `T` runs each such load `prod(T[k] for the axes it depends on)` times per
work-item instead of `prod(T)` times, so loads per output element fall as the tile grows
along the axes a load does not depend on. Among tiles with `T[k]` in {1, 2, 4, 8} (or the
whole extent, when smaller), the rule picks the cheapest

    (2 * loads per element + multiply-adds per element) * (computed / needed iterations)

whose accumulators (`prod(T)` times the 32-bit lanes the reduction carries; on a device
whose SIMD registers are wider than four lanes, `DeviceModel.vector_width`, a vector of up
to that many lanes counts as four: it takes one register as a `float4` does) fit the
device's register budget and that leaves at least 32 work-items per compute unit; ties go
to the smaller tile. The work-group is `work_group_shape` of the tiled work-item counts of
the axes `-t opencl` maps to work-item indices (the innermost three with more than one),
within the device's limit and leaving one group per compute unit at least.

With `vector_items` (a CPU driver that runs neighbouring work-items along dimension 0 as
SIMD lanes), a kernel whose reductions carry `float4` accumulators leaves that work-item
axis untiled (the lanes' reads stay contiguous) and weighs each load as `apply-schedules`
issues it, once per tile offset along the axes it depends on: `VARYING_LOAD_COST` when it
varies along that axis (a transpose of the lanes' texels), `BROADCAST_COST` when it does not
(one read for all lanes). A conv then takes 8 output channel blocks x 1 pixel.

Indices are sampled through `maxsi`/`minsi` clamps (a fused zero pad); any other index the
quasi-affine analysis cannot read (one computed from a loaded value) differs wherever the
loop variables it is computed from do.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Operation, SSAValue
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from physlayout.dialects.buffer_layout import TEXEL_LANES
from physlayout.dialects.layout import BufferType, LoadOp, is_texture_scope
from physlayout.dialects.layout_schedule import ScheduleAttr
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.transforms.loop_nests import in_reduction

WORK_GROUP_TARGET = 256
"""Work-items per work-group the runtime aims for."""

TILE_SIZES = (1, 2, 4, 8)
"""The tile extents the heuristic tries along each axis (and the extent, when smaller)."""

LOAD_COST = 2
"""What one load costs, in multiply-adds, to the heuristic."""

VARYING_LOAD_COST = 8
"""What one load that varies along the vectorized work-item axis costs, in multiply-adds,
where work-items are SIMD lanes (`DeviceModel.vector_items`): each lane's texel is read
and the texels transposed into the lanes of the vectors the multiply-adds use."""

BROADCAST_COST = 0.25
"""What one load uniform across the vectorized work-items costs there: one read and a
broadcast, shared by every lane of the vector."""

WINDOW = 4
"""Iterations of each loop around a load that the heuristic samples (the lanes of a texel
`-t opencl` unrolls, a small window whole)."""

ITEMS_PER_UNIT = 32
"""The fewest work-items per compute unit a default tile leaves."""

REGISTERS = 128
"""The default register budget of one work-item (32-bit values for a tile's accumulators):
a GPU's register file."""

CPU_BUFFER_REGISTERS = 32
"""The register budget on a CPU device that holds textures as buffers
(`texture-storage=buffer`, what `auto` picks there): its kernels would keep each `float4`
accumulator in one of the 16 SIMD registers of x86-64 (AVX2), so eight accumulators leave
room for the operands; more do not fit (the RFC example's first conv on PoCL: the
32-accumulator tile 1x2x2x8 ran at 7-9 GMAC/s, the 8-accumulator 1x1x2x4 at 15-25 on a
quiet machine, bench/RESULTS.md). Measured on that conv; some smaller convs were faster
with larger tiles, which `physlayout tune` also times (`runtime/tuner.py`)."""


@dataclass(frozen=True)
class DeviceModel:
    """What the heuristic knows of the device."""

    compute_units: int = 2
    max_work_group_size: int = 256
    registers: int = REGISTERS
    """32-bit registers one work-item may hold its accumulators in."""
    vector_items: bool = False
    """The driver runs neighbouring work-items along dimension 0 as the lanes of one SIMD
    vector (PoCL's CPU device): a load that varies along that axis becomes a gather or a
    transpose of the work-items' texels, one that does not is a single broadcast (see
    `ranked_tiles`)."""
    vector_width: int = TEXEL_LANES
    """Lanes of one SIMD register (`vectorize-texels{vector-width}`): a vector accumulator
    of at most that many lanes counts as a `vector<4>` one (it takes one register, as a
    `float4` does on a device of four lanes)."""


def work_group_shape(global_size: Sequence[int], limit: int = WORK_GROUP_TARGET) -> tuple[int, ...]:
    """An explicit work-group shape: dimension 0 (the innermost loop, contiguous in memory)
    first, each the largest divisor of its global extent that keeps the product within
    `limit`. Leaving the choice to the driver is much slower on PoCL's CPU device (it
    picks small groups that its work-group vectorizer cannot use)."""
    shape: list[int] = []
    budget = max(1, limit)
    for extent in global_size:
        size = max(k for k in range(1, min(extent, budget) + 1) if extent % k == 0)
        shape.append(size)
        budget //= size
    return tuple(shape)


def loop_ranges(loop: scf.ParallelOp) -> list[tuple[int, int, int]] | None:
    """(lower, upper, step) of each axis of `loop` (None: some is not a constant)."""
    ranges: list[tuple[int, int, int]] = []
    for lb, ub, step in zip(loop.lowerBound, loop.upperBound, loop.step, strict=True):
        lower, upper, stride = (const_evaluate_operand(v) for v in (lb, ub, step))
        if lower is None or upper is None or stride is None or stride <= 0:
            return None
        ranges.append((lower, upper, stride))
    return ranges


def trip_counts(ranges: Sequence[tuple[int, int, int]]) -> list[int]:
    """Iterations of each axis."""
    return [max(0, -(-(upper - lower) // step)) for lower, upper, step in ranges]


@dataclass(frozen=True)
class ReductionLoad:
    """A load inside the reduction loops, sampled: `keys[i]` names the address (a texel, for
    a texture) it reads at sample `i`, where the parallel `axes` are at `offsets[i]` from a
    tile's first iteration and each enclosing loop at one of its first `WINDOW` iterations."""

    axes: tuple[int, ...]
    offsets: np.ndarray
    keys: np.ndarray
    window: int
    """Samples per offset (iterations of the enclosing loops sampled)."""
    counted: dict[tuple[int, ...], int] = field(
        default_factory=dict[tuple[int, ...], int], compare=False, repr=False
    )
    """`distinct`'s answers by the tile's extents on `axes` (the other axes do not change
    them; `ranked_tiles` asks for every tile, the autoencoder's 244 questions had 43
    answers)."""

    def distinct(self, tile: Sequence[int]) -> int:
        """Distinct addresses the samples of one `tile` read."""
        extents = tuple(tile[k] for k in self.axes)
        found = self.counted.get(extents)
        if found is None:
            keys = self.keys
            if extents:
                keys = keys[np.all(self.offsets < np.array(extents), axis=1)]
            found = self.counted[extents] = len(set(keys.tolist()))  # np.unique sorts
        return found

    def issued(self, tile: Sequence[int]) -> int:
        """Loads one `tile` issues for the samples: `apply-schedules` clones the load once
        per tile offset along the axes it depends on, whatever addresses repeat (the taps of
        a window, a clamped border)."""
        return self.window * prod(tile[k] for k in self.axes)


def _trips(op: scf.ForOp) -> tuple[int, int, int] | None:
    lower, upper, step = (const_evaluate_operand(v) for v in (op.lb, op.ub, op.step))
    if lower is None or upper is None or step is None or step <= 0:
        return None
    return lower, max(0, -(-(upper - lower) // step)), step


def _sample(loop: scf.ParallelOp, load: LoadOp, analysis: IndexAnalysis) -> ReductionLoad | None:
    """`load` sampled over a tile of up to `max(TILE_SIZES)` iterations per axis of `loop`
    and the first `WINDOW` iterations of each loop around it (None: some loop has
    non-constant bounds)."""
    ranges: dict[SSAValue, tuple[int, int, int]] = {}
    parent = load.parent_op()
    while parent is not None and parent is not loop:
        if isinstance(parent, scf.ForOp):
            bounds = _trips(parent)
            if bounds is None:
                return None
            lower, trips, step = bounds
            ranges[parent.body.block.args[0]] = (lower, min(trips, WINDOW), step)
        parent = parent.parent_op()
    axes: list[int] = []
    for k, arg in enumerate(loop.body.block.args):
        ranges[arg] = (0, max(TILE_SIZES), 1)
        axes.append(k)
    reached = set[SSAValue]().union(*(_loop_values_reached(v, ranges) for v in load.indices))
    varying = [v for v in ranges if v in reached]
    grids = np.meshgrid(
        *(np.arange(ranges[v][1]) * ranges[v][2] + ranges[v][0] for v in varying), indexing="ij"
    )
    size = grids[0].size if grids else 1
    known: dict[SSAValue, np.ndarray | int] = {
        value: grid.reshape(-1) for value, grid in zip(varying, grids, strict=True)
    }
    columns = [
        np.broadcast_to(np.asarray(_index_value(v, analysis, known, ranges), np.int64), (size,))
        for v in load.indices
    ]
    buffer = load.buffer.type
    if columns and isinstance(buffer, BufferType) and is_texture_scope(buffer.get_scope()):
        columns[-1] = columns[-1] // TEXEL_LANES
    keys = np.zeros(size, dtype=np.int64)
    for column in columns:
        keys = keys * 1_000_003 + column
    dep_axes = tuple(k for k in axes if loop.body.block.args[k] in varying)
    offsets = (
        np.stack(
            [grids[varying.index(loop.body.block.args[k])].reshape(-1) for k in dep_axes], axis=1
        )
        if dep_axes
        else np.zeros((size, 0), dtype=np.int64)
    )
    window = size // prod(max(TILE_SIZES) for _ in dep_axes)
    return ReductionLoad(dep_axes, offsets, keys, window)


def _loop_values_reached(
    value: SSAValue, ranges: dict[SSAValue, tuple[int, int, int]]
) -> set[SSAValue]:
    """The loop variables among `ranges` that `value` is computed from."""
    found: set[SSAValue] = set()
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in ranges:
            found.add(current)
        elif isinstance(current.owner, Operation):
            stack.extend(current.owner.operands)
    return found


def _index_value(
    value: SSAValue,
    analysis: IndexAnalysis,
    known: dict[SSAValue, np.ndarray | int],
    ranges: dict[SSAValue, tuple[int, int, int]],
) -> np.ndarray | int:
    """`value` over the sampled loop variables (`known` holds their grids and the values
    evaluated so far): its quasi-affine expression, a `minsi`/`maxsi` clamp (a padded
    read's index) evaluated, any other opaque index (a gathered one) a code that differs
    wherever the loop variables it is computed from do (0 when none)."""
    done = known.get(value)
    if done is not None:
        return done
    expr = analysis.expr_of(value)
    env: dict[str, np.ndarray | int] = {}
    for name in expr.dims():
        leaf = analysis.leaves[name]
        if leaf is not value:
            env[name] = _index_value(leaf, analysis, known, ranges)
            continue
        owner = leaf.owner
        if isinstance(owner, arith.MinSIOp | arith.MaxSIOp):
            lhs = _index_value(owner.lhs, analysis, known, ranges)
            rhs = _index_value(owner.rhs, analysis, known, ranges)
            pick = np.minimum if isinstance(owner, arith.MinSIOp) else np.maximum
            env[name] = pick(lhs, rhs)
            continue
        code: np.ndarray | int = 0
        for loop_value in _loop_values_reached(leaf, ranges):
            grid = known.get(loop_value, 0)
            code = code * 1_000_003 + grid
        env[name] = code
    result = expr.evaluate(env)
    known[value] = result
    return result


def reduction_profile(
    loop: scf.ParallelOp, width: int = TEXEL_LANES
) -> tuple[list[ReductionLoad], int, int] | None:
    """The loads inside `loop`'s reduction loops (sampled), the innermost iterations per
    sampled window (the work one output element does per window) and the 32-bit lanes the
    reductions carry (a vector of at most `width` lanes, one SIMD register, as four);
    None without reductions or with loops of unknown trip counts."""
    analysis = IndexAnalysis()
    loads: list[ReductionLoad] = []
    lanes = accumulator_lanes(loop, width)
    for op in loop.body.block.walk():
        if not isinstance(op, LoadOp) or not in_reduction(op, loop):
            continue
        sampled = _sample(loop, op, analysis)
        if sampled is None:
            return None
        loads.append(sampled)
    if not loads or not lanes:
        return None
    return loads, max(load.window for load in loads), lanes


def _lanes(value: SSAValue, width: int = TEXEL_LANES) -> int:
    kind = value.type
    if not isinstance(kind, VectorType):
        return 1
    lanes = prod(kind.get_shape())
    if width > TEXEL_LANES:  # whole registers of `width` lanes, each counted as a float4
        return -(-lanes // width) * TEXEL_LANES
    return lanes


def _carried(loop: scf.ParallelOp) -> list[SSAValue]:
    """The values `loop`'s top-level reductions (`scf.for`s with `iter_args`) carry: one
    output element's accumulators."""
    return [v for op in loop.body.block.ops if isinstance(op, scf.ForOp) for v in op.iter_args]


def accumulator_lanes(loop: scf.ParallelOp, width: int = TEXEL_LANES) -> int:
    """The 32-bit lanes one iteration of `loop` keeps in its reductions' accumulators (a
    vector of at most `width` lanes, one SIMD register, as four)."""
    return sum(_lanes(v, width) for v in _carried(loop))


def _texel_accumulators(loop: scf.ParallelOp) -> bool:
    """Whether every value `loop`'s reductions carry is a texel (`vector<4>`): a kernel
    `vectorize-texels` gave texel accumulators (a conv's output channel block), not wider
    column blocks (a matmul's) or scalars."""
    carried = [v.type for v in _carried(loop)]
    return bool(carried) and all(
        isinstance(t, VectorType) and t.get_shape() == (TEXEL_LANES,) for t in carried
    )


def innermost_axis(trips: Sequence[int]) -> int:
    """The innermost axis of more than one iteration (`-t opencl`'s work-item dimension 0),
    -1 when there is none."""
    return max((k for k, n in enumerate(trips) if n > 1), default=-1)


def default_schedule(loop: scf.ParallelOp, device: DeviceModel) -> ScheduleAttr | None:
    """The schedule `apply-schedules{default=true}` gives a kernel whose top-level loop is
    `loop` (see the module docstring); None: leave it untiled."""
    ranked = ranked_tiles(loop, device)
    if not ranked or prod(ranked[0]) == 1:
        return None
    ranges = loop_ranges(loop)
    assert ranges is not None
    tile = ranked[0]
    return ScheduleAttr.of(tile, default_workgroup(trip_counts(ranges), tile, device))


def ranked_tiles(
    loop: scf.ParallelOp, device: DeviceModel, items_per_unit: int = ITEMS_PER_UNIT
) -> list[tuple[int, ...]]:
    """The tiles the rule weighs for `loop` (`T[k]` in `TILE_SIZES`, or the extent when
    smaller), those within the register budget and leaving `items_per_unit` work-items
    for every compute unit, cheapest first (ties: the smaller tile first); empty when the
    kernel has no reduction worth tiling. The first is the default (unless it is all 1);
    the tuner (`runtime/tuner.py`) times the next ones too."""
    ranges = loop_ranges(loop)
    profile = reduction_profile(loop, device.vector_width)
    if ranges is None or profile is None or loop.initVals:
        return []
    loads, work, lanes = profile
    if work < 2:
        return []
    trips = trip_counts(ranges)
    if 0 in trips:
        return []
    options = [sorted({t for t in TILE_SIZES if t < n} | {min(n, max(TILE_SIZES))}) for n in trips]
    inner = innermost_axis(trips)
    vectorized = device.vector_items and inner >= 0 and _texel_accumulators(loop)
    if vectorized:
        options[inner] = [1]
    ranked: list[tuple[float, int, tuple[int, ...]]] = []
    for tile in itertools.product(*options):
        size = prod(tile)
        if size * lanes > device.registers:
            continue
        items = prod(-(-n // t) for n, t in zip(trips, tile, strict=True))
        if size > 1 and items < device.compute_units * items_per_unit:
            continue
        if vectorized:
            loads_cost = sum(
                load.issued(tile) * (VARYING_LOAD_COST if inner in load.axes else BROADCAST_COST)
                for load in loads
            )
        else:
            loads_cost = LOAD_COST * sum(load.distinct(tile) for load in loads)
        waste = prod(-(-n // t) * t / n for n, t in zip(trips, tile, strict=True))
        cost = (loads_cost / size + work) * waste
        ranked.append((cost, size, tile))
    return [tile for _, _, tile in sorted(ranked)]


def default_workgroup(
    trips: Sequence[int], tile: Sequence[int], device: DeviceModel, target: int = WORK_GROUP_TARGET
) -> tuple[int, ...]:
    """The work-group of the tiled loop: `work_group_shape` over its work-item axes (the
    innermost three with more than one), at most `target` work-items (and the device's
    limit), leaving one group per compute unit at least."""
    items = [-(-n // t) for n, t in zip(trips, tile, strict=True)]
    axes = [k for k, n in enumerate(items) if n > 1][-3:]
    limit = min(device.max_work_group_size, target)
    limit = max(1, min(limit, prod(items) // max(1, device.compute_units)))
    shape = work_group_shape([items[k] for k in reversed(axes)], limit)
    workgroup = [1] * len(items)
    for k, size in zip(reversed(axes), shape, strict=True):
        workgroup[k] = size
    return tuple(workgroup)
