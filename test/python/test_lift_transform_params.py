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

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.lift_transform_params import LiftTransformParamsPass

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
    assert "@main_prepare: 15 launch(es)" in out.stdout
    assert "@main: 4 launch(es)" in out.stdout
    assert "main_transform_w" not in out.stdout
    assert "check: passed" in out.stdout
