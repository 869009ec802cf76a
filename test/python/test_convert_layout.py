"""convert-layout, numerically: every function of the lit input gives the same results
(bit for bit, graph evaluator) before and after convert-layout and after convert-layout,
flow-layout-rewrites and fold-layout-rewrites; conv -> relu -> conv chains keep only the
graph-boundary rewrites."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graph_harness import compare_before_after, count_ops, parse
from hypothesis import given, settings
from hypothesis import strategies as st
from test_legalize_layout import conv, relu
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
from physlayout.semantics.graph_evaluator import EvaluationError, run_graph
from physlayout.transforms import convert_layout
from physlayout.transforms.convert_layout import ConvertLayoutPass, parse_desired_layouts
from physlayout.transforms.flow_layout_rewrites import FROZEN, FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.transforms.normalize_graph import NormalizeGraphPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/convert-layout.mlir"

PIPELINES: dict[str, list[ModulePass]] = {
    "convert": [ConvertLayoutPass()],
    "convert-no-padding": [ConvertLayoutPass(allow_padding=False)],
    "convert-nhwc": [ConvertLayoutPass(desired_layouts="conv2d=NHWC,OHWI,NHWC")],
    "convert-flow-fold": [ConvertLayoutPass(), FlowLayoutRewritesPass(), FoldLayoutRewritesPass()],
}


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_lit_functions_agree(pipeline: str) -> None:
    _, results = compare_before_after(LIT.read_text(), PIPELINES[pipeline], seed=2)
    assert len(results) == 13  # every function of convert-layout.mlir ran, the mixed-precision one too


def chain(channels: int, out: int, size: int = 6) -> str:
    """conv (channels -> out) -> relu -> conv (out -> out), NCHW in and out."""
    h1, h2 = size - 2, size - 4
    xs, w1s, w2s = f"1x{channels}x{size}x{size}", f"{out}x{channels}x3x3", f"{out}x{out}x3x3"
    ys1, ys2 = f"1x{out}x{h1}x{h1}", f"1x{out}x{h2}x{h2}"
    return f"""
func.func @chain(%x: tensor<{xs}xf32>, %w1: tensor<{w1s}xf32>, %w2: tensor<{w2s}xf32>) -> tensor<{ys2}xf32> {{{conv("x", "w1", xs, w1s, ys1, "c1")}{relu("c1", ys1, "r")}{conv("r", "w2", ys1, w2s, ys2, "c2")}
  func.return %c2 : tensor<{ys2}xf32>
}}"""


@pytest.mark.parametrize(("channels", "out"), [(3, 3), (6, 6), (64, 32), (8, 4)])
def test_chain_keeps_only_boundary_rewrites(channels: int, out: int) -> None:
    passes = PIPELINES["convert-flow-fold"]
    after, _ = compare_before_after(chain(channels, out), passes, seed=channels)
    # x, w1 and w2 into the blocked layouts, the result back to NCHW (+ a crop when the
    # output channels pad): the rewrites between the convs cancel through the relu.
    assert count_ops(after, "layout.transform") == 4
    assert count_ops(after, "layout.crop") == (1 if out % 4 else 0)
    assert count_ops(after, "linalg.generic") == 3


def test_non_finite_input_breaks_the_crop_promise_loudly() -> None:
    """Padded output channels hold `fill + x * 0.0`: an infinite input makes them NaN, and
    the graph evaluator reports the broken `cropped_value` promise instead of hiding it."""
    module = parse(chain(6, 6))
    ConvertLayoutPass().apply(make_context(), module)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 6, 6, 6)).astype(np.float32)
    x[0, 0, 0, 0] = np.inf
    w1 = rng.standard_normal((6, 6, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((6, 6, 3, 3)).astype(np.float32)
    with np.errstate(all="ignore"), pytest.raises(EvaluationError, match="cropped_value"):
        run_graph(module, "chain", [x, w1, w2])


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("conv2d=NCHW4c,OIHW4o", "bad desired-layouts entry 'conv2d=NCHW4c,OIHW4o'"),
        ("matmul=NC,CK,NK", "KIND one of ['conv2d']"),
        ("conv2d=NCHW4x,OIHW4o,NCHW4c", "layout 'NCHW4x' for conv2d"),
        ("conv2d=NCW,OIHW4o,NCHW4c", "layout 'NCW' for conv2d"),
    ],
)
def test_bad_options_are_diagnostics(option: str, message: str) -> None:
    with pytest.raises(PassFailedException, match=__import__("re").escape(message)):
        parse_desired_layouts(option)


def test_default_layouts() -> None:
    assert parse_desired_layouts("conv2d=NCHW4c,OIHW4o,NCHW4c") == {
        "conv2d": ("NCHW4c", "OIHW4o", "NCHW4c")
    }


def grouped_chain(groups: int, width: int) -> str:
    """conv (8 -> C) -> relu -> pad -> grouped conv (C -> C, `groups` groups of `width`
    channels, as torch-mlir prints it: expand, conv_2d_ngchw_gfchw, collapse) -> relu."""
    c = groups * width
    x, w1, w2 = "1x8x8x8", f"{c}x8x1x1", f"{c}x{width}x3x3"
    y, p, g = f"1x{c}x8x8", f"1x{c}x10x10", f"1x{groups}x{width}x8x8"
    return f"""
