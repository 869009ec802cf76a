"""lift-transform-params: @main_prepare once, then @main on its results, computes what the
original @main does (graph evaluator, bit for bit), on the examples after the layout passes;
and `physlayout run` prints the two functions' device times separately."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from graph_harness import apply, functions, parse, random_inputs
from xdsl.dialects.linalg.ops import GenericOp

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.lift_transform_params import LiftTransformParamsPass
from physlayout.transforms.value_bounds import argument_bounds

ROOT = Path(__file__).resolve().parents[2]
LAYOUT_STAGES = [p.name for p in PhyslayoutAdrenoPass().passes()].index("convert-layout") + 1
"""The pipeline up to convert-layout (normalize-graph, raise and fold first)."""


@pytest.mark.parametrize("example", ["resnet_block.mlir", "rfc_conv_relu_conv.mlir"])
def test_prepare_then_main_equals_main(example: str) -> None:
    text = (ROOT / "examples" / example).read_text()
    for big, small in (("2x64x56x56", "1x8x8x8"), ("32x64x3x3", "8x8x3x3"), ("32x32x3x3", "8x8x3x3"),
                       ("2x32x54x54", "1x8x6x6"), ("2x32x52x52", "1x8x4x4")):  # fmt: skip
        text = text.replace(big, small)
    source = parse(text)
    (main,) = functions(source)
    inputs = random_inputs(main, seed=3)
    (expected,) = run_graph(source, "main", inputs)
    layout = list(PhyslayoutAdrenoPass().passes()[:LAYOUT_STAGES])
    lifted = apply(parse(text), [*layout, LiftTransformParamsPass()])
    names = [f.sym_name.data for f in functions(lifted)]
    assert names == ["main_prepare", "main"]
    prepared = run_graph(lifted, "main_prepare", inputs[1:])
    (got,) = run_graph(lifted, "main", [inputs[0], *prepared])
    np.testing.assert_array_equal(got, expected)
    transforms = [op for f in functions(lifted) if f.sym_name.data == "main" for op in f.walk()
                  if op.name == "layout.transform" and op.operands[0] in f.body.blocks[0].args[1:]]  # fmt: skip
    assert not transforms, "a parameter is still re-laid out in @main"


def test_run_prints_prepare_and_inference_times() -> None:
    out = subprocess.run(
        [str(Path(sys.executable).parent / "physlayout"), "run", str(ROOT / "examples/resnet_block.mlir"),
         "--check", "--pipeline", "physlayout-adreno{lift-params=true}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if out.returncode and "OpenCL" in out.stderr:
        pytest.skip(out.stderr.splitlines()[-1])
    assert out.returncode == 0, out.stderr
    assert "@main_prepare: 10 launch(es)" in out.stdout
    assert "@main: 3 launch(es)" in out.stdout
    assert "main_transform_w" not in out.stdout
    assert "check: passed" in out.stdout


CONSTANT_WORK = ROOT / "test/graph/lift-constant-work.mlir"


@pytest.mark.parametrize("function", ["main", "alone"])
def test_work_on_no_argument_is_prepared_once(function: str) -> None:
    """The index tensors of `lift-constant-work.mlir` move to the prepare function (which
    then holds every `linalg.index`) and prepare-then-main gives the original results bit
    for bit; a planted bug (the prepared index tensor off by one) is caught on values."""
    text = CONSTANT_WORK.read_text()
    source = parse(text)
    (original,) = [f for f in functions(source) if f.sym_name.data == function]
    inputs = random_inputs(original, seed=5)
    expected = run_graph(source, function, inputs)
    lifted = apply(parse(text), [LiftTransformParamsPass(function=function)])
    by_name = {f.sym_name.data: f for f in functions(lifted)}
    assert not [op for op in by_name[function].walk() if op.name == "linalg.index"]
    assert [op for op in by_name[f"{function}_prepare"].walk() if op.name == "linalg.index"]
    prepared = run_graph(lifted, f"{function}_prepare", inputs[1:])
    got = run_graph(lifted, function, [inputs[0], *prepared])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    index = next(k for k, p in enumerate(prepared) if p.dtype == np.int64)
    planted = [*prepared]
    planted[index] = np.clip(prepared[index] + 1, 0, len(inputs[0]) - 1)
    bad = run_graph(lifted, function, [inputs[0], *planted])
    assert not all(np.array_equal(b, e) for b, e in zip(bad, expected, strict=True))


def test_model_index_tensors_are_prepared() -> None:
    """adaptive_pools_net (uneven adaptive pools: window bounds from index arithmetic) after
    the layout passes: its @main keeps no work on no argument but fills (its channel
    `arange` is computed by the gathers reading it, `normalize-graph`'s
    `InlineIndexFunction`: a `linalg.index` inside a reader), and prepare then main equals
    the source on the model's inputs (graph evaluator)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_models import load_inputs

    folder = ROOT / "examples" / "models"
    text = (folder / "adaptive_pools_net.mlir").read_text()
    source = parse(text)
    named = load_inputs(folder, "adaptive_pools_net")
    inputs = list(named.values())
    expected = run_graph(source, "main", inputs)
    layout = list(PhyslayoutAdrenoPass(lift_params=True).passes())
    stop = [p.name for p in layout].index("lift-transform-params") + 1
    lifted = apply(parse(text), layout[:stop])
    (_prepare, main) = functions(lifted)
    assert not [
        op for op in main.body.block.ops
        if isinstance(op, GenericOp) and not op.inputs
    ]  # fmt: skip
    prepared = run_graph(lifted, "main_prepare", inputs[1:])
    got = run_graph(lifted, "main", [inputs[0], *prepared])
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    # every stated `layout.bounds` holds on the values @main_prepare computes
    stated = 0
    for k, value in enumerate(prepared, start=1):
        found = argument_bounds(main, k)
        if found is not None:
            stated += 1
            assert found[0] <= value.min() and value.max() <= found[1], (k, found)
    assert stated
