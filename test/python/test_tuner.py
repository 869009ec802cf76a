"""The schedule tuner (`runtime/tuner.py`) and its cache (`runtime/tuning_cache.py`): tuned
schedules reach the compiled kernels (and the compile cache's key), values do not change,
the budget bounds the candidates, foreign, stale and corrupt caches are ignored with a
note, the value check discards a wrong kernel, bad paths are diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.rewriter import Rewriter

import physlayout
from physlayout.dialects.layout_schedule import ScheduleAttr
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import parse_module
from physlayout.runtime.plan import Launch
from physlayout.runtime.tuner import (
    CandidateFailed,
    KernelBench,
    Tuner,
    candidates,
    distinct_kernels,
    tune_model,
    unscheduled,
    unscheduled_module,
    whole_lanes,
)
from physlayout.runtime.tuning_cache import DeviceKey, TuningCache
from physlayout.transforms.given_schedules import (
    kernel_signature,
    parse_schedule_table,
    parse_schedule_text,
    schedule_table_text,
)
from physlayout.transforms.schedule_heuristic import DeviceModel

# A 3x3 conv over 5 channels (a padded channel block) and 7 columns (primes), then two 1x1
# convs of one shape: two distinct kernels, the second launched twice.
MODEL = """module {
  func.func @main(%x: tensor<1x5x7x7xf32>, %w: tensor<6x5x3x3xf32>, %v: tensor<6x6x1x1xf32>, %u: tensor<6x6x1x1xf32>) -> tensor<1x6x5x5xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x6x5x5xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
    %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x5x7x7xf32>, tensor<6x5x3x3xf32>) outs(%1 : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
    %3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%2, %v : tensor<1x6x5x5xf32>, tensor<6x6x1x1xf32>) outs(%1 : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
    %4 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%3, %u : tensor<1x6x5x5xf32>, tensor<6x6x1x1xf32>) outs(%1 : tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
    return %4 : tensor<1x6x5x5xf32>
  }
}
"""
PIPELINE = "physlayout-adreno{lift-params=true}"


@pytest.fixture(scope="module")
def runtime() -> OpenCLRuntime:
    # as `physlayout.compile` holds textures (auto): the tuning cache keys entries by storage
    return OpenCLRuntime(texture_storage="auto")


@pytest.fixture
def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    shapes = {"x": (1, 5, 7, 7), "w": (6, 5, 3, 3), "v": (6, 6, 1, 1), "u": (6, 6, 1, 1)}
    return {k: rng.uniform(-1, 1, s).astype(np.float32) for k, s in shapes.items()}


@pytest.fixture(scope="module")
def kernels(runtime: OpenCLRuntime) -> tuple[list[Any], DeviceModel]:
    module, device = unscheduled_module(parse_module(MODEL), PIPELINE, runtime.limits)
    return distinct_kernels(module, "main"), device


def _compile(cache: Path | bool, inputs: dict[str, np.ndarray], **options: Any) -> Any:
    params = {k: v for k, v in inputs.items() if k != "x"}
    return physlayout.compile(MODEL, params=params, tuning_cache=cache, **options)


def _launches(model: Any) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    return {
        s.kernel: (s.global_size, s.local_size) for s in model.plan.steps if isinstance(s, Launch)
    }


def _plant(path: Path, kernel: str, schedule: str) -> None:
    """Give `kernel`'s entry in the cache at `path` another schedule."""
    data = json.loads(path.read_text())
    (entry,) = [e for e in data["entries"] if e["kernel"] == kernel]
    entry["schedule"] = schedule
    path.write_text(json.dumps(data))


# Signatures and tables ---------------------------------------------------------------------


def test_distinct_kernels_by_signature(kernels: tuple[list[Any], DeviceModel]) -> None:
    cases, _ = kernels
    assert sorted(c.launches for c in cases) == [1, 2]
    assert len({c.signature for c in cases}) == 2
    for case in cases:  # the signature ignores names and schedules, not extents
        copy = case.kernel.clone()
        copy.attributes["layout.schedule"] = ScheduleAttr.of([1, 2, 1, 1])
        for op in copy.walk():
            for result in op.results:
                result.name_hint = "renamed"
        assert kernel_signature(copy) == case.signature


def test_signature_changes_with_the_extents() -> None:
    shorter = MODEL.replace("7x7", "8x8").replace("5x5", "6x6")
    module, _ = unscheduled_module(parse_module(shorter), PIPELINE, OpenCLRuntime().limits)
    module_7, _ = unscheduled_module(parse_module(MODEL), PIPELINE, OpenCLRuntime().limits)
    signatures = {c.signature for c in distinct_kernels(module, "main")}
    assert not signatures & {c.signature for c in distinct_kernels(module_7, "main")}


