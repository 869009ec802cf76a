"""fuse-elementwise: fused graphs compute what the unfused ones do (graph evaluator, buffer
evaluator after legalize-layout, OpenCL bit for bit against the unfused pipeline), on the
examples and on random chains of elementwise, broadcast and reduction generics; a planted
bug in the legality check is caught."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz.choices import RandomChooser
from fuzz.models import generate_model
from graph_harness import apply, compare_before_after, count_ops, functions, parse, random_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legalize_harness import check_legalized
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr
from xdsl.utils.exceptions import PassFailedException

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import compile_module
from physlayout.transforms import fuse_elementwise, fusion_plan, generic_inlining, legalize_layout
from physlayout.transforms.fuse_elementwise import FuseElementwisePass
from physlayout.transforms.legalize_layout import LegalizeLayoutPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
BLOCK = ROOT / "examples/resnet_block.mlir"
RELAX = ROOT / "examples/graph_conv_bias_conv.mlir"
RULES = ROOT / "test/graph/fuse-elementwise.mlir"
LEGALIZED = ROOT / "test/graph/legalize-fused.mlir"
ID4 = "affine_map<(n, c, h, w) -> (n, c, h, w)>"
CH4 = "affine_map<(n, c, h, w) -> (c, 0, 0)>"
TR4 = "affine_map<(n, c, h, w) -> (n, c, w, h)>"
PAR4 = '["parallel", "parallel", "parallel", "parallel"]'
GRAPH_STAGES = [p.name for p in PhyslayoutAdrenoPass().passes()].index("realize-scopes") + 1
"""The graph passes of physlayout-adreno before fuse-elementwise (through realize-scopes)."""

SETTINGS = settings(
    max_examples=int(os.environ.get("PHYSLAYOUT_HYPOTHESIS_EXAMPLES", "30")),
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def small_rfc() -> str:
    text = (ROOT / "examples/rfc_conv_relu_conv.mlir").read_text()
    for big, small in (
        ("2x64x56x56", "1x8x8x8"), ("32x64x3x3", "8x8x3x3"), ("32x32x3x3", "8x8x3x3"),
        ("2x32x54x54", "1x8x6x6"), ("2x32x52x52", "1x8x4x4"),
    ):  # fmt: skip
        text = text.replace(big, small)
    return text


def graph_passes(fuse: bool) -> list[Any]:
    stages = list(PhyslayoutAdrenoPass().passes()[:GRAPH_STAGES])
    return [*stages, FuseElementwisePass()] if fuse else stages


def test_fusion_keeps_values_graph_evaluator() -> None:
    for text in (RULES.read_text(), BLOCK.read_text(), small_rfc(), RELAX.read_text()):
        compare_before_after(text, [FuseElementwisePass()], seed=3)
        compare_before_after(text, graph_passes(fuse=True), seed=5)


def test_fused_groups_legalize_to_equal_results() -> None:
    """Buffer evaluator on the legalized fused host == graph evaluator, bit for bit."""
    check_legalized(RULES.read_text(), [FuseElementwisePass()], seed=2)
    check_legalized(BLOCK.read_text(), graph_passes(fuse=True), seed=4)


def test_fusion_removes_kernels() -> None:
    for text, unfused, fused in ((BLOCK.read_text(), 21, 10), (small_rfc(), 8, 5)):
        counts = []
        for fuse in (False, True):
            module = apply(parse(text), [*graph_passes(fuse), LegalizeLayoutPass()])
            counts.append(count_ops(module, "func.call"))
        assert counts == [unfused, fused]


PADDED = """
func.func @padded(%x: tensor<1x3x7x5xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<1x5x4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %p = layout.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, pad_value = 0.0 : f32} : tensor<1x3x7x5xf32> -> tensor<1x3x9x7xf32>
  %e = tensor.empty() : tensor<1x5x7x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x7x5xf32>) -> tensor<1x5x7x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<1x3x9x7xf32>, tensor<5x3x3x3xf32>) outs(%init : tensor<1x5x7x5xf32>) -> tensor<1x5x7x5xf32>
  %q = layout.pad %c {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, pad_value = 0xFF800000 : f32} : tensor<1x5x7x5xf32> -> tensor<1x5x9x7xf32>
  %e2 = tensor.empty() : tensor<1x5x4x3xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x5x4x3xf32>) -> tensor<1x5x4x3xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %m = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%q, %win : tensor<1x5x9x7xf32>, tensor<3x3xf32>) outs(%f : tensor<1x5x4x3xf32>) -> tensor<1x5x4x3xf32>
  func.return %m : tensor<1x5x4x3xf32>
}
"""
"""A 3x3 conv over a zero pad, then a 3x3 stride-2 max pool over a -inf pad (3 and 5
channels, odd extents): both pads are read through their padding by the kernels."""


def test_pads_read_through_padding_match_unfused() -> None:
    """The pads join their readers (no pad kernel is left) and the kernels compute what the
    graph evaluator does, bit for bit, on the graph and after every buffer stage. Three
    kernels fewer: the two pads and the two fills, less one: the pool's 5 channels back from
    the blocked layout, a transform then a crop of its padded channels, are one copy group
    fused, and no kernel unfused (the pool stores through the transform and the crop,
    `relayout_stores.CroppedStore`)."""
    compare_before_after(PADDED, graph_passes(fuse=True), seed=6)
    legalized = check_legalized(PADDED, graph_passes(fuse=True), seed=6)
    kernels = [f.sym_name.data for f in legalized.ops if isinstance(f, func.FuncOp)]
    assert not [k for k in kernels if "_pad" in k], kernels
    assert count_ops(legalized, "func.call") == count_ops(
        apply(parse(PADDED), [*graph_passes(fuse=False), LegalizeLayoutPass()]), "func.call"
    ) - 3


def _fire(squeeze: int, expand: int) -> str:
    """SqueezeNet's fire module as torch-mlir prints it (after normalize-graph): a 1x1
    squeeze conv + relu, then a 1x1 and a padded 3x3 expand conv + relu concatenated on
    channels (`expand` channels each: 4 stays texel-aligned in NCHW4c, 3 does not)."""
    c = 2 * expand

    def conv(name: str, src: str, cin: int, cout: int, k: int, size: int) -> str:
        return (
            f"  %e_{name} = tensor.empty() : tensor<1x{cout}x5x5xf32>\n"
            f"  %f_{name} = linalg.fill ins(%zero : f32) outs(%e_{name} : tensor<1x{cout}x5x5xf32>) -> tensor<1x{cout}x5x5xf32>\n"
            f"  %c_{name} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins({src}, %w_{name} : tensor<1x{cin}x{size}x{size}xf32>, tensor<{cout}x{cin}x{k}x{k}xf32>) outs(%f_{name} : tensor<1x{cout}x5x5xf32>) -> tensor<1x{cout}x5x5xf32>\n"
            f"  %{name} = linalg.generic {{indexing_maps = [{ID4}, {ID4}], iterator_types = {PAR4}}} ins(%c_{name} : tensor<1x{cout}x5x5xf32>) outs(%e_{name} : tensor<1x{cout}x5x5xf32>) {{\n"
            "  ^bb0(%u: f32, %o: f32):\n    %r = arith.maximumf %u, %zero : f32\n    linalg.yield %r : f32\n"
            f"  }} -> tensor<1x{cout}x5x5xf32>\n"
        )

    return (
        f"func.func @fire(%x: tensor<1x4x5x5xf32>, %w_s: tensor<{squeeze}x4x1x1xf32>, "
        f"%w_a: tensor<{expand}x{squeeze}x1x1xf32>, %w_b: tensor<{expand}x{squeeze}x3x3xf32>) "
        f"-> tensor<1x{c}x5x5xf32> {{\n"
        "  %zero = arith.constant 0.0 : f32\n"
        + conv("s", "%x", 4, squeeze, 1, 5)
        + f"  %p = layout.pad %s {{low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, pad_value = 0.0 : f32}} : tensor<1x{squeeze}x5x5xf32> -> tensor<1x{squeeze}x7x7xf32>\n"
        + conv("a", "%s", squeeze, expand, 1, 5)
        + conv("b", "%p", squeeze, expand, 3, 7)
        + f"  %e = tensor.empty() : tensor<1x{c}x5x5xf32>\n"
        f"  %c0 = tensor.insert_slice %a into %e[0, 0, 0, 0] [1, {expand}, 5, 5] [1, 1, 1, 1] : tensor<1x{expand}x5x5xf32> into tensor<1x{c}x5x5xf32>\n"
        f"  %cat = tensor.insert_slice %b into %c0[0, {expand}, 0, 0] [1, {expand}, 5, 5] [1, 1, 1, 1] : tensor<1x{expand}x5x5xf32> into tensor<1x{c}x5x5xf32>\n"
        f"  func.return %cat : tensor<1x{c}x5x5xf32>\n}}\n"
    )


FIRE = _fire(3, 4)
FIRE_ODD = _fire(5, 3)


def test_concat_parts_are_stored_in_place() -> None:
    """The fire module's two expand convs store straight into the concat (the aligned one:
    no insert kernel) and compute the graph evaluator's values, bit for bit, aligned or
    not."""
    for text in (FIRE, FIRE_ODD):
        compare_before_after(text, graph_passes(fuse=True), seed=8)
        check_legalized(text, graph_passes(fuse=True), seed=8)
    legalized = apply(parse(FIRE), [*graph_passes(fuse=True), LegalizeLayoutPass()])
    kernels = [f.sym_name.data for f in legalized.ops if isinstance(f, func.FuncOp)]
    assert not [k for k in kernels if "_insert" in k or "_pad" in k], kernels


def test_legalized_groups_agree() -> None:
    """Every function of the legalize-fused lit test (pads read through their padding,
    concat parts stored in place, and the refusals) computes what the graph does."""
    check_legalized(LEGALIZED.read_text(), [FuseElementwisePass()], seed=3)


def _chain_without_checks(op: Any) -> list[Any]:
    chain = [op]
    while isinstance(chain[0].dest.owner, type(op)):
        chain.insert(0, chain[0].dest.owner)
    return chain


def test_planted_bug_in_the_window_proof_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a proof that accepts overlapping windows, the two parts of @overlapping_parts
    are stored by their producers in producer order, so the first part wins where the
    graph's later insert should: the values differ."""
    monkeypatch.setattr(legalize_layout, "_insert_chain", _chain_without_checks)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(LEGALIZED.read_text(), [FuseElementwisePass()], seed=3)


