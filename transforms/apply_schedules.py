"""apply-schedules: register tiles for buffer-level kernels (`#layout.schedule`).

Rewrites each kernel (`func.func`) that carries a pending `layout.schedule =
#layout.schedule<tile = [...], workgroup = [...]>` (`dialects.layout_schedule`) and whose
body holds exactly one top-level `scf.parallel` (constant bounds and steps, no reductions;
ops around it are kept): axis k of that loop steps `tile[k]` times as far, and each
iteration of the new loop (one OpenCL work-item) computes the `tile` iterations at offsets
`0 .. tile[k]-1` of the old one. The old body is cloned op by op in its order (an
unroll-and-jam of the whole body):

- an op is cloned once per distinct value of the offsets of the tiled axes it depends on
  (through its operands and the values its regions use): a load that does not depend on an
  axis is loaded once for all the tile's offsets along it (a weight texel once per tile of
  pixels, an input texel once per tile of output channel blocks);
- an `scf.for` that depends on a tiled axis (a reduction nest) becomes ONE loop, with the
  same bounds, that carries one copy of its `iter_args` per distinct value of those offsets,
  and whose body is cloned by the same rule: each tile element's accumulators stay in
  registers across the whole reduction, the ops after it (fused epilogues, stores) run per
  accumulator;
- with `unroll = N`, an `scf.for` with constant bounds of at most N iterations is written
  out instead, iteration by iteration in its order, each iteration's ops by the same rules
  (a small window: the OpenCL C compiler sees straight-line code);
- a tile longer than its axis's trip count is cut to that count (the elements past it
  would all be clamped and guarded out); a tile of more than `MAX_TILE_ELEMENTS` elements
  after that is refused;
- extents a tile does not divide: the elements past the end of the last tile compute with
  their loop index clamped to the last iteration (`arith.minsi`: every load stays in
  bounds, the value is that of a real iteration) and their stores (and region ops holding
  stores) are guarded by `scf.if %index < %upper`, so exactly the old iterations store.

Legality: the iterations of an `scf.parallel` (without reductions) are independent, so any
interleaving of the ops of distinct iterations that keeps each iteration's own order gives
the same results; a clone shared by several elements computes a value that is equal for all
of them (its operands are); each element keeps its own reduction values, carried through
the loop's `iter_args` in the old order, so every floating-point result is bit-identical.
A clamped element only reads what its tile's last real element reads.

With `schedules=TABLE` (`transforms/given_schedules.py`: schedules by kernel signature, what
`physlayout tune` keeps), a kernel without a schedule whose signature the table lists first
gets the listed schedule. With `default=true`, a kernel without a schedule then gets the heuristic's
(`schedule_heuristic.default_schedule`, from the loop's shape and the device options
`compute-units`, `max-work-group-size`, `registers`, `vector-items`); kernels it does not pay to tile keep
no schedule.

Refused with a diagnostic (a schedule the kernel cannot take): no or several top-level
`scf.parallel`s, a tile whose length is not the loop's rank, non-constant bounds or steps,
reductions on the `scf.parallel`, a store inside an op with results that a remainder needs
to guard.

Guarantees: an applied schedule moves from `layout.schedule` to `layout.scheduled` (which
`-t opencl` reads for the work-group size), so a second run changes nothing; a tile of all
1 leaves the loop as it is.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.utils.exceptions import PassFailedException, VerifyException

from physlayout.dialects.layout import StoreOp
from physlayout.dialects.layout_schedule import SCHEDULE, SCHEDULED, ScheduleAttr
from physlayout.dialects.scf_syntax import ParallelOp, ReduceOp
from physlayout.transforms.given_schedules import kernel_signature, parse_schedule_table
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.schedule_heuristic import (
    DeviceModel,
    default_schedule,
    loop_ranges,
    trip_counts,
)


def kernel_loop(kernel: func.FuncOp) -> scf.ParallelOp | None:
    """The one top-level `scf.parallel` of `kernel`'s body (None: none, or several)."""
    if len(kernel.body.blocks) != 1:
        return None
    loops = [op for op in kernel.body.blocks[0].ops if isinstance(op, scf.ParallelOp)]
    return loops[0] if len(loops) == 1 else None


