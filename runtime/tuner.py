"""The on-device schedule tuner (`physlayout tune`): for each distinct kernel of a compiled
model, time candidate schedules on the OpenCL device and keep the fastest.

What is tuned: the graph pipeline runs up to its `apply-schedules` (`unscheduled_module`:
the kernels exactly as that pass sees them, so their signatures are the ones it looks up),
and every kernel the per-call host function launches whose loop has a reduction worth
tiling (`schedule_heuristic.ranked_tiles` not empty) is a case, distinct by its signature
(`transforms/given_schedules.kernel_signature`: its unscheduled text and launch extents);
its weight is the launches of that signature per call. Kernels of the prepare phase (run
once) are not tuned.

How a candidate is measured (`KernelBench`): the kernel alone in a module, the schedule
applied (`apply-schedules`, then `dce` as the pipeline does), generated and built for the
device; its parameters are device storage of their physical shapes holding seeded random
values (uniform in [-1, 1) for floats, 0 for integers: index tensors stay in bounds), the
same values for every candidate. One launch first, whose results (every parameter read
back) must equal the unscheduled kernel's within 1e-5 of the largest magnitude (NaN where
it has NaN): a candidate that fails to apply, to build or to match is discarded with a
note (a safety net: `apply-schedules` keeps values bit-exact). Then `REPEATS` launches;
the candidate's time is their median device time (OpenCL profiling events).

Candidates (`candidates`): the unscheduled kernel and the heuristic's schedule, always
timed; then, where the device's register budget is below the default (a CPU device
holding textures as buffers, `CPU_BUFFER_REGISTERS`), the heuristic's schedule at the
default budget (`REGISTERS`: smaller tiles are faster for some kernels, not for all); then
the heuristic's best-ranked tiles (with a register budget twice the
heuristic's, and one work-item per compute unit enough) with its work-group rule; then
the heuristic's tile with its innermost axis taken whole where that axis is at most a
texel's lanes long (`whole_lanes`: one work-item computes every lane of its outputs'
texels, the other axes halved to stay in the budget); then, around the fastest so far, other work-group
sizes (64 and 16 work-items, and the runtime's choice) and unrolling of small loops (4 and
9 iterations), all within the device's limits.

The budget (seconds of wall time, builds included) bounds the optional candidates: after
the mandatory ones, what is left is shared among the kernels in proportion to their share
of the model's time (launches x best time so far), largest first, what one leaves going to
the next; a candidate starts only when the mean cost of that kernel's candidates so far
still fits in its share and in the budget.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

from physlayout.dialects.buffer_layout import TEXEL_LANES
from physlayout.dialects.layout_schedule import SCHEDULE, ScheduleAttr
from physlayout.lowering.pipelines import DeclaredPipeline
from physlayout.runtime.deploy import apply_precision
from physlayout.runtime.device import DeviceStorage, OpenCLRuntime, OpenCLRuntimeError
from physlayout.runtime.host import PlanRunner
from physlayout.runtime.kernel_stats import kernel_stats
from physlayout.runtime.opencl import compile_module, device_pipeline
from physlayout.runtime.plan_builder import build_plan
from physlayout.runtime.tuning_cache import (
    DEFAULT_BUDGET,
    DeviceKey,
    TunedKernel,
    TuningCache,
    tuning_cache_path,
)
from physlayout.transforms.apply_schedules import ApplySchedulesPass, kernel_loop
from physlayout.transforms.given_schedules import kernel_signature, schedule_text
from physlayout.transforms.schedule_heuristic import (
    REGISTERS,
    DeviceModel,
    accumulator_lanes,
    default_schedule,
    default_workgroup,
    innermost_axis,
    loop_ranges,
    ranked_tiles,
    trip_counts,
)
from physlayout.universe import make_context

REPEATS = 5
"""Timed launches per candidate (after the checked one); the time is their median."""
RTOL = 1e-5
"""How far a candidate's results may be from the unscheduled kernel's, relative to the
largest magnitude of the latter."""
RANKED = 6
"""The heuristic's ranked tiles tried (after its own)."""
WORKGROUP_TARGETS = (64, 16)
"""Work-group sizes tried around the fastest tile (besides the heuristic's rule and the
runtime's choice)."""
UNROLLS = (4, 9)
"""`unroll` values tried around the fastest schedule."""


# The kernels of a model -------------------------------------------------------------------


def _flattened(passes: Sequence[ModulePass]) -> list[ModulePass]:
    found: list[ModulePass] = []
    for one in passes:
        if isinstance(one, DeclaredPipeline):
            found.extend(_flattened(one.passes()))
        else:
            found.append(one)
    return found