def test_fused_equals_unfused_on_opencl(runtime: OpenCLRuntime) -> None:
    """Same kernels' arithmetic in the same order (FP_CONTRACT OFF): bit-exact outputs."""
    from physlayout.runtime.host import execute

    limits = runtime.limits.image_limits()
    for text in (BLOCK.read_text(), small_rfc(), PADDED, FIRE, FIRE_ODD):
        source = parse(text)
        outputs: list[list[np.ndarray]] = []
        for fuse in (False, True):
            lowered = parse(text)
            PhyslayoutAdrenoPass(
                max_image_width=limits.max_width, max_image_height=limits.max_height, fuse=fuse
            ).apply(make_context(), lowered)
            compiled = compile_module(lowered, runtime)
            (function,) = functions(source)
            inputs = random_inputs(function, seed=1)
            shapes = [tuple(t.get_shape()) for t in function.function_type.outputs.data]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
            results = [np.zeros(s, dtype=np.float32) for s in shapes]
            execute(compiled, function.sym_name.data, [*inputs, *results])
            outputs.append(results)
        for unfused, fused in zip(*outputs, strict=True):
            np.testing.assert_array_equal(fused, unfused)


# Random chains ------------------------------------------------------------------------------


def _elementwise(name: str, ins: list[tuple[str, str, str]], body: str, shape: str) -> str:
    """A generic writing tensor<SHAPE> at the identity from `ins` (value, type, map)."""
    values = ", ".join(v for v, _, _ in ins)
    types = ", ".join(t for _, t, _ in ins)
    maps = ", ".join(m for _, _, m in ins)
    args = ", ".join(f"%a{k}: f32" for k in range(len(ins)))
    return (
        f"  %{name} = linalg.generic {{indexing_maps = [{maps}, {ID4}], iterator_types = {PAR4}}} "
        f"ins({values} : {types}) outs(%e : tensor<{shape}xf32>) {{\n"
        f"  ^bb0({args}, %o: f32):\n{body}"
        f"  }} -> tensor<{shape}xf32>\n"
    )