def _fail(kernel: func.FuncOp, message: str) -> PassFailedException:
    return PassFailedException(f"apply-schedules: @{kernel.sym_name.data}: {message}")


def _has_store(op: Operation) -> bool:
    return any(isinstance(inner, StoreOp) or inner.name == "memref.store" for inner in op.walk())


@dataclass
class TileCloner:
    """Clones the body of one `scf.parallel` for every element of a tile (see the module
    docstring). `maps[e]`: old value -> value of element `e` (`elements[e]`: its offset per
    axis); `deps`: old value -> the tiled axes its value depends on; `valid[k][o]`: the
    condition that offset `o` along axis `k` is a real iteration (None: always)."""

    kernel: func.FuncOp
    elements: list[tuple[int, ...]]
    valid: list[list[SSAValue | None]]
    unroll: int = 0
    """Jammed loops of at most this many iterations are unrolled instead."""
    maps: list[dict[SSAValue, SSAValue]] = field(default_factory=list[dict[SSAValue, SSAValue]])
    deps: dict[SSAValue, frozenset[int]] = field(default_factory=dict[SSAValue, frozenset[int]])

    def dependence(self, op: Operation) -> frozenset[int]:
        """The tiled axes `op` depends on (through any operand used in or under it)."""
        found: set[int] = set()
        for inner in op.walk():
            for operand in inner.operands:
                found |= self.deps.get(operand, frozenset())
        return frozenset(found)

    def groups(self, axes: frozenset[int]) -> list[list[int]]:
        """The elements grouped by their offsets along `axes` (in element order)."""
        found: dict[tuple[int, ...], list[int]] = {}
        for e, offsets in enumerate(self.elements):
            found.setdefault(tuple(offsets[k] for k in sorted(axes)), []).append(e)
        return list(found.values())

    def guard(self, element: int, axes: frozenset[int], point: InsertPoint) -> SSAValue | None:
        """Whether `element` is a real iteration along `axes` (None: always)."""
        condition: SSAValue | None = None
        for k in sorted(axes):
            valid = self.valid[k][self.elements[element][k]]
            if valid is None:
                continue
            if condition is None:
                condition = valid
                continue
            both = arith.AndIOp(condition, valid)
            _insert(both, point)
            condition = both.result
        return condition

    def clone_block(self, ops: Sequence[Operation], point: InsertPoint) -> None:
        """Clone `ops` (no terminator) at `point`."""
        for op in ops:
            axes = self.dependence(op)
            if isinstance(op, scf.ForOp) and not self._bounds_vary(op):
                values = _constant_range(op)
                if values is not None and len(values) <= self.unroll:
                    self.unroll_loop(op, axes, values, point)
                    continue
                if axes:
                    self.jam(op, axes, point)
                    continue
            self.clone_op(op, axes, point)

    def _bounds_vary(self, op: scf.ForOp) -> bool:
        return any(self.deps.get(v) for v in (op.lb, op.ub, op.step))

    def unroll_loop(
        self, op: scf.ForOp, axes: frozenset[int], values: range, point: InsertPoint
    ) -> None:
        """`op`'s body once per iteration (`values` of its induction variable), in order,
        each iteration's carried values those the previous one yielded, by the same rules."""
        body = op.body.block
        groups = self.groups(axes)
        carried = [[self.maps[g[0]].get(v, v) for v in op.iter_args] for g in groups]
        self.deps[body.args[0]] = frozenset()
        for value in (*body.args[1:], *op.results):
            self.deps[value] = axes
        terminator = body.last_op
        assert isinstance(terminator, scf.YieldOp)
        inner = [o for o in body.ops if not o.has_trait(IsTerminator)]
        for iteration in values:
            index = arith.ConstantOp(IntegerAttr(iteration, IndexType()))
            _insert(index, point)
            for g, group in enumerate(groups):
                for e in group:
                    self.maps[e][body.args[0]] = index.result
                    self.maps[e].update(zip(body.args[1:], carried[g], strict=True))
            self.clone_block(inner, point)
            carried = [[self.maps[g[0]].get(v, v) for v in terminator.operands] for g in groups]
        for g, group in enumerate(groups):
            for e in group:
                self.maps[e].update(zip(op.results, carried[g], strict=True))

    def clone_op(self, op: Operation, axes: frozenset[int], point: InsertPoint) -> None:
        """`op` once per group of elements equal along `axes` (guarded where it stores and
        the group's offsets may be past the end)."""
        for group in self.groups(axes):
            first = group[0]
            clone = op.clone(value_mapper=dict(self.maps[first]))
            condition = self.guard(first, axes, point) if _has_store(op) else None
            if condition is None:
                _insert(clone, point)
            elif op.results:
                raise _fail(
                    self.kernel, f"cannot guard '{op.name}' (it has results) in a remainder"
                )
            else:
                _insert(scf.IfOp(condition, [], [clone, scf.YieldOp()]), point)
            for e in group:
                self.maps[e].update(zip(op.results, clone.results, strict=True))
        for result in op.results:
            self.deps[result] = axes

    def jam(self, op: scf.ForOp, axes: frozenset[int], point: InsertPoint) -> None:
        """One loop carrying one copy of `op`'s `iter_args` per group of elements equal along
        `axes`, its body cloned by the same rules."""
        groups = self.groups(axes)
        first = self.maps[groups[0][0]]
        inits = [self.maps[g[0]].get(v, v) for g in groups for v in op.iter_args]
        body = op.body.block
        carried = len(op.iter_args)
        block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
        block.args[0].name_hint = body.args[0].name_hint
        lb, ub, step = (first.get(v, v) for v in (op.lb, op.ub, op.step))
        loop = scf.ForOp(lb, ub, step, inits, Region(block))
        _insert(loop, point)
        self.deps[body.args[0]] = frozenset()
        for g, group in enumerate(groups):
            args = block.args[1 + g * carried : 1 + (g + 1) * carried]
            results = loop.results[g * carried : (g + 1) * carried]
            for e in group:
                self.maps[e][body.args[0]] = block.args[0]
                self.maps[e].update(zip(body.args[1:], args, strict=True))
                self.maps[e].update(zip(op.results, results, strict=True))
        for value in (*body.args[1:], *op.results):
            self.deps[value] = axes
        inner = InsertPoint.at_end(block)
        self.clone_block([o for o in body.ops if not o.has_trait(IsTerminator)], inner)
        terminator = body.last_op
        assert isinstance(terminator, scf.YieldOp)
        yielded = [self.maps[g[0]].get(v, v) for g in groups for v in terminator.operands]
        _insert(scf.YieldOp(*yielded), inner)


