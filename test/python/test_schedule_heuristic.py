"""The default-schedule heuristic (`transforms/schedule_heuristic.py`) for a device that runs
work-items as SIMD lanes (`vector-items`, PoCL's CPU device), and the sampling of loads whose
indices are clamped (a zero pad fused into a conv) or computed from loaded values.

The tiles it picks are value-checked like every schedule (`test_apply_schedules.py`): the
scheduled module's buffers equal the unscheduled one's, bit for bit, on random models
(3- and 5-channel textures, extents of 1 and primes, strides, dilations, groups).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from fuzz.graphs import Graph
from fuzz.models import models
from hypothesis import HealthCheck, given, settings
from test_apply_schedules import (
    PHASES,
    RFC_EXAMPLE,
    evaluate,
    host_inputs,
    kernels,
    lowered,
)
from xdsl.dialects import scf

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.opencl import parse_module
from physlayout.transforms.apply_schedules import kernel_loop
from physlayout.transforms.schedule_heuristic import (
    CPU_BUFFER_REGISTERS,
    DeviceModel,
    default_schedule,
    ranked_tiles,
    reduction_profile,
)
from physlayout.universe import make_context

CPU = DeviceModel(compute_units=2, max_work_group_size=4096, registers=CPU_BUFFER_REGISTERS)
VECTOR_CPU = dataclasses.replace(CPU, vector_items=True)

PADDED_CONV = """
func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<32x4x3x3xf32>, %w2: tensor<8x32x1x1xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %e = tensor.empty() : tensor<1x32x8x8xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x10x10xf32>, tensor<32x4x3x3xf32>) outs(%i : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %e2 = tensor.empty() : tensor<1x8x8x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w2 : tensor<1x32x8x8xf32>, tensor<8x32x1x1xf32>) outs(%i2 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c2 : tensor<1x8x8x8xf32>
}
"""
"""A zero pad of the entry's input fused into the conv reading it (`main_fused_c`, one
float4 accumulator per element: its result is another conv's texture input): the kernel
clamps the input's row and column indices (`maxsi`/`minsi`) and selects 0 outside."""


def _conv_loop(text: str, name: str) -> scf.ParallelOp:
    loop = next(kernel_loop(k) for k in kernels(lowered(text)) if k.sym_name.data == name)
    assert loop is not None
    return loop


def test_clamped_input_reads_depend_on_the_pixel_axes() -> None:
    # the input load's indices are maxsi/minsi of row + tap and column + tap: it varies with
    # the rows (axis 2) and columns (axis 3), not with the output channels (axis 1); the
    # weights vary with the output channels only. (Read as opaque leaves, the clamped
    # input looked uniform, shared by every tile offset, and tiles grew along the pixels.)
    loop = _conv_loop(PADDED_CONV, "main_fused_c")
    profile = reduction_profile(loop)
    assert profile is not None
    loads, _, _ = profile
    assert sorted(load.axes for load in loads) == [(1,), (2, 3)]
    pixels = next(load for load in loads if load.axes == (2, 3))
    # one load per tile offset: 2 rows x 4 columns issue 8, however many addresses repeat
    assert pixels.issued((1, 1, 2, 4)) == 8 * pixels.issued((1, 1, 1, 1))
    # the 3x3 window's taps overlap: fewer distinct addresses than issued loads
    assert pixels.distinct((1, 1, 2, 4)) < pixels.issued((1, 1, 2, 4))


def test_vector_items_leave_the_item_axis_untiled_and_tile_channels() -> None:
    loop = _conv_loop(PADDED_CONV, "main_fused_c")
    tiles = ranked_tiles(loop, VECTOR_CPU)
    assert tiles and all(tile[3] == 1 for tile in tiles)
    assert tiles[0][1] == 8  # the channel axis first: one input load shared by 8 outputs
    # without the option, the same budget tiles the columns as well
    assert any(tile[3] > 1 for tile in ranked_tiles(loop, CPU)[:1])


def test_vector_items_on_the_rfc_convs() -> None:
    with open(RFC_EXAMPLE) as stream:
        module = lowered(stream.read(), fuse=False)
    loops = {k.sym_name.data: kernel_loop(k) for k in kernels(module)}
    conv1, conv2 = loops["main_generic_conv1"], loops["main_generic_conv2"]
    assert conv1 is not None and conv2 is not None
    # conv1 writes NCHW4c texels (float4 accumulators): 8 channel blocks x 1 pixel, as
    # TVM's untuned Relax rule
    schedule = default_schedule(conv1, VECTOR_CPU)
    assert schedule is not None and schedule.tile == (1, 8, 1, 1)
    # conv2 writes the NCHW result (scalar accumulators): the rule leaves it as without
    # the option (measured: the matmul-like scalar kernels ran slower untiled along x)
    assert default_schedule(conv2, VECTOR_CPU) == default_schedule(conv2, CPU)
    for name in ("main_generic_relu", "main_generic_init1"):
        loop = loops[name]
        assert loop is not None and default_schedule(loop, VECTOR_CPU) is None


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(model=models())
def test_vector_item_schedules_are_exact(model: Graph) -> None:
    # one compute unit, so that these small models are tiled
    module = parse_module(model.text)
    PhyslayoutAdrenoPass(
        compute_units=1, registers=CPU_BUFFER_REGISTERS, vector_items=True
    ).apply(make_context(), module)
    reference = lowered(model.text)
    inputs = host_inputs(reference, 2)
    for want, got in zip(evaluate(reference, inputs), evaluate(module, inputs), strict=True):
        assert np.array_equal(want, got, equal_nan=True)