@st.composite
def fusion_chains(draw: st.DrawFn) -> str:
    """A function of random elementwise (unary, broadcast per channel, residual, transposed)
    and reduction (1x1 channel mix with a fill init, 2x2 window sum) generics on
    tensor<1xCxSxS>."""
    c = draw(st.sampled_from([1, 3, 4]))
    s = draw(st.sampled_from([2, 3]))
    shape = f"1x{c}x{s}x{s}"
    tensor = f"tensor<{shape}xf32>"
    params = [f"%x: {tensor}", f"%p: tensor<{c}x1x1xf32>", f"%w: tensor<{c}x{c}xf32>"]
    lines = ["  %zero = arith.constant 0.0 : f32\n", f"  %e = tensor.empty() : {tensor}\n"]
    values = ["%x"]
    for k in range(draw(st.integers(2, 7))):
        kind = draw(st.sampled_from(["relu", "scale", "residual", "transpose", "mix", "window"]))
        last, name = values[-1], f"v{k}"
        if kind == "relu":
            body = "    %r = arith.maximumf %a0, %zero : f32\n    linalg.yield %r : f32\n"
            lines.append(_elementwise(name, [(last, tensor, ID4)], body, shape))
        elif kind == "scale":
            body = "    %r = arith.mulf %a0, %a1 : f32\n    linalg.yield %r : f32\n"
            ins = [(last, tensor, ID4), ("%p", f"tensor<{c}x1x1xf32>", CH4)]
            lines.append(_elementwise(name, ins, body, shape))
        elif kind == "residual":
            other = draw(st.sampled_from(values))
            body = "    %r = arith.addf %a0, %a1 : f32\n    linalg.yield %r : f32\n"
            lines.append(_elementwise(name, [(last, tensor, ID4), (other, tensor, ID4)], body, shape))
        elif kind == "transpose":
            body = "    %r = arith.negf %a0 : f32\n    linalg.yield %r : f32\n"
            lines.append(_elementwise(name, [(last, tensor, TR4)], body, shape))
        elif kind == "mix":
            lines.append(
                f"  %f{k} = linalg.fill ins(%zero : f32) outs(%e : {tensor}) -> {tensor}\n"
                f"  %{name} = linalg.generic {{indexing_maps = ["
                "affine_map<(n, c, h, w, i) -> (n, i, h, w)>, affine_map<(n, c, h, w, i) -> (c, i)>, "
                "affine_map<(n, c, h, w, i) -> (n, c, h, w)>], iterator_types = "
                '["parallel", "parallel", "parallel", "parallel", "reduction"]} '
                f"ins({last}, %w : {tensor}, tensor<{c}x{c}xf32>) outs(%f{k} : {tensor}) {{\n"
                "  ^bb0(%a0: f32, %a1: f32, %o: f32):\n"
                "    %m = arith.mulf %a0, %a1 : f32\n    %r = arith.addf %o, %m : f32\n"
                f"    linalg.yield %r : f32\n  }} -> {tensor}\n"
            )
        else:
            lines.append(
                f"  %win{k} = tensor.empty() : tensor<2x2xf32>\n"
                f"  %f{k} = linalg.fill ins(%zero : f32) outs(%e : {tensor}) -> {tensor}\n"
                f"  %{name} = linalg.generic {{indexing_maps = ["
                f"affine_map<(n, c, h, w, i, j) -> (n, c, (h + i) mod {s}, (w + j) mod {s})>, "
                "affine_map<(n, c, h, w, i, j) -> (i, j)>, "
                "affine_map<(n, c, h, w, i, j) -> (n, c, h, w)>], iterator_types = "
                '["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} '
                f"ins({last}, %win{k} : {tensor}, tensor<2x2xf32>) outs(%f{k} : {tensor}) {{\n"
                "  ^bb0(%a0: f32, %a1: f32, %o: f32):\n"
                "    %r = arith.addf %o, %a0 : f32\n"
                f"    linalg.yield %r : f32\n  }} -> {tensor}\n"
            )
        values.append(f"%{name}")
    returned = [values[-1]]
    if draw(st.booleans()) and len(values) > 2:
        returned.append(draw(st.sampled_from(values[1:-1])))
    types = ", ".join(tensor for _ in returned)
    return (
        f"func.func @chain({', '.join(params)}) -> ({types}) {{\n"
        + "".join(lines)
        + f"  func.return {', '.join(returned)} : {types}\n}}\n"
    )


