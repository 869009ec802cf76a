"""The ops torch-mlir emits: the named linalg ops physlayout defines or fixes (against numpy
and, where installed, against `mlir-opt-22 --linalg-generalize-named-ops`), multi-result
generics, `normalize-graph` (every function of test/graph/normalize-graph.mlir before and
after, plus the values that make its rewrites wrong), `layout.check`, and the legalized
kernels of all of them (buffer evaluator after every buffer stage, and OpenCL)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, functions, parse
from legalize_harness import check_legalized, host_inputs, run_host
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.linalg_generic import GenericOp as ParsedGenericOp
from physlayout.semantics.evaluator_values import CheckFailed
from physlayout.semantics.graph_evaluator import generic_form, run_graph
from physlayout.transforms.legalize_layout import LegalizeLayoutPass
from physlayout.transforms.normalize_graph import NormalizeGraphPass

ROOT = Path(__file__).resolve().parents[2]
NORMALIZE = (ROOT / "test/graph/normalize-graph.mlir").read_text()

NAMED = """
func.func @depthwise(%x: tensor<1x3x11x13xf32>, %w: tensor<3x3x2xf32>, %o: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %0 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<[2, 3]> : vector<2xi64>, strides = dense<[2, 2]> : vector<2xi64>} ins(%x, %w : tensor<1x3x11x13xf32>, tensor<3x3x2xf32>) outs(%o : tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  func.return %0 : tensor<1x3x4x5xf32>
}
func.func @max_pool(%x: tensor<1x5x7x7xf32>) -> tensor<1x5x3x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x5x3x3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x5x3x3xf32>) -> tensor<1x5x3x3xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %window : tensor<1x5x7x7xf32>, tensor<3x3xf32>) outs(%init : tensor<1x5x3x3xf32>) -> tensor<1x5x3x3xf32>
  func.return %0 : tensor<1x5x3x3xf32>
}
func.func @sum_pool(%x: tensor<1x2x6x6xf32>, %o: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %window = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %window : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%o : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}
func.func @batch(%a: tensor<3x5x7xf32>, %b: tensor<3x7x2xf32>, %c: tensor<3x5x2xf32>) -> tensor<3x5x2xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<3x5x7xf32>, tensor<3x7x2xf32>) outs(%c : tensor<3x5x2xf32>) -> tensor<3x5x2xf32>
  func.return %0 : tensor<3x5x2xf32>
}
"""


def _depthwise(x: Any, w: Any, o: Any) -> Any:
    out = o.astype(np.float64).copy()
    for c in range(3):
        for oh in range(4):
            for ow in range(5):
                for kh in range(3):
                    for kw in range(2):
                        out[0, c, oh, ow] += x[0, c, oh * 2 + kh * 2, ow * 2 + kw * 3] * w[c, kh, kw]
    return out


def _pool(x: Any, size: int, stride: int, out: int, reduce: Any) -> Any:
    windows = [
        [x[:, :, i * stride : i * stride + size, j * stride : j * stride + size] for j in range(out)]
        for i in range(out)
    ]
    return np.stack([np.stack([reduce(w, axis=(2, 3)) for w in row], -1) for row in windows], -2)


def test_named_ops_compute_their_upstream_meaning() -> None:
    module = parse(NAMED)
    rng = np.random.default_rng(7)
    x, w, o = (rng.standard_normal(s).astype(np.float32) for s in ((1, 3, 11, 13), (3, 3, 2), (1, 3, 4, 5)))
    (got,) = run_graph(module, "depthwise", [x, w, o])
    np.testing.assert_allclose(got, _depthwise(x, w, o), rtol=1e-5, atol=1e-5)
    x = rng.standard_normal((1, 5, 7, 7)).astype(np.float32)
    (got,) = run_graph(module, "max_pool", [x])
    # The window operand is an uninitialized tensor.empty (NaN in the evaluator): xDSL's own
    # body max(in, window) gave NaN everywhere here.
    np.testing.assert_array_equal(got, _pool(x, 3, 2, 3, np.max))
    x, o = rng.standard_normal((1, 2, 6, 6)).astype(np.float32), rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    (got,) = run_graph(module, "sum_pool", [x, o])
    np.testing.assert_allclose(got, o + _pool(x, 2, 2, 3, np.sum), rtol=1e-5, atol=1e-6)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((3, 5, 7), (3, 7, 2), (3, 5, 2)))
    (got,) = run_graph(module, "batch", [a, b, c])
    np.testing.assert_allclose(got, c + a @ b, rtol=1e-5, atol=1e-5)


def test_named_ops_legalize_to_the_same_values() -> None:
    check_legalized(NAMED)


@pytest.mark.skipif(shutil.which("mlir-opt-22") is None, reason="needs mlir-opt-22")
def test_generic_forms_match_upstream_generalization() -> None:
    """Our generic form of each named op has upstream's maps, iterator types and body ops."""
    upstream_text = subprocess.run(
        ["mlir-opt-22", "--linalg-generalize-named-ops", "--mlir-print-op-generic"],
        input=NAMED, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    upstream = [
        op
        for op in parse(upstream_text).walk()
        if isinstance(op, ParsedGenericOp) and len(op.inputs) == 2  # not the generalized fill
    ]
    ours = [
        generic_form(op)  # type: ignore[arg-type]
        for op in parse(NAMED).walk()
        if op.name.startswith("linalg.") and op.name not in ("linalg.fill", "linalg.yield")
    ]
    assert len(upstream) == len(ours) == 4
    for theirs, mine in zip(upstream, ours, strict=True):
        assert mine.indexing_maps == theirs.indexing_maps
        assert mine.iterator_types == theirs.iterator_types
        assert [o.name for o in mine.body.block.ops] == [o.name for o in theirs.body.block.ops]
        # same operand order in the body: out + in * w (upstream), so addf's lhs is the init
        add = mine.body.block.ops.last.prev_op  # type: ignore[union-attr]
        if add is not None and add.name in ("arith.addf", "arith.maximumf"):
            assert add.operands[0] is mine.body.block.args[-1]


MULTI_RESULT = """
func.func @max_with_argmax(%x: tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2xf32>
  %m = linalg.fill ins(%ninf : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %ei = tensor.empty() : tensor<2xi64>
  %i = linalg.fill ins(%zero : i64) outs(%ei : tensor<2xi64>) -> tensor<2xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x5xf32>) outs(%m, %i : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %out: f32, %idx: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %mx = arith.maximumf %in, %out : f32
    %gt = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %gt, %ki, %idx : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<2xi64>
}
"""


def test_multi_result_generic_parses_prints_and_runs() -> None:
    module = parse(MULTI_RESULT)
    assert "-> (tensor<2xf32>, tensor<2xi64>)" in str(module)
    assert str(parse(str(module))) == str(module)
    x = np.array([[1, 5, 2, 5, 0], [-3, -1, -2, -7, -1]], dtype=np.float32)
    values, indices = run_graph(module, "max_with_argmax", [x])
    np.testing.assert_array_equal(values, [5, -1])
    np.testing.assert_array_equal(indices, [1, 1])
    check_legalized(MULTI_RESULT)


def test_normalize_graph_keeps_every_value() -> None:
    after, _ = compare_before_after(NORMALIZE, [NormalizeGraphPass()])
    names = {op.name for op in after.walk()}
    assert not names & {"linalg.broadcast", "tensor.concat", "cf.assert"}


def test_relu_rewrite_is_exact_on_special_values() -> None:
    """NaN, both zeros and infinities: the maximum equals the select bit for bit."""
    special = np.array([np.nan, -0.0, 0.0, -np.inf, np.inf, -1e-45, 1e-45, -2.5], dtype=np.float32)
    x = np.resize(special, (1, 4, 2, 2)).astype(np.float32)
    before = run_graph(parse(NORMALIZE), "relu", [x])[0]
    after_module = apply(parse(NORMALIZE), [NormalizeGraphPass()])
    after = run_graph(after_module, "relu", [x])[0]
    assert before.tobytes() == after.tobytes()
    y = special[:4].copy()
    first = run_graph(parse(NORMALIZE), "relu_negative_zero", [y])
    second = run_graph(after_module, "relu_negative_zero", [y])
    for a, b in zip(first, second, strict=True):
        assert a.tobytes() == b.tobytes()


def test_outlined_assert_still_fails_with_its_message() -> None:
    var = np.array([1.0, 2.0, 0.0, 4.0], dtype=np.float32)
    message = "assertion failed: unimplemented: tensor with zero element"
    with pytest.raises(CheckFailed, match=message):
        run_graph(parse(NORMALIZE), "batch_norm_scale", [var])
    after = apply(parse(NORMALIZE), [NormalizeGraphPass()])
    with pytest.raises(CheckFailed, match=message + r" \(1 of 4 elements\)"):
        run_graph(after, "batch_norm_scale", [var])
    legalized = apply(after, [LegalizeLayoutPass()])
    function = next(f for f in functions(parse(NORMALIZE)) if f.sym_name.data == "batch_norm_scale")
    with pytest.raises(CheckFailed, match=message):
        run_host(legalized, "batch_norm_scale", host_inputs(function, [var]), [var])
    good = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    np.testing.assert_array_equal(
        run_host(legalized, "batch_norm_scale", host_inputs(function, [good]), [good])[0], 1 / good
    )


def test_normalized_graph_legalizes_to_the_same_values() -> None:
    check_legalized(NORMALIZE, [NormalizeGraphPass()])


def test_assert_in_reduction_is_refused() -> None:
    text = (ROOT / "test/diagnostics/frontend-ops.mlir").read_text().split("// -----")[0]
    with pytest.raises(PassFailedException, match="reduction loops is not supported"):
        apply(parse(text), [NormalizeGraphPass()])


def _physlayout_run(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "physlayout"
    return subprocess.run([str(exe), "run", *args], capture_output=True, text=True, timeout=600)


def test_opencl_runs_normalized_graphs(runtime: object, tmp_path: Path) -> None:
    """Every function of normalize-graph.mlir through physlayout-adreno on the device, checked
    against the graph evaluator (concat with 3 + 5 + 1 channels, relu, broadcast, asserts)."""
    source = tmp_path / "normalize.mlir"
    source.write_text(NORMALIZE)
    for name in ("bias", "concat", "relu", "relu_negative_zero", "true_assert"):
        done = _physlayout_run(str(source), "--entry", name, "--check", "--rtol", "0")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "check: passed" in done.stdout
    var = tmp_path / "var.npy"
    np.save(var, np.array([1.0, 0.0, 3.0, 4.0], dtype=np.float32))
    done = _physlayout_run(str(source), "--entry", "batch_norm_scale", "--input", f"var={var}")
    assert done.returncode == 1
    assert "assertion failed: unimplemented: tensor with zero element (1 of 4 elements)" in done.stderr
    assert "Traceback" not in done.stderr
