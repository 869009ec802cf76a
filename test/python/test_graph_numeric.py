"""Numeric checks of fold-layout-rewrites, flow-layout-rewrites and the layout dialect's
canonicalization patterns (stock `canonicalize`): every function of the lit
inputs (and of the running example) runs on the same random inputs before and after the
passes in the numpy graph evaluator, with bit-identical results. Also checks the evaluator
itself against plain numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, count_ops, parse
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass

from physlayout.semantics.graph_evaluator import EvaluationError, run_graph
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass

ROOT = Path(__file__).resolve().parents[2]
FOLD = ROOT / "test/graph/fold-layout-rewrites.mlir"
FLOW = ROOT / "test/graph/flow-layout-rewrites.mlir"
INTEROP = ROOT / "test/graph/flow-mlir-interop.mlir"
RUNNER = ROOT / "test/graph/flow-mlir-runner.mlir"
EXAMPLE = ROOT / "examples/graph_conv_bias_conv.mlir"
CANONICALIZE = ROOT / "test/dialects/layout/canonicalize.mlir"

PIPELINES: dict[str, list[ModulePass]] = {
    "fold": [FoldLayoutRewritesPass()],
    "flow": [FlowLayoutRewritesPass()],
    "flow-fold": [FlowLayoutRewritesPass(), FoldLayoutRewritesPass()],
    "canonicalize": [CanonicalizePass()],
}


def _testable(text: str) -> str:
    """The module without the @promise_* functions (their promises are about arguments)
    and @main (it prints through upstream MLIR's runner)."""
    module = parse(text)
    for function in list(module.ops):
        name = getattr(function, "sym_name", None)
        if name is not None and (name.data.startswith("promise_") or name.data == "main"):
            function.detach()
    return str(module)


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize(
    "source", [FOLD, FLOW, INTEROP, RUNNER, EXAMPLE, CANONICALIZE], ids=lambda p: p.name
)
def test_results_agree_before_and_after(source: Path, pipeline: str) -> None:
    _, results = compare_before_after(_testable(source.read_text()), PIPELINES[pipeline])
    assert results


def test_running_example_keeps_only_boundary_rewrites() -> None:
    after, results = compare_before_after(
        EXAMPLE.read_text(), [FlowLayoutRewritesPass(), FoldLayoutRewritesPass()], seed=3
    )
    assert set(results) == {"conv_bias_conv", "conv_bias_conv_padded"}
    plain, padded = (f for f in after.ops if getattr(f, "sym_name", None) is not None)
    transforms = [op for op in plain.walk() if op.name == "layout.transform"]
    sources = {op.operands[0].name_hint for op in transforms}
    assert len(transforms) == 4 and {"x", "f1", "f2"} <= sources
    assert count_ops(padded, "layout.transform") == 4
    assert count_ops(padded, "layout.crop") == 1
    assert count_ops(after, "linalg.generic") == 6


@pytest.mark.parametrize("seed", [0, 1])
def test_promises_kept_by_the_inputs(seed: int) -> None:
    """The @promise_* functions whose promise is a value, on inputs that keep it."""
    module = parse(FOLD.read_text())
    folded = apply(parse(FOLD.read_text()), [FoldLayoutRewritesPass()])
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(8).astype(np.float32)
    x[[0, 7]] = 0.0
    for name in ("promise_pad_of_crop", "promise_padded_transform_of_shifted_crop"):
        before = run_graph(module, name, [x])
        after = run_graph(folded, name, [x])
        np.testing.assert_array_equal(before[0], after[0], err_msg=name)


def test_runner_graphs_match_the_printed_results() -> None:
    """The values upstream MLIR prints in flow-mlir-runner.mlir, from the evaluator."""
    module = parse(_testable(RUNNER.read_text()))
    (padded,) = run_graph(module, "padded_bias", [])
    assert padded[0, :, 0, 0, :].tolist() == [[100, 202, 304, 406], [508, 610, 0, 0]]
    (summed,) = run_graph(module, "sum_over_h", [])
    assert summed[0].tolist() == [[11, 44], [22, 55], [33, 66]]
    (shifted,) = run_graph(module, "shifted", [np.arange(9, dtype=np.float32)])
    assert shifted.tolist() == [[-1, -2, -3, -4], [-5, -6, -7, -8]]


def test_broken_promise_is_reported() -> None:
    module = parse(FOLD.read_text())
    x = np.ones(8, dtype=np.float32)
    with pytest.raises(EvaluationError, match="cropped-away elements differ from cropped_value"):
        run_graph(module, "promise_pad_of_crop", [x])


def test_undef_promise_changes_only_the_padding() -> None:
    module = parse(FOLD.read_text())
    folded = apply(parse(FOLD.read_text()), [FoldLayoutRewritesPass()])
    x = np.arange(8, dtype=np.float32)
    before = run_graph(module, "promise_pad_of_crop_undef", [x])[0]
    after = run_graph(folded, "promise_pad_of_crop_undef", [x])[0]
    np.testing.assert_array_equal(before[:6], after[:6])
    assert list(before[6:]) == [3.0, 3.0] and list(after[6:]) == [6.0, 7.0]


# The evaluator against numpy ------------------------------------------------------------

CONV = """
func.func @conv(%x: tensor<1x3x5x5xf32>, %f: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %zero = arith.constant dense<0.0> : tensor<1x4x3x3xf32>
  %r = linalg.generic {indexing_maps = [
      affine_map<(n, o, h, w, i, kh, kw) -> (n, i, h + kh, w + kw)>,
      affine_map<(n, o, h, w, i, kh, kw) -> (o, i, kh, kw)>,
      affine_map<(n, o, h, w, i, kh, kw) -> (n, o, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %f : tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>) outs(%zero : tensor<1x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4x3x3xf32>
  func.return %r : tensor<1x4x3x3xf32>
}

func.func @out_of_bounds(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> ((i * 2) mod 5)>, affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

func.func @callee(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  %t = layout.transform %x {index_map = #layout.index_map<(i) -> (i mod 2, i floordiv 2)>} : tensor<4xf32> -> tensor<2x2xf32>
  func.return %t : tensor<2x2xf32>
}

func.func @caller(%x: tensor<4xf32>, %s: f32) -> (tensor<2x2xf32>, f32) {
  %r = func.call @callee(%x) : (tensor<4xf32>) -> tensor<2x2xf32>
  %y = arith.mulf %s, %s : f32
  func.return %r, %y : tensor<2x2xf32>, f32
}

func.func @rewrites(%x: tensor<6xi32>) -> (tensor<2x4xi32>, tensor<9xi32>, tensor<2xi32>) {
  %t = layout.transform %x {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1 : i32} : tensor<6xi32> -> tensor<2x4xi32>
  %p = layout.pad %x {low = array<i64: 1>, high = array<i64: 2>, pad_value = 7 : i32} : tensor<6xi32> -> tensor<9xi32>
  %c = layout.crop %x {start = array<i64: 3>, sizes = array<i64: 2>} : tensor<6xi32> -> tensor<2xi32>
  func.return %t, %p, %c : tensor<2x4xi32>, tensor<9xi32>, tensor<2xi32>
}
"""


def test_evaluator_conv_matches_numpy() -> None:
    module = parse(CONV)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    f = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    (result,) = run_graph(module, "conv", [x, f])
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
    expected = np.einsum("nihwkl,oikl->nohw", windows, f)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def test_evaluator_checks_bounds() -> None:
    module = parse(CONV)
    with pytest.raises(EvaluationError, match="out of bounds"):
        run_graph(module, "out_of_bounds", [np.zeros(4, dtype=np.float32)])


def test_evaluator_layout_rewrites() -> None:
    module = parse(CONV)
    x = np.arange(6, dtype=np.int32)
    t, p, c = run_graph(module, "rewrites", [x])
    assert t.tolist() == [[0, 1, 2, 3], [4, 5, -1, -1]]
    assert p.tolist() == [7, 0, 1, 2, 3, 4, 5, 7, 7]
    assert c.tolist() == [3, 4]


def test_evaluator_calls_and_scalars() -> None:
    module = parse(CONV)
    r, y = run_graph(module, "caller", [np.arange(4, dtype=np.float32), 3.0])
    assert r.tolist() == [[0, 2], [1, 3]] and y == 9.0


def test_evaluator_rejects_bad_arguments() -> None:
    module = parse(CONV)
    with pytest.raises(EvaluationError, match="must be a int32 array of shape"):
        run_graph(module, "rewrites", [np.arange(5, dtype=np.int32)])


RANK0_PAD = """
func.func @g(%x: tensor<6xf32>) -> tensor<1xf32> {
  %v1 = layout.crop %x {start = array<i64: 4>, sizes = array<i64: 1>} : tensor<6xf32> -> tensor<1xf32>
  %v2 = layout.pad %v1 {low = array<i64: 0>, high = array<i64: 0>, pad_value = 0.0 : f32} : tensor<1xf32> -> tensor<1xf32>
  %v3 = arith.constant dense<0.0> : tensor<1xf32>
  %v4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%v2 : tensor<1xf32>) outs(%v3 : tensor<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  %v5 = layout.transform %v4 {index_map = #layout.index_map<(i) -> (0 - i)>, pad_value = 0.0 : f32} : tensor<1xf32> -> tensor<1xf32>
  %v6 = layout.transform %v5 {index_map = #layout.index_map<(i) -> (i)>} : tensor<1xf32> -> tensor<1xf32>
  func.return %v6 : tensor<1xf32>
}
"""


def test_rank0_pad_after_flow_keeps_the_value() -> None:
    """A fuzz find: flow-layout-rewrites moves the extent-1 relayout up, leaving a `layout.pad`
    of a rank-0 tensor (nothing to pad), which the evaluator must run as the identity
    (numpy's pad refuses 0-d arrays)."""
    after = apply(parse(RANK0_PAD), [FlowLayoutRewritesPass()])
    assert "tensor<f32> -> tensor<f32>" in str(after)  # the rank-0 pad is really there
    x = np.array([-1.0, 2.0, -3.0, 4.0, 5.5, -6.0], np.float32)
    want = run_graph(parse(RANK0_PAD), "g", [x])[0]
    np.testing.assert_array_equal(want, [5.5])
    np.testing.assert_array_equal(run_graph(after, "g", [x])[0], want)