@SETTINGS
@given(fusion_chains())
def test_random_chains_fuse_to_equal_results(text: str) -> None:
    """Fused == unfused (graph evaluator), and the fused groups' kernels (buffer evaluator
    after legalize-layout and the buffer passes) == the graph evaluator, bit for bit."""
    compare_before_after(text, [FuseElementwisePass()], seed=9)
    check_legalized(text, [FuseElementwisePass()], seed=9)


# The check before building a group --------------------------------------------------------


def _fused_text(text: str, graph: bool, precheck: bool) -> str:
    """`text` after the graph passes (when `graph`) and fuse-elementwise, with or without
    `fusion_plan.merge_problem` deciding refusals before a group is built."""
    module = parse(text)
    if graph:
        apply(module, graph_passes(fuse=False))
    with pytest.MonkeyPatch.context() as patch:
        if not precheck:
            patch.setattr(fuse_elementwise, "merge_problem", lambda *_: None)  # pyright: ignore[reportUnknownLambdaType]
        apply(module, [FuseElementwisePass()])
    return str(module)


@pytest.mark.parametrize(
    ("text", "graph"),
    [
        (RULES.read_text(), False),
        (BLOCK.read_text(), True),
        ((ROOT / "examples/models/bottleneck.mlir").read_text(), True),
        (generate_model(RandomChooser("merge-problem:1")).text, True),
        (generate_model(RandomChooser("merge-problem:2")).text, True),
        (generate_model(RandomChooser("merge-problem:3")).text, True),
    ],
    ids=["rules", "resnet_block", "bottleneck", "model1", "model2", "model3"],
)
def test_merge_problem_refuses_only_what_planning_refuses(text: str, graph: bool) -> None:
    """`merge_problem` refuses a fusion before its group is cloned and planned: the pass
    gives exactly the IR it gives when every group is built and planned (`plan_group`)."""
    assert _fused_text(text, graph, precheck=True) == _fused_text(text, graph, precheck=False)


