"""legalize-layout, numerically: the graph evaluator on each graph function equals the
buffer evaluator on its legalized host function (after apply-layout, flatten-buffers and
vectorize-texels)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graph_harness import parse
from legalize_harness import check_legalized
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout_graph import TransformOp
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms import legalize_layout
from physlayout.transforms.legalize_layout import LegalizeLayoutPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/legalize-layout.mlir"
EXAMPLE = ROOT / "examples/graph_conv_bias_conv.mlir"

ID4 = "affine_map<(n, c, h, w) -> (n, c, h, w)>"
PARALLEL4 = '["parallel", "parallel", "parallel", "parallel"]'


def relu(value: str, shape: str, result: str) -> str:
    return f"""
  %e_{result} = tensor.empty() : tensor<{shape}xf32>
  %{result} = linalg.generic {{indexing_maps = [{ID4}, {ID4}], iterator_types = {PARALLEL4}}} ins(%{value} : tensor<{shape}xf32>) outs(%e_{result} : tensor<{shape}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  }} -> tensor<{shape}xf32>"""


def conv(x: str, w: str, xs: str, ws: str, ys: str, result: str, stride: int = 1) -> str:
    return f"""
  %z_{result} = arith.constant 0.0 : f32
  %e_{result} = tensor.empty() : tensor<{ys}xf32>
  %f_{result} = linalg.fill ins(%z_{result} : f32) outs(%e_{result} : tensor<{ys}xf32>) -> tensor<{ys}xf32>
  %{result} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}} ins(%{x}, %{w} : tensor<{xs}xf32>, tensor<{ws}xf32>) outs(%f_{result} : tensor<{ys}xf32>) -> tensor<{ys}xf32>"""


CASES = {
    "relu": f"""
func.func @relu(%x: tensor<2x5x3x3xf32>) -> tensor<2x5x3x3xf32> {{{relu("x", "2x5x3x3", "r")}
  func.return %r : tensor<2x5x3x3xf32>
}}""",
    "add_broadcast": f"""
func.func @add(%x: tensor<1x6x4x4xf32>, %b: tensor<6x1x1xf32>) -> tensor<1x6x4x4xf32> {{
  %e = tensor.empty() : tensor<1x6x4x4xf32>
  %r = linalg.generic {{indexing_maps = [{ID4}, affine_map<(n, c, h, w) -> (c, 0, 0)>, {ID4}], iterator_types = {PARALLEL4}}} ins(%x, %b : tensor<1x6x4x4xf32>, tensor<6x1x1xf32>) outs(%e : tensor<1x6x4x4xf32>) {{
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  }} -> tensor<1x6x4x4xf32>
  func.return %r : tensor<1x6x4x4xf32>
}}""",
    "conv": f"""
