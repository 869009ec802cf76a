"""vectorize-texels: the numpy evaluator gives identical results before and after the pass,
refused loops are left unchanged, and a second run changes nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from layout_harness import compare_before_after, make_context, parse
from xdsl.dialects import func

from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.vectorize_texels import VectorizeTexelsPass

ROOT = Path(__file__).resolve().parents[2]
LIT_INPUT = ROOT / "test/opencl/vectorize-texels.mlir"
DEMO = ROOT / "examples/demo.mlir"


def _functions(text: str) -> dict[str, str]:
    module = parse(text)
    return {
        op.sym_name.data: str(op) for op in module.ops if isinstance(op, func.FuncOp)
    }


def _vectorized(text: str) -> str:
    module = parse(text)
    VectorizeTexelsPass().apply(make_context(), module)
    module.verify()
    return str(module)


def test_results_identical_before_and_after() -> None:
    outcomes = compare_before_after(LIT_INPUT.read_text(), [VectorizeTexelsPass()])
    assert set(outcomes) >= {"relu_texels", "scale_nd", "gather_channels", "reduce_in_texel"}
    for name, (before, after) in outcomes.items():
        for x, y in zip(before.buffers, after.buffers, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=name)


def test_refused_loops_are_unchanged() -> None:
    before = _functions(LIT_INPUT.read_text())
    after = _functions(_vectorized(LIT_INPUT.read_text()))
    refused = [name for name in before if name.startswith("refuse_")]
    assert refused
    for name in refused:
        assert after[name] == before[name], name
    for name in ("relu_texels", "scale_nd", "gather_channels", "reduce_in_texel"):
        assert "vector<4xf32>" in after[name], name


def test_second_run_changes_nothing() -> None:
    once = _vectorized(LIT_INPUT.read_text())
    assert _vectorized(once) == once


@pytest.mark.parametrize("flatten_first", [True, False])
def test_demo_pipeline_identical_with_and_without_vectorization(flatten_first: bool) -> None:
    """The demo kernels (layout transform, relu, conv2d) after apply-layout, with the pass
    before or after flatten-buffers, against the logical source."""
    apply = ApplyLayoutPass(rewrite_loops=True)
    passes = (
        [apply, FlattenBuffersPass(), VectorizeTexelsPass()]
        if flatten_first
        else [apply, VectorizeTexelsPass(), FlattenBuffersPass()]
    )
    outcomes = compare_before_after(DEMO.read_text(), passes)
    assert set(outcomes) == {"to_nchw4c", "relu", "conv2d", "main"}
    for name, (before, after) in outcomes.items():
        for x, y in zip(before.buffers, after.buffers, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=name)