@SETTINGS
@given(fusion_chains())
def test_merge_problem_on_random_chains(text: str) -> None:
    """The same on random chains of elementwise, broadcast, transposed and reduction
    generics (the refusals `merge_problem` decides: reductions and transposed reads of a
    producer, a value that is also an output's init, two reductions in one group)."""
    assert _fused_text(text, False, precheck=True) == _fused_text(text, False, precheck=False)


def test_planted_bug_in_merge_problem_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check that refuses fusions planning accepts (an epilogue into a group that has
    one already) changes the IR: the comparison above fails."""
    real = fusion_plan.merge_problem

    def refuses_groups(producer: Any, consumer: Any, value: Any) -> str | None:
        return "planted" if isinstance(producer, fuse_elementwise.FusedOp) else real(producer, consumer, value)

    monkeypatch.setattr(fuse_elementwise, "merge_problem", refuses_groups)
    text = BLOCK.read_text()
    module = parse(text)
    apply(module, [*graph_passes(fuse=False), FuseElementwisePass()])
    monkeypatch.setattr(fuse_elementwise, "merge_problem", real)
    assert str(module) != _fused_text(text, True, precheck=False)


# A planted bug ------------------------------------------------------------------------------


def test_planted_bug_in_the_padding_bounds_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that reads a pad through its padding with the wrong pad value (zero for the
    pool's -inf: a window of negative conv outputs at the border then gives 0) computes
    other values: the execution check fails on values (not on a crash)."""
    monkeypatch.setattr(
        legalize_layout, "_pad_scalar", lambda value, element: FloatAttr(0.0, element)  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    )
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(PADDED, graph_passes(fuse=True), seed=6)


def test_planted_bug_in_the_legality_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a legality check that accepts every read (so a 3x3 conv, a pool or a transposed
    read would be fused), the execution checks above fail: the refusal cases of the lit
    test no longer legalize to the graph evaluator's values."""
    monkeypatch.setattr(fusion_plan, "aligned_read_problem", lambda user, index: None)  # pyright: ignore[reportUnknownLambdaType]
    with pytest.raises((AssertionError, PassFailedException)):
        check_legalized(RULES.read_text(), [FuseElementwisePass()], seed=2)


