"""f16 on the OpenCL target: HALF_FLOAT images and `half` need cl_khr_fp16. On a device
with it, f16 textures run and equal the numpy evaluator; on one without it (PoCL's CPU
device here) compiling is refused with a diagnostic naming the extension. The generated
text with the extension is checked by test/opencl/target-fp16.mlir."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import DiagnosticException

from physlayout.runtime.host import execute
from physlayout.runtime.opencl import OpenCLRuntime, compile_module
from physlayout.semantics.evaluator import run_function

FP16 = Path(__file__).resolve().parents[1] / "opencl/target-fp16.mlir"


def test_half_float_image_round_trip(runtime: OpenCLRuntime) -> None:
    """A texture of f16 is a HALF_FLOAT image (core OpenCL 1.2, no extension needed)."""
    if not runtime.limits.image_support:
        pytest.skip("no image support")
    data = np.random.default_rng(0).standard_normal((6, 12)).astype(np.float16)
    storage = runtime.allocate("texture", (6, 12), np.float16)
    storage.upload(data)
    assert np.array_equal(storage.download(), data)


def test_f16_refused_without_cl_khr_fp16(runtime: OpenCLRuntime) -> None:
    if runtime.limits.fp16:
        pytest.skip("the device has cl_khr_fp16")
    with pytest.raises(DiagnosticException, match=r"@relu_half: parameter %a: .*cl_khr_fp16"):
        compile_module(FP16.read_text(), runtime)


@pytest.mark.parametrize("name", ["relu_half", "channel_sum_half", "lane_half"])
def test_f16_textures_with_cl_khr_fp16(runtime: OpenCLRuntime, name: str) -> None:
    if not runtime.limits.fp16:
        pytest.skip("the device does not report cl_khr_fp16")
    compiled = compile_module(FP16.read_text(), runtime)
    function = compiled.source
    rng = np.random.default_rng(1)
    shapes = {"relu_half": [(1, 3, 5, 8)] * 2, "channel_sum_half": [(1, 3, 5, 8), (1, 3, 5)],
              "lane_half": [(1, 3, 5, 8)] * 2}[name]
    args = [rng.standard_normal(s).astype(np.float16) for s in shapes]
    reference = [a.copy() for a in args]
    execute(compiled, name, args)
    run_function(function, name, reference)
    assert np.array_equal(args[-1], reference[-1])
