"""normalize-graph's index functions (transforms/index_functions.py) on values: the graph
evaluator before and after the pass on the lit file's functions and on torch-mlir's
bilinear upsampling (an arange of the channels, zeros for the batch, wrapped i64 index
tensors), hypothesis over channel counts (1, 3, 5, 8: a texel's padding lanes) and
extents (1, primes), the whole Adreno pipeline on OpenCL against the evaluator (the four
corner gathers fused into the group that blends them: one kernel), and planted bugs (a
reshape linearized with its strides reversed; a wrap folded without a proof) caught on
values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, parse, random_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.linalg.ops import GenericOp

from physlayout.semantics.evaluator_values import EvaluationError
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms import index_functions
from physlayout.transforms.normalize_graph import NormalizeGraphPass

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/normalize-index-functions.mlir"

BILINEAR = """
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#batch = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, 0)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#row = affine_map<(d0, d1, d2, d3) -> (d2, 0)>
#col = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @bilinear(%input: tensor<1xCxHxWxf32>, %w0: tensor<CxCx1x1xf32>, %wt: tensor<CxCx1x1xf32>) -> tensor<1xCxHOxWOxf32> {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %wrapc = arith.constant C : i64
  %wraph = arith.constant H : i64
  %wrapw = arith.constant W : i64
  %hmax = arith.constant HM : i64
  %wmax = arith.constant WM : i64
  %half = arith.constant 5.000000e-01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %quarter = arith.constant 2.500000e-01 : f32
  %ex = tensor.empty() : tensor<1xCxHxWxf32>
  %fx = linalg.fill ins(%zero : f32) outs(%ex : tensor<1xCxHxWxf32>) -> tensor<1xCxHxWxf32>
  %x = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%input, %w0 : tensor<1xCxHxWxf32>, tensor<CxCx1x1xf32>) outs(%fx : tensor<1xCxHxWxf32>) -> tensor<1xCxHxWxf32>
  %ec = tensor.empty() : tensor<Cxi64>
  %arange = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%ec : tensor<Cxi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    linalg.yield %ii : i64
  } -> tensor<Cxi64>
  %chan = tensor.expand_shape %arange [[0, 1, 2]] output_shape [C, 1, 1] : tensor<Cxi64> into tensor<Cx1x1xi64>
  %e1 = tensor.empty() : tensor<1xi64>
  %zeros = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e1 : tensor<1xi64>) {
  ^bb0(%out: i64):
    linalg.yield %c0_i64 : i64
  } -> tensor<1xi64>
  %batch = tensor.expand_shape %zeros [[0, 1, 2, 3]] output_shape [1, 1, 1, 1] : tensor<1xi64> into tensor<1x1x1x1xi64>
  %eh = tensor.empty() : tensor<HOx1xi64>
  %r0 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%eh : tensor<HOx1xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %s = arith.addf %f, %half : f32
    %t = arith.mulf %s, %half : f32
    %u = arith.subf %t, %half : f32
    %v = arith.maximumf %u, %zero : f32
    %k = arith.fptosi %v : f32 to i64
    %m = arith.minsi %k, %hmax : i64
    linalg.yield %m : i64
  } -> tensor<HOx1xi64>
  %r1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%r0 : tensor<HOx1xi64>) outs(%eh : tensor<HOx1xi64>) {
  ^bb0(%in: i64, %out: i64):
    %a = arith.addi %in, %c1_i64 : i64
    %m = arith.minsi %a, %hmax : i64
    linalg.yield %m : i64
  } -> tensor<HOx1xi64>
  %ew = tensor.empty() : tensor<WOxi64>
  %q0 = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%ew : tensor<WOxi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %s = arith.addf %f, %half : f32
    %t = arith.mulf %s, %half : f32
    %u = arith.subf %t, %half : f32
    %v = arith.maximumf %u, %zero : f32
    %k = arith.fptosi %v : f32 to i64
    %m = arith.minsi %k, %wmax : i64
    linalg.yield %m : i64
  } -> tensor<WOxi64>
  %q1 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%q0 : tensor<WOxi64>) outs(%ew : tensor<WOxi64>) {
  ^bb0(%in: i64, %out: i64):
    %a = arith.addi %in, %c1_i64 : i64
    %m = arith.minsi %a, %wmax : i64
    linalg.yield %m : i64
  } -> tensor<WOxi64>
  %e = tensor.empty() : tensor<1xCxHOxWOxf32>