def test_planted_bug_in_the_prologue_composition_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A root that reads a cheap producer's inputs at ``P_out . C`` instead of ``P_out^-1 .
    C`` (forgetting to invert the producer's output map) reads other elements, in bounds,
    in @rotated_prologue_into_mix: the values differ (not a crash)."""
    monkeypatch.setattr(
        generic_inlining,
        "producer_point",
        lambda out, read: out.compose(read),  # pyright: ignore[reportUnknownLambdaType, reportUnknownMemberType, reportUnknownArgumentType]
    )
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(RULES.read_text(), [FuseElementwisePass()], seed=2)


SQUEEZE_EXCITE = """
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
func.func @main(%x: tensor<1x8x4x4xf32>, %fc1_weight: tensor<6x8x1x1xf32>, %fc1_bias: tensor<6xf32>, %fc2_weight: tensor<8x6x1x1xf32>, %fc2_bias: tensor<8xf32>, %proj_weight: tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_2 = arith.constant 1.600000e+01 : f32
  %0 = tensor.empty() : tensor<1x8x4x4xf32>
  %23 = tensor.empty() : tensor<1x8x1x1xf32>
  %24 = linalg.fill ins(%cst : f32) outs(%23 : tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %25 = linalg.generic {indexing_maps = [#map1, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x8x4x4xf32>) outs(%24 : tensor<1x8x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %666 = arith.addf %in, %out : f32
    linalg.yield %666 : f32
  } -> tensor<1x8x1x1xf32>
  %26 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%25 : tensor<1x8x1x1xf32>) outs(%23 : tensor<1x8x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %666 = arith.divf %in, %cst_2 : f32
    linalg.yield %666 : f32
  } -> tensor<1x8x1x1xf32>
  %27 = tensor.empty() : tensor<1x6x1x1xf32>
  %broadcasted = linalg.broadcast ins(%fc1_bias : tensor<6xf32>) outs(%27 : tensor<1x6x1x1xf32>) dimensions = [0, 2, 3]
  %28 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%26, %fc1_weight : tensor<1x8x1x1xf32>, tensor<6x8x1x1xf32>) outs(%broadcasted : tensor<1x6x1x1xf32>) -> tensor<1x6x1x1xf32>
  %29 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%28 : tensor<1x6x1x1xf32>) outs(%27 : tensor<1x6x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %666 = arith.negf %in : f32
    %667 = math.exp %666 : f32
    %668 = arith.addf %667, %cst_0 : f32
    %669 = arith.divf %cst_0, %668 : f32
    linalg.yield %669 : f32
  } -> tensor<1x6x1x1xf32>
  %30 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%28, %29 : tensor<1x6x1x1xf32>, tensor<1x6x1x1xf32>) outs(%27 : tensor<1x6x1x1xf32>) {
  ^bb0(%in: f32, %in_264: f32, %out: f32):
    %666 = arith.mulf %in, %in_264 : f32
    linalg.yield %666 : f32
  } -> tensor<1x6x1x1xf32>
  %broadcasted_14 = linalg.broadcast ins(%fc2_bias : tensor<8xf32>) outs(%23 : tensor<1x8x1x1xf32>) dimensions = [0, 2, 3]
  %31 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%30, %fc2_weight : tensor<1x6x1x1xf32>, tensor<8x6x1x1xf32>) outs(%broadcasted_14 : tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %32 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31 : tensor<1x8x1x1xf32>) outs(%23 : tensor<1x8x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %666 = arith.negf %in : f32
    %667 = math.exp %666 : f32
    %668 = arith.addf %667, %cst_0 : f32
    %669 = arith.divf %cst_0, %668 : f32
    linalg.yield %669 : f32
  } -> tensor<1x8x1x1xf32>
  %33 = linalg.generic {indexing_maps = [#map3, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32, %x : tensor<1x8x1x1xf32>, tensor<1x8x4x4xf32>) outs(%0 : tensor<1x8x4x4xf32>) {
  ^bb0(%in: f32, %in_264: f32, %out: f32):
    %666 = arith.mulf %in, %in_264 : f32
    linalg.yield %666 : f32
  } -> tensor<1x8x4x4xf32>
  %34 = tensor.empty() : tensor<1x4x4x4xf32>
  %35 = linalg.fill ins(%cst : f32) outs(%34 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %36 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%33, %proj_weight : tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32>) outs(%35 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %36 : tensor<1x4x4x4xf32>
}
"""
"""EfficientNet's squeeze-excite block as torch-mlir prints it (keepdim mean, SiLU as sigmoid
then multiply, the scale broadcast over the pixels), with 6 squeezed channels: padded to 8
in the texel layout."""


def test_squeeze_excite_runs_in_one_kernel_per_reduction() -> None:
    """The SiLU's padded channels stay padded through it (silu(0) = 0, proven once
    normalize-graph merged sigmoid and multiply) and the scale is computed by the projection
    conv: a group per reduction (mean, fc1, fc2, projection), no crop, no relayout of an
    activation, no kernel of its own for an elementwise op (the projection stores its NCHW
    result itself: relayout_stores); values as the graph's."""
    module = check_legalized(SQUEEZE_EXCITE, graph_passes(fuse=True), seed=7, exact=False)
    (main,) = (f for f in functions(module) if f.sym_name.data == "main")
    called = [op.callee.root_reference.data for op in main.walk() if isinstance(op, func.CallOp)]
    parameters = ("weight", "bias", "broadcasted")  # per call here: no lift-transform-params
    activations = [name for name in called if not any(p in name for p in parameters)]
    assert activations == [
        "main_transform_x", "main_fused", "main_fused_1", "main_fused_2", "main_fused_3",
    ], called  # fmt: skip


