"""physlayout-adreno end to end: the declared pipeline's stages on the examples (layout
rewrites left, copies, scopes), its numerics without a device (buffer evaluator == graph
evaluator) and on OpenCL (== graph evaluator within 1e-4 relative), and the demo."""

from __future__ import annotations

from collections import Counter
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from graph_harness import count_ops, functions, parse, random_inputs
from legalize_harness import check_legalized
from test_convert_layout import chain
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer

from physlayout.dialects.layout_scopes import producer_scope
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import compile_module
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.universe import get_all_passes, make_context

ROOT = Path(__file__).resolve().parents[2]
RFC = ROOT / "examples/rfc_conv_relu_conv.mlir"
RELAX = ROOT / "examples/graph_conv_bias_conv.mlir"
GRAPH_STAGES = [p.name for p in PhyslayoutAdrenoPass().passes()].index("realize-scopes") + 1
"""The graph passes: normalize-graph, raise-layout-rewrites, convert-layout, flow, fold,
annotate-texture-scope, realize-scopes."""

CHAINS = "\n".join(
    chain(c, o, size).replace("@chain", f"@chain{c}")
    for c, o, size in [(6, 6, 6), (7, 5, 7), (64, 32, 8)]
)


def graph_stages(text: str, **options: Any) -> ModuleOp:
    module = parse(text)
    PassPipeline(PhyslayoutAdrenoPass(**options).passes()[:GRAPH_STAGES]).apply(make_context(), module)
    module.verify()
    return module


def scopes(module: ModuleOp) -> Counter[str]:
    return Counter(
        producer_scope(result)
        for op in module.walk()
        for result in op.results
        if isinstance(result.type, TensorType) and op.name != "tensor.empty"
    )


def test_rfc_example_stages() -> None:
    """Only the boundary rewrites remain (x, w1, w2 in; the result out), no copy is
    needed, activations are textures and the weights texture-weights."""
    module = graph_stages(RFC.read_text())
    assert count_ops(module, "layout.transform") == 4
    assert count_ops(module, "layout.crop") == 0
    assert count_ops(module, "layout.copy") == 0
    assert scopes(module) == {"global.texture": 6, "global.texture-weight": 2, "global": 1}
    mixed = graph_stages(RFC.read_text(), weights_in_global=True)
    assert scopes(mixed) == {"global.texture": 6, "global": 3}


def test_relax_example_stages() -> None:
    module = graph_stages(RELAX.read_text())
    plain, padded = functions(module)
    assert count_ops(plain, "layout.transform") == 4
    assert count_ops(padded, "layout.transform") + count_ops(padded, "layout.crop") == 5
    assert count_ops(module, "layout.copy") == 0
    assert scopes(plain) == {"global.texture": 7, "global.texture-weight": 2, "global": 1}
    # The padded transforms cannot write whole texels yet: x and the weights stay global
    # (as do the result's rewrite back to NCHW and its crop).
    assert scopes(padded) == {"global.texture": 6, "global": 5}