def _constant_range(op: scf.ForOp) -> range | None:
    """The iterations of `op` (None: bounds or step not constant, or a step below 1)."""
    lower, upper, step = (const_evaluate_operand(v) for v in (op.lb, op.ub, op.step))
    if lower is None or upper is None or step is None or step <= 0:
        return None
    return range(lower, upper, step)


def _insert(op: Operation, point: InsertPoint) -> None:
    if point.insert_before is not None:
        point.block.insert_op_before(op, point.insert_before)
    else:
        point.block.add_op(op)


MAX_TILE_ELEMENTS = 1024
"""The most iterations one work-item's tile may compute (after each tile length is cut to its
axis's trip count): the body is cloned once per element, so a larger tile only grows the
kernel past any register file."""


def tile_loop(
    kernel: func.FuncOp, loop: scf.ParallelOp, tile: Sequence[int], unroll: int = 0
) -> list[Operation]:
    """The tiled form of `loop` (see the module docstring): its new steps' constants and the
    new loop, to replace it. PassFailedException when the loop cannot take `tile`."""
    ranges = loop_ranges(loop)
    if ranges is None:
        raise _fail(kernel, "the scf.parallel has non-constant bounds or steps")
    if loop.initVals:
        raise _fail(kernel, "the scf.parallel has reductions")
    if len(tile) != len(ranges):
        raise _fail(
            kernel, f"the schedule tiles {len(tile)} axes, the scf.parallel has {len(ranges)}"
        )
    # past an axis's trip count every further element would be clamped and guarded out
    counts = trip_counts(ranges)
    tile = [min(t, max(1, n)) for n, t in zip(counts, tile, strict=True)]
    if math.prod(tile) > MAX_TILE_ELEMENTS:
        raise _fail(
            kernel,
            f"the schedule's tile {tile} computes {math.prod(tile)} iterations per work-item "
            f"(at most {MAX_TILE_ELEMENTS}: each keeps its accumulators in registers)",
        )
    old = loop.body.block
    block = Block(arg_types=[IndexType()] * len(ranges))
    point = InsertPoint.at_end(block)
    constants: dict[int, SSAValue] = {}

    def index(value: int) -> SSAValue:
        if value not in constants:
            op = arith.ConstantOp(IntegerAttr(value, IndexType()))
            _insert(op, point)
            constants[value] = op.result
        return constants[value]

    valid: list[list[SSAValue | None]] = []
    values: list[list[SSAValue]] = []
    for k, ((lower, upper, step), size) in enumerate(zip(ranges, tile, strict=True)):
        base = block.args[k]
        base.name_hint = old.args[k].name_hint
        trips = counts[k]
        real = trips % size or size
        last = lower + (trips - 1) * step
        axis_values: list[SSAValue] = [base]
        axis_valid: list[SSAValue | None] = [None]
        for offset in range(1, size):
            add = arith.AddiOp(base, index(offset * step))
            _insert(add, point)
            if offset < real:
                axis_values.append(add.result)
                axis_valid.append(None)
                continue
            inside = arith.CmpiOp(add.result, index(upper), "slt")
            _insert(inside, point)
            clamp = arith.MinSIOp(add.result, index(last))
            _insert(clamp, point)
            axis_values.append(clamp.result)
            axis_valid.append(inside.result)
        values.append(axis_values)
        valid.append(axis_valid)
    elements = list(itertools.product(*(range(t) for t in tile)))
    cloner = TileCloner(kernel, elements, valid, unroll)
    for offsets in elements:
        cloner.maps.append({old.args[k]: values[k][o] for k, o in enumerate(offsets)})
    for k, size in enumerate(tile):
        cloner.deps[old.args[k]] = frozenset({k}) if size > 1 else frozenset()
    cloner.clone_block([o for o in old.ops if not o.has_trait(IsTerminator)], point)
    block.add_op(ReduceOp())
    steps = [
        arith.ConstantOp(IntegerAttr(s * t, IndexType()))
        for (_, _, s), t in zip(ranges, tile, strict=True)
    ]
    tiled = ParallelOp(list(loop.lowerBound), list(loop.upperBound), steps, Region(block))
    return [*steps, tiled]