def test_planted_bug_in_the_relayout_read_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A root that reads through a crop without the crop's start reads the first ten
    classes of @relayout_into_mean instead of the ten from channel 2 on, and the first half
    of @crop_into_conv's channels: in bounds, so the values differ (not a crash)."""
    monkeypatch.setattr(fuse_elementwise, "_shifted", lambda indices, start: list(indices))  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(RULES.read_text(), [FuseElementwisePass()], seed=2)


def test_planted_bug_in_the_crop_window_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crop stored into its concat window at the window's origin instead of its offset
    overwrites the other part of @crop_into_concat: the values differ."""
    original = legalize_layout.copy_kernel

    def at_origin(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("dst_offset", None)
        return original(*args, **kwargs)

    monkeypatch.setattr(legalize_layout, "copy_kernel", at_origin)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(LEGALIZED.read_text(), [FuseElementwisePass()], seed=3)


def test_planted_bug_in_the_relabelling_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading through a channel shuffle at its map instead of its inverse reads other
    channels of %x, in bounds, in @shuffle_split_read_through (the copy and the conv): the
    values differ."""
    original = fuse_elementwise.bijection_inverse

    def forward(op: Any) -> Any:
        return op.map if op.map.final_ndim == op.map.ndim else original(op)

    monkeypatch.setattr(fuse_elementwise, "bijection_inverse", forward)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(RULES.read_text(), [FuseElementwisePass()], seed=2)


