"""The OpenCL target and runtime: generated code runs on a device and agrees with the numpy
evaluator (exactly for copies, 1e-5 relative for arithmetic); the work-item rule; device
selection. Tests that need a device skip cleanly when pyopencl finds none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.utils.exceptions import DiagnosticException

from physlayout.lowering.opencl import generate_opencl
from physlayout.lowering.opencl_parallel import parallel_band
from physlayout.lowering.pipelines import PhyslayoutOpenCLPass
from physlayout.runtime.device import OpenCLRuntime, OpenCLRuntimeError, select_device
from physlayout.runtime.opencl import CompiledModule, compile_module, make_context, parse_module
from physlayout.semantics.evaluator import run_function

ROOT = Path(__file__).resolve().parents[2]
ROUNDTRIP = ROOT / "test/opencl/run-layout-roundtrip.mlir"
RELU = ROOT / "test/opencl/run-relu-texture.mlir"
DEMO = ROOT / "examples/demo.mlir"
TARGET = ROOT / "test/opencl/target.mlir"
VIEWS = ROOT / "test/opencl/run-decl-buffer-views.mlir"

RELU_GLOBAL = """
func.func @relu(%a: !layout.buffer<2x5x6x8xf32>, %b: !layout.buffer<2x5x6x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c2 step %c1 {
    scf.for %h = %c0 to %c5 step %c1 {
      scf.for %w = %c0 to %c6 step %c1 {
        scf.for %c = %c0 to %c8 step %c1 {
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<2x5x6x8xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<2x5x6x8xf32>, f32
        }
      }
    }
  }
  func.return
}
"""

ALIASED = """
func.func @inc(%a: !layout.buffer<8xf32>, %b: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = layout.load %a[%i] : !layout.buffer<8xf32>, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %b[%i] : !layout.buffer<8xf32>, f32
  }
  func.return
}
func.func @main(%x: !layout.buffer<8xf32>) {
  func.call @inc(%x, %x) : (!layout.buffer<8xf32>, !layout.buffer<8xf32>) -> ()
  func.return
}
"""


def _random(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


# Execution ---------------------------------------------------------------------------------


def test_layout_transform_into_a_texture_and_back_is_exact(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(ROUNDTRIP.read_text(), runtime)
    x = _random((1, 8, 8, 8), 1)
    y = np.zeros_like(x)
    result = execute(compiled, "main", [x, y])
    np.testing.assert_array_equal(y, x)
    reference = np.zeros_like(x)
    run_function(compiled.source, "main", [x.copy(), reference])
    np.testing.assert_array_equal(y, reference)
    assert [t.kernel for t in result.times] == ["to_texture", "from_texture"]
    assert all(t.seconds > 0 for t in result.times)


@pytest.mark.parametrize("source", [RELU.read_text(), RELU_GLOBAL], ids=["texture", "global"])
def test_relu_matches_numpy(runtime: OpenCLRuntime, source: str) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(source, runtime)
    a = _random((2, 5, 6, 8), 2)
    b = np.zeros_like(a)
    execute(compiled, "relu", [a, b])
    np.testing.assert_array_equal(b, np.maximum(a, 0))


def test_affine_loops_match_the_evaluator(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    text = TARGET.read_text()
    compiled = compile_module(text, runtime)
    a, b = _random((4, 8), 6), _random((4, 8), 7)
    reference = [a.copy(), b.copy()]
    result = execute(compiled, "affine_loops", [a, b])
    run_function(compiled.source, "affine_loops", reference)
    np.testing.assert_array_equal(a, reference[0])
    np.testing.assert_array_equal(b, reference[1])
    assert [t.kernel for t in result.times] == ["affine_loops_0", "affine_loops_1"]


def test_conv2d_nchw4c_matches_the_evaluator(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(DEMO.read_text(), runtime)
    x = _random((1, 16, 16, 16), 3)
    weights = _random((16, 16, 3, 3), 4)
    y = np.zeros((1, 14, 14, 16), np.float32)
    execute(compiled, "main", [x, weights, y])
    reference = np.zeros_like(y)
    run_function(compiled.source, "main", [x.copy(), weights.copy(), reference])
    relative = np.max(np.abs(y - reference)) / np.max(np.abs(reference))
    assert relative <= 1e-5
    activations = np.maximum(x, 0)[0]
    direct = np.zeros_like(y)
    for oh in range(14):
        for ow in range(14):
            patch = activations[oh : oh + 3, ow : ow + 3, :]
            direct[0, oh, ow] = np.einsum("rsc,kcrs->k", patch, weights)
    assert np.max(np.abs(y - direct)) / np.max(np.abs(direct)) <= 1e-5


def test_one_storage_for_a_written_and_another_parameter_is_refused(
    runtime: OpenCLRuntime,
) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(ALIASED, runtime)
    with pytest.raises(OpenCLRuntimeError, match="must not overlap"):
        execute(compiled, "main", [np.ones(8, np.float32)])


INVARIANT_LOADS = """
func.func @scale(%x: !layout.buffer<16xf32>, %scale: !layout.buffer<2xf32>, %y: !layout.buffer<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s = layout.load %scale[%c1] : !layout.buffer<2xf32>, f32
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<16xf32>, f32
    %r = arith.mulf %v, %s : f32
    layout.store %r, %y[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}
func.func @rows(%x: !layout.buffer<4x8xf32>, %scale: !layout.buffer<4xf32>, %y: !layout.buffer<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %s = layout.load %scale[%i] : !layout.buffer<4xf32>, f32
    scf.for %j = %c0 to %c8 step %c1 {
      %v = layout.load %x[%i, %j] : !layout.buffer<4x8xf32>, f32
      %r = arith.mulf %v, %s : f32
      layout.store %r, %y[%i, %j] : !layout.buffer<4x8xf32>, f32
    }
  }
  func.return
}
func.func @after_writer(%x: !layout.buffer<8xf32>, %y: !layout.buffer<8xf32>, %z: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<8xf32>, f32
    %r = arith.mulf %v, %two : f32
    layout.store %r, %y[%i] : !layout.buffer<8xf32>, f32
  }
  %s = layout.load %y[%c3] : !layout.buffer<8xf32>, f32
  %t = arith.addf %s, %two : f32
  scf.for %j = %c0 to %c8 step %c1 {
    %v = layout.load %x[%j] : !layout.buffer<8xf32>, f32
    %r = arith.mulf %v, %t : f32
    layout.store %r, %z[%j] : !layout.buffer<8xf32>, f32
  }
  func.return
}
"""


@pytest.mark.parametrize(
    ("name", "shapes", "launches"),
    [
        ("scale", [(16,), (2,), (16,)], [(16,)]),
        ("rows", [(4, 8), (4,), (4, 8)], [(8, 4)]),
        ("after_writer", [(8,), (8,), (8,)], [(8,), (8,)]),
    ],
)
def test_loop_invariant_loads_run_and_match_the_evaluator(
    runtime: OpenCLRuntime, name: str, shapes: list[tuple[int, ...]], launches: list[tuple[int, ...]]
) -> None:
    """A scalar read once before the parallel nest (or between its loops) is re-read by each
    work-item of the launches that use it; the loads' storage is not written after them."""
    from physlayout.runtime.host import execute

    compiled = compile_module(INVARIANT_LOADS, runtime)
    args = [_random(shape, 20 + k) for k, shape in enumerate(shapes)]
    reference = [a.copy() for a in args]
    execute(compiled, name, args)
    run_function(compiled.source, name, reference)
    for got, expected in zip(args, reference, strict=True):
        np.testing.assert_array_equal(got, expected)
    kernel = compiled.program.kernels[name]
    assert [launch.global_size for launch in kernel.launches] == launches