def unscheduled_module(
    source: ModuleOp, pipeline: str, limits: Any, precision: str = "f32"
) -> tuple[ModuleOp, DeviceModel]:
    """The graph `source` after the passes of `pipeline` (for a device with `limits`,
    precision applied first as `compile_artifact` does) that run before its first
    `apply-schedules`, and the device model that pass plans for. DiagnosticException when
    the pipeline schedules nothing."""
    passes = _flattened(device_pipeline(pipeline, limits, verify_each=False).passes)
    schedules = next((p for p in passes if isinstance(p, ApplySchedulesPass)), None)
    if schedules is None:
        raise DiagnosticException(
            f"pipeline '{pipeline}' has no apply-schedules pass: there is nothing to tune"
        )
    module = source.clone()
    apply_precision(module, pipeline, limits, precision)
    ctx = make_context()
    for one in passes[: passes.index(schedules)]:
        one.apply(ctx, module)
    device = DeviceModel(
        schedules.compute_units,
        schedules.max_work_group_size,
        schedules.registers,
        schedules.vector_items,
        schedules.vector_width,
    )
    return module, device


@dataclass
class KernelCase:
    """A distinct kernel to tune."""

    name: str
    """The first kernel function of this signature (in module order)."""
    signature: str
    kernel: func.FuncOp
    launches: int
    """Launches of this signature per call of the entry."""
    multiplies: int | None
    """Multiplies one launch executes (MACs of a convolution; `runtime/kernel_stats.py`)."""


