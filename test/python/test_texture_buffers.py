"""Textures held as buffers (`texture-storage=buffer`, `OpenCLRuntime.texture_storage`):
the same texels in a `__global` array compute bit-identically what the images compute.

The kernels of the two storages are run on the OpenCL device side by side: real models
(gathers, bilinear and nearest upsampling, a transposed convolution, pixel shuffle, several
results) in f32 and f16 storage, random fuzz models, and a gather whose rows leave the
image (the buffer's `px_texel` must read zero there, as the image's CLK_ADDRESS_CLAMP
sampler does). A planted bug (the texel index transposed) must fail the same comparison.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz.graphs import Graph
from fuzz.models import models
from hypothesis import HealthCheck, given, settings

import physlayout
from physlayout.lowering.opencl_memory import MemoryWriter, TexelAccess
from physlayout.runtime.device import OpenCLRuntime, OpenCLRuntimeError
from physlayout.runtime.host import execute
from physlayout.runtime.opencl import compile_module

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "examples" / "models"
sys.path.insert(0, str(ROOT / "bench"))

from bench_models import load_inputs  # noqa: E402

GATHER = """
func.func @gather(%t: !layout.buffer<6x20xf32, scope = "global.texture">, %rows: !layout.buffer<5xi32>, %out: !layout.buffer<6x20xf32, scope = "global.texture">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  scf.for %y = %c0 to %c6 step %c1 {
    scf.for %w = %c0 to %c5 step %c1 {
      %r32 = layout.load %rows[%w] : !layout.buffer<5xi32>, i32
      %r = arith.index_cast %r32 : i32 to index
      %col = arith.muli %w, %c4 : index
      %v = layout.load %t[%r, %col] : !layout.buffer<6x20xf32, scope = "global.texture">, vector<4xf32>
      layout.store %v, %out[%y, %col] : !layout.buffer<6x20xf32, scope = "global.texture">, vector<4xf32>
    }
  }
  func.return
}
"""
"""Texel (w, rows[w]) of a 5 x 6-texel image copied to every row of column w."""


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def buffers(runtime: OpenCLRuntime) -> OpenCLRuntime:
    """A runtime on the same device that holds textures as buffers."""
    return OpenCLRuntime(device=runtime.device, texture_storage="buffer")


def _gather(runtime: OpenCLRuntime, rows: np.ndarray) -> np.ndarray:
    compiled = compile_module(GATHER, runtime)
    image = np.arange(6 * 20, dtype=np.float32).reshape(6, 20) + 1
    out = np.full((6, 20), -7.0, np.float32)
    execute(compiled, "gather", [image, rows, out])
    return out


def test_reads_outside_the_image_read_zero_as_the_sampler_does(
    runtime: OpenCLRuntime, buffers: OpenCLRuntime
) -> None:
    rows = np.array([-1, 6, 0, 5, 2**20], np.int32)  # above, below, first, last, far below
    image, buffer = _gather(runtime, rows), _gather(buffers, rows)
    np.testing.assert_array_equal(buffer, image)
    texels = (np.arange(6 * 20, dtype=np.float32).reshape(6, 20) + 1).reshape(6, 5, 4)
    for w, row in enumerate(rows):
        want = texels[row, w] if 0 <= row < 6 else np.zeros(4, np.float32)
        np.testing.assert_array_equal(buffer.reshape(6, 5, 4)[:, w], np.tile(want, (6, 1)))


def test_auto_holds_textures_as_buffers_on_a_cpu_device(runtime: OpenCLRuntime) -> None:
    auto = OpenCLRuntime(device=runtime.device, texture_storage="auto")
    cpu = "CPU" in str(runtime.device.type) or int(runtime.device.type) & 2
    assert auto.limits.texture_storage == ("buffer" if cpu else "image")
    with pytest.raises(OpenCLRuntimeError, match="texture storage must be image, buffer or auto"):
        OpenCLRuntime(device=runtime.device, texture_storage="texels")


def _outputs(name: str, storage: str, precision: str) -> tuple[list[np.ndarray], int]:
    path = MODELS / f"{name}.mlir"
    inputs = load_inputs(MODELS, name)
    first, *params = inputs  # the image, then the module's weights (prepared once)
    model = physlayout.compile(
        path, precision=precision, texture_storage=storage, tuning_cache=False,
        params={k: inputs[k] for k in params},
    )  # fmt: skip
    result = model.run({first: inputs[first]})
    images = sum(1 for s in model.plan.storages if s.kind == "image")
    return [result.outputs[p.name] for p in model.outputs], images


@pytest.mark.parametrize(
    ("name", "precision"),
    [
        ("espcn_pixelshuffle", "f32"),
        ("autoencoder_transpose", "f32"),
        ("adaptive_pools_net", "f32"),
        ("bottleneck", "f16"),
    ],
)
def test_models_compute_the_same_values_in_both_storages(
    runtime: OpenCLRuntime, name: str, precision: str
) -> None:
    del runtime  # the default device, as physlayout.compile picks it
    image, image_count = _outputs(name, "image", precision)
    buffer, buffer_count = _outputs(name, "buffer", precision)
    assert image_count > 0 and buffer_count == 0  # the same tensors, held as buffers
    for a, b in zip(image, buffer, strict=True):
        np.testing.assert_array_equal(a, b)


def _model_values(text: str, runtime: OpenCLRuntime) -> list[np.ndarray]:
    from physlayout.runtime.deploy import compile_artifact
    from physlayout.runtime.opencl import parse_module
    from physlayout.runtime.session import Session

    artifact = compile_artifact(parse_module(text), "main", runtime.limits)
    session = Session(artifact, runtime, {})
    rng = np.random.default_rng(0)
    given = [p for p in artifact.plan.params if p.direction != "out"]
    inputs = {  # parameters positive: batch-norm variances (torch-mlir asserts on them)
        p.name: rng.uniform(-1 if k == 0 else 0.1, 1, p.shape).astype(p.dtype)
        for k, p in enumerate(given)
    }
    result = session.run(inputs, False)
    return [result.outputs[name] for name in sorted(result.outputs)]


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(model=models())
def test_random_models_compute_the_same_values_in_both_storages(
    runtime: OpenCLRuntime, buffers: OpenCLRuntime, model: Graph
) -> None:
    image, buffer = _model_values(model.text, runtime), _model_values(model.text, buffers)
    for a, b in zip(image, buffer, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_transposed_texel_index_is_caught(
    runtime: OpenCLRuntime, buffers: OpenCLRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted bug: the buffer's texel index with x and y swapped (x * height + y)."""
    text = (MODELS / "espcn_pixelshuffle.mlir").read_text()
    expected = _model_values(text, runtime)
    original = MemoryWriter.texel

    def transposed(self: MemoryWriter, op: Any, buffer: Any, accessed: Any) -> TexelAccess:
        texel = original(self, op, buffer, accessed)
        if self.texture_buffers:
            texel = texel._replace(coord=self.index(texel.x * texel.height + texel.row))
        return texel

    monkeypatch.setattr(MemoryWriter, "texel", transposed)
    planted = _model_values(text, buffers)
    assert any(not np.array_equal(a, b) for a, b in zip(expected, planted, strict=True))
