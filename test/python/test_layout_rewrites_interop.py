"""Graph-level interop with upstream MLIR: the numpy semantics of the upstream relayout ops
(checked against plain loops and, with MLIR installed, against mlir-runner);
lower-layout-rewrites and raise-layout-rewrites keeping every result (numpy evaluator before
and after, and upstream execution of the lowered IR); the chains of
examples/relayout_chains.mlir folding exactly where proven."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, functions, parse

from physlayout.lowering.lower_layout import LowerLayoutPass
from physlayout.lowering.lower_layout_rewrites import LowerLayoutRewritesPass
from physlayout.lowering.pipelines import PhyslayoutMemrefPass
from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
from physlayout.runtime.mlir_runner import MlirTools, run_graph_functions
from physlayout.semantics.graph_evaluator import EvaluationError, run_graph
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "test/graph/inputs/upstream-relayout.mlir"
LOWER = ROOT / "test/graph/lower-layout-rewrites.mlir"

TOOLS = MlirTools.find()
needs_runner = pytest.mark.skipif(
    TOOLS is None or TOOLS.runner is None, reason="mlir-opt-22 / mlir-runner-22 not installed"
)


def integer_inputs(module_text: str, name: str, seed: int = 0) -> list[np.ndarray]:
    """Small-integer f32 arguments (printed exactly by printMemrefF32)."""
    function = next(f for f in functions(parse(module_text)) if f.sym_name.data == name)
    rng = np.random.default_rng(seed)
    return [
        rng.integers(-20, 20, size=tuple(t.get_shape())).astype(np.float32)  # pyright: ignore
        for t in function.function_type.inputs.data
    ]


# Reference semantics ------------------------------------------------------------------------


def test_pack_is_tiling_with_padding() -> None:
    x = np.arange(42, dtype=np.float32).reshape(7, 6)
    (packed,) = run_graph(parse(UPSTREAM.read_text()), "pack_outer_perm", [x])
    expected = np.full((2, 4, 2, 3), 9.0, dtype=np.float32)
    for i, j in itertools.product(range(7), range(6)):
        expected[j // 3, i // 2, i % 2, j % 3] = x[i, j]
    np.testing.assert_array_equal(packed, expected)


def test_unpack_truncates_the_last_tile() -> None:
    y = np.arange(48, dtype=np.float32).reshape(2, 4, 2, 3)
    (unpacked,) = run_graph(parse(UPSTREAM.read_text()), "unpack_truncating", [y])
    expected = np.array(
        [[y[j // 3, i // 2, i % 2, j % 3] for j in range(5)] for i in range(7)], dtype=np.float32
    )
    np.testing.assert_array_equal(unpacked, expected)


def test_inner_tiles_follow_inner_dims_pos() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    (packed,) = run_graph(parse(UPSTREAM.read_text()), "pack_inner_order", [x])
    assert packed[1, 0, 2, 1] == x[1 * 2 + 1, 0 * 3 + 2]


def test_slices_pads_transposes_and_reshapes() -> None:
    module = parse(UPSTREAM.read_text())
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    strided, row = run_graph(module, "slices", [x])
    np.testing.assert_array_equal(strided, x[1:4:2, 0:5:2])
    np.testing.assert_array_equal(row, x[4, 2:5])
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    (padded,) = run_graph(module, "pad", [y])
    np.testing.assert_array_equal(padded, np.pad(y, [(1, 2), (0, 1)], constant_values=4.0))
    z = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (transposed,) = run_graph(module, "transpose", [z])
    np.testing.assert_array_equal(transposed, np.transpose(z, (2, 0, 1)))
    (reshaped,) = run_graph(module, "reshapes", [z])
    np.testing.assert_array_equal(reshaped, z.reshape(3, 2, 4))


def test_extract_out_of_bounds_is_an_error() -> None:
    module = parse(
        """
        func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
          %e = tensor.empty() : tensor<4xf32>
          %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
          ^bb0(%o: f32):
            %i = linalg.index 0 : index
            %one = arith.constant 1 : index
            %j = arith.addi %i, %one : index
            %v = tensor.extract %x[%j] : tensor<4xf32>
            linalg.yield %v : f32
          } -> tensor<4xf32>
          func.return %r : tensor<4xf32>
        }
        """
    )
    with pytest.raises(EvaluationError, match="index out of bounds on dimension 0"):
        run_graph(module, "f", [np.zeros(4, dtype=np.float32)])


@needs_runner
def test_upstream_execution_matches_the_reference_semantics() -> None:
    text = UPSTREAM.read_text()
    module = parse(text)
    calls = [(f.sym_name.data, integer_inputs(text, f.sym_name.data)) for f in functions(module)]
    upstream = run_graph_functions(text, calls)
    for (name, inputs), printed in zip(calls, upstream, strict=True):
        expected = run_graph(module, name, inputs)
        assert len(printed) == len(expected), name
        for got, want in zip(printed, expected, strict=True):
            np.testing.assert_array_equal(got.reshape(want.shape), want, err_msg=name)


# lower-layout-rewrites ---------------------------------------------------------------------


def test_lowered_forms_keep_results() -> None:
    after, results = compare_before_after(LOWER.read_text(), [LowerLayoutRewritesPass()])
    assert len(results) == len(functions(after))
    assert not [op.name for op in after.walk() if op.name.startswith("layout.")]


@needs_runner
def test_lowered_forms_run_upstream() -> None:
    text = LOWER.read_text()
    lowered = str(apply(parse(text), [LowerLayoutRewritesPass()]))
    names = [
        f.sym_name.data
        for f in functions(parse(text))
        if f.function_type.inputs.data[0].get_element_type().name == "f32"  # pyright: ignore
    ]
    calls = [(name, integer_inputs(text, name)) for name in names]
    upstream = run_graph_functions(lowered, calls)
    before = parse(text)
    for (name, inputs), printed in zip(calls, upstream, strict=True):
        (expected,) = run_graph(before, name, inputs)
        np.testing.assert_array_equal(printed[0].reshape(expected.shape), expected, err_msg=name)


# raise-layout-rewrites and the chains ------------------------------------------------------

RAISE = ROOT / "test/graph/raise-layout-rewrites.mlir"
CHAINS = ROOT / "examples/relayout_chains.mlir"


def static_functions(text: str) -> str:
    """The module without functions whose signature has a dynamic extent."""
    module = parse(text)
    for function in functions(module):
        types = [*function.function_type.inputs.data, *function.function_type.outputs.data]
        if any(e < 0 for t in types for e in getattr(t, "get_shape", lambda: ())()):
            function.detach()
    return str(module)


def test_raised_forms_keep_results() -> None:
    after, results = compare_before_after(
        static_functions(RAISE.read_text()), [RaiseLayoutRewritesPass()]
    )
    assert "lowered_shear" in results and "tampered_shear" in results
    kept = {op.name for op in after.walk()} & {"linalg.pack", "tensor.pad", "linalg.generic"}
    assert kept == {"linalg.pack", "tensor.pad", "linalg.generic"}


def test_chains_fold_and_keep_results() -> None:
    passes = [RaiseLayoutRewritesPass(), FoldLayoutRewritesPass()]
    after, results = compare_before_after(CHAINS.read_text(), passes)
    assert len(results) == 12
    remaining = {
        f.sym_name.data: sum(1 for op in f.walk() if op.name.startswith("layout."))
        for f in functions(after)
    }
    assert remaining["unpack_pack_padded"] == 3
    assert {name for name, count in remaining.items() if count == 0} == {
        "pack_unpack_padded",
        "pack_unpack_permuted",
        "transpose_expand_transpose_collapse",
        "transpose_pair",
        "pad_slice",
        "pack_transpose_unpack",
        "unpack_pack_full",
    }
    lowered = apply(after, [LowerLayoutRewritesPass()])
    for name in results:
        inputs = integer_inputs(CHAINS.read_text(), name)
        np.testing.assert_array_equal(
            run_graph(lowered, name, inputs)[0],
            run_graph(parse(CHAINS.read_text()), name, inputs)[0],
        )


@needs_runner
def test_folded_chains_run_upstream() -> None:
    text = CHAINS.read_text()
    passes = [RaiseLayoutRewritesPass(), FoldLayoutRewritesPass(), LowerLayoutRewritesPass()]
    folded = str(apply(parse(text), passes))
    calls = [
        (f.sym_name.data, integer_inputs(text, f.sym_name.data)) for f in functions(parse(text))
    ]
    upstream = run_graph_functions(folded, calls)
    before = parse(text)
    for (name, inputs), printed in zip(calls, upstream, strict=True):
        (expected,) = run_graph(before, name, inputs)
        np.testing.assert_array_equal(printed[0].reshape(expected.shape), expected, err_msg=name)


# Examples and lower-layout on graph-level input ---------------------------------------------

EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))


@pytest.mark.skipif(TOOLS is None, reason="mlir-opt-22 not installed")
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_lowers_and_verifies_upstream(example: Path) -> None:
    assert TOOLS is not None
    module = apply(parse(example.read_text()), [PhyslayoutMemrefPass()])
    assert not [op.name for op in module.walk() if op.name.startswith("layout.")]
    lowered = str(module)
    done = subprocess.run(
        [TOOLS.opt, "--verify-each"], input=lowered, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr


@needs_runner
@pytest.mark.parametrize("passes", ["lower", "flow-fold-lower"])
def test_conv_bias_conv_runs_upstream(passes: str) -> None:
    """The running example, lowered by lower-layout (after flow + fold, or as written), runs
    under mlir-runner with the numpy evaluator's results (rtol 1e-5: printMemrefF32 prints
    six significant digits)."""
    text = (ROOT / "examples/graph_conv_bias_conv.mlir").read_text()
    pipeline = [LowerLayoutPass()]
    if passes != "lower":
        pipeline = [FlowLayoutRewritesPass(), FoldLayoutRewritesPass(), *pipeline]
    lowered = str(apply(parse(text), pipeline))
    names = ["conv_bias_conv", "conv_bias_conv_padded"]
    calls = [(name, integer_inputs(text, name, seed=1)) for name in names]
    calls = [(name, [np.sign(a) for a in inputs]) for name, inputs in calls]
    upstream = run_graph_functions(lowered, calls)
    before = parse(text)
    for (name, inputs), printed in zip(calls, upstream, strict=True):
        (expected,) = run_graph(before, name, inputs)
        np.testing.assert_allclose(
            printed[0].reshape(expected.shape), expected, rtol=1e-5, atol=1e-4
        )


@pytest.mark.parametrize("lower", [False, True])
def test_raised_ir_flows_and_folds(lower: bool) -> None:
    passes = [RaiseLayoutRewritesPass(), FlowLayoutRewritesPass(), FoldLayoutRewritesPass()]
    if lower:
        passes.append(LowerLayoutRewritesPass())
    text = (ROOT / "test/graph/raise-flow-fold.mlir").read_text()
    after, results = compare_before_after(text, passes)
    assert set(results) == {"unpack_relu_pack", "unpack_relu_pack_padded"}
    plain = next(f for f in functions(after) if f.sym_name.data == "unpack_relu_pack")
    assert [op.name for op in plain.walk() if op.name.startswith(("layout.", "linalg.pack"))] == []