def test_schedule_table_round_trip() -> None:
    table = {
        "ab12": ScheduleAttr.of([1, 2, 1, 4], [1, 1, 4, 16]),
        "00ff": ScheduleAttr.of([3], (), 9),
    }
    text = schedule_table_text(table)
    assert text == "00ff=3/u9;ab12=1x2x1x4/1x1x4x16"
    assert parse_schedule_table(text) == table
    for bad in ("1x0", "2/3/4", "x", "1/u-1"):
        with pytest.raises(Exception, match="schedule"):
            parse_schedule_text(bad)


# The cache round trip -----------------------------------------------------------------------


def test_tune_then_compile_uses_the_tuned_schedule(
    tmp_path: Path, runtime: OpenCLRuntime, inputs: dict[str, np.ndarray]
) -> None:
    cache = tmp_path / "tuning.json"
    report = tune_model(parse_module(MODEL), "main", runtime, pipeline=PIPELINE, budget=1.0,
                        cache=cache)  # fmt: skip
    data = json.loads(cache.read_text())
    key = DeviceKey.of(runtime)
    assert {(e["device"], e["driver"]) for e in data["entries"]} == {(key.device, key.driver)}
    assert {e["signature"] for e in data["entries"]} == {k.case.signature for k in report.kernels}
    for k in report.kernels:  # the fastest of what was timed
        assert k.best_seconds <= min(k.unscheduled_seconds, k.heuristic_seconds)
    heuristic = _compile(False, inputs)
    # a schedule the heuristic would not choose: the compiled kernel takes it
    name = max(report.kernels, key=lambda k: k.case.launches).case.name
    _plant(cache, name, "1x1x5x1/1x1x1x1")
    tuned = _compile(cache, inputs)
    launches, before = _launches(tuned), _launches(heuristic)
    # 5 rows in one work-item: 5 columns x 2 channel blocks of work-items, groups of one
    assert launches[name] == ((5, 2), (1, 1)) != before[name]
    tuned_names = {k.case.name for k in report.kernels}
    assert {k for k in launches if launches[k] != before[k]} <= tuned_names
    x = inputs["x"]
    assert np.array_equal(tuned(x), heuristic(x))  # tiles keep every value bit-exact
    # the tuned values also equal the graph's
    from physlayout.semantics.graph_evaluator import run_graph

    (want,) = run_graph(parse_module(MODEL), "main", [inputs[k] for k in "xwvu"])
    assert np.max(np.abs(tuned(x) - want)) <= 1e-5 * np.max(np.abs(want))


def test_compile_cache_key_follows_the_tuned_schedules(
    tmp_path: Path, runtime: OpenCLRuntime, inputs: dict[str, np.ndarray]
) -> None:
    from physlayout.runtime.compile_cache import cache_key

    key = cache_key(MODEL, None, runtime.limits, PIPELINE, "f32", False)
    assert cache_key(MODEL, None, runtime.limits, PIPELINE, "f32", False, "ab=1x2") != key
    cache = tmp_path / "tuning.json"
    tune_model(parse_module(MODEL), "main", runtime, pipeline=PIPELINE, budget=0, cache=cache)
    name = next(e["kernel"] for e in json.loads(cache.read_text())["entries"])
    shapes: list[Any] = []
    for schedule in ("1x1x5x1/1x1x1x1", "1x2x1x1/1x1x1x1", "1x1x5x1/1x1x1x1"):
        _plant(cache, name, schedule)
        shapes.append(_launches(_compile(cache, inputs))[name])  # compile cache on (the default)
    assert shapes == [((5, 2), (1, 1)), ((5, 5), (1, 1)), ((5, 2), (1, 1))]


# Foreign, stale, corrupt ---------------------------------------------------------------------


@pytest.fixture
def tuned_cache(tmp_path: Path, runtime: OpenCLRuntime) -> Iterator[Path]:
    cache = tmp_path / "tuning.json"
    tune_model(parse_module(MODEL), "main", runtime, pipeline=PIPELINE, budget=0, cache=cache)
    data = json.loads(cache.read_text())
    for entry in data["entries"]:
        entry["schedule"] = "1x1x5x1/1x1x1x1"
    cache.write_text(json.dumps(data))
    yield cache


