"""The Python runner's fast paths (`runtime/host.PlanRunner`, `runtime/device.DeviceStorage`)
do what the plain ones do: sequences made ready once (found by identity, or by equality for
an equal sequence), buffer copies through pyopencl's functions under `enqueue_copy` or, where
a pyopencl lacks them, through `enqueue_copy`, and uploads that are not waited for."""

from __future__ import annotations

import types

import numpy as np

from physlayout.runtime.device import OpenCLRuntime, _buffer_copies, pyopencl_module
from physlayout.runtime.host import PlanRunner
from physlayout.runtime.opencl import compile_module
from physlayout.runtime.plan_builder import build_plan

DOUBLE = """
func.func @double(%x: !layout.buffer<7xf32>, %y: !layout.buffer<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c0 to %c7 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<7xf32>, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %y[%i] : !layout.buffer<7xf32>, f32
  }
  func.return
}
"""


def test_buffer_copies_with_and_without_the_direct_functions(runtime: OpenCLRuntime) -> None:
    cl = pyopencl_module()
    plain = types.SimpleNamespace(enqueue_copy=cl.enqueue_copy)  # a pyopencl without _cl
    storage = runtime.allocate("global", (5,), np.float32)
    for module in (cl, plain):
        write, read = _buffer_copies(module)
        data = np.arange(5, dtype=np.float32) * (3 if module is cl else 5)
        write(runtime.queue, storage.memory, data, is_blocking=False)
        out = np.zeros(5, np.float32)
        read(runtime.queue, storage.memory, out, is_blocking=True)
        np.testing.assert_array_equal(out, data)


def test_runs_reuse_their_ready_sequence_and_compute_each_input(runtime: OpenCLRuntime) -> None:
    compiled = compile_module(DOUBLE, runtime)
    plan = build_plan(compiled, "double")
    runner = PlanRunner(plan, runtime, compiled.cl_program, kernels=compiled.cl_kernels)
    first = runner.ready(plan.steps)
    assert runner.ready(plan.steps) is first
    assert runner.ready(tuple(list(plan.steps))) is first  # equal, not identical
    for seed in range(3):
        x = np.random.default_rng(seed).uniform(-1, 1, 7).astype(np.float32)
        result = runner.run(plan.steps, {"x": x})
        np.testing.assert_array_equal(result.outputs["y"], 2 * x)
        assert [t.function for t in result.times] == ["double"]