def test_adopted_groups_equal_clones(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A group that grows takes its producer group's block instead of cloning the group
    (`AdoptedGroup`): the IR and the remarks are exactly the clone path's, on the rule
    examples (one refused after the adoption: the group gets its block back) and on the
    bottleneck model's graph."""
    adopted: list[bool] = []
    given_back: list[fuse_elementwise.FusedOp] = []
    adopt = fuse_elementwise.AdoptedGroup.of
    give_back = fuse_elementwise.AdoptedGroup.give_back

    def counted_of(group: fuse_elementwise.FusedOp) -> fuse_elementwise.AdoptedGroup | None:
        found = adopt(group)
        adopted.append(found is not None)
        return found

    def counted_give_back(self: fuse_elementwise.AdoptedGroup, fused: Any) -> None:
        given_back.append(self.group)
        give_back(self, fused)

    def run(text: str, passes: list[Any]) -> tuple[str, str]:
        module = apply(parse(text), passes)
        return str(module), capsys.readouterr().err

    cases = [
        (RULES.read_text(), [FuseElementwisePass(remarks=True)]),
        ((ROOT / "examples/models/bottleneck.mlir").read_text(), graph_passes(True)),
        *((text, [FuseElementwisePass()]) for text in UNADOPTABLE_GROUPS),
    ]
    monkeypatch.setattr(fuse_elementwise.AdoptedGroup, "of", staticmethod(counted_of))
    monkeypatch.setattr(fuse_elementwise.AdoptedGroup, "give_back", counted_give_back)
    grown = [run(text, passes) for text, passes in cases]
    assert any(adopted) and not all(adopted) and given_back
    monkeypatch.setattr(fuse_elementwise.AdoptedGroup, "of", staticmethod(lambda _: None))
    cloned = [run(text, passes) for text, passes in cases]
    assert grown == cloned


ADOPTED_GROUP = """
#id3 = affine_map<(i, j, l) -> (i, j, l)>
func.func @f(%x: tensor<2x1x4xf32>) -> tensor<2x1x4xf32> {
  %e = tensor.empty() : tensor<2x1x4xf32>
  %a = layout.fused ins(%x : tensor<2x1x4xf32>) -> tensor<2x1x4xf32> attributes {layout.scope = "global"} {
  ^bb0(%y: tensor<2x1x4xf32>):
    %f = tensor.empty() : tensor<2x1x4xf32>
    %b = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<2x1x4xf32>) outs(%f : tensor<2x1x4xf32>) attrs = {layout.scope = "global"} {
    ^bb0(%u: f32, %o: f32):
      %r = arith.negf %u : f32
      linalg.yield %r : f32
    } -> tensor<2x1x4xf32>
    layout.yield %b : tensor<2x1x4xf32>
  }
  %c = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x1x4xf32>) outs(%e : tensor<2x1x4xf32>) attrs = {layout.scope = "global"} {
  ^bb0(%u: f32, %o: f32):
    %r = arith.negf %u : f32
    linalg.yield %r : f32
  } -> tensor<2x1x4xf32>
  func.return %c : tensor<2x1x4xf32>
}
"""


def _group_over(inputs: str, types: str, args: str, body_ins: str) -> str:
    """ADOPTED_GROUP with its group's inputs and the inner generic's changed."""
    text = ADOPTED_GROUP.replace(
        "layout.fused ins(%x : tensor<2x1x4xf32>)", f"layout.fused ins({inputs} : {types})"
    )
    text = text.replace("^bb0(%y: tensor<2x1x4xf32>):", f"^bb0({args}):")
    return text.replace("ins(%y : tensor<2x1x4xf32>)", body_ins).replace(
        "^bb0(%u: f32, %o: f32):\n      %r = arith.negf %u : f32",
        "^bb0(%u: f32, %v: f32, %o: f32):\n      %r = arith.addf %u, %v : f32",
        1,
    ).replace("[#id3, #id3], iterator_types", "[#id3, #id3, #id3], iterator_types", 1)


T3 = "tensor<2x1x4xf32>"
UNADOPTABLE_GROUPS = tuple(
    _group_over(f"%x, {second}", f"{T3}, {T3}", f"%y: {T3}, %z: {T3}", f"ins(%y, %z : {T3}, {T3})")
    for second in ("%x", "%e")
)
"""Groups that are cloned, not adopted, when they grow (`AdoptedGroup.of`): one passed a
value twice (a new builder gives it one argument), one passed a `tensor.empty` (a new
builder re-creates it inside)."""


def _path(op: Any) -> tuple[int, ...]:
    """Where `op` sits: its index in its block, then its parent's, up to the module."""
    path: list[int] = []
    while op.parent is not None:
        path.append(list(op.parent.ops).index(op))
        op = op.parent_op()
    return tuple(reversed(path))


def test_adoption_leaves_the_worklist_of_a_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walker's worklist after a fusion that adopts a group holds the ops (by place) it
    holds after the same fusion by cloning, when the group's own ops were still waiting
    for their visit (a walker drops the ops nested in a removed op: `announce_removal`)."""
    from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter

    from physlayout.transforms.rooted_walker import RootedWalker

    def worklist_after_fusion() -> list[tuple[int, ...]]:
        module = parse(ADOPTED_GROUP)
        pattern = GreedyRewritePatternApplier(
            [fuse_elementwise.FuseIntoProducer(fuse_elementwise.Remarks(False))]
        )
        walker = RootedWalker(pattern, apply_recursively=True)
        walker._populate_worklist(module.body)  # pyright: ignore[reportPrivateUsage]
        consumer = next(op for op in module.walk() if op.results and op.results[0].name_hint == "c")
        rewriter = PatternRewriter(consumer)
        rewriter.extend_from_listener(walker._get_rewriter_listener())  # pyright: ignore[reportPrivateUsage]
        pattern.match_and_rewrite(consumer, rewriter)
        assert rewriter.has_done_action
        waiting = walker._worklist._map  # pyright: ignore[reportPrivateUsage]
        return sorted(_path(op) for op in waiting)

    adopted = worklist_after_fusion()
    monkeypatch.setattr(fuse_elementwise.AdoptedGroup, "of", staticmethod(lambda _: None))
    assert adopted == worklist_after_fusion()
