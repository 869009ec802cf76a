"""fuse-elementwise recomputing cheap producers in their readers (`RecomputeInReaders`, and
`InlineProducerIntoRoot` over a group without reductions): values before and after (graph
evaluator, exact; buffer evaluator after legalize-layout), on test/graph/fuse-recompute.mlir
and on torch-mlir-shaped LayerNorms over random shapes (extents 1 and primes); the kernels
a LayerNorm becomes; planted bugs (a wrong row index, one copy of the body for two read
maps) fail on values."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from graph_harness import apply, compare_before_after, count_ops, functions, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legalize_harness import check_legalized
from xdsl.dialects import func
from xdsl.ir.affine import AffineConstantExpr, AffineMap

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.transforms import fuse_prologues, generic_inlining
from physlayout.transforms.fuse_elementwise import FuseElementwisePass
from physlayout.transforms.legalize_layout import LegalizeLayoutPass

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "test/graph/fuse-recompute.mlir"

GRAPH_STAGES = [p.name for p in PhyslayoutAdrenoPass().passes()].index("realize-scopes") + 1
FUSED = [*PhyslayoutAdrenoPass().passes()[:GRAPH_STAGES], FuseElementwisePass()]
"""The graph passes of physlayout-adreno through fuse-elementwise (normalize-graph first
writes a keepdim reduction's result at its parallel loops)."""

SETTINGS = settings(
    max_examples=int(os.environ.get("PHYSLAYOUT_HYPOTHESIS_EXAMPLES", "30")),
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def layer_norm(rows: int, cols: int, batch: int = 1) -> str:
    """``nn.LayerNorm(cols)`` over tensor<BATCHxROWSxCOLS> as torch-mlir prints it: the mean
    in f32; the variance from f64 statistics (``extf(x)`` read by the f64 mean and by the
    centred difference, squared by a multiply that reads the difference twice); then
    ``(x - mean) * rsqrt(var + eps) * w + b``."""
    t = f"{batch}x{rows}x{cols}"
    r = f"{batch}x{rows}x1"
    id3 = "affine_map<(d0, d1, d2) -> (d0, d1, d2)>"
    row = "affine_map<(d0, d1, d2) -> (d0, d1, 0)>"
    col = "affine_map<(d0, d1, d2) -> (d2)>"
    par = '["parallel", "parallel", "parallel"]'
    red = '["parallel", "parallel", "reduction"]'

    def generic(
        name: str, ins: list[tuple[str, str, str]], out: str, body: str, kinds: str = par
    ) -> str:
        values = ", ".join(v for v, _, _ in ins)
        types = ", ".join(ty for _, ty, _ in ins)
        maps = ", ".join(m for _, _, m in ins)
        element = out.split("x")[-1].rstrip(">")
        args = ", ".join(
            f"%a{k}: {ty.split('x')[-1].rstrip('>')}" for k, (_, ty, _) in enumerate(ins)
        )
        out_map = row if kinds == red else id3
        return (
            f"  %{name} = linalg.generic {{indexing_maps = [{maps}, {out_map}], iterator_types = {kinds}}} "
            f"ins({values} : {types}) outs(%{name}_init : {out}) {{\n"
            f"  ^bb0({args}, %o: {element}):\n{body}  }} -> {out}\n"
        )

    x32, x64 = f"tensor<{t}xf32>", f"tensor<{t}xf64>"
    r32, r64 = f"tensor<{r}xf32>", f"tensor<{r}xf64>"
    lines = [
        "  %zero = arith.constant 0.0 : f32\n  %zero64 = arith.constant 0.0 : f64\n",
        f"  %n = arith.constant {float(cols)} : f32\n  %n64 = arith.constant {float(cols)} : f64\n",
        "  %eps = arith.constant 1.0e-05 : f32\n",
        f"  %e32 = tensor.empty() : {x32}\n  %e64 = tensor.empty() : {x64}\n",
        f"  %r32 = tensor.empty() : {r32}\n  %r64 = tensor.empty() : {r64}\n",
        f"  %s_init = linalg.fill ins(%zero : f32) outs(%r32 : {r32}) -> {r32}\n",
        generic("s", [("%x", x32, id3)], r32, "    %v = arith.addf %a0, %o : f32\n    linalg.yield %v : f32\n", red),
        f"  %mean_init = tensor.empty() : {r32}\n",
        generic("mean", [("%s", r32, id3)], r32, "    %v = arith.divf %a0, %n : f32\n    linalg.yield %v : f32\n"),
        f"  %x64_init = tensor.empty() : {x64}\n",
        generic("x64", [("%x", x32, id3)], x64, "    %v = arith.extf %a0 : f32 to f64\n    linalg.yield %v : f64\n"),
        f"  %s64_init = linalg.fill ins(%zero64 : f64) outs(%r64 : {r64}) -> {r64}\n",
        generic("s64", [("%x64", x64, id3)], r64, "    %v = arith.addf %a0, %o : f64\n    linalg.yield %v : f64\n", red),
        f"  %mean64_init = tensor.empty() : {r64}\n",
        generic("mean64", [("%s64", r64, id3)], r64, "    %v = arith.divf %a0, %n64 : f64\n    linalg.yield %v : f64\n"),
        f"  %d_init = tensor.empty() : {x64}\n",
        generic("d", [("%x64", x64, id3), ("%mean64", r64, row)], x64, "    %v = arith.subf %a0, %a1 : f64\n    linalg.yield %v : f64\n"),
        f"  %sq_init = tensor.empty() : {x64}\n",
        generic("sq", [("%d", x64, id3), ("%d", x64, id3)], x64, "    %v = arith.mulf %a0, %a1 : f64\n    linalg.yield %v : f64\n"),
        f"  %vs_init = linalg.fill ins(%zero64 : f64) outs(%r64 : {r64}) -> {r64}\n",
        generic("vs", [("%sq", x64, id3)], r64, "    %v = arith.addf %a0, %o : f64\n    linalg.yield %v : f64\n", red),
        f"  %rstd_init = tensor.empty() : {r32}\n",
        generic(
            "rstd", [("%vs", r64, id3)], r32,
            "    %q = arith.divf %a0, %n64 : f64\n    %t = arith.truncf %q : f64 to f32\n"
            "    %u = arith.addf %t, %eps : f32\n    %v = math.rsqrt %u : f32\n    linalg.yield %v : f32\n",
        ),
        f"  %c_init = tensor.empty() : {x32}\n",
        generic("c", [("%x", x32, id3), ("%mean", r32, row)], x32, "    %v = arith.subf %a0, %a1 : f32\n    linalg.yield %v : f32\n"),
        f"  %y_init = tensor.empty() : {x32}\n",
        generic(
            "y", [("%c", x32, id3), ("%rstd", r32, row), ("%w", f"tensor<{cols}xf32>", col), ("%b", f"tensor<{cols}xf32>", col)], x32,
            "    %p = arith.mulf %a0, %a1 : f32\n    %q = arith.mulf %p, %a2 : f32\n"
            "    %v = arith.addf %q, %a3 : f32\n    linalg.yield %v : f32\n",
        ),
    ]  # fmt: skip
    params = f"%x: {x32}, %w: tensor<{cols}xf32>, %b: tensor<{cols}xf32>"
    return (
        f"func.func @main({params}) -> {x32} {{\n"
        + "".join(lines)
        + f"  func.return %y : {x32}\n}}\n"
    )


def kernels(text: str) -> list[str]:
    """The kernels @main calls after fuse-elementwise and legalize-layout."""
    module = apply(parse(text), [*FUSED, LegalizeLayoutPass()])
    (main,) = (f for f in functions(module) if f.sym_name.data == "main")
    return [op.callee.root_reference.data for op in main.walk() if isinstance(op, func.CallOp)]


def test_rules_keep_values() -> None:
    """Every function of the lit test, before and after the pass (graph evaluator, bit for
    bit), and after legalize-layout and every buffer stage (buffer evaluator)."""
    compare_before_after(RULES.read_text(), [FuseElementwisePass()], seed=3)
    check_legalized(RULES.read_text(), [FuseElementwisePass()], seed=4)


def test_layer_norm_runs_its_reductions_and_one_normalization() -> None:
    """The LayerNorm's extf and centred square are computed by the sums that read them: four
    kernels (f32 mean, f64 mean, variance with rsqrt, normalization) where the unfused
    graph has one per op and fusion without recomputing left six."""
    assert len(kernels(layer_norm(5, 7))) == 4
    module = apply(parse(layer_norm(5, 7)), FUSED)
    (main,) = functions(module)
    assert count_ops(main, "layout.fused") == 4
    top = [op for op in main.body.block.ops if op.name == "linalg.generic"]
    assert not top, [str(op)[:120] for op in top]


@SETTINGS
@given(
    rows=st.sampled_from([1, 2, 3, 5, 7]),
    cols=st.sampled_from([1, 2, 3, 5, 13]),
    batch=st.sampled_from([1, 2]),
)
def test_layer_norms_of_any_shape_keep_values(rows: int, cols: int, batch: int) -> None:
    """Random LayerNorm shapes (extents of 1, primes, a batch of 2): the fused graph is the
    unfused one bit for bit (the same ops on the same values, in the same order), and four
    kernels remain (fewer with one column: normalize-graph folds a sum over one element)."""
    text = layer_norm(rows, cols, batch)
    compare_before_after(text, FUSED, seed=rows * 31 + cols)
    launched = kernels(text)
    assert len(launched) == 4 if cols > 1 else len(launched) <= 4, launched


def test_layer_norm_legalizes_to_equal_values() -> None:
    """After legalize-layout and every buffer stage (buffer evaluator), on a 3x5 and a 1x7
    LayerNorm: the recomputed extf and square read the right row of the right element."""
    check_legalized(layer_norm(3, 5), FUSED, seed=8)
    check_legalized(layer_norm(1, 7, batch=2), FUSED, seed=9)


def _row_zero(producer: object, consumer_read: AffineMap) -> list[AffineMap]:
    """Planted bug: the recomputed producer's inputs read at row 0 of each map's first
    non-unit axis (as if the row index were forgotten)."""
    real = _REAL_PRODUCER_READS(producer, consumer_read)  # pyright: ignore[reportArgumentType]
    wrong: list[AffineMap] = []
    for amap in real:
        results = list(amap.results)
        if len(results) >= 2:
            results[-2] = AffineConstantExpr(0)
        wrong.append(AffineMap(amap.num_dims, amap.num_symbols, tuple(results)))
    return wrong


_REAL_PRODUCER_READS = generic_inlining.producer_reads


def test_planted_bug_wrong_row_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recomputing the producer from row 0 instead of the reader's row (in bounds: no crash)
    changes the values of every row but the first."""
    monkeypatch.setattr(generic_inlining, "producer_reads", _row_zero)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        compare_before_after(layer_norm(3, 5), FUSED, seed=5)


TWO_MAPS = """
func.func @main(%x: tensor<5x5xf32>) -> (tensor<5x5xf32>, tensor<5x5xf32>) {
  %e = tensor.empty() : tensor<5x5xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<5x5xf32>) outs(%e : tensor<5x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<5x5xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %a : tensor<5x5xf32>, tensor<5x5xf32>) outs(%e : tensor<5x5xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<5x5xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<5x5xf32>) outs(%e : tensor<5x5xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = arith.mulf %u, %u : f32
    linalg.yield %r : f32
  } -> tensor<5x5xf32>
  func.return %s, %t : tensor<5x5xf32>, tensor<5x5xf32>
}
"""
"""A cheap producer read by ``a[i, j] - a[j, i]`` (two maps) and by ``a * a``."""


def test_two_read_maps_get_two_copies() -> None:
    """A reader reading the producer at two maps computes it twice (once per map), and the
    values are the unfused ones (an antisymmetric result, not zero)."""
    after, _ = compare_before_after(TWO_MAPS, [FuseElementwisePass()], seed=2)
    (main,) = functions(after)
    assert count_ops(main, "arith.negf") == 3
    assert not [
        op for op in main.walk() if op.name == "linalg.generic" and op.results[0].name_hint == "a"
    ]


def test_planted_bug_one_copy_for_two_maps_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sharing one copy of the producer's body between two read maps (reading ``a[i, j]``
    twice) makes ``a[i, j] - a[j, i]`` zero: the values differ."""
    real = fuse_prologues.inlined

    def one_copy(
        producer: object, consumer: object, index: object, sources: object = None
    ) -> object:
        reads = [k for k, v in enumerate(consumer.inputs) if v is consumer.inputs[index[0]]]  # pyright: ignore
        maps = list(consumer.indexing_maps.data)  # pyright: ignore
        for k in reads:
            maps[k] = maps[reads[0]]
        consumer.indexing_maps = type(consumer.indexing_maps)(maps)  # pyright: ignore
        return real(producer, consumer, reads, sources)  # pyright: ignore

    monkeypatch.setattr(fuse_prologues, "inlined", one_copy)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        compare_before_after(TWO_MAPS, [FuseElementwisePass()], seed=2)
