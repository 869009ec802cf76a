"""fuse-elementwise's stages of another rank than their root (fusion_plan: elements matched
with their unit dimensions dropped; the MLP-Mixer residual add after a matmul), on values:
the graph evaluator before and after the pass, and the legalized group's kernel on the
buffer evaluator after each buffer stage, over matmul shapes with extents 1 and primes and
the unit dimension at the front or in the middle; a planted bug (the group's result stored
transposed) must fail on values."""

from __future__ import annotations

from typing import Any

import pytest
from graph_harness import apply, compare_before_after, count_ops, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legalize_harness import check_legalized

from physlayout.transforms import fusion_plan
from physlayout.transforms.fuse_elementwise import FuseElementwisePass
from physlayout.transforms.legalize_layout import LegalizeLayoutPass


def _matmul_then_residual(m: int, n: int, k: int, unit_first: bool) -> str:
    """A matmul (m x k by k x n) and a residual add writing it with a unit dimension
    inserted (1 x m x n, or m x 1 x n)."""
    big = f"1x{m}x{n}" if unit_first else f"{m}x1x{n}"
    out = "(d0, d1, d2)"
    read = "(d1, d2)" if unit_first else "(d0, d2)"
    return f"""
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %r: tensor<{big}xf32>) -> tensor<{big}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %mm = linalg.generic {{indexing_maps = [affine_map<(i, j, l) -> (i, l)>, affine_map<(i, j, l) -> (l, j)>, affine_map<(i, j, l) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}} ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%f : tensor<{m}x{n}xf32>) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  }} -> tensor<{m}x{n}xf32>
  %e3 = tensor.empty() : tensor<{big}xf32>
  %t = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> {read}>, affine_map<(d0, d1, d2) -> {out}>, affine_map<(d0, d1, d2) -> {out}>], iterator_types = ["parallel", "parallel", "parallel"]}} ins(%mm, %r : tensor<{m}x{n}xf32>, tensor<{big}xf32>) outs(%e3 : tensor<{big}xf32>) {{
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %u = arith.mulf %s, %s : f32
    linalg.yield %u : f32
  }} -> tensor<{big}xf32>
  func.return %t : tensor<{big}xf32>
}}"""


def _kernel_calls(text: str) -> int:
    module = apply(parse(text), [FuseElementwisePass(), LegalizeLayoutPass()])
    return count_ops(module, "func.call")


EXTENTS = st.sampled_from([1, 2, 3, 5, 7])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=EXTENTS, n=EXTENTS, k=EXTENTS, unit_first=st.booleans())
def test_rank_changing_epilogue_keeps_the_values(m: int, n: int, k: int, unit_first: bool) -> None:
    """The matmul and its residual add are one group, one kernel, with the graph
    evaluator's values (within rounding: the group's kernel accumulates as the matmul's)."""
    text = _matmul_then_residual(m, n, k, unit_first)
    after, _ = compare_before_after(text, [FuseElementwisePass()], seed=m * 100 + n * 10 + k)
    assert count_ops(after, "layout.fused") == 1
    assert _kernel_calls(text) == 1
    check_legalized(text, [FuseElementwisePass()], seed=k)


def test_planted_transposed_result_store_fails_on_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the group stores its 1 x 3 x 3 result at (0, j, i) instead of
    (0, i, j) (the rank change's element mapping reversed). The values show it."""
    text = _matmul_then_residual(3, 3, 5, unit_first=True)
    check_legalized(text, [FuseElementwisePass()])
    real = fusion_plan.result_exprs

    def transposed(op: Any, root: Any, root_out: Any) -> tuple[Any, ...]:
        exprs = real(op, root, root_out)
        assert len(exprs) == 3
        return (exprs[0], exprs[2], exprs[1])

    monkeypatch.setattr(fusion_plan, "result_exprs", transposed)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(text, [FuseElementwisePass()])
