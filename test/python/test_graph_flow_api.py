"""The Python API of flow-layout-rewrites: a callback supplies the operand transforms of
generics the analysis cannot handle (the design's fallback), and its answers are checked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from graph_harness import functions, parse, random_inputs
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout_graph import TransformOp
from physlayout.indexing.index_map import IndexMap
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.flow_layout_rewrites import (
    OperandTransformCallback,
    derive_operand_transform,
    flow_layout_rewrites,
)

FLOW = Path(__file__).resolve().parents[2] / "test/graph/flow-layout-rewrites.mlir"


def _function(name: str) -> str:
    module = parse(FLOW.read_text())
    for function in list(module.ops):
        if getattr(function, "sym_name", None) is None or function.sym_name.data != name:  # pyright: ignore[reportAttributeAccessIssue]
            function.detach()
    return str(module)


def _flowed(module: ModuleOp) -> bool:
    """Whether no transform is left on a generic result."""
    return not any(
        isinstance(op, TransformOp) and isinstance(op.input.owner, GenericOp)
        for op in module.walk()
    )


def _run(
    text: str, callback: OperandTransformCallback | None
) -> tuple[ModuleOp, list[object], list[object]]:
    before = parse(text)
    after = parse(text)
    flow_layout_rewrites(after, callback)
    after.verify()
    (function,) = functions(before)
    name = function.sym_name.data
    inputs = random_inputs(function, seed=5)
    return after, run_graph(before, name, inputs), run_graph(after, name, inputs)


def test_callback_supplies_transforms_for_an_unanalysable_generic() -> None:
    text = _function("mixed_output_stays")
    untouched = parse(text)
    flow_layout_rewrites(untouched)
    assert not _flowed(untouched)
    calls: list[str] = []

    def flatten_x(generic: GenericOp, transform: TransformOp) -> Sequence[IndexMap | None]:
        calls.append(str(transform.map))
        return [transform.map, None]

    after, before_results, after_results = _run(text, flatten_x)
    assert calls == ["(i, j) -> (i * 4 + j)"]
    assert _flowed(after)
    np.testing.assert_array_equal(before_results[0], after_results[0])
    maps = [str(m) for op in after.walk() if isinstance(op, GenericOp) for m in op.indexing_maps]
    assert "affine_map<(d0) -> ((d0 mod 4))>" in maps


def test_callback_declines_and_the_analysis_runs() -> None:
    text = _function("broadcast_bias")
    after, before_results, after_results = _run(text, lambda generic, transform: None)
    assert _flowed(after)
    np.testing.assert_array_equal(before_results[0], after_results[0])


def test_callback_keeps_operands_in_their_layout() -> None:
    """With no operand transform the transform moves into the indexing maps."""
    text = _function("elementwise")
    after, before_results, after_results = _run(text, lambda generic, transform: [None])
    assert _flowed(after)
    assert sum(1 for op in after.walk() if isinstance(op, TransformOp)) == 0
    np.testing.assert_array_equal(before_results[0], after_results[0])


def test_callback_answers_are_checked() -> None:
    text = _function("mixed_output_stays")
    with pytest.raises(PassFailedException, match="returned 1 operand transforms"):
        flow_layout_rewrites(parse(text), lambda generic, transform: [None])
    collapse = IndexMap.parse("(i, j) -> (i)")
    with pytest.raises(PassFailedException, match="is not injective on shape"):
        flow_layout_rewrites(parse(text), lambda generic, transform: [collapse, None])
    wrong_rank = IndexMap.parse("(i) -> (i)")
    with pytest.raises(PassFailedException, match="for input #0 of type tensor<2x4xf32>"):
        flow_layout_rewrites(parse(text), lambda generic, transform: [wrong_rank, None])


def test_frozen_generics_ignore_the_callback() -> None:
    text = _function("frozen_stays")
    module = parse(text)
    flow_layout_rewrites(module, lambda generic, transform: [transform.map])
    assert not _flowed(module)


@pytest.mark.parametrize(
    ("result_map", "output_loops", "access", "shape", "expected"),
    [
        # The seed's broadcast: bias[c, 0, 0] under NCHW -> NCHW4c.
        (
            "(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)",
            [0, 1, 2, 3],
            "(d0, d1, d2, d3) -> (d1, 0, 0)",
            [8, 1, 1],
            "(c, a1, a2) -> (c floordiv 4, 0, 0, c mod 4)",
        ),
        # The seed's reduction: sum over h, w of NCHW into NC under NC -> NC4c.
        (
            "(n, c) -> (n, c floordiv 4, c mod 4)",
            [0, 1],
            "(d0, d1, d2, d3) -> (d0, d1, d2, d3)",
            [2, 8, 3, 3],
            "(n, c, d2, d3) -> (n, c floordiv 4, d2, d3, c mod 4)",
        ),
        # Relay's sum over H under NCW -> NWC: the input becomes NHWC.
        (
            "(n, c, w) -> (n, w, c)",
            [0, 1, 3],
            "(d0, d1, d2, d3) -> (d0, d1, d2, d3)",
            [2, 4, 3, 5],
            "(n, c, d2, w) -> (n, d2, w, c)",
        ),
    ],
)
def test_derived_operand_transforms(
    result_map: str, output_loops: list[int], access: str, shape: list[int], expected: str
) -> None:
    derived = derive_operand_transform(
        IndexMap.parse(result_map), output_loops, IndexMap.parse(access), shape
    )
    assert str(derived) == expected


def test_mixed_outputs_are_not_derived() -> None:
    derived = derive_operand_transform(
        IndexMap.parse("(i, j) -> (i * 4 + j)"), [0, 1], IndexMap.parse("(d0, d1) -> (d1)"), [4]
    )
    assert derived is None
