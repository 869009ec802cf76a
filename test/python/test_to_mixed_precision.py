"""to-mixed-precision: numerics of its rounding points (graph evaluator), idempotence,
planted bugs (an accumulator left in half), and the RFC example in f16 on OpenCL against
the evaluator (tight) and against the f32 graph (reported error)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f16

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import compile_module, module_text, parse_module
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.to_mixed_precision import ToMixedPrecisionPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
RFC = ROOT / "examples/rfc_conv_relu_conv.mlir"
LIT = ROOT / "test/transforms/to-mixed-precision.mlir"

ROW_SUM = """
func.func @main(%x: tensor<2x3000xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x3000xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<2xf32>
  func.return %s : tensor<2xf32>
}
"""

AFFINE = """
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %k = arith.constant 3.0 : f32
  %b = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %k : f32
    %a = arith.addf %m, %b : f32
    linalg.yield %a : f32
  } -> tensor<1024xf32>
  func.return %y : tensor<1024xf32>
}
"""


def mixed(text: str, **options: object) -> ModuleOp:
    module = parse_module(text)
    ToMixedPrecisionPass(**options).apply(make_context(), module)  # type: ignore[arg-type]
    module.verify()
    return module


def small_rfc() -> str:
    text = RFC.read_text()
    for big, small in (("56x56", "10x10"), ("54x54", "8x8"), ("52x52", "6x6")):
        text = text.replace(big, small)
    return text


def random_inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(seed)
    return [
        rng.uniform(-1, 1, tuple(t.get_shape())).astype(np.float32)  # type: ignore[attr-defined]
        for t in function.function_type.inputs.data
    ]


def half(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float32).astype(np.float16)


@pytest.mark.parametrize("text", [LIT.read_text(), small_rfc(), ROW_SUM])
def test_a_second_run_changes_nothing(text: str) -> None:
    once = mixed(text)
    twice = mixed(module_text(once))
    assert module_text(once) == module_text(twice)


SPREAD = """
func.func @main(%x: tensor<1x3x3x3xf32>) -> tensor<1x3x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x3x3x3xf32>) outs(%e : tensor<1x3x3x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x3x3x3xf32>
  %z0 = tensor.empty() : tensor<1x3x7x7xf32>
  %z = linalg.fill ins(%zero : f32) outs(%z0 : tensor<1x3x7x7xf32>) -> tensor<1x3x7x7xf32>
  %s = tensor.insert_slice %r into %z[0, 0, 1, 1] [1, 3, 3, 3] [1, 1, 2, 2] : tensor<1x3x3x3xf32> into tensor<1x3x7x7xf32>
  func.return %s : tensor<1x3x7x7xf32>
}
"""
"""A transposed conv's zero-spread input (autoencoder_transpose): the insert moves f16, so
its zero fill is rebuilt in f16 and the f32 one is read by nothing."""


def test_no_fill_or_empty_is_left_unread() -> None:
    """The f32 fill an insert no longer reads is erased with its empty (a fill read by
    nothing was a launch of its own, e.g. one more in autoencoder_transpose in f16), and
    the values are the f16-rounded ones."""
    module = mixed(SPREAD)
    kinds = ("linalg.fill", "tensor.empty")
    left = [op.name for op in module.walk() if op.name in kinds and not any(r.uses for r in op.results)]
    assert left == []
    fills = [op for op in module.walk() if op.name == "linalg.fill"]
    assert len(fills) == 1 and "f16" in str(fills[0].results[0].type)
    x = random_inputs(parse_module(SPREAD), 0)[0]
    (got,) = run_graph(module, "main", [x])
    want = np.zeros((1, 3, 7, 7), np.float32)
    want[:, :, 1::2, 1::2] = half(np.maximum(half(x).astype(np.float32), 0)).astype(np.float32)
    assert np.array_equal(got, want)


def test_rounding_points_of_an_elementwise_op() -> None:
    """f16 storage, f32 arithmetic: the input is rounded at the boundary, the body computes
    in f32 from it, the result is rounded once and widened back: exactly numpy's
    `half(half(x) * 3 + 0.1)`."""
    x = np.random.default_rng(0).uniform(-7e4, 7e4, 1024).astype(np.float32)
    x[:4] = [65504.0, 65520.0, 1e-7, -2049.0]
    (got,) = run_graph(mixed(AFFINE), "main", [x])
    with np.errstate(over="ignore", invalid="ignore"):
        want = half(half(x).astype(np.float32) * np.float32(3.0) + np.float32(0.1)).astype(np.float32)
    assert got.dtype == np.float32
    assert np.array_equal(got, want, equal_nan=True)


def test_an_accumulator_left_in_half_is_caught() -> None:
    """3000 ones summed: in f32 (the default) 3000, a half value; an accumulator left in
    half (accumulate="conv,matmul": the reduction accumulates in f16 storage) sticks at
    2048, so checking the sum exposes it."""
    x = np.ones((2, 3000), np.float32)
    (f32_acc,) = run_graph(mixed(ROW_SUM), "main", [x])
    (f16_acc,) = run_graph(mixed(ROW_SUM, accumulate="conv,matmul"), "main", [x])
    assert np.array_equal(f32_acc, [3000, 3000])
    assert np.array_equal(f16_acc, [2048, 2048])


def test_rfc_example_f16_error_against_f32() -> None:
    """The RFC graph (smaller images) in mixed precision is within a few half ulps of the
    f32 graph; with the convs accumulating in half it is several times worse (the planted
    bug the tolerance catches)."""
    text = small_rfc()
    source = parse_module(text)
    inputs = random_inputs(source, seed=2)
    (exact,) = run_graph(source, "main", inputs)
    (f16,) = run_graph(mixed(text), "main", inputs)
    (bad,) = run_graph(mixed(text, accumulate=""), "main", inputs)
    scale = float(np.max(np.abs(exact)))
    good_error = float(np.max(np.abs(f16 - exact))) / scale
    bad_error = float(np.max(np.abs(bad - exact))) / scale
    assert good_error < 2e-3
    assert bad_error > 2e-3


def test_rfc_example_f16_on_opencl(runtime: OpenCLRuntime) -> None:
    """The mixed-precision RFC graph through physlayout-adreno on the device (f16 textures
    without cl_khr_fp16) equals the graph evaluator of the same module (f32 accumulation in
    a possibly different order: within one half ulp)."""
    from physlayout.runtime.host import execute

    if not runtime.limits.image_support:
        pytest.skip("no image support")
    graph = mixed(small_rfc())
    lowered = graph.clone()
    limits = runtime.limits.image_limits()
    PhyslayoutAdrenoPass(
        max_image_width=limits.max_width, max_image_height=limits.max_height
    ).apply(make_context(), lowered)
    compiled = compile_module(lowered, runtime)
    assert "read_imagef" in compiled.program.source and "cl_khr_fp16" not in compiled.program.source
    inputs = random_inputs(graph, seed=3)
    (want,) = run_graph(graph, "main", inputs)
    got = np.zeros_like(want)
    execute(compiled, "main", [*inputs, got])
    scale = float(np.max(np.abs(want)))
    assert float(np.max(np.abs(got - want))) <= 2.0**-10 * scale


ROW_NORMALIZE = """
func.func @main(%x: tensor<2x3001xf32>) -> tensor<2x3001xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 3001.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x3001xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<2xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%s : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.divf %v, %n : f32
    linalg.yield %m : f32
  } -> tensor<2xf32>
  %ex = tensor.empty() : tensor<2x3001xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<2x3001xf32>, tensor<2xf32>) outs(%ex : tensor<2x3001xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  } -> tensor<2x3001xf32>
  func.return %y : tensor<2x3001xf32>
}
"""


def test_statistics_stay_f32_with_keep_statistics_f32() -> None:
    """x - mean(x) per row: by default the row sum is rounded where the mean reads it and
    the mean is stored in f16; with keep-statistics-f32 the sum and the mean (an
    elementwise op over a statistic) stay f32 and the subtraction reads the mean unrounded.
    Both are exactly numpy's model of their rounding points, and they differ."""
    text = ROW_NORMALIZE
    stats = mixed(text, keep_statistics_f32=True)
    printed = module_text(stats)
    assert "-> tensor<2xf16>" not in printed and "tensor<2x3001xf16>" in printed
    assert "-> tensor<2xf16>" in module_text(mixed(text))
    assert module_text(mixed(printed, keep_statistics_f32=True)) == printed

    rng = np.random.default_rng(5)
    x = (10 + rng.uniform(-1, 1, (2, 3001))).astype(np.float32)  # row sums near 30010
    xh = half(x).astype(np.float32)
    total = xh.sum(axis=1, dtype=np.float64).astype(np.float32)  # f32 accumulation (order aside)
    (got_stats,) = run_graph(stats, "main", [x])
    (got_plain,) = run_graph(mixed(text), "main", [x])
    mean_f32 = total / np.float32(3001)
    mean_f16 = half(half(total).astype(np.float32) / np.float32(3001)).astype(np.float32)
    want_stats = half(xh - mean_f32[:, None]).astype(np.float32)
    want_plain = half(xh - mean_f16[:, None]).astype(np.float32)
    ulp = 2.0**-10  # results lie in (-2, 2): one half ulp there is at most 2^-10
    assert np.max(np.abs(got_stats - want_stats)) <= ulp
    assert np.max(np.abs(got_plain - want_plain)) <= ulp
    exact = x.astype(np.float64) - x.astype(np.float64).mean(axis=1, keepdims=True)
    assert np.max(np.abs(got_stats - exact)) < np.max(np.abs(got_plain - exact))