func.func @grouped_chain(%x: tensor<{x}xf32>, %w1: tensor<{w1}xf32>, %w2: tensor<{w2}xf32>) -> tensor<{y}xf32> {{{conv("x", "w1", x, w1, y, "c1")}{relu("c1", y, "r")}
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  }} : tensor<{y}xf32> to tensor<{p}xf32>
  %xe = tensor.expand_shape %p [[0], [1, 2], [3], [4]] output_shape [1, {groups}, {width}, 10, 10] : tensor<{p}xf32> into tensor<1x{groups}x{width}x10x10xf32>
  %we = tensor.expand_shape %w2 [[0, 1], [2], [3], [4]] output_shape [{groups}, {width}, {width}, 3, 3] : tensor<{w2}xf32> into tensor<{groups}x{width}x{width}x3x3xf32>
  %e = tensor.empty() : tensor<{g}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{g}xf32>) -> tensor<{g}xf32>
  %gc = linalg.conv_2d_ngchw_gfchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%xe, %we : tensor<1x{groups}x{width}x10x10xf32>, tensor<{groups}x{width}x{width}x3x3xf32>) outs(%f : tensor<{g}xf32>) -> tensor<{g}xf32>
  %y = tensor.collapse_shape %gc [[0], [1, 2], [3], [4]] : tensor<{g}xf32> into tensor<{y}xf32>{relu("y", y, "out")}
  func.return %out : tensor<{y}xf32>
}}"""


@pytest.mark.parametrize(("groups", "width"), [(2, 8), (4, 4), (2, 2), (3, 4)])
def test_grouped_conv_chain_keeps_only_boundary_rewrites(groups: int, width: int) -> None:
    """Between the conv and the grouped conv (regnet's blocks) the activations stay in
    NCHW4c: the reshapes into and out of groups cancel with the grouped conv's transforms,
    leaving x, the two filters and the result's transform (no reshape kernel per block)."""
    passes: list[ModulePass] = [
        NormalizeGraphPass(),
        RaiseLayoutRewritesPass(),
        *PIPELINES["convert-flow-fold"],
    ]
    after, _ = compare_before_after(grouped_chain(groups, width), passes, seed=groups)
    frozen = [op for op in after.walk() if FROZEN in op.attributes]
    assert len(frozen) == 2
    assert count_ops(after, "layout.transform") == 4


def _plans(text: str) -> list[tuple[object, object]]:
    """Per conv of `text`, layouts and padding choice: the cached plan (asked twice) and a
    fresh one (a plan, or the refusal's message)."""
    pairs: list[tuple[object, object]] = []
    for op in parse(text).walk():
        conv = convert_layout.match_conv(op)
        if conv is None:
            continue
        shapes = [convert_layout.static_shape(v) for v in (conv.input, conv.filter, conv.init)]
        form = convert_layout.ConvForm(
            conv.maps, conv.kinds, conv.extents, conv.canonical, tuple(s for s in shapes if s)
        )
        for layouts in ("NCHW4c,OIHW4o,NCHW4c", "NHWC,OHWI,NHWC", "NCHW8c,OIHW8o,NCHW8c"):
            kind = parse_desired_layouts(f"conv2d={layouts}")["conv2d"]
            for padding in (True, False):
                try:
                    fresh: object = convert_layout._plan_blocked_conv(form, kind, padding)  # pyright: ignore[reportPrivateUsage]
                except convert_layout._Unconverted as reason:  # pyright: ignore[reportPrivateUsage]
                    fresh = str(reason)
                for _ in range(2):
                    pairs.append((convert_layout._blocked_conv(form, kind, padding), fresh))  # pyright: ignore[reportPrivateUsage]
    return pairs


def test_cached_conv_plans_are_the_fresh_ones_on_the_lit_input() -> None:
    """convert-layout plans a conv once per distinct form (`_blocked_conv`): on every conv
    of the lit input, in three layouts, with and without padding, the cached plan (or
    refusal) equals one computed afresh."""
    pairs = _plans(LIT.read_text())
    assert len(pairs) >= 60
    for cached, fresh in pairs:
        assert cached == fresh


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(5, 8))
def test_cached_conv_plans_are_the_fresh_ones_on_random_chains(
    channels: int, out: int, size: int
) -> None:
    """The same on conv chains of random channel counts and sizes (padded and refused
    plans among them)."""
    for cached, fresh in _plans(chain(channels, out, size)):
        assert cached == fresh
