"""Numeric checks of lower-layout.

- Always (numpy evaluator): every kernel of the lower-layout lit inputs and the examples runs
  on the same logical data before lowering (buffer level) and after (memref/affine level)
  with equal results; the RFC 0039 kernels and the NHWC -> NCHW4c relu, once lowered,
  produce exactly the numpy reference in their physical layouts.
- With upstream MLIR (`mlir-opt-22`, `mlir-runner-22`; skipped otherwise): the drivers'
  printed memrefs equal the same numpy references, and every kernel run under the generated
  harness prints exactly what the evaluator computes.
"""

from __future__ import annotations

from functools import cache
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from layout_harness import (
    assert_physical_as_expected,
    make_context,
    parse,
    pending_layouts,
    run_logical,
    written_params,
)
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, ModuleOp, VectorType
from xdsl.printer import Printer

from physlayout.dialects.layout import BufferType
from physlayout.indexing.index_map import IndexMap
from physlayout.lowering.pipelines import PhyslayoutMemrefPass
from physlayout.runtime.mlir_runner import (
    MlirTools,
    add_harness,
    harness_values,
    parse_printed_memrefs,
    run_mlir,
)
from physlayout.semantics.evaluator import run_function
from physlayout.transforms.apply_layout import ApplyLayoutPass

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "test/lowering/lower-layout.mlir"
RFC = ROOT / "test/lowering/inputs/rfc0039_examples.mlir"
RELU = ROOT / "examples/nhwc_relu_nchw4c.mlir"
OFFSET_CALLS = ROOT / "test/lowering/inputs/offset_calls.mlir"

TOOLS = MlirTools.find()
needs_runner = pytest.mark.skipif(
    TOOLS is None or TOOLS.runner is None, reason="mlir-opt-22 / mlir-runner-22 not installed"
)

NCHWC = IndexMap.parse("(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)")
TRANSPOSE = IndexMap.parse("(i, j) -> (j, i)")


def lowered(text: str) -> ModuleOp:
    module = parse(text)
    PhyslayoutMemrefPass(rewrite_loops=False).apply(make_context(), module)
    return module


@cache
def lowered_source(source: Path) -> ModuleOp:
    """`source` lowered once per test session (evaluating a module does not change it)."""
    return lowered(source.read_text())


@cache
def parsed_source(source: Path) -> ModuleOp:
    return parse(source.read_text())


def printed(module: ModuleOp, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue()


def function(module: ModuleOp, name: str) -> func.FuncOp:
    found = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == name]
    assert found, name
    return found[0]


def inputs(function: func.FuncOp, seed: int = 0) -> list[Any]:
    """Seeded logical arguments: normal floats, small non-negative integers, index 1."""
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for arg_type in function.function_type.inputs.data:
        if isinstance(arg_type, BufferType):
            shape = arg_type.get_shape()
            element = arg_type.element_type
            if isinstance(element, VectorType):
                shape = (*shape, *element.get_shape())
            if isinstance(element, IntegerType):
                args.append(rng.integers(0, 4, shape).astype(np.int32))
            else:
                args.append(rng.standard_normal(shape).astype(np.float32))
        elif isinstance(arg_type, IndexType | IntegerType):
            args.append(1)
        elif isinstance(arg_type, VectorType):
            args.append(rng.standard_normal(arg_type.get_shape()).astype(np.float32))
        else:
            args.append(np.float32(rng.standard_normal()))
    return args


# Numpy references ---------------------------------------------------------------------------


def rfc_logical_2d() -> np.ndarray:
    x = (10 * np.arange(4)[:, None] + np.arange(6)[None, :]).astype(np.float32)
    x[2, 3] = 7
    return x


def rfc_logical_nhwc() -> np.ndarray:
    n, h, w, c = np.meshgrid(np.arange(2), np.arange(4), np.arange(4), np.arange(8), indexing="ij")
    return (1000 * n + 100 * h + 10 * w + c).astype(np.float32)


RFC_KERNELS: dict[str, tuple[np.ndarray, float]] = {
    # kernel -> (physical buffer the kernel writes, probe value)
    "flat_2d": (rfc_logical_2d(), 15.0),
    "transpose_2d": (TRANSPOSE.map_ndarray(rfc_logical_2d()), 15.0),
    "nchwc_1d": (NCHWC.map_ndarray(rfc_logical_nhwc()), 1325.0),
    "nchwc_2d": (NCHWC.map_ndarray(rfc_logical_nhwc()), 1325.0),
}


