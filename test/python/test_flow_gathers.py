"""flow-layout-rewrites' `ReadGathersThroughBlockedForm` on values: test/graph/flow-gathers.mlir
before and after the pass (graph evaluator, bit for bit), a sum read by an upsample and by
its NCHW4c transform over varied shapes (channels 1 to 12, extents 1 and primes, the
transform before or after the upsample), and a planted wrong lane that must fail on values."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, count_ops, parse
from hypothesis import given, settings
from hypothesis import strategies as st

from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.quasi_affine import Expr, Mod
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms import flow_through_windows
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass

LIT = Path(__file__).resolve().parents[1] / "graph" / "flow-gathers.mlir"


UNPROVEN = "unproven_index_stays"
"""The lit function whose row indices are an input (random ones would be out of bounds)."""


def test_lit_functions_agree() -> None:
    """Every function of flow-gathers.mlir computes the same values after the pass (and
    after the folds that follow it in the pipeline); @unproven_index_stays on rows inside
    the sum."""
    text = LIT.read_text()
    others = re.sub(rf"\nfunc\.func @{UNPROVEN}\(.*?\n}}\n", "\n", text, flags=re.S)
    assert f"@{UNPROVEN}(" not in others
    compare_before_after(others, [FlowLayoutRewritesPass()], seed=3)
    compare_before_after(others, [FlowLayoutRewritesPass(), FoldLayoutRewritesPass()])
    rng = np.random.default_rng(4)
    inputs = [rng.standard_normal((1, 4, 2, 2)).astype(np.float32), rng.integers(0, 2, size=4)]
    before = run_graph(parse(text), UNPROVEN, inputs)
    after = run_graph(apply(parse(text), [FlowLayoutRewritesPass()]), UNPROVEN, inputs)
    for x, y in zip(before, after, strict=True):
        np.testing.assert_array_equal(x, y)


def _sum_text(channels: int, height: int, width: int, scale: int, transform_first: bool) -> str:
    """A sum of two NCHW tensors read by a nearest upsample (by `scale`) and by its NCHW4c
    transform (a pad value where the channels do not fill the last texel)."""
    c4 = -(-channels // 4)
    shape = f"1x{channels}x{height}x{width}xf32"
    blocked = f"1x{c4}x{height}x{width}x4xf32"
    big = f"1x{channels}x{height * scale}x{width * scale}xf32"
    pad = "" if channels % 4 == 0 else ", pad_value = 0.000000e+00 : f32"
    transform = (
        f"  %t = layout.transform %s {{index_map = #layout.index_map<(n, c, h, w) -> "
        f"(n, c floordiv 4, h, w, c mod 4)>{pad}}} : tensor<{shape}> -> tensor<{blocked}>\n"
    )
    upsample = f"""  %e2 = tensor.empty() : tensor<{big}>
  %up = linalg.generic {{indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} outs(%e2 : tensor<{big}>) {{
  ^bb0(%o: f32):
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %h2 = arith.divsi %h, %cs : index
    %w2 = arith.divsi %w, %cs : index
    %v = tensor.extract %s[%c0, %c, %h2, %w2] : tensor<{shape}>
    linalg.yield %v : f32
  }} -> tensor<{big}>
"""
    return f"""#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @f(%a: tensor<{shape}>, %b: tensor<{shape}>) -> (tensor<{blocked}>, tensor<{big}>) {{
  %c0 = arith.constant 0 : index
  %cs = arith.constant {scale} : index
  %e = tensor.empty() : tensor<{shape}>
  %s = linalg.generic {{indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%a, %b : tensor<{shape}>, tensor<{shape}>) outs(%e : tensor<{shape}>) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %z = arith.addf %x, %y : f32
    linalg.yield %z : f32
  }} -> tensor<{shape}>
{transform if transform_first else upsample}{upsample if transform_first else transform}  func.return %t, %up : tensor<{blocked}>, tensor<{big}>
}}
"""


def _inputs(text: str, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    function = next(iter(parse(text).ops))
    shapes = [arg.type.get_shape() for arg in function.body.blocks[0].args]  # type: ignore[attr-defined]
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


def _check(text: str, seed: int = 0) -> Any:
    """The values of @f before and after flow-layout-rewrites (and the folds), bit for bit;
    returns the module after the flow."""
    inputs = _inputs(text, seed)
    before = run_graph(parse(text), "f", inputs)
    after_flow = apply(parse(text), [FlowLayoutRewritesPass()])
    folded = apply(parse(text), [FlowLayoutRewritesPass(), FoldLayoutRewritesPass()])
    for module in (after_flow, folded):
        for x, y in zip(before, run_graph(module, "f", inputs), strict=True):
            np.testing.assert_array_equal(x, y)
    return after_flow


@settings(max_examples=25, deadline=None)
@given(
    channels=st.sampled_from([1, 3, 4, 5, 8, 12]),
    height=st.sampled_from([1, 2, 3, 5, 7]),
    width=st.sampled_from([1, 2, 5]),
    scale=st.sampled_from([1, 2, 3]),
    transform_first=st.booleans(),
)
def test_sum_read_blocked_and_upsampled(
    channels: int, height: int, width: int, scale: int, transform_first: bool
) -> None:
    """Values agree for every shape; the sum is computed blocked (no transform of it left,
    its operands transformed instead) exactly when the transform is a bijection (channels a
    multiple of 4)."""
    text = _sum_text(channels, height, width, scale, transform_first)
    after = _check(text, seed=channels * 100 + height * 10 + width)
    sums = [op for op in after.walk() if op.name == "linalg.generic" and len(op.operands) == 3]
    (total,) = sums
    blocked = len(total.results[0].type.get_shape()) == 5  # type: ignore[attr-defined]
    assert blocked == (channels % 4 == 0)
    assert count_ops(after, "layout.transform") == (2 if blocked else 1)


class _ShiftedLanes(ExprEmitter):
    """A planted bug: every ``e mod k`` it emits is ``(e + 1) mod k`` (the neighbouring
    lane, still inside the texel)."""

    def emit(self, expr: Expr) -> Any:
        if isinstance(expr, Mod):
            expr = Mod(expr.lhs + 1, expr.divisor)
        return super().emit(expr)


def test_planted_wrong_lane_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gathers reading the neighbouring lane of the blocked form: the values differ."""
    monkeypatch.setattr(flow_through_windows, "ExprEmitter", _ShiftedLanes)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        _check(_sum_text(8, 3, 2, 2, transform_first=False))