CONV_BIAS_RELU = """
func.func @main(%x: tensor<1x3x6x6xf32>, %w1: tensor<8x3x3x3xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %bias = linalg.broadcast ins(%b1 : tensor<8xf32>) outs(%e : tensor<1x8x4x4xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w1 : tensor<1x3x6x6xf32>, tensor<8x3x3x3xf32>) outs(%bias : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x8x4x4xf32>) outs(%e : tensor<1x8x4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%r, %w2 : tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32>) outs(%f2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}
"""


def test_params_f16_rounds_the_same_values_once() -> None:
    """params-f16 moves the rounding of the weights (read rounded by the convs) into one
    cast each at the entry, bit for bit the same results; the bias, which the f32
    accumulator's init reads unrounded, and the input stay as they were."""
    plain, once = mixed(CONV_BIAS_RELU), mixed(CONV_BIAS_RELU, params_f16=True)
    inputs = random_inputs(plain, 3)
    want = run_graph(plain, "main", [x.copy() for x in inputs])
    got = run_graph(once, "main", [x.copy() for x in inputs])
    np.testing.assert_array_equal(got[0], want[0])
    function = next(op for op in once.ops if isinstance(op, func.FuncOp))
    x, w1, b1, w2 = function.body.blocks[0].args
    for weight in (w1, w2):
        (use,) = weight.uses
        assert use.operation.results[0].type.get_element_type() == f16  # type: ignore[attr-defined]
    assert all(u.operation.name == "linalg.broadcast" for u in b1.uses)
    (read,) = x.uses  # the conv, which rounds it in its body
    assert read.operation.operands[read.index].type.get_element_type() == x.type.get_element_type()  # type: ignore[attr-defined]


