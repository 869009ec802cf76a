"""fold-affine-params: every function of the lit test computes the same values before and
after the pass (graph evaluator; within 1e-5, the rewrite reassociates), on random chains
of steps too (hypothesis); the prepared bottleneck model reads one value per batch norm and
still matches its unfolded self; planted bugs (a sign, the weights scaled along the wrong
dimension) are caught on values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, functions, parse, random_inputs
from hypothesis import given, settings
from hypothesis import strategies as st

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms import fold_affine_params
from physlayout.transforms.fold_affine_params import FoldAffineParamsPass
from physlayout.transforms.lift_transform_params import LiftTransformParamsPass

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/fold-affine-params.mlir"

HEADER = """#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c, 0, 0)>
#par = ["parallel", "parallel", "parallel", "parallel"]
"""
BODIES = {
    "add": "arith.addf %u, %v",
    "radd": "arith.addf %v, %u",
    "sub": "arith.subf %u, %v",
    "rsub": "arith.subf %v, %u",
    "mul": "arith.mulf %u, %v",
    "rmul": "arith.mulf %v, %u",
}


def chain_text(kinds: list[str], swapped: list[bool]) -> str:
    """@f(x, p0, p1, ...): one step per kind, the parameter as the first operand where
    `swapped` says so (the body's order is the kind's)."""
    params = ", ".join(f"%p{k}: tensor<5x1x1xf32>" for k in range(len(kinds)))
    lines = [f"func.func @f(%x: tensor<1x5x2x3xf32>, {params}) -> tensor<1x5x2x3xf32> {{",
             "  %e = tensor.empty() : tensor<1x5x2x3xf32>"]  # fmt: skip
    value = "%x"
    for k, (kind, swap) in enumerate(zip(kinds, swapped, strict=True)):
        ins = f"%p{k}, {value} : tensor<5x1x1xf32>, tensor<1x5x2x3xf32>" if swap else (
            f"{value}, %p{k} : tensor<1x5x2x3xf32>, tensor<5x1x1xf32>")  # fmt: skip
        maps = "[#ch, #id, #id]" if swap else "[#id, #ch, #id]"
        args = "%v: f32, %u: f32" if swap else "%u: f32, %v: f32"
        lines += [
            f"  %s{k} = linalg.generic {{indexing_maps = {maps}, iterator_types = #par}} "
            f"ins({ins}) outs(%e : tensor<1x5x2x3xf32>) {{",
            f"  ^bb0({args}, %o: f32):",
            f"    %r = {BODIES[kind]} : f32",
            "    linalg.yield %r : f32",
            "  } -> tensor<1x5x2x3xf32>",
        ]
        value = f"%s{k}"
    lines += [f"  func.return {value} : tensor<1x5x2x3xf32>", "}"]
    return HEADER + "\n".join(lines)


def test_folding_keeps_values() -> None:
    module, _ = compare_before_after(LIT.read_text(), [FoldAffineParamsPass()], seed=5, exact=False)
    again = apply(module.clone(), [FoldAffineParamsPass()])
    assert str(again) == str(module)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(BODIES)), min_size=2, max_size=5).flatmap(
        lambda kinds: st.tuples(st.just(kinds), st.lists(st.booleans(), min_size=len(kinds), max_size=len(kinds)))
    ),
    st.integers(0, 2**16),
)
def test_random_chains_fold_to_one_multiply_add(case: tuple[list[str], list[bool]], seed: int) -> None:
    kinds, swapped = case
    module, _ = compare_before_after(chain_text(kinds, swapped), [FoldAffineParamsPass()], seed=seed, exact=False)
    (function,) = functions(module)
    big = [op for op in function.walk() if op.name == "linalg.generic" and "1x5x2x3" in str(op.results[0].type)]
    assert len(big) == 1, "the chain is not one generic"


def test_prepared_bottleneck_reads_one_value_per_batch_norm() -> None:
    """The bottleneck through the pipeline up to lift-transform-params, with and without the
    fold: prepare + main agree with the original model (within 1e-5 of its largest value, as
    the model tests compare with PyTorch), and the folded main takes fewer prepared values
    (one per batch norm, its shift, instead of four: the scale is in the conv's weights)."""
    text = (ROOT / "examples/models/bottleneck.mlir").read_text()
    source = parse(text)
    (main,) = functions(source)
    inputs = random_inputs(main, seed=2)
    inputs = [np.abs(v) + 0.5 if "running_var" in str(a.name_hint) else v
              for a, v in zip(main.body.blocks[0].args, inputs, strict=True)]  # fmt: skip
    (expected,) = run_graph(source, "main", inputs)
    passes = list(PhyslayoutAdrenoPass(lift_params=True).passes())
    upto = [p.name for p in passes].index("lift-transform-params") + 1
    counts: list[int] = []
    for fold in (False, True):
        chosen = [p for p in passes[:upto] if fold or not isinstance(p, FoldAffineParamsPass)]
        lifted = apply(parse(text), chosen)
        prepare, entry = functions(lifted)
        prepared = run_graph(lifted, prepare.sym_name.data, inputs[1:])
        (got,) = run_graph(lifted, entry.sym_name.data, [inputs[0], *prepared])
        scale = float(np.max(np.abs(expected)))
        assert float(np.max(np.abs(got - expected))) <= 1e-5 * scale, fold
        counts.append(len(entry.body.blocks[0].args))
        assert not any(op.name == "layout.check" for op in entry.walk()), "a check on parameters stayed"
    batch_norms = 3
    assert counts[0] - counts[1] == 3 * batch_norms, counts


def test_planted_sign_bug_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With `p - y` read as `y - p` (the wrong sign of A and B), @reversed differs."""
    original = fold_affine_params.affine_step

    def wrong_sign(op: object, by_params: object) -> object:
        step = original(op, by_params)  # type: ignore[arg-type]
        if step is not None and step.kind == "rsub":
            return fold_affine_params.Step(step.op, step.x, step.p, step.p_map, "sub")
        return step

    monkeypatch.setattr(fold_affine_params, "affine_step", wrong_sign)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        compare_before_after(LIT.read_text(), [FoldAffineParamsPass()], seed=5, exact=False)


def test_lift_after_fold_is_stable() -> None:
    """A second fold and a second lift change nothing (the folded chain is one step)."""
    text = (ROOT / "examples/models/bottleneck.mlir").read_text()
    once = apply(parse(text), [FoldAffineParamsPass(), LiftTransformParamsPass()])
    twice = apply(once.clone(), [FoldAffineParamsPass(), LiftTransformParamsPass()])
    assert str(twice) == str(once)


def test_planted_bug_in_the_weight_dimension_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the weights scaled along their kernel-height dimension (of the same extent as
    the output channels, so the IR stays valid), @conv_bn differs."""
    original = fold_affine_params._weight_channel  # pyright: ignore[reportPrivateUsage]

    def kernel_height(conv: object) -> tuple[int, int] | None:
        found = original(conv)  # type: ignore[arg-type]
        return None if found is None else (found[0], found[1] + 2)

    monkeypatch.setattr(fold_affine_params, "_weight_channel", kernel_height)
    with pytest.raises(AssertionError, match="conv_bn"):
        compare_before_after(LIT.read_text(), [FoldAffineParamsPass()], seed=5, exact=False)