def relu_input() -> np.ndarray:
    return (np.arange(128) % 13 - 6).astype(np.float32).reshape(1, 4, 4, 8)


def relu_reference() -> np.ndarray:
    return NCHWC.map_ndarray(np.maximum(relu_input(), 0))


# Evaluator: before and after ----------------------------------------------------------------


RULE_KERNELS = [
    "relu_nchw4c",
    "constant_and_argument_indices",
    "affine_and_memref_accesses",
    "triangular",
    "reduction",
    "parallel_copy",
    "allocation",
    "local_scratch",
    "parameter_aliases",
    "vector_accesses",
    "vector_view_of_scalars",
    "mixed_element_allocation",
]


@pytest.mark.parametrize(
    ("source", "name"),
    [(RULES, n) for n in RULE_KERNELS]
    + [(RFC, n) for n in [*RFC_KERNELS, "vector_views"]]
    + [(RELU, "relu"), (OFFSET_CALLS, "main"), (OFFSET_CALLS, "rows")],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_evaluator_agrees_before_and_after_lowering(source: Path, name: str) -> None:
    before = parsed_source(source)
    after = lowered_source(source)
    kernel = function(before, name)
    args = inputs(kernel)
    layouts = pending_layouts(kernel)
    first = run_logical(before, name, args, [None] * len(layouts))
    second = run_logical(after, name, args, layouts)
    assert_physical_as_expected(name, first, second, layouts, written_params(before, name))
    for x, y in zip(first.buffers, second.buffers, strict=True):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(first.results, second.results, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", sorted(RFC_KERNELS))
def test_lowered_rfc_kernels_compute_the_numpy_reference(name: str) -> None:
    module = lowered_source(RFC)
    kernel = function(module, name)
    x_type, probe_type = kernel.function_type.inputs.data
    assert isinstance(x_type, MemRefType) and isinstance(probe_type, MemRefType)
    x = np.zeros(x_type.get_shape(), np.float32)
    probe = np.zeros(1, np.float32)
    run_function(module, name, [x, probe])
    expected, value = RFC_KERNELS[name]
    np.testing.assert_array_equal(x, expected)
    assert probe[0] == value


def test_lowered_vector_views_compute_the_numpy_reference() -> None:
    a = np.arange(16, dtype=np.float32) - 5
    out = np.zeros(16, np.float32)
    run_function(lowered_source(RFC), "vector_views", [a, out])
    np.testing.assert_array_equal(out, 2 * a)


def test_lowered_relu_computes_the_numpy_reference() -> None:
    module = lowered_source(RELU)
    out = np.zeros((1, 2, 4, 4, 4), np.float32)
    run_function(module, "relu", [relu_input(), out])
    np.testing.assert_array_equal(out, relu_reference())
    assert out.sum() == 199.0


def offset_calls_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What @main of inputs/offset_calls.mlir leaves in `b` (written by hand)."""
    out = b.copy()
    out[3:11] = a[7:15] + 1
    out[0:8] = a[8:16] + 1
    return out


def test_views_at_offsets_passed_to_calls_compute_the_numpy_reference() -> None:
    a = np.arange(16, dtype=np.float32) * 3 - 7
    b = np.full(16, -100.0, np.float32)
    expected = offset_calls_reference(a, b)
    for module in (parsed_source(OFFSET_CALLS), lowered_source(OFFSET_CALLS)):
        got = b.copy()
        run_function(module, "main", [a.copy(), got])
        np.testing.assert_array_equal(got, expected)


def test_lowered_output_has_no_layout_and_parses_back() -> None:
    for source in (RULES, RFC, RELU, OFFSET_CALLS):
        text = printed(lowered_source(source), generic=True)
        assert "layout." not in text
        assert "!layout" not in text
        parse(text).verify()


# Upstream MLIR ---------------------------------------------------------------------------------


@needs_runner
@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
def test_rfc_driver_prints_the_numpy_reference(generic: bool) -> None:
    output = run_mlir(printed(lowered_source(RFC), generic))
    arrays = parse_printed_memrefs(output)
    assert len(arrays) == 5
    flat, transposed, nchwc, texture, probes = arrays
    np.testing.assert_array_equal(flat, rfc_logical_2d().reshape(24))
    np.testing.assert_array_equal(transposed, TRANSPOSE.map_ndarray(rfc_logical_2d()))
    np.testing.assert_array_equal(nchwc, NCHWC.map_ndarray(rfc_logical_nhwc()))
    np.testing.assert_array_equal(texture, NCHWC.map_ndarray(rfc_logical_nhwc()).reshape(16, 16))
    np.testing.assert_array_equal(probes, [15, 15, 1325, 1325])


@needs_runner
def test_relu_example_prints_the_numpy_reference() -> None:
    (out,) = parse_printed_memrefs(run_mlir(printed(lowered_source(RELU))))
    np.testing.assert_array_equal(out, relu_reference())


@needs_runner
@pytest.mark.parametrize(
    ("source", "name"),
    [(RFC, n) for n in [*RFC_KERNELS, "vector_views"]]
    + [(RELU, "relu"), (RULES, "relu_nchw4c")],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_harness_run_matches_the_evaluator(source: Path, name: str) -> None:
    """mlir-runner on the lowered kernel and the evaluator on the buffer-level kernel (with
    its layouts applied, so its parameters have the same physical shapes) agree exactly."""
    text = source.read_text()
    module = lowered(text)
    for other in [f for f in module.ops if isinstance(f, func.FuncOp)]:
        if other.sym_name.data != name:
            module.body.block.erase_op(other)
    output = run_mlir(add_harness(printed(module), name, entry="harness"), entry="harness")
    reference = parse(text)
    ApplyLayoutPass().apply(make_context(), reference)
    kernel = function(reference, name)
    args: list[Any] = []
    for k, arg_type in enumerate(kernel.function_type.inputs.data):
        assert isinstance(arg_type, BufferType)
        args.append(harness_values(arg_type.get_shape(), k))
    run_function(reference, name, args)
    results = parse_printed_memrefs(output)
    assert len(results) == len(args)
    for got, expected in zip(results, args, strict=True):
        np.testing.assert_array_equal(got, expected)


@needs_runner
def test_views_at_offsets_passed_to_calls_run_under_mlir_runner() -> None:
    """Parameters of dynamic offset, memref.cast at the calls and subviews of them lower to
    LLVM and compute the numpy reference."""
    text = printed(lowered_source(OFFSET_CALLS))
    output = run_mlir(add_harness(text, "main", entry="harness"), entry="harness")
    a, b = harness_values([16], 0), harness_values([16], 1)
    got_a, got_b = parse_printed_memrefs(output)
    np.testing.assert_array_equal(got_a, a)
    np.testing.assert_array_equal(got_b, offset_calls_reference(a, b))


# The runner helper ----------------------------------------------------------------------------


def test_parse_printed_memrefs_reads_shapes_and_values() -> None:
    output = (
        "Unranked Memref base@ = 0x1 rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] "
        "data = \n[[1,   2,   3], \n [-4.5,   5,   6]]\n"
        "Unranked Memref base@ = 0x2 rank = 1 offset = 0 sizes = [2] strides = [1] data = \n"
        "[7,  8]\n"
    )
    first, second = parse_printed_memrefs(output)
    np.testing.assert_array_equal(first, [[1, 2, 3], [-4.5, 5, 6]])
    np.testing.assert_array_equal(second, [7, 8])


def test_harness_values_are_small_exact_integers() -> None:
    values = harness_values((2, 3), 1)
    assert values.shape == (2, 3) and values.dtype == np.float32
    np.testing.assert_array_equal(values.reshape(-1), [(7 * i + 3) % 23 - 11 for i in range(6)])


def test_add_harness_calls_the_kernel_and_prints_every_memref() -> None:
    text = printed(lowered_source(RELU))
    with_main = add_harness(text, "relu", entry="run_relu")
    assert with_main.count("printMemrefF32") >= 3
    assert 'sym_name = "run_relu"' in with_main and "callee = @relu" in with_main
    module = parse(with_main)
    assert function(module, "run_relu").body.blocks
