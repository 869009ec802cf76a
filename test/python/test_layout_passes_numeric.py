"""Numeric checks of apply-layout and flatten-buffers: every kernel of the lit inputs runs on
the same logical data before and after the passes (numpy evaluator) with equal results."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from layout_harness import compare_before_after
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from physlayout.dialects.layout import StoreOp
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass

ROOT = Path(__file__).resolve().parents[2]
INPUTS = [
    ROOT / "test/transforms/apply-layout.mlir",
    ROOT / "test/transforms/apply-layout-rewrite-loops.mlir",
    ROOT / "test/transforms/apply-layout-dependences.mlir",
    ROOT / "test/transforms/flatten-buffers.mlir",
    ROOT / "test/lowering/inputs/offset_calls.mlir",
]
PIPELINES: dict[str, list[ModulePass]] = {
    "apply": [ApplyLayoutPass()],
    "apply-rewrite-loops": [ApplyLayoutPass(rewrite_loops=True)],
    "apply-flatten": [ApplyLayoutPass(), FlattenBuffersPass()],
    "apply-rewrite-loops-flatten": [ApplyLayoutPass(rewrite_loops=True), FlattenBuffersPass()],
}


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("source", INPUTS, ids=lambda p: p.name)
def test_results_agree_before_and_after(source: Path, pipeline: str) -> None:
    outcomes = compare_before_after(source.read_text(), PIPELINES[pipeline])
    assert outcomes
    for name, (before, after) in outcomes.items():
        assert len(before.buffers) == len(after.buffers), name
        for logical, transformed in zip(before.buffers, after.buffers, strict=True):
            np.testing.assert_array_equal(logical, transformed, err_msg=name)
        for x, y in zip(before.results, after.results, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("rewrite_loops", [False, True])
def test_written_padding_holds_the_pad_value(rewrite_loops: bool) -> None:
    source = ROOT / "test/transforms/apply-layout.mlir"
    outcomes = compare_before_after(source.read_text(), [ApplyLayoutPass(rewrite_loops)])
    _, after = outcomes["pad_split"]
    out = after.physical[1]
    assert out.shape == (3, 4)
    np.testing.assert_array_equal(out[2, 2:], [-1.0, -1.0])


@dataclass(frozen=True)
class DropPaddingFills(ModulePass):
    """A planted bug for the harness: erase every store of a constant under an `scf.if` (the
    padding fills apply-layout inserts), as if apply-layout never filled padding."""

    name = "drop-padding-fills"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for store in [s for s in op.walk() if isinstance(s, StoreOp)]:
            if isinstance(store.value.owner, arith.ConstantOp) and isinstance(
                store.parent_op(), scf.IfOp
            ):
                Rewriter.erase_op(store)


@pytest.mark.parametrize("rewrite_loops", [False, True])
def test_harness_sees_padding_that_is_never_filled(rewrite_loops: bool) -> None:
    """Padding starts as garbage and whole physical arrays are compared, so a pass that
    leaves padding alone fails (it did not when the harness pre-filled the pad value)."""
    source = ROOT / "test/transforms/apply-layout.mlir"
    passes = [ApplyLayoutPass(rewrite_loops), DropPaddingFills()]
    with pytest.raises(AssertionError, match="@pad_split: physical array of parameter #1"):
        compare_before_after(source.read_text(), passes)