OFFSET_CALLS = ROOT / "test/lowering/inputs/offset_calls.mlir"


def test_views_at_offsets_passed_to_calls_match_the_reference(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(OFFSET_CALLS.read_text(), runtime)
    assert [a.offset_argument for a in compiled.program.kernels["add1"].args] == [True, True]
    a = _random((16,), 30)
    b = _random((16,), 31)
    expected = b.copy()
    expected[3:11] = a[7:15] + 1
    expected[0:8] = a[8:16] + 1
    reference = [a.copy(), b.copy()]
    execute(compiled, "main", [a, b])
    run_function(compiled.source, "main", reference)
    np.testing.assert_array_equal(b, expected)
    np.testing.assert_array_equal(b, reference[1])


HALVES = """
func.func @add(%x: !layout.buffer<8xf32>, %y: !layout.buffer<8xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {{
    %v = layout.load %x[%i] : !layout.buffer<8xf32>, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %y[%i] : !layout.buffer<8xf32>, f32
  }}
  func.return
}}
func.func @main(%s: !layout.buffer<16xf32>) {{
  %p = layout.data %s : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %lo = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<8xf32>
  %hi = layout.decl_buffer %p offset {offset} : !layout.ptr<f32> -> !layout.buffer<8xf32>
  func.call @add(%lo, %hi) : (!layout.buffer<8xf32>, !layout.buffer<8xf32>) -> ()
  func.return
}}
"""


def test_disjoint_views_of_one_storage_may_share_a_kernel(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    s = _random((16,), 32)
    expected = s.copy()
    expected[8:] = 2 * s[:8]
    execute(compile_module(HALVES.format(offset=8), runtime), "main", [s])
    np.testing.assert_array_equal(s, expected)
    with pytest.raises(OpenCLRuntimeError, match="overlaps the storage passed as %x"):
        execute(compile_module(HALVES.format(offset=4), runtime), "main", [s])


PADDED_TEXTURE = ROOT / "test/opencl/run-padded-textures.mlir"


@pytest.fixture(scope="module")
def padded_textures(runtime: OpenCLRuntime) -> CompiledModule:
    return compile_module(PADDED_TEXTURE.read_text(), runtime)


@pytest.mark.parametrize(
    "name",
    [
        "relu_c6", "relu_ones", "tex_to_tex_c6", "relu_c5", "conv_c6", "relu_c3_physical",
        "relu_c1_physical", "row_padding",
    ],
)  # fmt: skip
def test_padded_textures_match_the_evaluator(padded_textures: CompiledModule, name: str) -> None:
    from physlayout.runtime.host import execute

    source = next(
        f for f in padded_textures.source.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name
    )
    shapes = [t.get_shape() for t in source.function_type.inputs.data]  # type: ignore[attr-defined]
    args = [_random(tuple(shape), 50 + k) for k, shape in enumerate(shapes)]
    reference = [a.copy() for a in args]
    execute(padded_textures, name, args)
    run_function(padded_textures.source, name, reference)
    for got, expected in zip(args, reference, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def _relu_nchw4c_image(x: np.ndarray, pad: float) -> np.ndarray:
    """relu(x) for NHWC `x` as the NCHW4c image of the `global.texture` layout, written out
    by hand: row (n * C4 + c // 4) * H + h, column w * 4 + c % 4; padding lanes hold `pad`."""
    n_, h_, w_, c_ = x.shape
    blocks = -(-c_ // 4)
    image = np.full((n_ * blocks * h_, w_ * 4), pad, np.float32)
    for n in range(n_):
        for h in range(h_):
            for w in range(w_):
                for c in range(c_):
                    image[(n * blocks + c // 4) * h_ + h, w * 4 + c % 4] = max(x[n, h, w, c], 0)
    return image


@pytest.mark.parametrize(
    ("name", "shape", "pad", "image"),
    [("relu_c6", (2, 3, 3, 6), 0.0, (12, 12)), ("relu_c5", (1, 2, 7, 5), -3.0, (4, 28))],
)
def test_padding_lanes_of_texels_hold_the_pad_value(
    padded_textures: CompiledModule,
    name: str,
    shape: tuple[int, ...],
    pad: float,
    image: tuple[int, int],
) -> None:
    """Channels not a multiple of 4: each texel is written whole (values and the pad value
    in the padding lanes), over an image that starts as NaN."""
    from physlayout.runtime.host import DeviceView, execute_physical

    compiled, runtime = padded_textures, padded_textures.runtime
    x = _random(shape, 40)
    source = runtime.allocate("global", (x.size,), np.float32)
    source.upload(x.reshape(-1))
    out = runtime.allocate("texture", image, np.float32)
    out.upload(np.full(image, np.nan, np.float32))
    execute_physical(compiled, name, [DeviceView(source), DeviceView(out)])
    np.testing.assert_array_equal(out.download(), _relu_nchw4c_image(x, pad))


ONE_BLOCK = """
func.func @relu(%a: !layout.buffer<{shape}xf32>, %b: !layout.buffer<{shape}xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ch = arith.constant {h} : index
  %cw = arith.constant {w} : index
  %cc = arith.constant {c} : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {{
    scf.for %h = %c0 to %ch step %c1 {{
      scf.for %w = %c0 to %cw step %c1 {{
        scf.for %c = %c0 to %cc step %c1 {{
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<{shape}xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<{shape}xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = "global.texture">, f32
        }}
      }}
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize("shape", [(1, 4, 4, 3), (1, 5, 6, 3), (1, 4, 4, 1)], ids=str)
def test_one_channel_block_texture_from_logical_buffers(
    runtime: OpenCLRuntime, shape: tuple[int, int, int, int]
) -> None:
    """NHWC with 3 or 1 channels into an NCHW4c texture (one block, padded: the padded map
    is smaller than one tile); every texel is written whole over an image that starts as
    NaN."""
    from physlayout.runtime.host import DeviceView, execute_physical

    _, h, w, c = shape
    text = ONE_BLOCK.format(shape="x".join(map(str, shape)), h=h, w=w, c=c)
    compiled = compile_module(text, runtime)
    x = _random(shape, 41)
    source = runtime.allocate("global", (x.size,), np.float32)
    source.upload(x.reshape(-1))
    out = runtime.allocate("texture", (h, w * 4), np.float32)
    out.upload(np.full((h, w * 4), np.nan, np.float32))
    execute_physical(compiled, "relu", [DeviceView(source), DeviceView(out)])
    np.testing.assert_array_equal(out.download(), _relu_nchw4c_image(x, 0.0))


# Padding and views: buffers a kernel writes start with garbage (NaN) in their padding, and
# host allocations start as garbage, so only kernels that fill the padding pass.

SPLIT = "transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32"

PAD_SPLIT = f"""
func.func @fill(%x: !layout.buffer<10xf32>, %t: !layout.buffer<10xf32, {SPLIT}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c10 step %c1 {{
    %v = layout.load %x[%i] : !layout.buffer<10xf32>, f32
    layout.store %v, %t[%i] : !layout.buffer<10xf32, {SPLIT}>, f32
  }}
  func.return
}}

func.func @copy12(%p: !layout.buffer<12xf32>, %y: !layout.buffer<12xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  scf.for %i = %c0 to %c12 step %c1 {{
    %v = layout.load %p[%i] : !layout.buffer<12xf32>, f32
    layout.store %v, %y[%i] : !layout.buffer<12xf32>, f32
  }}
  func.return
}}

func.func @main(%x: !layout.buffer<10xf32>, %y: !layout.buffer<12xf32>) {{
  %p = layout.allocate [3, 4] : !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<10xf32, {SPLIT}>
  %flat = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<12xf32>
  func.call @fill(%x, %t) : (!layout.buffer<10xf32>, !layout.buffer<10xf32, {SPLIT}>) -> ()
  func.call @copy12(%flat, %y) : (!layout.buffer<12xf32>, !layout.buffer<12xf32>) -> ()
  func.return
}}
"""


def test_kernel_fills_the_padding_of_a_buffer_it_writes(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(PAD_SPLIT, runtime)
    x = np.arange(1, 11, dtype=np.float32)
    t = np.zeros(10, np.float32)
    result = execute(compiled, "fill", [x, t], padding={1: np.nan})
    np.testing.assert_array_equal(t, x)
    expected = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, -1, -1]]
    np.testing.assert_array_equal(result.physical[1], expected)


def test_physical_view_of_a_padded_allocation_sees_the_pad_value(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(PAD_SPLIT, runtime)
    x = np.arange(1, 11, dtype=np.float32)
    y = np.zeros(12, np.float32)
    execute(compiled, "main", [x, y], allocation_fill=np.nan)
    np.testing.assert_array_equal(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -1])
    reference = np.zeros(12, np.float32)
    run_function(compiled.source, "main", [x.copy(), reference])
    np.testing.assert_array_equal(y, reference)


def test_views_of_a_texture_allocation_match_the_evaluator(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    compiled = compile_module(VIEWS.read_text(), runtime)
    x = _random((1, 4, 4, 8), 8)
    outputs = [np.zeros((8, 16), np.float32), np.zeros((1, 2, 4, 4, 4), np.float32)]
    outputs.append(np.zeros_like(x))
    execute(compiled, "main", [x, *outputs], allocation_fill=np.nan)
    reference = [np.zeros_like(o) for o in outputs]
    run_function(compiled.source, "main", [x.copy(), *reference])
    for got, want in zip(outputs, reference, strict=True):
        np.testing.assert_array_equal(got, want)
    y, z, w = outputs
    # (h, w, c) -> (c floordiv 4, h, w, c mod 4); the image row is (c floordiv 4) * 4 + h.
    nchw4c = x[0].reshape(4, 4, 2, 4).transpose(2, 0, 1, 3)
    np.testing.assert_array_equal(z[0], nchw4c)
    np.testing.assert_array_equal(y, nchw4c.reshape(8, 16))
    np.testing.assert_array_equal(w, x)


def test_device_image_limits_reach_the_target(runtime: OpenCLRuntime) -> None:
    width = runtime.limits.max_image_width + 1
    text = f"""
    func.func @wide(%t: !layout.buffer<1x{width}x4xf32, scope = "global.texture">) {{
      func.return
    }}"""
    with pytest.raises(DiagnosticException, match="beyond the image limit"):
        compile_module(text, runtime)


# Device selection ----------------------------------------------------------------------------


def test_device_selection_by_spec_and_environment(
    runtime: OpenCLRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    platform = runtime.device.platform.name
    assert select_device(f"{platform.lower()}:0").platform.name == platform
    monkeypatch.setenv("PHYSLAYOUT_OPENCL_DEVICE", f"{platform}:0")
    assert select_device().platform.name == platform
    monkeypatch.setenv("PHYSLAYOUT_OPENCL_DEVICE", "no such platform")
    with pytest.raises(OpenCLRuntimeError, match="no OpenCL platform matches"):
        select_device()
    with pytest.raises(OpenCLRuntimeError, match="out of range"):
        select_device(":999")
    with pytest.raises(OpenCLRuntimeError, match="bad device spec"):
        select_device("x:y")


# Generation (no device needed) -----------------------------------------------------------------


def _lowered(text: str):
    module = parse_module(text)
    PhyslayoutOpenCLPass().apply(make_context(), module)
    return module


def test_generated_source_is_deterministic() -> None:
    text = TARGET.read_text()
    first = generate_opencl(_lowered(text)).source
    second = generate_opencl(_lowered(text)).source
    assert first == second


def test_launch_plan_of_the_demo() -> None:
    program = generate_opencl(_lowered(DEMO.read_text()))
    assert list(program.kernels) == ["to_nchw4c", "relu", "conv2d"]
    conv = program.kernels["conv2d"]
    assert [a.kind for a in conv.args] == ["texture", "global", "texture"]
    assert conv.args[0].image_size == (16, 64)
    assert conv.args[2].image_size == (14, 56)
    assert conv.launches[0].global_size == (14, 14, 4)
    assert (conv.args[0].read, conv.args[0].written) == (True, False)


def _band_sizes(text: str) -> dict[str, list[int]]:
    module = _lowered(text)
    sizes: dict[str, list[int]] = {}
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        loops = [op for op in function.body.blocks[0].ops if op.regions]
        if loops:
            sizes[function.sym_name.data] = [d.trip_count for d in parallel_band(loops[0])]
    return sizes


def test_work_item_rule_parallel_and_sequential_loops() -> None:
    sizes = _band_sizes(TARGET.read_text())
    assert sizes["copy4d"] == [2, 3, 4, 5]
    assert sizes["row_sum"] == [8]
    assert sizes["prefix_sum"] == []
    assert sizes["last_wins"] == []
    assert sizes["window"] == []
    assert sizes["two_launches"] == [8]
    assert sizes["relu_texture"] == [1, 4, 8, 8]
    assert sizes["affine_loops"] == [4, 8]


OVERLAP = """
func.func @overlap(%x: !layout.buffer<40xf32>, %v: f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %stride = arith.constant {stride} : index
  %c8 = arith.constant 8 : index
  %vec = vector.broadcast %v : f32 to vector<4xf32>
  scf.for %i = %c0 to %c8 step %c1 {{
    %j = arith.muli %i, %stride : index
    layout.store %vec, %x[%j] : !layout.buffer<40xf32>, vector<4xf32>
  }}
  func.return
}}
"""


@pytest.mark.parametrize(("stride", "band"), [(2, []), (3, []), (4, [8]), (5, [8])])
def test_vector_stores_are_parallel_only_without_overlap(stride: int, band: list[int]) -> None:
    """Iteration i stores the 4 lanes x[stride * i .. stride * i + 3]."""
    assert _band_sizes(OVERLAP.format(stride=stride))["overlap"] == band


# The command line ------------------------------------------------------------------------------


def _physlayout(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "physlayout"), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_run_moves_numpy_files_in_the_logical_layout(
    runtime: OpenCLRuntime, tmp_path: Path
) -> None:
    x = _random((1, 8, 8, 8), 5)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npy"
    done = _physlayout(
        "run", str(ROUNDTRIP), "--input", f"x={tmp_path / 'x.npy'}", "--output", f"y={out}",
        "--check", "--rtol", "0",
    )
    assert done.returncode == 0, done.stderr
    assert "check: passed (rtol 0)" in done.stdout
    np.testing.assert_array_equal(np.load(out), x)


def test_run_reports_bad_input_as_diagnostics(runtime: OpenCLRuntime, tmp_path: Path) -> None:
    missing = _physlayout("run", str(tmp_path / "missing.mlir"))
    assert missing.returncode == 1
    assert missing.stderr.startswith("error:")
    unknown = _physlayout("run", str(ROUNDTRIP), "--input", "nosuch=1")
    assert unknown.returncode == 1
    assert "error: --input: no parameter %nosuch (have ['x', 'y'])" in unknown.stderr
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "func.func @f(%a: !layout.buffer<4xf32>) {\n"
        "  %v = layout.load %a[] : !layout.buffer<4xf32>, f32\n"
        "  func.return\n}\n"
    )
    parsed = _physlayout("run", str(bad))
    assert parsed.returncode == 1
    assert "error:" in parsed.stderr
    assert "Traceback" not in parsed.stderr


RANK0 = """
func.func @scale(%s: !layout.buffer<f32>, %k: f32, %x: !layout.buffer<8xf32>, %y: !layout.buffer<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %f = layout.load %s[] : !layout.buffer<f32>, f32
    %v = layout.load %x[%i] : !layout.buffer<8xf32>, f32
    %m = arith.mulf %v, %f : f32
    %r = arith.addf %m, %k : f32
    layout.store %r, %y[%i] : !layout.buffer<8xf32>, f32
  }
  func.return
}

func.func @first(%x: !layout.buffer<8xf32>, %s: !layout.buffer<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    %v = layout.load %x[%i] : !layout.buffer<8xf32>, f32
    layout.store %v, %s[] : !layout.buffer<f32>, f32
  }
  func.return
}
"""


def test_run_reads_and_writes_rank0_buffers(runtime: OpenCLRuntime, tmp_path: Path) -> None:
    source = tmp_path / "rank0.mlir"
    source.write_text(RANK0)
    x = np.arange(1, 9, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "s.npy", np.array(3.0))
    np.save(tmp_path / "k.npy", np.array(0.25, np.float32))
    done = _physlayout(
        "run", str(source), "--entry", "scale", "--input", f"s={tmp_path / 's.npy'}",
        "--input", f"k={tmp_path / 'k.npy'}", "--input", f"x={tmp_path / 'x.npy'}",
        "--output", f"y={tmp_path / 'y.npy'}", "--output", f"s={tmp_path / 's_out.npy'}",
        "--check", "--rtol", "0",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "%s          shape []" in done.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), 3 * x + 0.25)
    assert np.load(tmp_path / "s_out.npy").shape == ()
    written = _physlayout(
        "run", str(source), "--entry", "first", "--input", f"x={tmp_path / 'x.npy'}",
        "--output", f"s={tmp_path / 's_first.npy'}", "--check", "--rtol", "0",
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    saved = np.load(tmp_path / "s_first.npy")
    assert saved.shape == () and saved == 1.0


def test_run_input_mismatches_are_diagnostics(runtime: OpenCLRuntime, tmp_path: Path) -> None:
    source = tmp_path / "rank0.mlir"
    source.write_text(RANK0)
    np.save(tmp_path / "one.npy", np.array([3.0], np.float32))
    np.save(tmp_path / "text.npy", np.array(["abc"]))
    (tmp_path / "junk.npy").write_text("not an array")
    cases = {
        f"s={tmp_path / 'one.npy'}": f"error: --input s: {tmp_path / 'one.npy'} has shape [1], "
        "expected []",
        f"x={tmp_path / 'text.npy'}": "which do not convert to float32",
        f"s={tmp_path / 'junk.npy'}": "cannot read",
        "k=abc": "error: --input k: expected a number (or a .npy file) for the f32 parameter, "
        "got 'abc'",
        f"k={tmp_path / 'one.npy'}": None,
    }
    for given, message in cases.items():
        done = _physlayout("run", str(source), "--entry", "scale", "--input", given)
        if message is None:
            assert done.returncode == 0, done.stderr
            continue
        assert done.returncode == 1, given
        assert message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