def test_pipeline_is_declared_and_runs_from_python() -> None:
    assert "physlayout-adreno" in get_all_passes()
    names: list[str] = []

    def record(previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
        if previous is not None:
            names.append(previous.name)

    module = parse(CHAINS)
    PhyslayoutAdrenoPass().pipeline(record).apply(make_context(), module)
    assert names == [p.name for p in PhyslayoutAdrenoPass().passes()]
    assert not any(isinstance(v.type, TensorType) for op in module.walk() for v in op.results)


def test_whole_pipeline_numerics_without_a_device() -> None:
    passes = PhyslayoutAdrenoPass().passes()[:GRAPH_STAGES]
    check_legalized(CHAINS, passes, seed=4)
    check_legalized(RELAX.read_text(), passes, seed=6)


def test_weights_in_global_numerics_without_a_device() -> None:
    check_legalized(chain(8, 8), PhyslayoutAdrenoPass(weights_in_global=True).passes()[:GRAPH_STAGES], seed=7)


def test_whole_pipeline_on_opencl(runtime: OpenCLRuntime) -> None:
    from physlayout.runtime.host import execute

    text = chain(7, 5, 7) + RELAX.read_text()
    source = parse(text)
    lowered = parse(text)
    limits = runtime.limits.image_limits()
    adreno = PhyslayoutAdrenoPass(max_image_width=limits.max_width, max_image_height=limits.max_height)
    adreno.apply(make_context(), lowered)
    compiled = compile_module(lowered, runtime)
    for function in functions(source):
        name = function.sym_name.data
        inputs = random_inputs(function, seed=1)
        expected = run_graph(source, name, inputs)
        outputs = [np.zeros_like(e) for e in expected]
        execute(compiled, name, [*inputs, *outputs])
        for got, want in zip(outputs, expected, strict=True):
            scale = float(np.max(np.abs(want)))
            assert float(np.max(np.abs(got - want))) <= 1e-4 * scale, name


def test_demo_on_a_smaller_example(runtime: OpenCLRuntime, capsys: pytest.CaptureFixture[str]) -> None:
    from physlayout.runtime.demo import run_demo

    text = RFC.read_text()
    for big, small in (("56x56", "10x10"), ("54x54", "8x8"), ("52x52", "6x6")):
        text = text.replace(big, small)
    assert run_demo(text=text) < 1e-4
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert len(lines) <= 80
    assert "  fold-layout-rewrites     25 ops, 4 transforms left, 0 copies; scopes: global 9" in lines
    assert (
        "  realize-scopes           25 ops, 4 transforms left, 0 copies; scopes: global 1, "
        "global.texture 6, global.texture-weight 2"
    ) in lines
    # fused: conv1 + relu and conv2 are one kernel each, plus the boundary transforms of x
    # and the weights (conv2 stores the NCHW result itself: relayout_stores)
    assert "  legalize-layout           5 kernels, launched by host @main" in lines
    # One kernel's source (the input's NCHW -> NCHW4c texture transform, whole), not the others.
    assert "__kernel void main_transform_x(__global const float* src, __write_only image2d_t dst) {" in lines
    assert printed.count("__kernel void") == 1
    assert sum(line.startswith("  kernel main_") for line in lines) == 5
    assert lines[-1].startswith("OK: max |opencl - numpy| = ")
    assert lines[-1].endswith("rtol 0.0001; output NCHW [2, 32, 6, 6])")
    assert run_demo(text=text, verbose=True) < 1e-4
    verbose = capsys.readouterr().out
    assert "after realize-scopes" in verbose and "write_imagef" in verbose
    assert "layout.transform: 4, layout.crop: 0, layout.copy: 0, frozen convs: 2" in verbose
    assert verbose.count("__kernel void") == 5
    assert verbose.splitlines()[-1].startswith("OK: max |opencl - numpy| = ")


def test_legalized_host_runs_under_mlir_runner() -> None:
    """The pipeline's host function and kernels lower through lower-layout to memref/affine
    IR that mlir-opt-22 verifies and mlir-runner-22 runs, with the graph evaluator's
    result (exactly: the same float operations in the same order)."""
    from physlayout.lowering.lower_layout import LowerLayoutPass
    from physlayout.runtime.mlir_runner import (
        MlirTools,
        add_harness,
        harness_values,
        parse_printed_memrefs,
        run_mlir,
    )
    tools = MlirTools.find()
    if tools is None or tools.runner is None:
        pytest.skip("mlir-opt-22 / mlir-runner-22 not installed")
    text = chain(8, 4)
    source = parse(text)
    lowered = parse(text)
    PassPipeline((*PhyslayoutAdrenoPass().passes(), LowerLayoutPass())).apply(make_context(), lowered)
    stream = StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(lowered)
    generic = stream.getvalue()
    (function,) = functions(source)
    inputs = [
        harness_values(tuple(t.get_shape()), k).astype(np.float32)
        for k, t in enumerate(function.function_type.inputs.data)
        if isinstance(t, TensorType)
    ]
    (expected,) = run_graph(source, "chain", inputs)
    printed = parse_printed_memrefs(run_mlir(add_harness(generic, "chain"), tools=tools))
    np.testing.assert_array_equal(printed[-1].reshape(expected.shape), expected)
