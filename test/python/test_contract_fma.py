"""Kernel speed options of issue 42: contraction (`contract-fma`, `fp_contract`), the register
budget of a CPU device holding textures as buffers, and the tuning cache's build key.

Contraction changes values (one rounding per multiply-add instead of two), so it is checked
on values within 1e-5 relative (of the largest magnitude) of the uncontracted module, on the
buffer evaluator (random models: extents of 1, primes, 3- and 5-channel textures, random
tiles larger than their extents) and on the OpenCL device (the contracted kernels must
differ from the bit-exact ones somewhere: the contraction really ran). A planted bug (the
fused op multiplying the wrong operands) must fail the same check.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz.graphs import Graph
from fuzz.models import models
from hypothesis import HealthCheck, given, settings
from test_apply_schedules import (
    CONV_RELU_CONV,
    PHASES,
    RFC_EXAMPLE,
    evaluate,
    every_kernel,
    host_inputs,
    lowered,
    run_on_device,
    scheduled,
)
from xdsl.dialects import func, math
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

import physlayout
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import device_pipeline, parse_module
from physlayout.transforms import contract_fma
from physlayout.transforms.apply_schedules import ApplySchedulesPass, kernel_loop
from physlayout.transforms.contract_fma import ContractFmaPass
from physlayout.transforms.schedule_heuristic import (
    CPU_BUFFER_REGISTERS,
    DeviceModel,
    default_schedule,
    ranked_tiles,
    reduction_profile,
)
from physlayout.universe import make_context

RTOL = 1e-5


def contracted(module: ModuleOp) -> ModuleOp:
    copy = module.clone()
    ContractFmaPass(scalars=True).apply(make_context(), copy)
    return copy


def fused_ops(module: ModuleOp) -> int:
    return sum(isinstance(op, math.FmaOp) for op in module.walk())


def assert_close(expected: Sequence[np.ndarray], got: Sequence[np.ndarray]) -> None:
    for k, (e, g) in enumerate(zip(expected, got, strict=True)):
        scale = max(1.0, float(np.max(np.abs(e)))) if e.size else 1.0
        error = float(np.max(np.abs(g.astype(np.float64) - e))) if e.size else 0.0
        assert error <= RTOL * scale, f"parameter {k}: {error:g} > {RTOL:g} x {scale:g}"


# On the evaluator ---------------------------------------------------------------------------


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(model=models())
def test_contraction_stays_within_1e5_on_random_models(model: Graph) -> None:
    module = lowered(model.text)
    tiles = every_kernel(module, (1, 3, 2, 8))  # tiles past their extents included
    tiled = scheduled(module, tiles)
    inputs = host_inputs(module, 5)
    assert_close(evaluate(module, inputs), evaluate(contracted(tiled), inputs))


def test_contraction_fuses_every_accumulation_of_the_convs() -> None:
    module = scheduled(lowered(CONV_RELU_CONV), every_kernel(lowered(CONV_RELU_CONV), (1, 2, 1, 4)))
    fused = contracted(module)
    assert fused_ops(fused) > 0
    assert not any(op.name == "arith.mulf" for op in fused.walk())  # every product feeds an add
    assert str(contracted(fused)) == str(fused)  # idempotent


def test_planted_wrong_operands_fail_the_value_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """An `fma` of the wrong product (a * a + c instead of a * b + c) must fail on values."""

    fused = math.FmaOp

    def wrong(a: SSAValue, b: SSAValue, c: SSAValue) -> math.FmaOp:
        return fused(a, a, c)

    monkeypatch.setattr(contract_fma.math, "FmaOp", wrong)
    module = lowered(CONV_RELU_CONV)
    inputs = host_inputs(module, 2)
    with pytest.raises(AssertionError):
        assert_close(evaluate(module, inputs), evaluate(contracted(module), inputs))


# On the device -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def contracting() -> OpenCLRuntime:
    return OpenCLRuntime(texture_storage="buffer", fp_contract=True)


@pytest.mark.parametrize("tile", [None, (1, 2, 1, 4), (1, 3, 2, 8), (1, 1, 5, 2)])
def test_contracted_kernels_on_the_device(
    runtime: OpenCLRuntime, contracting: OpenCLRuntime, tile: tuple[int, ...] | None
) -> None:
    module = lowered(CONV_RELU_CONV)
    if tile is not None:
        module = scheduled(module, every_kernel(module, tile))
    inputs = host_inputs(module, 4)
    reference = evaluate(module, inputs)
    exact = run_on_device(runtime, module, inputs)
    fused = run_on_device(contracting, module, inputs)
    for e, x in zip(reference, exact, strict=True):
        assert np.array_equal(e, x)  # off: bit-exact with the evaluator
    assert_close(reference, fused)
    assert any(not np.array_equal(e, f) for e, f in zip(reference, fused, strict=True))


def test_compile_option_reaches_the_kernels() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (1, 8, 7, 9)).astype(np.float32)
    params = {"w1": rng.uniform(-1, 1, (12, 8, 3, 3)).astype(np.float32),
              "w2": rng.uniform(-1, 1, (5, 12, 3, 2)).astype(np.float32)}  # fmt: skip
    options: dict[str, Any] = {"params": params, "tuning_cache": False, "cache": False}
    plain = physlayout.compile(CONV_RELU_CONV, texture_storage="buffer", **options)
    fused = physlayout.compile(CONV_RELU_CONV, texture_storage="buffer", fp_contract=True, **options)
    assert "fma(" in fused.kernels and "fma(" not in plain.kernels
    assert "#pragma OPENCL FP_CONTRACT OFF" in plain.kernels
    expected = np.asarray(plain(x))
    got = np.asarray(fused(x))
    assert_close([expected.astype(np.float64)], [got])
    assert not np.array_equal(expected, got)


# The register budget of buffers on a CPU ---------------------------------------------------------


def test_buffers_on_a_cpu_get_the_smaller_register_budget() -> None:
    buffers = OpenCLRuntime(texture_storage="buffer")
    if not buffers.device.type & cl_device_type().CPU:
        pytest.skip("not a CPU device")
    images = OpenCLRuntime(texture_storage="image")
    assert buffers.limits.registers == CPU_BUFFER_REGISTERS
    assert images.limits.registers is None
    for spec, limits, registers in (
        ("physlayout-adreno", buffers.limits, CPU_BUFFER_REGISTERS),
        ("physlayout-adreno{registers=64}", buffers.limits, 64),  # a spec's own value stays
        ("physlayout-adreno", images.limits, DeviceModel().registers),
    ):
        (adreno,) = device_pipeline(spec, limits).passes
        assert isinstance(adreno, PhyslayoutAdrenoPass)
        assert adreno.registers == registers


def cl_device_type() -> Any:
    from physlayout.runtime.device import pyopencl_module

    return pyopencl_module().device_type


def test_the_rfc_conv_gets_at_most_eight_float4_accumulators_for_buffers() -> None:
    module = lowered(RFC_EXAMPLE.read_text())
    loops = [loop for op in module.ops if isinstance(op, func.FuncOp)
             if (loop := kernel_loop(op)) is not None]  # fmt: skip
    small = [default_schedule(loop, DeviceModel(registers=CPU_BUFFER_REGISTERS)) for loop in loops]
    wide = [default_schedule(loop, DeviceModel()) for loop in loops]
    assert any(s is not None for s in small)
    for loop, schedule in zip(loops, small, strict=True):
        profile = reduction_profile(loop)
        if schedule is not None and profile is not None:
            # the accumulators' 32-bit lanes (conv1: float4 per element, 8 at most)
            assert int(np.prod(schedule.tile)) * profile[2] <= CPU_BUFFER_REGISTERS
    assert [s and s.tile for s in small] != [s and s.tile for s in wide]


def test_the_smaller_budget_keeps_schedules_exact() -> None:
    module = lowered(CONV_RELU_CONV)
    tiled = module.clone()
    ApplySchedulesPass(default=True, compute_units=1, registers=CPU_BUFFER_REGISTERS).apply(
        make_context(), tiled
    )
    assert "layout.scheduled" in str(tiled)
    inputs = host_inputs(module, 0)
    for e, g in zip(evaluate(module, inputs), evaluate(tiled, inputs), strict=True):
        assert np.array_equal(e, g, equal_nan=True)


def test_the_tuner_also_times_the_default_budget_tile() -> None:
    """With the CPU budget for buffers the tuner's third candidate is the heuristic's tile
    at the default budget (the first optional one: kernels the small budget misjudges get
    it back); with the default budget there is no such extra candidate."""
    from physlayout.runtime.tuner import candidates

    module = lowered(RFC_EXAMPLE.read_text())
    (conv1,) = [op for op in module.ops
                if isinstance(op, func.FuncOp) and op.sym_name.data == "main_fused_relu"]  # fmt: skip
    loop = kernel_loop(conv1)
    assert loop is not None
    small = DeviceModel(registers=CPU_BUFFER_REGISTERS)
    roomy = default_schedule(loop, DeviceModel())
    assert roomy is not None and roomy.tile != (default_schedule(loop, small) or roomy).tile
    timed = list(itertools.islice(candidates(conv1, small, lambda: roomy), 3))
    assert timed[2].tile == roomy.tile
    timed = list(itertools.islice(candidates(conv1, DeviceModel(), lambda: roomy), 3))
    wider = DeviceModel(registers=2 * DeviceModel().registers)
    assert timed[2].tile == ranked_tiles(loop, wider, items_per_unit=1)[0]


# The tuning cache's build key ---------------------------------------------------------------------


def test_an_entry_of_the_other_texture_storage_is_ignored_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_tuner import MODEL, PIPELINE, _launches

    from physlayout.runtime.tuner import tune_model
    from physlayout.runtime.tuning_cache import DeviceKey, TuningCache

    runtime = OpenCLRuntime(texture_storage="buffer")
    cache = tmp_path / "tuning.json"
    tune_model(parse_module(MODEL), "main", runtime, pipeline=PIPELINE, budget=0, cache=cache)
    data = json.loads(cache.read_text())
    assert {e["texture_storage"] for e in data["entries"]} == {"buffer"}
    assert {e["fp_contract"] for e in data["entries"]} == {False}
    for entry in data["entries"]:
        entry["schedule"] = "1x1x5x1/1x1x1x1"
    cache.write_text(json.dumps(data))
    rng = np.random.default_rng(3)
    shapes = {"w": (6, 5, 3, 3), "v": (6, 6, 1, 1), "u": (6, 6, 1, 1)}
    params = {k: rng.uniform(-1, 1, s).astype(np.float32) for k, s in shapes.items()}

    def launches(**options: Any) -> Any:
        return _launches(physlayout.compile(MODEL, params=params, texture_storage="buffer",
                                            **options))  # fmt: skip

    planted = launches(tuning_cache=cache)
    heuristic = launches(tuning_cache=False)
    assert planted != heuristic
    capsys.readouterr()
    # the same entries, read for images or for contracted kernels: ignored with a note
    key = DeviceKey.of(runtime)
    for other in (dataclasses.replace(key, texture_storage="image"),
                  dataclasses.replace(key, fp_contract=True)):  # fmt: skip
        assert TuningCache.load(cache).schedules_for(other) == {}
        notes = capsys.readouterr().err.strip().splitlines()
        assert len(notes) == 1 and "tuned with other build settings" in notes[0]
        assert "textures as buffer, fp-contract off" in notes[0]
    assert launches(tuning_cache=cache, fp_contract=True) == heuristic
    assert "ignoring 2 entries tuned with other build settings" in capsys.readouterr().err
    # an entry written before the storage was recorded counts as another build
    for entry in data["entries"]:
        del entry["texture_storage"]
    cache.write_text(json.dumps(data))
    assert launches(tuning_cache=cache) == heuristic
    assert "textures as unrecorded" in capsys.readouterr().err


# The command line -----------------------------------------------------------------------------


def test_cli_fp_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`run --fp-contract --check` prints fma kernels that pass at the default rtol 1e-5;
    `compile --fp-contract` records it in the plan; running that artifact refuses the flag
    (it runs as compiled)."""
    from test_deploy import physlayout as command

    source = tmp_path / "conv_relu_conv.mlir"
    source.write_text(CONV_RELU_CONV)
    code, out, err = command("run", str(source), "--random-inputs", "--check", "--fp-contract",
                             "--texture-storage", "buffer", "--print-opencl",
                             "--tuning-cache", str(tmp_path / "none.json"), capsys=capsys)  # fmt: skip
    assert code == 0, err
    assert "fma(" in out and "check: passed (rtol 1e-05" in out
    code, out, err = command("compile", str(source), "-o", str(tmp_path / "out"), "--fp-contract",
                             "--no-cache", capsys=capsys)  # fmt: skip
    assert code == 0, err
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert plan["options"]["fp_contract"] is True
    assert "fma(" in (tmp_path / "out" / "kernels.cl").read_text()
    code, _, err = command("run", str(tmp_path / "out"), "--fp-contract", capsys=capsys)
    assert code == 1 and "--fp-contract" in err and "runs as compiled" in err
