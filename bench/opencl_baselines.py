"""Hand-written OpenCL baselines shared by the benchmarks (not tests).

- `copy4_seconds`: a float4 buffer copy (the bandwidth bound of global-buffer kernels);
- `texture_copy_kernel`: an RGBA float image -> image copy, one `read_imagef` and one
  `write_imagef` per texel (the bound of texture kernels on the same device: on PoCL's
  CPU device images are emulated in software, so this is far below `copy4`);
- `texture_conv_seconds`: an NCHW4c texture convolution written as the Adreno RFC kernels
  are (each work-item keeps 4 output channels in a float4, reads each input texel once per
  (input-channel block, kh, kw) and the 4 weight texels that multiply its lanes), on the
  image layouts `physlayout-adreno` chooses (input/output [N*C/4*H rows, W texels], weights
  OIHW4o as [O/4 rows, I*KH*KW texels]).

All times are OpenCL profiling events, median of `repeats` launches after one warm-up.
`interleaved_medians` times several kernels in alternating rounds: on a shared machine the
load changes between blocks of launches, so comparing kernels timed in separate blocks
gives ratios that vary from run to run by more than the kernels differ.
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np
import pyopencl as cl

from physlayout.runtime.device import OpenCLRuntime

COPY4 = """
__kernel void copy4(__global const float4* a, __global float4* b) {
  int i = (int)get_global_id(0);
  b[i] = a[i];
}
"""

_SAMPLER = "CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST"

TEXTURE_COPY = f"""
__constant sampler_t s = {_SAMPLER};
__kernel void texture_copy(__read_only image2d_t a, __write_only image2d_t b) {{
  int2 p = (int2)((int)get_global_id(0), (int)get_global_id(1));
  write_imagef(b, p, read_imagef(a, s, p));
}}
"""

TEXTURE_CONV = f"""
__constant sampler_t s = {_SAMPLER};
__kernel void texture_conv(__read_only image2d_t x, __read_only image2d_t w,
                           __write_only image2d_t y, int n_batch, int c4, int h, int oh,
                           int o4, int kh, int kw) {{
  int ow = (int)get_global_id(0);
  int row = (int)get_global_id(1);
  int oc4 = (int)get_global_id(2);
  int k = kh * kw;
  for (int n = 0; n < n_batch; n++) {{
    float4 acc = (float4)(0.0f);
    for (int ic4 = 0; ic4 < c4; ic4++) {{
      int x_row = (n * c4 + ic4) * h + row;
      int w_col = ic4 * 4 * k;
      for (int i = 0; i < kh; i++) {{
        for (int j = 0; j < kw; j++) {{
          float4 v = read_imagef(x, s, (int2)(ow + j, x_row + i));
          int wc = w_col + i * kw + j;
          acc += v.x * read_imagef(w, s, (int2)(wc, oc4));
          acc += v.y * read_imagef(w, s, (int2)(wc + k, oc4));
          acc += v.z * read_imagef(w, s, (int2)(wc + 2 * k, oc4));
          acc += v.w * read_imagef(w, s, (int2)(wc + 3 * k, oc4));
        }}
      }}
    }}
    write_imagef(y, (int2)(ow, (n * o4 + oc4) * oh + row), acc);
  }}
}}
"""


def median_event_seconds(
    runtime: OpenCLRuntime, kernel: Any, size: tuple[int, ...], repeats: int
) -> float:
    """Median device seconds of `kernel` over `size` (after one warm-up launch)."""
    queue = runtime.queue
    local = runtime.local_size(kernel, size)
    cl.enqueue_nd_range_kernel(queue, kernel, size, local).wait()
    times: list[float] = []
    for _ in range(repeats):
        event = cl.enqueue_nd_range_kernel(queue, kernel, size, local)
        event.wait()
        times.append((event.profile.end - event.profile.start) * 1e-9)
    return statistics.median(times)


def interleaved_medians(
    runtime: OpenCLRuntime,
    kernels: dict[str, tuple[Any, tuple[int, ...]]],
    rounds: int = 7,
    repeats: int = 5,
) -> dict[str, float]:
    """Device seconds of each kernel (name -> (kernel, global size)): `rounds` rounds that
    each time every kernel in turn (median of `repeats` launches); the median over rounds."""
    samples: dict[str, list[float]] = {name: [] for name in kernels}
    for _ in range(rounds):
        for name, (kernel, size) in kernels.items():
            samples[name].append(median_event_seconds(runtime, kernel, size, repeats))
    return {name: statistics.median(times) for name, times in samples.items()}


def copy4_seconds(runtime: OpenCLRuntime, elements: int, repeats: int = 15) -> float:
    """A float4 copy of `elements` floats (a multiple of 4) from one buffer to another."""
    program = runtime.build(COPY4)
    mf = cl.mem_flags
    a = cl.Buffer(runtime.context, mf.READ_WRITE, elements * 4)
    b = cl.Buffer(runtime.context, mf.READ_WRITE, elements * 4)
    cl.enqueue_fill_buffer(runtime.queue, a, np.float32(1), 0, elements * 4).wait()
    kernel = cl.Kernel(program, "copy4")
    kernel.set_args(a, b)
    return median_event_seconds(runtime, kernel, (elements // 4,), repeats)


def _image(runtime: OpenCLRuntime, width: int, height: int, data: np.ndarray | None = None) -> Any:
    mf = cl.mem_flags
    image_format = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
    if data is None:
        return cl.Image(runtime.context, mf.READ_WRITE, image_format, shape=(width, height))
    return cl.Image(
        runtime.context,
        mf.READ_WRITE | mf.COPY_HOST_PTR,
        image_format,
        shape=(width, height),
        hostbuf=np.ascontiguousarray(data, dtype=np.float32),
    )


def texture_copy_kernel(
    runtime: OpenCLRuntime, width: int, height: int
) -> tuple[Any, tuple[int, int], list[Any]]:
    """The image -> image copy of `width` x `height` RGBA float texels with its arguments
    set, its global size, and its images (keep them alive while the kernel runs)."""
    program = runtime.build(TEXTURE_COPY)
    data = np.random.default_rng(0).uniform(-1, 1, (height, width, 4)).astype(np.float32)
    a, b = _image(runtime, width, height, data), _image(runtime, width, height)
    kernel = cl.Kernel(program, "texture_copy")
    kernel.set_args(a, b)
    return kernel, (width, height), [a, b]


def texture_conv(
    runtime: OpenCLRuntime, x: np.ndarray, w: np.ndarray, repeats: int = 5
) -> tuple[float, np.ndarray]:
    """The hand-written texture conv of NCHW `x` with OIHW `w` (no padding, stride 1; C and
    O multiples of 4): median device seconds and the NCHW result (to check it)."""
    n, c, h, width = x.shape
    o, _, kh, kw = w.shape
    oh, ow = h - kh + 1, width - kw + 1
    x_image = x.reshape(n, c // 4, 4, h, width).transpose(0, 1, 3, 4, 2)  # N C/4 H W 4c
    w_image = w.reshape(o // 4, 4, c, kh, kw).transpose(0, 2, 3, 4, 1)  # O/4 I KH KW 4o
    xi = _image(runtime, width, n * c // 4 * h, x_image.reshape(-1, width, 4))
    wi = _image(runtime, c * kh * kw, o // 4, w_image.reshape(o // 4, -1, 4))
    yi = _image(runtime, ow, n * o // 4 * oh)
    kernel = cl.Kernel(runtime.build(TEXTURE_CONV), "texture_conv")
    scalars = [np.int32(v) for v in (n, c // 4, h, oh, o // 4, kh, kw)]
    kernel.set_args(xi, wi, yi, *scalars)
    seconds = median_event_seconds(runtime, kernel, (ow, oh, o // 4), repeats)
    out = np.empty((n * o // 4 * oh, ow, 4), dtype=np.float32)
    cl.enqueue_copy(runtime.queue, out, yi, origin=(0, 0), region=(ow, n * o // 4 * oh)).wait()
    result = out.reshape(n, o // 4, oh, ow, 4).transpose(0, 1, 4, 2, 3).reshape(n, o, oh, ow)
    return seconds, result