def test_params_f16_weights_are_prepared_in_half() -> None:
    """With lift-transform-params the casts run in @main_prepare: inference takes the
    weights as f16 textures (half the bytes) and computes what the plain f16 graph does."""
    module = mixed(CONV_BIAS_RELU, params_f16=True)
    reference = mixed(CONV_BIAS_RELU)
    inputs = random_inputs(reference, 4)
    want = run_graph(reference, "main", [x.copy() for x in inputs])
    lifted = module.clone()
    passes = PhyslayoutAdrenoPass(lift_params=True).passes()
    for one in passes[: [p.name for p in passes].index("lift-transform-params") + 1]:
        one.apply(make_context(), lifted)
    main = next(op for op in lifted.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    prepare = next(op for op in lifted.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main_prepare")
    types = main.function_type.inputs.data[1:]
    # the two OIHW4o filters in f16 (the bias, prepared into the f32 accumulator's init, f32)
    shapes = {tuple(t.get_shape()): t.get_element_type() for t in types}  # type: ignore[attr-defined]
    assert shapes[(2, 3, 3, 3, 4)] == f16 and shapes[(1, 8, 1, 1, 4)] == f16
    prepared = run_graph(lifted, "main_prepare", [x.copy() for x in inputs[1:]])
    got = run_graph(lifted, "main", [inputs[0].copy(), *prepared])
    assert prepare.function_type.outputs.data
    np.testing.assert_array_equal(got[0], want[0])


GENERIC_ACCUMULATOR_ON_BIAS = """
#bias = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main(%x0: tensor<3x4xf32>, %w0: tensor<5x6xf32>, %bias: tensor<7xf32>) -> tensor<3x7xf32> {
  %x = layout.pad %x0 {low = array<i64: 0, 0>, high = array<i64: 0, 1>, pad_value = 0.000000e+00 : f32} : tensor<3x4xf32> -> tensor<3x5xf32>
  %w = layout.pad %w0 {low = array<i64: 0, 0>, high = array<i64: 0, 1>, pad_value = 0.000000e+00 : f32} : tensor<5x6xf32> -> tensor<5x7xf32>
  %e = tensor.empty() : tensor<3x7xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<7xf32>) outs(%e : tensor<3x7xf32>) {
  ^bb0(%b: f32, %o: f32):
    linalg.yield %b : f32
  } -> tensor<3x7xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<3x5xf32>, tensor<5x7xf32>) outs(%init : tensor<3x7xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3x7xf32>
  func.return %y : tensor<3x7xf32>
}
"""


def test_a_generic_accumulator_whose_init_became_half_is_rebuilt() -> None:
    """A reduction in generic form (as fusion leaves a conv) accumulating onto a bias
    broadcast: the broadcast becomes f16 storage, so the accumulator, which stays f32, must
    be rebuilt to read its init widened. (It was left as it was, reading an f16 init
    through an f32 block argument: a module that does not verify.)"""
    module = mixed(GENERIC_ACCUMULATOR_ON_BIAS)
    inputs = random_inputs(module, 3)
    x, w, bias = inputs
    (got,) = run_graph(module, "main", inputs)
    x, w = np.pad(x, ((0, 0), (0, 1))), np.pad(w, ((0, 0), (0, 1)))
    want = half(bias).astype(np.float32) + x @ w  # the pads' results are f32, read unrounded
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