func.func @conv(%x: tensor<1x3x9x9xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<1x5x4x4xf32> {{{conv("x", "w", "1x3x9x9", "5x3x3x3", "1x5x4x4", "y", stride=2)}
  func.return %y : tensor<1x5x4x4xf32>
}}""",
    "conv_relu_conv": f"""
func.func @crc(%x: tensor<1x6x8x8xf32>, %w1: tensor<8x6x3x3xf32>, %w2: tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32> {{{conv("x", "w1", "1x6x8x8", "8x6x3x3", "1x8x6x6", "c1")}{relu("c1", "1x8x6x6", "r")}{conv("r", "w2", "1x8x6x6", "4x8x3x3", "1x4x4x4", "c2")}
  func.return %c2 : tensor<1x4x4x4xf32>
}}""",
    "padded_transforms": """
func.func @padded(%x: tensor<1x6x3x3xf32>) -> (tensor<1x2x3x3x4xf32>, tensor<1x6x3x3xf32>, tensor<1x8x3x3xf32>) {
  %t = layout.transform %x {index_map = #layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = -2.5 : f32} : tensor<1x6x3x3xf32> -> tensor<1x2x3x3x4xf32>
  %b8 = layout.transform %t {index_map = #layout.index_map<(n, c4, h, w, c) -> (n, c4 * 4 + c, h, w)>} : tensor<1x2x3x3x4xf32> -> tensor<1x8x3x3xf32>
  %b = layout.crop %b8 {start = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 6, 3, 3>, cropped_value = -2.5 : f32} : tensor<1x8x3x3xf32> -> tensor<1x6x3x3xf32>
  func.return %t, %b, %b8 : tensor<1x2x3x3x4xf32>, tensor<1x6x3x3xf32>, tensor<1x8x3x3xf32>
}""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cases_agree(name: str) -> None:
    check_legalized(CASES[name])


def test_lit_functions_agree() -> None:
    check_legalized(LIT.read_text())


def test_running_example_agrees() -> None:
    check_legalized(EXAMPLE.read_text(), seed=5)


def test_named_conv_matches_numpy() -> None:
    """The generic form of linalg.conv_2d_nchw_fchw (strides 2) is a convolution."""
    module = parse(CASES["conv"])
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 9, 9)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    (y,) = run_graph(module, "conv", [x, w])
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    expected = np.einsum("nchwij,fcij->nfhw", windows, w)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


INVALID = {
    "call": (
        "func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %y = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %y : tensor<4xf32>\n}",
        "legalize-layout: 'func.call' cannot be legalized",
    ),
    "dynamic": (
        "func.func @d(%x: tensor<?xf32>) -> tensor<?xf32> {\n  func.return %x : tensor<?xf32>\n}",
        "has a dynamic tensor tensor<?xf32>",
    ),
    "scalar_result": (
        "func.func @s(%x: tensor<4xf32>, %f: f32) -> f32 {\n  func.return %f : f32\n}",
        "returns f32; only tensor results legalize",
    ),
    "out_of_bounds": (
        "func.func @o(%x: tensor<4xf32>) -> tensor<5xf32> {\n"
        "  %e = tensor.empty() : tensor<5xf32>\n"
        "  %r = linalg.generic {indexing_maps = [affine_map<(i) -> ((i * 2) mod 5)>,"
        ' affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>)'
        " outs(%e : tensor<5xf32>) {\n"
        "  ^bb0(%a: f32, %o: f32):\n    linalg.yield %a : f32\n  } -> tensor<5xf32>\n"
        "  func.return %r : tensor<5xf32>\n}",
        "operand #0 may be accessed outside its shape [4] by (d0) -> ((d0 * 2) mod 5)",
    ),
    "collision": (
        "func.func @c(%x: tensor<4xf32>) -> tensor<2xf32> {\n"
        "  %e = tensor.empty() : tensor<2xf32>\n"
        "  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i floordiv 2)>],"
        ' iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<2xf32>) {\n'
        "  ^bb0(%a: f32, %o: f32):\n    linalg.yield %a : f32\n  } -> tensor<2xf32>\n"
        "  func.return %r : tensor<2xf32>\n}",
        "writes one element from several parallel iterations",
    ),
    "reduction_output": (
        "func.func @r(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %e = tensor.empty() : tensor<4xf32>\n"
        "  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],"
        ' iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {\n'
        "  ^bb0(%a: f32, %o: f32):\n    linalg.yield %a : f32\n  } -> tensor<4xf32>\n"
        "  func.return %r : tensor<4xf32>\n}",
        "output #0 is indexed by reduction loop d0",
    ),
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_refusals_are_diagnostics(name: str) -> None:
    text, message = INVALID[name]
    module = parse(text)
    with pytest.raises(PassFailedException, match=__import__("re").escape(message)):
        LegalizeLayoutPass().apply(make_context(), module)


VIEWS = ROOT / "test/graph/legalize-views.mlir"


def test_reshape_views_agree() -> None:
    """Reshapes legalized as second declarations of one storage compute what the graph
    does, the in-place insert refused on a view included (buffer evaluator, bit for bit)."""
    check_legalized(VIEWS.read_text())


def test_planted_bug_in_place_insert_into_a_view_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With views not recorded, an insert updates a view of a computed value in place, and
    the value's later reader (%m reads %n after the insert into its view %v) sees the
    update: the values differ."""
    text = VIEWS.read_text() + """
func.func @insert_into_computed_view(%x: tensor<2x3xf32>, %y: tensor<1x2xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %e = tensor.empty() : tensor<2x3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %v = layout.transform %n {index_map = #layout.index_map<(a, b) -> ((a * 3 + b) floordiv 2, (a * 3 + b) mod 2)>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %i = tensor.insert_slice %y into %v[1, 0] [1, 2] [1, 1] : tensor<1x2xf32> into tensor<3x2xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%n : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.addf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  func.return %m, %i : tensor<2x3xf32>, tensor<3x2xf32>
}
"""
    check_legalized(text)
    monkeypatch.setattr(legalize_layout.HostBuilder, "_reshape_view", _view_without_record)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(text)


def _view_without_record(self: legalize_layout.HostBuilder, op: TransformOp) -> bool:
    """`_reshape_view` that forgets to record the two values as views."""
    views = set(self.views)
    made = _REAL_VIEW(self, op)
    self.views = views
    return made


_REAL_VIEW = legalize_layout.HostBuilder._reshape_view  # pyright: ignore[reportPrivateUsage]
