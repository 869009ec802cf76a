"""Upsampling fused into its readers and PixelShuffle folded into its copy (fuse-elementwise),
on values: the graph evaluator before and after the pass (exact: the recomputed gather runs
the same ops), the legalized host on the buffer evaluator after each buffer stage, OpenCL on
the texture group, hypothesis over nearest upsampling (scale 2 and 3, extents 1, odd and
prime, 3 and 5 channels), and a planted bug (the stage's gather from the wrong loop) caught
on values."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, parse, random_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legalize_harness import check_legalized

from physlayout.transforms import legalize_layout
from physlayout.transforms.fuse_elementwise import FuseElementwisePass

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/fuse-upsample.mlir"


def _function(text: str, name: str) -> str:
    """The `#map` aliases of `text` and its function `@name` alone."""
    aliases = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    body = re.search(rf"\nfunc\.func @{name}\(.*?\n}}\n", text, flags=re.S)
    assert body is not None
    return f"{aliases}\n{body.group(0)}"


def _top_level_gathers(text: str) -> int:
    """Generics at the top level of a function that gather (a stored upsampled tensor)."""
    module = apply(parse(text), [FuseElementwisePass()])
    count = 0
    for function in module.body.block.ops:
        for op in function.regions[0].block.ops:
            if op.name == "linalg.generic" and any(
                inner.name == "tensor.extract" for inner in op.walk()
            ):
                count += 1
    return count


def test_lit_functions_agree_before_and_after() -> None:
    """Every function of fuse-upsample.mlir: graph evaluator before == after, bit for bit."""
    compare_before_after(LIT.read_text(), [FuseElementwisePass()], seed=1)


def test_lit_functions_legalize_to_their_values() -> None:
    """Fused, legalized and lowered through the buffer stages: the buffer evaluator equals
    the graph evaluator on the source, bit for bit."""
    check_legalized(LIT.read_text(), [FuseElementwisePass()], seed=2)


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("upsample_add", 0),
        ("two_readers", 0),
        ("shifted_reader", 1),
        ("two_readers_one_shifted", 1),
        ("returned_too", 1),
        ("blocked_texture", 0),
        ("lane_along_w", 1),
    ],
)
def test_upsampled_tensor_stored_only_when_refused(name: str, stored: int) -> None:
    assert _top_level_gathers(_function(LIT.read_text(), name)) == stored


NEAREST = """
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @nearest(%x: tensor<1xCxHOxWOxf32>, %w: tensor<CxCx1x1xf32>, %src: tensor<1xCxHIxWIxf32>) -> tensor<1xCxHOxWOxf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_3 = arith.constant SCALE : f32
  %c0 = arith.constant 0 : index
  %cst_h = arith.constant HMAX : f32
  %cst_w = arith.constant WMAX : f32
  %e = tensor.empty() : tensor<1xCxHOxWOxf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1xCxHOxWOxf32>) -> tensor<1xCxHOxWOxf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1xCxHOxWOxf32>, tensor<CxCx1x1xf32>) outs(%f : tensor<1xCxHOxWOxf32>) -> tensor<1xCxHOxWOxf32>
  %u = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1xCxHOxWOxf32>) {
  ^bb0(%out: f32):
    %78 = linalg.index 1 : index
    %79 = linalg.index 2 : index
    %80 = linalg.index 3 : index
    %81 = arith.index_cast %79 : index to i64
    %82 = arith.sitofp %81 : i64 to f32
    %83 = arith.divf %82, %cst_3 : f32
    %84 = math.floor %83 : f32
    %85 = arith.maximumf %84, %cst : f32
    %86 = arith.minimumf %85, %cst_h : f32
    %87 = arith.fptosi %86 : f32 to i64
    %88 = arith.index_cast %87 : i64 to index
    %89 = arith.index_cast %80 : index to i64
    %90 = arith.sitofp %89 : i64 to f32
    %91 = arith.divf %90, %cst_3 : f32
    %92 = math.floor %91 : f32
    %93 = arith.maximumf %92, %cst : f32
    %94 = arith.minimumf %93, %cst_w : f32
    %95 = arith.fptosi %94 : f32 to i64
    %96 = arith.index_cast %95 : i64 to index
    %extracted = tensor.extract %src[%c0, %78, %88, %96] : tensor<1xCxHIxWIxf32>
    linalg.yield %extracted : f32
  } -> tensor<1xCxHOxWOxf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %u : tensor<1xCxHOxWOxf32>, tensor<1xCxHOxWOxf32>) outs(%e : tensor<1xCxHOxWOxf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.addf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1xCxHOxWOxf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %u : tensor<1xCxHOxWOxf32>, tensor<1xCxHOxWOxf32>) outs(%e : tensor<1xCxHOxWOxf32>) {
  ^bb0(%in: f32, %in_40: f32, %out: f32):
    %78 = arith.mulf %in, %in_40 : f32
    linalg.yield %78 : f32
  } -> tensor<1xCxHOxWOxf32>
  return %m : tensor<1xCxHOxWOxf32>
}
"""
"""fpn_tiny's nearest upsampling (its body as torch-mlir prints it) read twice: by the add
after a 1x1 conv and by a multiply of that sum."""


def _nearest(channels: int, height: int, width: int, scale: int) -> str:
    values = {
        "HO": str(height * scale), "WO": str(width * scale), "HI": str(height),
        "WI": str(width), "C": str(channels), "SCALE": f"{float(scale):e}",
        "HMAX": f"{float(height - 1):e}", "WMAX": f"{float(width - 1):e}",
    }  # fmt: skip
    return re.sub("|".join(values), lambda m: values[m.group(0)], NEAREST)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    channels=st.sampled_from([3, 5]),
    height=st.sampled_from([1, 2, 3, 5, 7]),
    width=st.sampled_from([1, 3, 5]),
    scale=st.sampled_from([2, 3]),
)
def test_nearest_fused_keeps_values(channels: int, height: int, width: int, scale: int) -> None:
    """The upsample read twice is recomputed by the one group both readers end in; the
    evaluator gives the same values bit for bit, and so does the legalized kernel."""
    text = _nearest(channels, height, width, scale)
    assert _top_level_gathers(text) == 0
    compare_before_after(text, [FuseElementwisePass()], seed=height * 7 + width)
    check_legalized(text, [FuseElementwisePass()], seed=scale)


def test_planted_gather_from_the_wrong_loop_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A legalization that gives a fused upsample's `linalg.index` the root's loops in the
    wrong order (H read as W: a texel coordinate from the wrong logical index) is caught on
    values by the same check."""
    real = legalize_layout.stage_loops

    def swapped(stage: object, root: object, root_out: object) -> dict[str, object]:
        loops = dict(real(stage, root, root_out))  # type: ignore[arg-type]
        loops["d2"], loops["d3"] = loops["d3"], loops["d2"]
        return loops

    monkeypatch.setattr(legalize_layout, "stage_loops", swapped)
    with pytest.raises(AssertionError):
        check_legalized(_nearest(3, 2, 3, 2), [FuseElementwisePass()], seed=0)


def test_planted_wrong_scale_is_caught() -> None:
    """The fused group with the upsample's scale changed (3 where the source says 2: the
    source index of another resize) differs from the source on values."""
    text = _nearest(3, 3, 3, 2)
    fused = str(apply(parse(text), [FuseElementwisePass()]))
    planted = fused.replace("2.000000e+00 : f32", "3.000000e+00 : f32")
    assert planted != fused
    from physlayout.semantics.graph_evaluator import run_graph

    source = parse(text)
    function = next(iter(source.body.block.ops))
    inputs = random_inputs(function, 0)  # type: ignore[arg-type]
    want = run_graph(source, "nearest", inputs)
    got = run_graph(parse(planted), "nearest", inputs)
    assert not np.array_equal(got[0], want[0])
