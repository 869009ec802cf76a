"""sink-layout-rewrites: every function of the lit test computes the same values before and
after the pass (graph evaluator, bit for bit), the epilogue of the bottleneck model sinks
into the blocked layout, and a planted bug in the reuse of earlier transforms is caught."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_harness import apply, compare_before_after, parse
from xdsl.dialects import func
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.passes import ModulePass

from physlayout.dialects.layout_graph import TransformOp, static_shape
from physlayout.transforms import sink_layout_rewrites
from physlayout.transforms.sink_layout_rewrites import SinkLayoutRewritesPass

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/sink-layout-rewrites.mlir"


def test_sinking_keeps_values() -> None:
    module, _ = compare_before_after(LIT.read_text(), [SinkLayoutRewritesPass("b")], seed=4)
    again = apply(module.clone(), [SinkLayoutRewritesPass("b")])
    assert str(again) == str(module)


def test_bottleneck_epilogue_runs_blocked() -> None:
    """With prepared parameters, the model's result is one transform of the blocked epilogue
    (batch norm, residual add and relu all run on NCHW4c); without, the batch norm's
    statistics would need a transform per inference, so the epilogue stays NCHW."""
    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass

    def upto_sink(pipeline: PhyslayoutAdrenoPass) -> list[ModulePass]:
        passes = list(pipeline.passes())
        upto = [p.name for p in passes].index("sink-layout-rewrites") + 2  # and the fold after it
        assert isinstance(passes[upto - 2], SinkLayoutRewritesPass)
        return passes[:upto]

    stages = upto_sink(PhyslayoutAdrenoPass(lift_params=True))
    unprepared = upto_sink(PhyslayoutAdrenoPass())
    text = (ROOT / "examples/models/bottleneck.mlir").read_text()
    for passes, blocked in ((stages[:-2], False), (unprepared, False), (stages, True)):
        module = apply(parse(text), passes)
        (function,) = [f for f in module.ops if isinstance(f, func.FuncOp)]
        returned = function.body.blocks[0].last_op.operands[0]  # pyright: ignore[reportOptionalMemberAccess]
        relu = returned.owner.operands[0].owner if isinstance(returned.owner, TransformOp) else returned.owner
        assert isinstance(relu, GenericOp)
        assert (len(static_shape(relu.res[0]) or ()) == 5) == blocked


def test_planted_bug_in_the_transform_reuse_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a reuse check that takes any earlier transform of the right shape as the blocked
    form, @same_shape_other_map reads its residual input with H and W swapped."""
    original = sink_layout_rewrites._same_rewrite  # pyright: ignore[reportPrivateUsage]

    def any_same_shape(op: TransformOp, imap: object, pad_value: object) -> bool:
        return op.result_shape() == tuple(imap.map_shape(op.input_shape())) or original(op, imap, pad_value)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType, reportArgumentType]

    monkeypatch.setattr(sink_layout_rewrites, "_same_rewrite", any_same_shape)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        compare_before_after(LIT.read_text(), [SinkLayoutRewritesPass("b")], seed=4)


def test_planted_bug_in_the_undo_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With an undo check that takes any bijective transform of the blocked shape as undone,
    @residual_other_layout subtracts its second result with the channels interleaved."""

    def any_bijection(new: TransformOp) -> object:
        earlier = new.input.owner
        if isinstance(earlier, TransformOp) and earlier.input_shape() == new.result_shape():
            return earlier.input
        return None

    monkeypatch.setattr(sink_layout_rewrites, "_undone", any_bijection)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        compare_before_after(LIT.read_text(), [SinkLayoutRewritesPass("b")], seed=4)


def test_planted_bug_in_the_sunk_crop_window_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a sunk crop that keeps the sizes but starts at the origin, @neg_after_offset_crop
    returns channels 0..2 instead of 1..3."""
    from physlayout.dialects.layout_graph import CropOp

    def at_origin(value: object, crop: CropOp) -> CropOp:
        return CropOp(value, (0,) * len(crop.get_start()), crop.get_sizes())  # pyright: ignore[reportArgumentType]

    monkeypatch.setattr(sink_layout_rewrites, "_crop_like", at_origin)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        compare_before_after(LIT.read_text(), [SinkLayoutRewritesPass("b")], seed=4)
