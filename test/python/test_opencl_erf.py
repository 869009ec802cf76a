"""`math.erf` on OpenCL through `px_erfN` (lowering/opencl_c.py): within 2 ulp of the
correctly rounded erf on every sampled float (the two fitted intervals, their border at
0.875, the cut to 1 at 4, tiny and subnormal inputs, zeros of both signs, infinities and
NaN), with textures as images and as buffers; its vector forms (`px_erf2` ... `px_erf16`)
within the same bound; f16 storage within one half ulp of the evaluator; a
planted wrong coefficient fails the bound."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

ERF_GRAPH = """
func.func @erf(%x: tensor<1x4x{h}x{w}xf32>) -> tensor<1x4x{h}x{w}xf32> {{
  %e = tensor.empty() : tensor<1x4x{h}x{w}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%x : tensor<1x4x{h}x{w}xf32>) outs(%e : tensor<1x4x{h}x{w}xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %y = math.erf %in : f32
    linalg.yield %y : f32
  }} -> tensor<1x4x{h}x{w}xf32>
  return %r : tensor<1x4x{h}x{w}xf32>
}}
"""

H, W = 64, 128


def _samples() -> np.ndarray:
    rng = np.random.default_rng(0)
    f = np.float32
    edges = [f(0.875), f(4.0)]
    near_edges = [np.nextafter(e, d) for e in edges for d in (f(0), f(10))]
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 1e-20, 3.9, -3.9, 10.0]
    values = np.concatenate([
        np.array([*special, *edges, *near_edges], np.float32),
        rng.uniform(-5, 5, 20000).astype(np.float32),
        rng.uniform(-1, 1, 6000).astype(np.float32),
        (rng.uniform(0.8, 0.95, 3000) * rng.choice([-1, 1], 3000)).astype(np.float32),
        np.exp(rng.uniform(-90, 1.5, 3000)).astype(np.float32),
    ])
    out = np.resize(values, 4 * H * W)
    return out.reshape(1, 4, H, W)


def _ulps(got: np.ndarray, x: np.ndarray) -> float:
    """The largest error of `got` against erf(x) rounded to float, in ulps of the latter
    (NaN where x is NaN and matching signs of zero are required)."""
    want = np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)).astype(np.float32)
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(got), nan)
    zeros = x == 0
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(x[zeros]))
    spacing = np.spacing(np.abs(want[~nan])).astype(np.float64)
    return float(np.max(np.abs(got[~nan].astype(np.float64) - want[~nan]) / spacing))


def _compile(storage: str, text: str) -> object:
    import physlayout

    return physlayout.compile(
        text, cache=False, tuning_cache=False, texture_storage=storage, prepare=False
    )


@pytest.mark.parametrize("storage", ["image", "buffer"])
def test_px_erf_is_within_two_ulp(runtime: object, storage: str) -> None:
    model = _compile(storage, ERF_GRAPH.format(h=H, w=W))
    kernels = model.kernels  # type: ignore[attr-defined]
    assert "px_erf" in kernels and not re.search(r"(?<![\w_])erf\(", kernels)
    x = _samples()
    got = np.asarray(model(x))  # type: ignore[operator]
    assert _ulps(got, x) <= 2.0


def test_scalar_px_erf_on_an_odd_extent(runtime: object) -> None:
    """A 3-wide tensor (no whole texels): the scalar helper, the same bound."""
    x = _samples().reshape(-1)[: 4 * 7 * 3].reshape(1, 4, 7, 3)
    model = _compile("buffer", ERF_GRAPH.format(h=7, w=3))
    assert _ulps(np.asarray(model(x)), x) <= 2.0  # type: ignore[operator]


def test_vector_helpers_equal_the_scalar_one(runtime: object) -> None:
    import pyopencl as cl

    from physlayout.lowering.opencl_c import HELPERS
    from physlayout.runtime.device import OpenCLRuntime

    assert isinstance(runtime, OpenCLRuntime)
    widths = ("", "2", "3", "4", "8", "16")
    source = "\n".join(HELPERS[f"px_erf{n}"] for n in widths) + "".join(
        f"""
__kernel void k{n or 1}(__global const float* x, __global float* y) {{
  int i = get_global_id(0) * {n or 1};
  float{n} v = {f"vload{n}(0, x + i)" if n else "x[i]"};
  {f"vstore{n}(px_erf{n}(v), 0, y + i)" if n else "y[i] = px_erf(v)"};
}}"""
        for n in widths
    )
    program = cl.Program(runtime.context, source).build()
    x = _samples().reshape(-1)[: 48 * 200].copy()
    results = {}
    for n in widths:
        width = int(n or 1)
        xs = cl.Buffer(runtime.context, cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
        ys = cl.Buffer(runtime.context, cl.mem_flags.WRITE_ONLY, x.nbytes)
        cl.Kernel(program, f"k{width}")(runtime.queue, (x.size // width,), None, xs, ys)
        out = np.empty_like(x)
        cl.enqueue_copy(runtime.queue, out, ys)
        results[n] = out
    for n in widths:  # not bit for bit: the device's vector exp may round otherwise
        assert _ulps(results[n], x) <= 2.0, n


def test_f16_storage_rounds_px_erf_to_the_evaluators_half(runtime: object) -> None:
    from graph_harness import parse

    import physlayout
    from physlayout.semantics.graph_evaluator import run_graph
    from physlayout.transforms.to_mixed_precision import ToMixedPrecisionPass
    from physlayout.universe import make_context

    text = ERF_GRAPH.format(h=8, w=16)
    x = np.random.default_rng(3).uniform(-4.5, 4.5, (1, 4, 8, 16)).astype(np.float32)
    model = physlayout.compile(text, precision="f16", cache=False, tuning_cache=False)
    assert "px_erf" in model.kernels
    mixed = parse(text)
    ToMixedPrecisionPass().apply(make_context(), mixed)
    want = run_graph(mixed, "erf", [x])[0].astype(np.float16)
    got = np.asarray(model(x)).astype(np.float16)
    spacing = np.spacing(np.abs(want)).astype(np.float32)
    assert np.max(np.abs(got.astype(np.float32) - want.astype(np.float32)) / spacing) <= 1.0


def test_a_wrong_coefficient_fails_the_bound(runtime: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the near interval's x^4 coefficient off in its fourth digit."""
    from physlayout.lowering import opencl_c

    helpers = dict(opencl_c.HELPERS)
    planted = helpers["px_erf"].replace("0.11282607913017273f", "0.11292607913017273f")
    assert planted != helpers["px_erf"]
    helpers["px_erf"] = planted
    monkeypatch.setattr("physlayout.lowering.opencl.HELPERS", helpers)
    model = _compile("buffer", ERF_GRAPH.format(h=H, w=W))
    x = _samples()
    assert _ulps(np.asarray(model(x)), x) > 2.0  # type: ignore[operator]
