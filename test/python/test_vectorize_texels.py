"""vectorize-texels: the numpy evaluator gives identical results before and after the pass,
refused loops are left unchanged, a second run changes nothing, and padded textures are
written whole texel by texel with the pad value in their padding lanes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_harness import compare_before_after, make_context, parse
from xdsl.dialects import func
from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint

from physlayout.dialects.layout import StoreOp
from physlayout.semantics.evaluator import run_function
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.vectorize_texels import VectorizeTexelsPass

ROOT = Path(__file__).resolve().parents[2]
LIT_INPUT = ROOT / "test/opencl/vectorize-texels.mlir"
DEMO = ROOT / "examples/demo.mlir"


def _functions(text: str) -> dict[str, str]:
    module = parse(text)
    return {
        op.sym_name.data: str(op) for op in module.ops if isinstance(op, func.FuncOp)
    }


def _vectorized(text: str) -> str:
    module = parse(text)
    VectorizeTexelsPass().apply(make_context(), module)
    module.verify()
    return str(module)


def test_results_identical_before_and_after() -> None:
    outcomes = compare_before_after(LIT_INPUT.read_text(), [VectorizeTexelsPass()])
    assert set(outcomes) >= {
        "relu_texels", "scale_nd", "gather_channels", "reduce_in_texel", "masked_padding",
        "masked_results", "masked_reduction", "masked_uniform", "masked_one_lane", "uniform_guard",
        "clamp_texels",
    }
    for name, (before, after) in outcomes.items():
        for x, y in zip(before.buffers, after.buffers, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=name)


def test_refused_loops_are_unchanged() -> None:
    before = _functions(LIT_INPUT.read_text())
    after = _functions(_vectorized(LIT_INPUT.read_text()))
    refused = [name for name in before if name.startswith("refuse_")]
    assert refused
    for name in refused:
        assert after[name] == before[name], name
    vectorized = (
        "relu_texels", "scale_nd", "gather_channels", "reduce_in_texel", "masked_padding",
        "masked_results", "masked_reduction", "masked_uniform", "masked_one_lane", "uniform_guard",
        "clamp_texels",
    )
    for name in vectorized:
        assert "vector<4xf32>" in after[name], name


def test_second_run_changes_nothing() -> None:
    once = _vectorized(LIT_INPUT.read_text())
    assert _vectorized(once) == once


_SPECIAL = [np.nan, -0.0, 0.0, 6.0, -3.0, 7.5, np.inf, -np.inf, 1e-30, -1e-30, 5.999, 2.0]


def _run_clamp(module: str) -> np.ndarray:
    x = np.resize(np.array(_SPECIAL, np.float32), (4, 32)).astype(np.float32)
    x[1] = np.random.default_rng(3).uniform(-8, 8, 32)
    out = np.zeros((4, 32), np.float32)
    run_function(parse(module), "clamp_texels", [x, out])
    return out


def test_lane_wise_clamp_is_bit_exact() -> None:
    """The lane-wise compare and select of `@clamp_texels` (hardswish's clamps) give the
    scalar loop's bits on NaN, signed zeros, infinities and the clamp bounds; the expected
    values are written out with numpy, not by the evaluator."""
    text = LIT_INPUT.read_text()
    after = _vectorized(text)
    assert "arith.cmpf ult, %" in after and "vector<4xf32>" in _functions(after)["clamp_texels"]
    before_out, after_out = _run_clamp(text), _run_clamp(after)
    np.testing.assert_array_equal(before_out.view(np.uint32), after_out.view(np.uint32))
    x = np.resize(np.array(_SPECIAL, np.float32), (4, 32)).astype(np.float32)
    x[1] = np.random.default_rng(3).uniform(-8, 8, 32)
    with np.errstate(invalid="ignore"):
        lo = np.where(~(x >= 0), np.float32(0), x)  # ult: less than, or NaN
        hi = np.where(~(lo <= 6), np.float32(6), lo)  # ugt: greater than, or NaN
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as in the kernel
        expected = hi * x
    np.testing.assert_array_equal(after_out.view(np.uint32), expected.view(np.uint32))


def test_lane_wise_clamp_planted_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted bug: a vectorizer that selects every lane by lane 0's compare (as if the
    condition were uniform) is caught on values."""
    from physlayout.transforms.lane_vectorizer import LaneVectorizer

    real = LaneVectorizer.conditions

    def lane_zero(self: LaneVectorizer, value: SSAValue, point: InsertPoint) -> list[SSAValue]:
        return [real(self, value, point)[0]] * 4

    monkeypatch.setattr(LaneVectorizer, "conditions", lane_zero)
    text = LIT_INPUT.read_text()
    assert not np.array_equal(_run_clamp(text), _run_clamp(_vectorized(text)), equal_nan=True)


@pytest.mark.parametrize("flatten_first", [True, False])
def test_demo_pipeline_identical_with_and_without_vectorization(flatten_first: bool) -> None:
    """The demo kernels (layout transform, relu, conv2d) after apply-layout, with the pass
    before or after flatten-buffers, against the logical source."""
    apply = ApplyLayoutPass(rewrite_loops=True)
    passes = (
        [apply, FlattenBuffersPass(), VectorizeTexelsPass()]
        if flatten_first
        else [apply, VectorizeTexelsPass(), FlattenBuffersPass()]
    )
    outcomes = compare_before_after(DEMO.read_text(), passes)
    assert set(outcomes) == {"to_nchw4c", "relu", "conv2d", "main"}
    for name, (before, after) in outcomes.items():
        for x, y in zip(before.buffers, after.buffers, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=name)


PADDED_RELU = """
func.func @relu(%a: !layout.buffer<{shape}xf32>, %b: !layout.buffer<{shape}xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = {pad} : f32, scope = "global.texture">) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  %ch = arith.constant {h} : index
  %cw = arith.constant {w} : index
  %cc = arith.constant {c} : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %cn step %c1 {{
    scf.for %h = %c0 to %ch step %c1 {{
      scf.for %w = %c0 to %cw step %c1 {{
        scf.for %c = %c0 to %cc step %c1 {{
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<{shape}xf32>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<{shape}xf32, transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = {pad} : f32, scope = "global.texture">, f32
        }}
      }}
    }}
  }}
  func.return
}}
"""


@settings(derandomize=True, max_examples=30, deadline=None)
@given(
    n=st.sampled_from([1, 2]),
    h=st.sampled_from([1, 2, 3, 5]),
    w=st.sampled_from([1, 3, 7]),
    c=st.sampled_from([1, 2, 3, 5, 6, 7, 9, 11, 13]),
    pad=st.sampled_from([0.0, -2.5, 3.0]),
)
def test_padded_texels_are_whole_and_exact(n: int, h: int, w: int, c: int, pad: float) -> None:
    """NHWC relu into an NCHW4c texture whose last channel block is padded: after the
    OpenCL pipeline's passes every store is one whole texel, and the physical output,
    started as NaN, holds relu in the channel lanes and the pad value in the padding lanes
    (expected values written out by hand, not by the layout engine)."""
    shape = "x".join(map(str, (n, h, w, c)))
    module = parse(PADDED_RELU.format(shape=shape, n=n, h=h, w=w, c=c, pad=pad))
    for one_pass in (ApplyLayoutPass(rewrite_loops=True), FlattenBuffersPass(), VectorizeTexelsPass()):
        one_pass.apply(make_context(), module)
    module.verify()
    stores = [op for op in module.walk() if isinstance(op, StoreOp)]
    # one whole-texel store; two (whole-texel version, masked remainder) when the channel
    # blocks are whole texels and one remainder texel
    assert [str(s.value.type) for s in stores] == ["vector<4xf32>"] * (2 if c > 4 and c % 4 else 1)
    x = np.random.default_rng(n * 1000 + h * 100 + w * 10 + c).uniform(-1, 1, (n, h, w, c))
    x = x.astype(np.float32)
    blocks = -(-c // 4)
    out = np.full((n, blocks, h, w, 4), np.nan, np.float32)
    run_function(module, "relu", [x, out])
    expected = np.full_like(out, pad)
    for i in range(n):
        for j in range(h):
            for k in range(w):
                for ch in range(c):
                    expected[i, ch // 4, j, k, ch % 4] = max(x[i, j, k, ch], 0)
    np.testing.assert_array_equal(out, expected)