class AttachGivenSchedule(RewritePattern):
    """A kernel without a schedule whose signature (`given_schedules.kernel_signature`) is
    in the table gets the table's."""

    def __init__(self, table: Mapping[str, ScheduleAttr]) -> None:
        self.table = table

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if SCHEDULE in op.attributes or SCHEDULED in op.attributes or kernel_loop(op) is None:
            return
        schedule = self.table.get(kernel_signature(op))
        if schedule is None:
            return
        op.attributes[SCHEDULE] = schedule
        rewriter.handle_operation_modification(op)


class ChooseDefaultSchedule(RewritePattern):
    """A kernel without a schedule gets the heuristic's (when it pays to tile it)."""

    def __init__(self, device: DeviceModel) -> None:
        self.device = device

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if SCHEDULE in op.attributes or SCHEDULED in op.attributes:
            return
        loop = kernel_loop(op)
        if loop is None:
            return
        schedule = default_schedule(loop, self.device)
        if schedule is None:
            return
        op.attributes[SCHEDULE] = schedule
        rewriter.handle_operation_modification(op)


class ApplyKernelSchedule(RewritePattern):
    """A kernel's pending schedule: tile its `scf.parallel`, mark the schedule applied."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        schedule = op.attributes.get(SCHEDULE)
        if schedule is None:
            return
        if not isinstance(schedule, ScheduleAttr):
            raise _fail(op, f"{SCHEDULE} must be a #layout.schedule, got {schedule}")
        loop = kernel_loop(op)
        if loop is None:
            raise _fail(op, "a scheduled kernel needs exactly one top-level scf.parallel")
        if any(t > 1 for t in schedule.tile) or schedule.unroll:
            rewriter.replace(loop, tile_loop(op, loop, schedule.tile, schedule.unroll), [])
        elif len(schedule.tile) != len(loop.lowerBound):
            raise _fail(
                op,
                f"the schedule tiles {len(schedule.tile)} axes, the scf.parallel has "
                f"{len(loop.lowerBound)}",
            )
        if schedule.workgroup and len(schedule.workgroup) != len(loop.lowerBound):
            raise _fail(op, "the schedule's workgroup does not name one extent per axis")
        del op.attributes[SCHEDULE]
        op.attributes[SCHEDULED] = schedule
        rewriter.handle_operation_modification(op)


@dataclass(frozen=True)
class ApplySchedulesPass(PhyslayoutPass):
    """Apply each kernel's `#layout.schedule`: each work-item computes a tile of iterations,
    its accumulators in registers across the reduction, each shared load once per tile.

    Options:
        schedules (str, ""): given schedules by kernel signature
            (`SIG=TILE[/WORKGROUP][/uN];...`, `transforms/given_schedules.py`): a kernel
            without a schedule whose signature is listed first gets the listed one.
        default (bool, false): kernels without a schedule (or a given one) get the
            heuristic's.
        compute-units (int, 2): the device's compute units (the heuristic keeps work for
            each).
        max-work-group-size (int, 256): the device's largest work-group.
        registers (int, 128): the register budget of one work-item, in 32-bit values (the
            heuristic keeps a tile's accumulators within it).
        vector-items (bool, false): the driver runs neighbouring work-items as SIMD lanes
            (a CPU device): for kernels with float4 accumulators the heuristic leaves the
            work-item axis of dimension 0 untiled and weighs loads by whether they vary
            along it.
        vector-width (int, 4): lanes of one SIMD register of the device (above 4, a
            vector accumulator of at most that many lanes counts as four 32-bit values).
    """

    name = "apply-schedules"

    schedules: str = ""
    """Given schedules by kernel signature (the tuner's)."""
    default: bool = False
    """Give kernels without a schedule the heuristic's."""
    compute_units: int = 2
    """The device's compute units."""
    max_work_group_size: int = 256
    """The device's largest work-group (work-items)."""
    registers: int = 128
    """Register budget per work-item, in 32-bit values."""
    vector_items: bool = False
    """The driver vectorizes work-items along dimension 0."""
    vector_width: int = 4
    """Lanes of one SIMD register."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_and_report(ctx, op)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        changed = False
        if self.schedules:
            try:
                table = parse_schedule_table(self.schedules)
            except VerifyException as err:
                raise PassFailedException(f"apply-schedules: {err}") from None
            walker = PatternRewriteWalker(AttachGivenSchedule(table), apply_recursively=False)
            changed = walker.rewrite_module(op)
        if self.default:
            device = DeviceModel(
                self.compute_units,
                self.max_work_group_size,
                self.registers,
                self.vector_items,
                self.vector_width,
            )
            walker = PatternRewriteWalker(ChooseDefaultSchedule(device), apply_recursively=False)
            changed = walker.rewrite_module(op) or changed
        walker = PatternRewriteWalker(ApplyKernelSchedule(), apply_recursively=False)
        return walker.rewrite_module(op) or changed
