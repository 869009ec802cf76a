"""The OpenCL writer names equal pure values by one C variable (`KernelWriter.declare_pure`,
`pure_values`), and the unrolled copies of a loop carry its values by renaming, not by
copying them into C variables (`ControlFlowWriter.emit_unrolled`). With both, the taps of a
window over a register tile read each texel once: espcn's 4x4 tile under a 3x3 window read
144 texels per channel block for 36 distinct ones, and its program shrank from 12,216 to
4,732 lines.

What could go wrong: a value named by a variable whose value has changed since. Here:
- a lane loop computes the same expression of its carried value in every lane copy; the
  carried variable is assigned between copies, so each copy must compute it again (a
  table that is not told of the assignment reuses the first copy's value: planted below);
- models run with and without the value numbering write the same outputs, bit for bit;
- a 3x3 window over a 4x4 register tile reads (4 + 2) x (4 + 2) texels per channel block.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from physlayout.lowering import opencl_kernels
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import compile_module
from physlayout.semantics.evaluator import run_function

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "examples" / "models"

TEXTURE = (
    "!layout.buffer<1x1x5x8xf32, transform = #layout.index_map<(n, h, w, c) -> "
    '(n, c floordiv 4, h, w, c mod 4)>, scope = "global.texture">'
)

# s = 2 * s + x[c] over 8 channels: `s * 2.0f` is the same C text in every lane copy.
DOUBLING_SUM = f"""
func.func @doubling_sum(%t: {TEXTURE}, %out: !layout.buffer<1x1x5xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  scf.for %w = %c0 to %c5 step %c1 {{
    %s = scf.for %c = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {{
      %v = layout.load %t[%c0, %c0, %w, %c] : {TEXTURE}, f32
      %d = arith.mulf %acc, %two : f32
      %a = arith.addf %d, %v : f32
      scf.yield %a : f32
    }}
    layout.store %s, %out[%c0, %c0, %w] : !layout.buffer<1x1x5xf32>, f32
  }}
  func.return
}}
"""


def _doubling_sum(runtime: OpenCLRuntime) -> tuple[np.ndarray, np.ndarray, str]:
    from physlayout.runtime.host import execute

    compiled = compile_module(DOUBLING_SUM, runtime)
    x = np.random.default_rng(3).uniform(-1, 1, (1, 1, 5, 8)).astype(np.float32)
    got = [x.copy(), np.zeros((1, 1, 5), np.float32)]
    want = [x.copy(), np.zeros((1, 1, 5), np.float32)]
    execute(compiled, "doubling_sum", got)
    run_function(compiled.source, "doubling_sum", want)
    return got[1], want[1], compiled.program.source


def test_a_carried_value_assigned_between_lane_copies_is_read_again(
    runtime: OpenCLRuntime,
) -> None:
    got, want, source = _doubling_sum(runtime)
    np.testing.assert_array_equal(got, want)
    kernel = source[source.index("__kernel void doubling_sum") :]
    # one `s * 2.0f` per lane copy of each of the two texel blocks' loop body: 4
    assert len(re.findall(r"= s \* 2\.0f;", kernel)) == 4, kernel


def test_a_table_not_told_of_the_assignment_is_caught(
    runtime: OpenCLRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted: the carried variable's assignment forgets only the texels, so the later lane
    copies reuse the first copy's `s * 2.0f`; the values then differ from the evaluator."""

    def forget_texels_only(self: opencl_kernels.KernelWriter, names: set[str]) -> None:
        for key in [k for k in self.texels if not names.isdisjoint(re.findall(r"\w+", k[1]))]:
            del self.texels[key]

    monkeypatch.setattr(opencl_kernels.KernelWriter, "forget_reading", forget_texels_only)
    got, want, _ = _doubling_sum(runtime)
    assert not np.array_equal(got, want)


def _model(name: str, storage: str) -> Any:
    import physlayout

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from results import model_inputs  # pyright: ignore[reportMissingImports]
    finally:
        sys.path.remove(str(ROOT / "bench"))
    arrays: dict[str, np.ndarray] = model_inputs(MODELS / f"{name}.mlir")
    first = next(iter(arrays))
    params = {k: v for k, v in arrays.items() if k != first}
    model = physlayout.compile(
        str(MODELS / f"{name}.mlir"), params=params, cache=False, tuning_cache=False,
        texture_storage=storage,
    )  # fmt: skip
    return model, arrays[first]