GATHERS
  %s0 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g00, %g01 : tensor<1xCxHOxWOxf32>, tensor<1xCxHOxWOxf32>) outs(%e : tensor<1xCxHOxWOxf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %b, %a : f32
    %w = arith.mulf %d, %quarter : f32
    %r = arith.addf %a, %w : f32
    linalg.yield %r : f32
  } -> tensor<1xCxHOxWOxf32>
  %s1 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g10, %g11 : tensor<1xCxHOxWOxf32>, tensor<1xCxHOxWOxf32>) outs(%e : tensor<1xCxHOxWOxf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %b, %a : f32
    %w = arith.mulf %d, %quarter : f32
    %r = arith.addf %a, %w : f32
    linalg.yield %r : f32
  } -> tensor<1xCxHOxWOxf32>
  %o = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s0, %s1 : tensor<1xCxHOxWOxf32>, tensor<1xCxHOxWOxf32>) outs(%e : tensor<1xCxHOxWOxf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %b, %a : f32
    %w = arith.mulf %d, %half : f32
    %r = arith.addf %a, %w : f32
    linalg.yield %r : f32
  } -> tensor<1xCxHOxWOxf32>
  %ef = tensor.empty() : tensor<1xCxHOxWOxf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ef : tensor<1xCxHOxWOxf32>) -> tensor<1xCxHOxWOxf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%o, %wt : tensor<1xCxHOxWOxf32>, tensor<CxCx1x1xf32>) outs(%acc : tensor<1xCxHOxWOxf32>) -> tensor<1xCxHOxWOxf32>
  return %y : tensor<1xCxHOxWOxf32>
}
"""
"""torch-mlir's `upsample_bilinear2d` (scale 2, align_corners=False) as it prints it:
four corner gathers, each wrapping its four i64 indices, blended by three lerps (the
weights here constants)."""

GATHER = """  %gRC = linalg.generic {indexing_maps = [#batch, #chan, #row, #col, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%batch, %chan, %rR, %qC : tensor<1x1x1x1xi64>, tensor<Cx1x1xi64>, tensor<HOx1xi64>, tensor<WOxi64>) outs(%e : tensor<1xCxHOxWOxf32>) {
  ^bb0(%n: i64, %c: i64, %h: i64, %w: i64, %out: f32):
    %0 = arith.cmpi slt, %n, %c0_i64 : i64
    %1 = arith.addi %n, %c1_i64 : i64
    %2 = arith.select %0, %1, %n : i64
    %3 = arith.index_cast %2 : i64 to index
    %4 = arith.cmpi slt, %c, %c0_i64 : i64
    %5 = arith.addi %c, %wrapc : i64
    %6 = arith.select %4, %5, %c : i64
    %7 = arith.index_cast %6 : i64 to index
    %8 = arith.cmpi slt, %h, %c0_i64 : i64
    %9 = arith.addi %h, %wraph : i64
    %10 = arith.select %8, %9, %h : i64
    %11 = arith.index_cast %10 : i64 to index
    %12 = arith.cmpi slt, %w, %c0_i64 : i64
    %13 = arith.addi %w, %wrapw : i64
    %14 = arith.select %12, %13, %w : i64
    %15 = arith.index_cast %14 : i64 to index
    %v = tensor.extract %x[%3, %7, %11, %15] : tensor<1xCxHxWxf32>
    linalg.yield %v : f32
  } -> tensor<1xCxHOxWOxf32>
"""


def bilinear(channels: int, height: int, width: int) -> str:
    """`BILINEAR` for a `1 x channels x height x width` input."""
    gathers = "".join(
        GATHER.replace("RC", f"{r}{c}").replace("%rR", f"%r{r}").replace("%qC", f"%q{c}")
        for r in (0, 1) for c in (0, 1)
    )  # fmt: skip
    text = BILINEAR.replace("GATHERS\n", gathers)
    for key, value in (
        ("HO", 2 * height), ("WO", 2 * width), ("HM", height - 1), ("WM", width - 1),
        ("C", channels), ("H", height), ("W", width),
    ):  # fmt: skip
        text = text.replace(key, str(value))
    return text


def _generics_without_inputs(text: str) -> int:
    module = apply(parse(text), [NormalizeGraphPass()])
    return sum(1 for op in module.walk() if isinstance(op, GenericOp) and not op.inputs)


def test_lit_functions_agree_before_and_after() -> None:
    """Every function of normalize-index-functions.mlir: evaluator before == after."""
    compare_before_after(LIT.read_text(), [NormalizeGraphPass()], seed=3)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    channels=st.sampled_from([1, 3, 5, 8]),
    height=st.sampled_from([1, 2, 3, 5]),
    width=st.sampled_from([1, 2, 7]),
)
def test_bilinear_keeps_values(channels: int, height: int, width: int) -> None:
    """The arange and the zeros are computed in the four gathers (the row and column
    tensors, computed with float ops, stay); the evaluator gives the same values bit for
    bit."""
    text = bilinear(channels, height, width)
    assert _generics_without_inputs(text) == 2  # the first row and column tensors
    after, _ = compare_before_after(text, [NormalizeGraphPass()], seed=channels + height)
    selects = [op for op in after.walk() if op.name == "arith.select"]
    assert not selects  # every wrap was proven: each index is inside its tensor


def test_bilinear_runs_on_opencl_in_one_kernel(runtime: object) -> None:
    """The whole Adreno pipeline on the device, the upsample between two convs (its
    source and its reader textures), 8 channels: the corner gathers fuse into the group
    that blends them (no kernel of their own storing the corners, as when the channel
    arange was a prepared tensor), and the results equal the evaluator's on the source."""
    import physlayout

    text = bilinear(8, 3, 7)
    source = parse(text)
    inputs = random_inputs(next(iter(source.body.block.ops)), 7)  # type: ignore[arg-type]
    want = run_graph(source, "bilinear", inputs)[0]
    model = physlayout.compile(text, cache=False, params={"w0": inputs[1], "wt": inputs[2]})
    got = model(inputs[0])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    launched = [k for k in (getattr(step, "kernel", None) for step in model.plan.steps) if k]
    assert "bilinear_fused_o" in launched, launched
    assert not [name for name in launched if "merged" in name or "_g0" in name], launched


def test_planted_reversed_strides_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """An expand_shape linearized with the strides of its group reversed (a channel index
    from the wrong axis) changes the values of a gather read through a 3x4 reshape."""
    from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

    def reversed_strides(op: object) -> AffineMap | None:
        real = original(op)  # type: ignore[arg-type]
        if real is None:
            return None
        shape = op.result.type.get_shape()  # type: ignore[attr-defined]
        groups = [[a.value.data for a in g.data] for g in op.reassociation.data]  # type: ignore[attr-defined]
        results = []
        for group in groups:
            expr = AffineConstantExpr(0)
            stride = 1
            for axis in group:
                expr = expr + AffineDimExpr(axis) * stride
                stride *= shape[axis]
            results.append(expr)
        return AffineMap(len(shape), 0, tuple(results))

    original = index_functions._expand_map
    monkeypatch.setattr(index_functions, "_expand_map", reversed_strides)
    with pytest.raises(AssertionError):
        compare_before_after(LIT.read_text(), [NormalizeGraphPass()], seed=3)


def test_planted_unproven_fold_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A select folded to its false operand without a proof (every wrap taken as not
    needed) is caught: the gather whose index tensor holds negative indices then reads
    outside its tensor, which the evaluator refuses (it never wraps an index)."""
    monkeypatch.setattr(
        index_functions, "decided_pick", lambda op, bounds: op.rhs  # type: ignore[no-any-return]
    )
    with pytest.raises((AssertionError, EvaluationError)):
        compare_before_after(LIT.read_text(), [NormalizeGraphPass()], seed=3)