def launch_counts(module: ModuleOp, entry: str) -> dict[str, int]:
    """Per kernel function, its launches per call of `@entry` (through the host functions
    `@entry` calls)."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    counts: dict[str, int] = {}

    def visit(name: str, times: int) -> None:
        function = functions.get(name)
        if function is None:
            return
        if kernel_loop(function) is not None:
            counts[name] = counts.get(name, 0) + times
            return
        for op in function.walk():
            if isinstance(op, func.CallOp):
                visit(op.callee.root_reference.data, times)

    visit(entry, 1)
    return counts


def distinct_kernels(module: ModuleOp, entry: str) -> list[KernelCase]:
    """The kernels of `module` (`unscheduled_module`'s) that `@entry` launches and that a
    schedule can tile, one per signature, in module order."""
    counts = launch_counts(module, entry)
    cases: dict[str, KernelCase] = {}
    for op in module.ops:
        if not isinstance(op, func.FuncOp) or counts.get(op.sym_name.data, 0) == 0:
            continue
        loop = kernel_loop(op)
        if loop is None or not ranked_tiles(loop, DeviceModel(registers=1 << 30)):
            continue
        signature = kernel_signature(op)
        known = cases.get(signature)
        if known is not None:
            known.launches += counts[op.sym_name.data]
            continue
        stats = kernel_stats(ModuleOp([op.clone()]), [op.sym_name.data])
        multiplies = stats[op.sym_name.data].multiplies
        cases[signature] = KernelCase(
            op.sym_name.data, signature, op, counts[op.sym_name.data], multiplies
        )
    return list(cases.values())


# Candidates -------------------------------------------------------------------------------


def unscheduled(kernel: func.FuncOp) -> ScheduleAttr:
    """One iteration per work-item, the runtime's work-groups."""
    loop = kernel_loop(kernel)
    assert loop is not None
    return ScheduleAttr.of([1] * len(loop.lowerBound))


def candidates(
    kernel: func.FuncOp, device: DeviceModel, best: Callable[[], ScheduleAttr]
) -> Iterator[ScheduleAttr]:
    """The candidate schedules of `kernel` in the order they are timed (module
    docstring), duplicates included (the tuner skips them); `best()` is the fastest so
    far when the refinements are made."""
    loop = kernel_loop(kernel)
    ranges = loop_ranges(loop) if loop is not None else None
    assert loop is not None and ranges is not None
    trips = trip_counts(ranges)
    yield unscheduled(kernel)
    yield default_schedule(loop, device) or unscheduled(kernel)
    if device.registers < REGISTERS:  # a CPU's budget for buffers: the default one's choice
        roomy = dataclasses.replace(device, registers=REGISTERS)
        yield default_schedule(loop, roomy) or unscheduled(kernel)
    wider = dataclasses.replace(device, registers=device.registers * 2)
    ranked = ranked_tiles(loop, wider, items_per_unit=1)
    for tile in ranked[: RANKED + 1]:
        yield ScheduleAttr.of(tile, default_workgroup(trips, tile, device))
    budget = device.registers // max(1, accumulator_lanes(loop, device.vector_width))
    lanes_tile = whole_lanes(ranked[0], trips, budget) if ranked else None
    if lanes_tile is not None:
        yield ScheduleAttr.of(lanes_tile, default_workgroup(trips, lanes_tile, device))
    fastest = best()
    tile = fastest.tile
    for target in WORKGROUP_TARGETS:
        yield ScheduleAttr.of(tile, default_workgroup(trips, tile, device, target), fastest.unroll)
    yield ScheduleAttr.of(tile, (), fastest.unroll)
    fastest = best()
    for unroll in UNROLLS:
        yield ScheduleAttr.of(fastest.tile, fastest.workgroup, unroll)


def whole_lanes(
    tile: Sequence[int], trips: Sequence[int], budget: int
) -> tuple[int, ...] | None:
    """`tile` with the innermost axis of more than one iteration taken whole when it has
    at most `TEXEL_LANES` iterations (a texel's lanes as a parallel axis: a result with 3
    channels stored lane by lane), the largest other extent halved until the tile has at
    most `budget` elements; None when there is no such axis or `tile` already covers it."""
    inner = innermost_axis(trips)
    if inner < 0 or trips[inner] > TEXEL_LANES or tile[inner] >= trips[inner]:
        return None
    found = list(tile)
    found[inner] = trips[inner]
    while math.prod(found) > budget:
        k = max((k for k in range(len(found)) if k != inner), key=lambda k: found[k], default=-1)
        if k < 0 or found[k] == 1:
            return None
        found[k] //= 2
    return tuple(found)


# Measuring --------------------------------------------------------------------------------


class CandidateFailed(Exception):
    """A candidate that cannot be applied, built or that computes other values."""


@dataclass
class KernelBench:
    """One kernel on the device with fixed random inputs (module docstring)."""

    runtime: OpenCLRuntime
    kernel: func.FuncOp
    seed: int = 0
    inputs: dict[int, np.ndarray] = field(default_factory=dict[int, np.ndarray])
    """The random value of each parameter, by position."""
    reference: dict[int, np.ndarray] | None = None
    """The first measured schedule's results (the unscheduled kernel's) by parameter
    position."""

    def measure(self, schedule: ScheduleAttr, repeats: int = REPEATS) -> float:
        """Median device seconds of one launch of the kernel with `schedule`; the first
        call's results become the reference of the later ones. CandidateFailed when the
        schedule does not apply or build, or computes other values."""
        module = ModuleOp([self.kernel.clone()])
        copy = next(iter(module.ops))
        assert isinstance(copy, func.FuncOp)
        copy.attributes[SCHEDULE] = schedule
        name = copy.sym_name.data
        try:
            ApplySchedulesPass().apply(make_context(), module)
            DeadCodeElimination().apply(make_context(), module)
            compiled = compile_module(module, self.runtime, lowered_already=True)
            plan = build_plan(compiled, name)
        except (PassFailedException, VerifyException, OpenCLRuntimeError) as err:
            raise CandidateFailed(str(err).strip().splitlines()[0]) from None
        bound: dict[int, DeviceStorage] = {}
        scalars: dict[str, Any] = {}
        for param in plan.params:
            if param.storage is None:
                scalars[param.name] = 1
                continue
            storage = plan.storages[param.storage]
            kind = "texture" if storage.kind == "image" else "global"
            device = self.runtime.allocate(kind, storage.shape, storage.dtype)
            device.upload(self._input(param.index, storage.shape, np.dtype(storage.dtype)))
            bound[param.storage] = device
        runner = PlanRunner(plan, self.runtime, compiled.cl_program, bound, compiled.cl_kernels)
        steps = tuple(s for s in plan.steps if s.phase == "body")
        runner.run(steps, scalars)
        results = {
            p.index: bound[p.storage].download() for p in plan.params if p.storage is not None
        }
        if self.reference is None:
            self.reference = results
        else:
            for index, want in self.reference.items():
                error = _mismatch(results[index], want)
                if error is not None:
                    name = plan.params[index].name
                    raise CandidateFailed(f"%{name} differs from the unscheduled kernel's: {error}")
        samples = [runner.run(steps, scalars).total_seconds for _ in range(repeats)]
        return statistics.median(samples)

    def _input(self, index: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
        array = self.inputs.get(index)
        if array is None:
            rng = np.random.default_rng([self.seed, index])
            if dtype.kind == "f":
                array = rng.uniform(-1, 1, shape).astype(dtype)
            else:
                array = np.zeros(shape, dtype)
            self.inputs[index] = array
        return array


def _mismatch(got: np.ndarray, want: np.ndarray) -> str | None:
    """Why `got` is not `want` within `RTOL` of max|want| (None: it is)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return "NaN in other places"
    finite = np.isfinite(want)
    if not np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)]):
        return "infinities differ"
    if not finite.any():
        return None
    scale = float(np.max(np.abs(want[finite])))
    error = float(np.max(np.abs(got[finite] - want[finite])))
    if error <= RTOL * scale:
        return None
    return f"max|error| {error:.3g}, max|value| {scale:.3g}"


# Tuning -----------------------------------------------------------------------------------


@dataclass
class KernelReport:
    """What tuning one distinct kernel found."""

    case: KernelCase
    unscheduled_seconds: float
    heuristic: ScheduleAttr
    heuristic_seconds: float
    best: ScheduleAttr
    best_seconds: float
    timed: int = 0
    """Candidates timed (the discarded ones not counted)."""
    discarded: list[str] = field(default_factory=list[str])
    """A note per discarded candidate."""
    spent: float = 0.0
    """Wall seconds spent on this kernel."""


@dataclass
class TuneReport:
    """What `Tuner.tune` did."""

    kernels: list[KernelReport]
    seconds: float
    budget: float

    @property
    def timed(self) -> int:
        """Candidates timed in all."""
        return sum(k.timed for k in self.kernels)

    @property
    def discarded(self) -> int:
        """Candidates discarded in all."""
        return sum(len(k.discarded) for k in self.kernels)

    def tuned(self) -> dict[str, TunedKernel]:
        """The tuning cache's entries of this run, by signature."""
        return {
            k.case.signature: TunedKernel(
                k.case.signature, k.best, k.best_seconds, k.case.name, k.unscheduled_seconds,
                k.heuristic_seconds,
            )
            for k in self.kernels
            if not math.isnan(k.best_seconds)
        }  # fmt: skip

    def lines(self) -> list[str]:
        """The report `physlayout tune` prints."""
        lines = [
            f"{'kernel':<28} {'launches':>8} {'unscheduled':>12} {'heuristic':>24} "
            f"{'tuned':>28} {'timed':>5}"
        ]
        before = after = heuristic = 0.0
        for k in self.kernels:
            lines.append(
                f"{k.case.name:<28} {k.case.launches:>8} {k.unscheduled_seconds * 1e3:>9.3f} ms "
                f"{schedule_text(k.heuristic):>14} {k.heuristic_seconds * 1e3:>6.3f} ms "
                f"{schedule_text(k.best):>18} {k.best_seconds * 1e3:>6.3f} ms {k.timed:>5}"
                + (f"  ({len(k.discarded)} discarded: {k.discarded[0]})" if k.discarded else "")
            )
            before += k.unscheduled_seconds * k.case.launches
            heuristic += k.heuristic_seconds * k.case.launches
            after += k.best_seconds * k.case.launches
        lines.append(
            f"tuned {len(self.kernels)} distinct kernel(s) in {self.seconds:.1f} s (budget "
            f"{self.budget:g} s): {self.timed} candidate(s) timed, {self.discarded} discarded; "
            f"their device ms per call: unscheduled {before * 1e3:.3f}, heuristic "
            f"{heuristic * 1e3:.3f}, tuned {after * 1e3:.3f}"
        )
        return lines


@dataclass
class Tuner:
    """Times candidate schedules of kernels on `runtime` within `budget` seconds (module
    docstring). `clock` gives wall seconds; `notes` receives a line per discarded
    candidate."""

    runtime: OpenCLRuntime
    device: DeviceModel
    budget: float = DEFAULT_BUDGET
    repeats: int = REPEATS
    clock: Callable[[], float] = time.perf_counter
    notes: TextIO | None = None
    measure: Callable[[KernelBench, ScheduleAttr], float] = field(default=KernelBench.measure)
    """How one candidate is measured: `KernelBench.measure` (tests plant a wrong kernel
    here)."""

    def tune(self, cases: Sequence[KernelCase]) -> TuneReport:
        """Tune every case: the unscheduled kernel and the heuristic's schedule always,
        the other candidates within the budget."""
        start = self.clock()
        states = [
            _State(case, KernelBench(self.runtime, case.kernel), self.device) for case in cases
        ]
        for state in states:
            for schedule in (state.unscheduled, state.heuristic):
                if not state.done and schedule not in state.seen:
                    state.seen.add(schedule)
                    self._measure(state, schedule)
        pending = sorted(states, key=lambda s: -s.weight())
        for position, state in enumerate(pending):
            rest = sum(s.weight() for s in pending[position:])
            last = position == len(pending) - 1
            share = 1.0 if last or rest <= 0 else state.weight() / rest
            allowance = max(0.0, self.budget - (self.clock() - start)) * share
            began = self.clock()
            while not state.done:
                cost = state.spent / max(1, state.tried)
                now = self.clock()
                if now - began + cost > allowance or now - start + cost > self.budget:
                    break
                schedule = state.next_candidate()
                if schedule is not None:
                    self._measure(state, schedule)
        reports = [s.report() for s in states]
        return TuneReport(reports, self.clock() - start, self.budget)

    def _measure(self, state: _State, schedule: ScheduleAttr) -> None:
        """Measure one candidate of `state` (a failure is discarded with a note; when the
        unscheduled kernel itself fails, the kernel is left as it is)."""
        began = self.clock()
        try:
            state.timed[schedule] = self.measure(state.bench, schedule)
        except CandidateFailed as err:
            note = f"{schedule_text(schedule)}: {err}"
            state.discarded.append(note)
            print(f"note: @{state.case.name}: discarded the schedule {note}",
                  file=self.notes if self.notes is not None else sys.stderr)  # fmt: skip
            if schedule == state.unscheduled:  # nothing to compare with: not tuned
                state.done = True
        state.spent += self.clock() - began
        state.tried += 1


@dataclass
class _State:
    """A kernel being tuned."""

    case: KernelCase
    bench: KernelBench
    device: DeviceModel
    timed: dict[ScheduleAttr, float] = field(default_factory=dict[ScheduleAttr, float])
    discarded: list[str] = field(default_factory=list[str])
    seen: set[ScheduleAttr] = field(default_factory=set[ScheduleAttr])
    tried: int = 0
    spent: float = 0.0
    done: bool = False
    _candidates: Iterator[ScheduleAttr] | None = None

    @property
    def unscheduled(self) -> ScheduleAttr:
        return unscheduled(self.case.kernel)

    @property
    def heuristic(self) -> ScheduleAttr:
        loop = kernel_loop(self.case.kernel)
        assert loop is not None
        return default_schedule(loop, self.device) or self.unscheduled

    def best(self) -> ScheduleAttr:
        return min(self.timed, key=lambda s: (self.timed[s], s.tile, s.workgroup, s.unroll))

    def weight(self) -> float:
        return self.case.launches * (min(self.timed.values()) if self.timed else 0.0)

    def next_candidate(self) -> ScheduleAttr | None:
        """The next candidate not tried yet (None, and `done`, when there is none)."""
        if self._candidates is None:
            self._candidates = candidates(self.case.kernel, self.device, self.best)
        for schedule in self._candidates:
            if schedule not in self.seen:
                self.seen.add(schedule)
                return schedule
        self.done = True
        return None

    def report(self) -> KernelReport:
        first, heuristic = self.unscheduled, self.heuristic
        base = self.timed.get(first, float("nan"))
        best = self.best() if self.timed and first in self.timed else first
        return KernelReport(
            self.case, base, heuristic, self.timed.get(heuristic, base), best,
            self.timed.get(best, base), len(self.timed), self.discarded, self.spent,
        )  # fmt: skip


def tune_model(
    source: ModuleOp,
    entry: str,
    runtime: OpenCLRuntime,
    *,
    pipeline: str,
    precision: str = "f32",
    budget: float = DEFAULT_BUDGET,
    cache: str | os.PathLike[str] | None = None,
    notes: TextIO | None = None,
) -> TuneReport:
    """Tune the kernels of function `entry` of the graph `source` as `pipeline` compiles it
    for `runtime`'s device and record the results in the tuning cache at `cache` (None:
    the default one, created with its directory). DiagnosticException for a buffer-level
    source, a negative budget or a cache that cannot be written."""
    from physlayout.transforms.legalize_layout import is_graph_function

    if not any(isinstance(op, func.FuncOp) and is_graph_function(op) for op in source.ops):
        raise DiagnosticException(
            "tune applies to graph-level IR (functions over tensors): buffer-level kernels "
            "take the schedules written on them (#layout.schedule, docs/schedules.md)"
        )
    if budget < 0 or math.isnan(budget):
        raise DiagnosticException(
            f"the tuning budget must be a number of seconds >= 0, got {budget:g}"
        )
    path = cache if cache is not None else tuning_cache_path()
    tuning = TuningCache.load(path, notes)
    module, device = unscheduled_module(source, pipeline, runtime.limits, precision)
    cases = distinct_kernels(module, entry)
    report = Tuner(runtime, device, budget, notes=notes).tune(cases)
    tuning.update(DeviceKey.of(runtime), report.tuned())
    tuning.save(create_parents=cache is None)
    return report
