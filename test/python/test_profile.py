"""Kernel stats (`runtime/kernel_stats.py`: multiplies per launch from the IR, source lines)
and the profile and trace of a run (`runtime/profile.py`, `physlayout run --profile
--trace`): the counts equal the source's multiply-adds, the table's rates are the counts
over the measured times, the trace holds every launch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FunctionType, IndexType, ModuleOp, f32
from xdsl.ir import Block, Region

from physlayout.runtime.host import KernelTime, RunResult
from physlayout.runtime.kernel_stats import KernelStats, kernel_stats

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "models" / "bottleneck.mlir"
BOTTLENECK_CONVS = {
    "main_fused_padded": 1 * 16 * 8 * 8 * 64,  # conv1: 1x1, 64 -> 16
    "main_fused": 1 * 16 * 8 * 8 * 16 * 9,  # conv2: 3x3, 16 -> 16
    "main_fused_1": 1 * 64 * 8 * 8 * 16,  # conv3: 1x1, 16 -> 64
}


def _loop_kernel(upper: Any) -> ModuleOp:
    """`for i in [0, upper): x * x` in a function @k (a constant or an argument bound)."""
    block = Block(arg_types=[IndexType(), f32])
    zero, one = arith.ConstantOp.from_int_and_width(0, IndexType()), arith.ConstantOp.from_int_and_width(1, IndexType())
    ops: list[Any] = [zero, one]
    if isinstance(upper, int):
        bound = arith.ConstantOp.from_int_and_width(upper, IndexType())
        ops.append(bound)
        upper_value = bound.result
    else:
        upper_value = block.args[0]
    body = Block(arg_types=[IndexType()])
    body.add_ops([arith.MulfOp(block.args[1], block.args[1]), scf.YieldOp()])
    ops += [scf.ForOp(zero.result, upper_value, one.result, [], Region(body)), func.ReturnOp()]
    block.add_ops(ops)
    function = func.FuncOp("k", FunctionType.from_lists([IndexType(), f32], []), Region(block))
    return ModuleOp([function])


def test_multiplies_are_weighted_by_constant_trip_counts() -> None:
    assert kernel_stats(_loop_kernel(7), ["k"])["k"].multiplies == 7
    assert kernel_stats(_loop_kernel(0), ["k"])["k"].multiplies == 0


def test_a_loop_with_a_bound_that_is_no_constant_gives_no_count() -> None:
    assert kernel_stats(_loop_kernel("argument"), ["k"])["k"].multiplies is None


GUARDED = """
func.func @k(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i) = (%c0) to (%c5) step (%c1) {
    scf.for %j = %c0 to %c3 step %c1 {
      %t = arith.muli %j, %c2 : index
      %r = arith.remsi %i, %c2 : index
      %k = arith.addi %t, %r : index
      %in = arith.cmpi ult, %k, %c3 : index
      %y = scf.if %in -> (f32) {
        %m = arith.mulf %x, %x : f32
        scf.yield %m : f32
      } else {
        %m1 = arith.mulf %x, %x : f32
        %m2 = arith.mulf %m1, %x : f32
        scf.yield %m2 : f32
      }
      %big = arith.cmpi ult, %n, %c3 : index
      scf.if %big {
        %m3 = arith.mulf %y, %x : f32
      }
    }
    scf.reduce
  }
  func.return
}
"""
"""A transposed conv's tap guard: ``2 * j + i mod 2 < 3`` holds for 2 taps of the even
``i`` and 1 of the odd ones."""


def test_guarded_multiplies_count_the_iterations_that_take_their_branch() -> None:
    """Then branch: i = 0, 2, 4 with j = 0, 1 and i = 1, 3 with j = 0: 8 of the 15
    iterations; the else branch's two multiplies the other 7; a condition on an argument
    is not known, so its multiply counts in all 15 (an upper bound): 8 + 14 + 15."""
    from physlayout.runtime.opencl import parse_module

    assert kernel_stats(parse_module(GUARDED), ["k"])["k"].multiplies == 8 + 2 * 7 + 15


def test_stats_round_trip_and_refuse_garbage() -> None:
    stats = KernelStats(12, ("a.mlir:3-7",))
    assert KernelStats.from_json(json.loads(json.dumps(stats.to_json()))) == stats
    with pytest.raises(ValueError):
        KernelStats.from_json({"multiplies": "many"})


@pytest.fixture(scope="module")
def model() -> Any:
    import runpy

    try:
        from physlayout.runtime.device import OpenCLRuntime

        OpenCLRuntime().build("__kernel void k(__global float *a) { a[0] = 1.0f; }")
    except Exception as err:
        pytest.skip(f"no OpenCL device: {err}")
    import physlayout

    arrays = runpy.run_path(str(MODEL.parent / "inputs.py"))["make_inputs"](
        str(MODEL.with_suffix(".args.txt")), seed=0
    )
    x = arrays.pop("x")
    compiled = physlayout.compile(str(MODEL), params=arrays)
    compiled(x)
    return compiled


def test_the_convolutions_count_their_multiply_adds_and_name_their_lines(model: Any) -> None:
    stats = model.artifact.stats
    for name, macs in BOTTLENECK_CONVS.items():
        assert stats[name].multiplies == macs, name
    lines = MODEL.read_text().splitlines()
    for name in BOTTLENECK_CONVS:
        (source,) = stats[name].sources
        file, _, numbers = source.partition(":")
        assert file == "bottleneck.mlir"
        first = int(numbers.split(",")[0].split("-")[0])
        assert "linalg.conv_2d_nchw_fchw" in lines[first - 1]


def test_the_profile_divides_counts_by_times(model: Any) -> None:
    from physlayout.runtime.profile import Peaks, kernel_profiles, profile_lines

    result = RunResult([
        KernelTime(name, name, 1e-3, (1,), k * 1e-3) for k, name in enumerate(BOTTLENECK_CONVS)
    ])  # fmt: skip
    rows = {p.function: p for p in kernel_profiles(model.plan, model.artifact.stats, result)}
    assert {n: p.multiplies for n, p in rows.items()} == BOTTLENECK_CONVS
    lines = profile_lines(model.plan, model.artifact.stats, result, Peaks(10.0, 1.0))
    conv2 = next(line for line in lines if line.strip().startswith("main_fused "))
    gmacs = BOTTLENECK_CONVS["main_fused"] / 1e-3 * 1e-9
    assert f"{gmacs:.2f}" in conv2.split() and f"{gmacs / 10:.1%}" in conv2.split()
    assert "bottleneck.mlir:" in conv2


def test_run_profile_and_trace(model: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import runpy

    from physlayout.cli import main

    model.save(str(tmp_path / "out"))

    arrays = runpy.run_path(str(MODEL.parent / "inputs.py"))["make_inputs"](
        str(MODEL.with_suffix(".args.txt")), seed=0
    )
    np.savez(tmp_path / "in.npz", **arrays)
    trace = tmp_path / "trace.json"
    with pytest.raises(SystemExit) as done:
        main(["run", str(tmp_path / "out"), "--inputs", str(tmp_path / "in.npz"), "--profile",
              "--trace", str(trace)])  # fmt: skip
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "measured peaks:" in out and "GMAC/s (f32 FMA)" in out
    for name in BOTTLENECK_CONVS:
        assert any(line.strip().startswith(name + " ") for line in out.splitlines())
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    assert len(events) == model.launches
    assert all(e["dur"] > 0 and e["ts"] >= 0 for e in events)
    assert events[0]["ts"] == 0


def test_profile_refused_for_buffer_level_files(capsys: pytest.CaptureFixture[str]) -> None:
    from physlayout.cli import main

    with pytest.raises(SystemExit):
        main(["run", str(ROOT / "examples" / "relu_texture.mlir"), "--profile"])
    assert "--profile applies to graph-level IR" in capsys.readouterr().err