def test_a_foreign_entry_is_ignored_with_a_note(
    tuned_cache: Path, inputs: dict[str, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    planted = _launches(_compile(tuned_cache, inputs))
    heuristic = _launches(_compile(False, inputs))
    assert planted != heuristic
    data = json.loads(tuned_cache.read_text())
    for entry in data["entries"]:
        entry["device"] = "Adreno (TM) 740 (QUALCOMM Snapdragon(TM))"
    tuned_cache.write_text(json.dumps(data))
    capsys.readouterr()
    assert _launches(_compile(tuned_cache, inputs)) == heuristic
    notes = capsys.readouterr().err.strip().splitlines()
    assert len(notes) == 1
    assert "ignoring 2 entries of other devices or drivers (e.g. Adreno (TM) 740" in notes[0]


def test_a_stale_entry_is_ignored_with_a_note(
    tuned_cache: Path, inputs: dict[str, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(tuned_cache.read_text())
    data["entries"][0]["version"] = 0
    tuned_cache.write_text(json.dumps(data))
    capsys.readouterr()
    launches = _launches(_compile(tuned_cache, inputs))
    assert "ignoring 1 entry of schedule format 0" in capsys.readouterr().err
    # the other entry is still used, the stale one's kernel gets the heuristic's
    heuristic = _launches(_compile(False, inputs))
    differing = [k for k in launches if launches[k] != heuristic[k]]
    assert len(differing) >= 1 and len(differing) < len(launches)


@pytest.mark.parametrize(
    "text", ["{not json", "[]", '{"format": "physlayout-tuning-cache", "version": 1, "entries": [{}]}',
             '{"format": "physlayout-tuning-cache", "version": 99, "entries": []}'],
)  # fmt: skip
def test_a_corrupt_cache_is_ignored_with_a_note(
    tmp_path: Path, text: str, inputs: dict[str, np.ndarray], capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "tuning.json"
    cache.write_text(text)
    heuristic = _launches(_compile(False, inputs))
    capsys.readouterr()
    assert _launches(_compile(cache, inputs)) == heuristic
    assert f"note: ignoring the tuning cache {cache}" in capsys.readouterr().err


def test_tuning_over_a_corrupt_cache_rewrites_it(tmp_path: Path, runtime: OpenCLRuntime) -> None:
    cache = tmp_path / "tuning.json"
    cache.write_text("{not json")
    tune_model(parse_module(MODEL), "main", runtime, pipeline=PIPELINE, budget=0, cache=cache)
    assert len(TuningCache.load(cache).entries) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["tuning.json"]  # no temporary file left


# The budget and the safety net ---------------------------------------------------------------


def _all_candidates(case: Any, device: DeviceModel) -> int:
    seen: set[ScheduleAttr] = set()
    for schedule in candidates(case.kernel, device, lambda: unscheduled(case.kernel)):
        seen.add(schedule)
    return len(seen)


def test_the_budget_bounds_the_timed_candidates(
    runtime: OpenCLRuntime, kernels: tuple[list[Any], DeviceModel]
) -> None:
    cases, device = kernels
    ticks = [0.0]

    def clock() -> float:
        return ticks[0]

    def measure(_bench: KernelBench, schedule: ScheduleAttr) -> float:
        ticks[0] += 1.0  # each candidate costs one second
        return 1.0 / (1 + sum(schedule.tile))

    def timed(budget: float) -> list[int]:
        ticks[0] = 0.0
        tuner = Tuner(runtime, device, budget, clock=clock, measure=measure)
        return [k.timed for k in tuner.tune(cases).kernels]

    mandatory = timed(0.0)
    assert all(1 <= n <= 2 for n in mandatory)
    assert sum(timed(sum(mandatory) + 3.0)) == sum(mandatory) + 3
    everything = timed(1e9)  # every candidate (none left to time with more)
    assert everything == timed(1e12) and sum(everything) > sum(mandatory) + 3
    assert all(n <= _all_candidates(c, device) + 3 for n, c in zip(everything, cases, strict=True))


def test_a_failing_candidate_is_discarded(
    runtime: OpenCLRuntime,
    kernels: tuple[list[Any], DeviceModel],
    capsys: pytest.CaptureFixture[str],
) -> None:
    cases, device = kernels

    def measure(_bench: KernelBench, schedule: ScheduleAttr) -> float:
        if schedule.workgroup:  # planted: every candidate but the unscheduled one "fails"
            raise CandidateFailed("planted")
        return 1.0 / (1 + schedule.unroll)  # ... and unrolling would be fastest

    report = Tuner(runtime, device, 1e9, measure=measure).tune(cases)
    assert report.discarded > 0
    for k in report.kernels:
        assert not k.best.workgroup and k.best.unroll == 9
        assert len(k.discarded) + k.timed == _all_candidates(k.case, device)
        assert all(not s.startswith(("1x1x1x1/u", "1x1x1x1:")) for s in k.discarded)
    assert "discarded the schedule" in capsys.readouterr().err


def test_the_value_check_catches_a_wrong_kernel(
    runtime: OpenCLRuntime, kernels: tuple[list[Any], DeviceModel]
) -> None:
    cases, device = kernels
    case = cases[0]
    bench = KernelBench(runtime, case.kernel)
    bench.measure(unscheduled(case.kernel), repeats=1)
    assert bench.measure(candidates(case.kernel, device, lambda: unscheduled(case.kernel))
                         .__next__(), repeats=1) > 0  # fmt: skip
    broken = case.kernel.clone()  # planted: the reduction subtracts its last product
    add = [op for op in broken.walk() if isinstance(op, arith.AddfOp)][-1]
    Rewriter.replace_op(add, arith.SubfOp(add.lhs, add.rhs))
    planted = KernelBench(runtime, broken, inputs=bench.inputs, reference=bench.reference)
    with pytest.raises(CandidateFailed, match="differs from the unscheduled kernel's"):
        planted.measure(unscheduled(broken), repeats=1)


# The command line ---------------------------------------------------------------------------


def _physlayout(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "physlayout"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_cli_bad_tuning_cache_paths(tmp_path: Path) -> None:
    model = tmp_path / "model.mlir"
    model.write_text(MODEL)
    done = _physlayout("tune", str(model), "--budget", "0", "--tuning-cache",
                       str(tmp_path / "missing" / "t.json"))  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"cannot write the tuning cache {tmp_path / 'missing' / 't.json'}" in done.stderr
    done = _physlayout("tune", str(model), "--budget", "0", "--tuning-cache", str(tmp_path))
    assert done.returncode == 1 and f"tuning cache {tmp_path}: is a directory" in done.stderr
    done = _physlayout("compile", str(model), "-o", str(tmp_path / "out"), "--tuning-cache",
                       str(tmp_path / "t.json"))  # fmt: skip
    assert (
        done.returncode == 1 and "--tuning-cache: tuned schedules belong to a device" in done.stderr
    )
    done = _physlayout("tune", str(model), "--budget", "-1")
    assert done.returncode == 1 and "budget must be a number of seconds >= 0" in done.stderr
    buffer_level = Path(__file__).resolve().parents[2] / "examples" / "relu_texture.mlir"
    done = _physlayout("tune", str(buffer_level))
    assert done.returncode == 1 and "tune applies to graph-level IR" in done.stderr


def test_cli_tune_then_compile(tmp_path: Path) -> None:
    model = tmp_path / "model.mlir"
    model.write_text(MODEL)
    cache = tmp_path / "t.json"
    done = _physlayout("tune", str(model), "--budget", "0", "--tuning-cache", str(cache),
                       "--device", ":0")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "tuned 2 distinct kernel(s)" in done.stdout and f"wrote {cache}" in done.stdout
    for entry in json.loads(cache.read_text())["entries"]:
        assert entry["schedule"] in done.stdout
    data = json.loads(cache.read_text())
    for entry in data["entries"]:
        entry["schedule"] = "1x1x5x1/1x1x1x1"
    cache.write_text(json.dumps(data))
    out = tmp_path / "out"
    done = _physlayout("compile", str(model), "-o", str(out), "--device", ":0", "--tuning-cache",
                       str(cache))  # fmt: skip
    assert done.returncode == 0, done.stderr
    from physlayout.runtime.artifact import load_artifact

    sizes = {s.global_size for s in load_artifact(str(out)).plan.steps if isinstance(s, Launch)}
    assert (5, 2) in sizes  # the tuned 1x1x5x1 tiles of both convs


def test_whole_lanes_candidate() -> None:
    # a 3-channel result stored lane by lane (autoencoder_transpose's last conv: loop axes
    # batch, channel block, rows, columns, lanes): the heuristic's 4x8 pixel tile gets the
    # 4 lanes too, its largest extents halved into a budget of 32 scalar accumulators
    trips = (1, 1, 32, 32, 4)
    assert whole_lanes((1, 1, 4, 8, 1), trips, 32) == (1, 1, 2, 4, 4)
    assert whole_lanes((1, 1, 4, 8, 1), trips, 128) == (1, 1, 4, 8, 4)
    assert whole_lanes((1, 1, 4, 8, 2), trips, 64) == (1, 1, 4, 4, 4)
    assert whole_lanes((1, 1, 4, 8, 4), trips, 32) is None  # already whole
    assert whole_lanes((1, 1, 4, 8), (1, 16, 32, 32), 32) is None  # columns, not lanes
    assert whole_lanes((1, 1, 1, 1, 1), trips, 2) is None  # 4 lanes do not fit in 2
    # the innermost axis of more than one iteration: a trailing extent of 1 is skipped
    assert whole_lanes((1, 8, 1, 1), (1, 32, 3, 1), 32) == (1, 8, 3, 1)