@pytest.mark.parametrize("storage", ["image", "buffer"])
@pytest.mark.parametrize("name", ["espcn_pixelshuffle", "autoencoder_transpose"])
def test_models_write_the_same_outputs_without_the_value_numbering(
    runtime: OpenCLRuntime, monkeypatch: pytest.MonkeyPatch, name: str, storage: str
) -> None:
    del runtime
    model, x = _model(name, storage)
    numbered = np.asarray(model(x))
    with monkeypatch.context() as patch:
        patch.setattr(
            opencl_kernels.KernelWriter, "declare_pure", opencl_kernels.KernelWriter.declare
        )
        plain, _ = _model(name, storage)
    assert plain.kernels != model.kernels
    assert len(model.kernels) < len(plain.kernels)
    assert np.asarray(plain(x)).tobytes() == numbered.tobytes()


def test_a_window_over_a_register_tile_reads_each_texel_once(runtime: OpenCLRuntime) -> None:
    """espcn's second conv: a 3x3 window (zero padding as clamped coordinates) over a 4x4
    tile of outputs reads the 6x6 texels of each input channel block once."""
    del runtime
    model, _ = _model("espcn_pixelshuffle", "image")
    source: str = model.kernels
    start = source.index("__kernel void main_fused(")
    kernel = source[start : source.index("__kernel void", start + 10)]
    reads = re.findall(r"read_imagef\((\w+), px_sampler, \(int2\)\(([^;]*)\)\);", kernel)
    assert len(reads) == 36, len(reads)
    assert len(set(reads)) == 36


# A loop whose yield swaps two carried values while a third sums x[i] * p: p takes 3.0 and
# -2.0 in turn. The swap needs temporaries (each old value read before either is written);
# a yield that reads none of the variables it assigns is written as plain assignments.
SWAP = """
func.func @swap(%x: !layout.buffer<2x7xf32>, %out: !layout.buffer<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %p0 = arith.constant 3.0 : f32
  %q0 = arith.constant -2.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %j = %c0 to %c2 step %c1 {
    %p, %q, %c = scf.for %i = %c0 to %c7 step %c1 iter_args(%a = %p0, %b = %q0, %s = %zero) -> (f32, f32, f32) {
      %v = layout.load %x[%j, %i] : !layout.buffer<2x7xf32>, f32
      %m = arith.mulf %a, %v : f32
      %s2 = arith.addf %s, %m : f32
      scf.yield %b, %a, %s2 : f32, f32, f32
    }
    layout.store %c, %out[%j] : !layout.buffer<2xf32>, f32
  }
  func.return
}
"""


def _swap(runtime: OpenCLRuntime) -> tuple[np.ndarray, np.ndarray, str]:
    from physlayout.runtime.host import execute

    compiled = compile_module(SWAP, runtime)
    x = np.stack([np.arange(1, 8), np.arange(8, 15)]).astype(np.float32)
    got = [x.copy(), np.zeros(2, np.float32)]
    want = [x.copy(), np.zeros(2, np.float32)]
    execute(compiled, "swap", got)
    run_function(compiled.source, "swap", want)
    return got[1], want[1], compiled.program.source


def test_a_swapping_yield_reads_every_old_value_first(runtime: OpenCLRuntime) -> None:
    got, want, source = _swap(runtime)
    np.testing.assert_array_equal(got, want)
    assert want[0] == 3 * (1 + 3 + 5 + 7) - 2 * (2 + 4 + 6)
    assert re.search(r"float (t\w*) = \w+;", source), source


def test_a_swap_assigned_without_temporaries_is_caught(
    runtime: OpenCLRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planted: the yield believes no value reads a variable it assigns."""
    from physlayout.lowering import opencl_control

    monkeypatch.setattr(opencl_control, "c_words", lambda text: frozenset[str]())
    got, want, source = _swap(runtime)
    assert not re.search(r"float (t\w*) = \w+;", source)
    assert not np.array_equal(got, want)
