"""fuse-transposed-conv on ConvTranspose2d as torch-mlir prints it (autoencoder_transpose's
form: the weight flip gather, the zero fill, the strided insert_slice, the stride-1 conv):
the graph evaluator before and after the pass (and after convert-layout first, the
NCHW4c form the pipeline rewrites) on random inputs over strides, kernel sizes, padding,
output_padding, channels and extents; a planted off-by-one phase caught on values; OpenCL
against the evaluator through physlayout-adreno, with the multiplies the kernels execute."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, count_ops, parse, random_inputs
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Region

from physlayout.indexing.quasi_affine import Dim
from physlayout.indexing.simplify import simplify
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms import fuse_transposed_conv
from physlayout.transforms.convert_layout import ConvertLayoutPass
from physlayout.transforms.fuse_transposed_conv import FuseTransposedConvPass, SpreadAxis

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def transposed(
    c: int, f: int, h: int, w: int, k: int, s: tuple[int, int], p: tuple[int, int],
    op: tuple[int, int],
) -> str:  # fmt: skip
    """`ConvTranspose2d(c, f, k, stride=s, padding=p, output_padding=op)` on 1xCxHxW as
    torch-mlir prints it (the autoencoder's dec1, other shapes)."""
    lo = [k - 1 - p[0], k - 1 - p[1]]
    hz = (h - 1) * s[0] + 1 + lo[0] + k - 1 - p[0] + op[0]
    wz = (w - 1) * s[1] + 1 + lo[1] + k - 1 - p[1] + op[1]
    ho, wo = hz - k + 1, wz - k + 1
    km = k - 1
    return f"""
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x{c}x{h}x{w}xf32>, %weight: tensor<{c}x{f}x{k}x{k}xf32>) -> tensor<1x{f}x{ho}x{wo}xf32> {{
  %cst = arith.constant 0.000000e+00 : f32
  %c2 = arith.constant {km} : index
  %6 = tensor.empty() : tensor<{f}x{c}x{k}x{k}xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<{f}x{c}x{k}x{k}xf32>) -> tensor<{f}x{c}x{k}x{k}xf32>
  %8 = linalg.generic {{indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} outs(%7 : tensor<{f}x{c}x{k}x{k}xf32>) {{
  ^bb0(%out: f32):
    %52 = linalg.index 0 : index
    %53 = linalg.index 1 : index
    %54 = linalg.index 2 : index
    %55 = linalg.index 3 : index
    %56 = arith.subi %c2, %54 : index
    %57 = arith.subi %c2, %55 : index
    %extracted = tensor.extract %weight[%53, %52, %56, %57] : tensor<{c}x{f}x{k}x{k}xf32>
    linalg.yield %extracted : f32
  }} -> tensor<{f}x{c}x{k}x{k}xf32>
  %9 = tensor.empty() : tensor<1x{c}x{hz}x{wz}xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x{c}x{hz}x{wz}xf32>) -> tensor<1x{c}x{hz}x{wz}xf32>
  %inserted_slice = tensor.insert_slice %x into %10[0, 0, {lo[0]}, {lo[1]}] [1, {c}, {h}, {w}] [1, 1, {s[0]}, {s[1]}] : tensor<1x{c}x{h}x{w}xf32> into tensor<1x{c}x{hz}x{wz}xf32>
  %0 = tensor.empty() : tensor<1x{f}x{ho}x{wo}xf32>
  %init = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x{f}x{ho}x{wo}xf32>) -> tensor<1x{f}x{ho}x{wo}xf32>
  %11 = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%inserted_slice, %8 : tensor<1x{c}x{hz}x{wz}xf32>, tensor<{f}x{c}x{k}x{k}xf32>) outs(%init : tensor<1x{f}x{ho}x{wo}xf32>) -> tensor<1x{f}x{ho}x{wo}xf32>
  return %11 : tensor<1x{f}x{ho}x{wo}xf32>
}}
"""


def torch_like(x: np.ndarray, weight: np.ndarray, s: tuple[int, int], p: tuple[int, int], op: tuple[int, int]) -> np.ndarray:
    """ConvTranspose2d by its definition (every input pixel times every tap, scattered, then
    cropped by the padding): an oracle independent of the IR."""
    _, _, h, w = x.shape
    _, f, k, _ = weight.shape
    full = np.zeros((1, f, (h - 1) * s[0] + k + op[0], (w - 1) * s[1] + k + op[1]), np.float64)
    for iy in range(h):
        for ix in range(w):
            full[0, :, iy * s[0] : iy * s[0] + k, ix * s[1] : ix * s[1] + k] += np.einsum(
                "c,cfyx->fyx", x[0, :, iy, ix].astype(np.float64), weight.astype(np.float64)
            )
    ho, wo = full.shape[2] - 2 * p[0], full.shape[3] - 2 * p[1]
    return full[:, :, p[0] : p[0] + ho, p[1] : p[1] + wo]


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, int, int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]]:
    k = draw(st.integers(1, 5))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = (draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1)))
    op = (draw(st.integers(0, s[0] - 1)), draw(st.integers(0, s[1] - 1)))
    c = draw(st.sampled_from([1, 3, 5]))
    f = draw(st.sampled_from([1, 2, 3, 5]))
    h, w = draw(st.sampled_from([1, 2, 3, 5, 7])), draw(st.sampled_from([1, 2, 3, 5, 7]))
    return c, f, h, w, k, s, p, op


def _valid(h: int, w: int, k: int, s: tuple[int, int], p: tuple[int, int], op: tuple[int, int]) -> bool:
    return (h - 1) * s[0] - 2 * p[0] + k + op[0] >= 1 and (w - 1) * s[1] - 2 * p[1] + k + op[1] >= 1


@settings(max_examples=60, deadline=None)
@given(cases())
def test_rewrite_keeps_values(case: tuple[int, int, int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]]) -> None:
    c, f, h, w, k, s, p, op = case
    if not _valid(h, w, k, s, p, op):
        return
    text = transposed(c, f, h, w, k, s, p, op)
    after, results = compare_before_after(text, [FuseTransposedConvPass()])  # bit-identical
    spread = s != (1, 1)
    assert count_ops(after, "tensor.insert_slice") == (0 if spread else 1)
    # and the source computes ConvTranspose2d itself (the test's IR is right)
    module = parse(text)
    x, weight = _inputs(module)
    np.testing.assert_allclose(results["main"][1][0], torch_like(x, weight, s, p, op), rtol=1e-4, atol=1e-4)


def _inputs(module: object) -> list[np.ndarray]:
    from graph_harness import functions

    return random_inputs(functions(module)[0], 0)  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None)
@given(cases())
def test_rewrite_of_the_blocked_conv_keeps_values(case: tuple[int, int, int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]]) -> None:
    """After convert-layout (NCHW4c data through a layout.transform, channels 1, 3, 5
    padded to 4 or 8), as in physlayout-adreno."""
    c, f, h, w, k, s, p, op = case
    if not _valid(h, w, k, s, p, op) or s == (1, 1):
        return
    text = transposed(c, f, h, w, k, s, p, op)
    converted = apply(parse(text), [ConvertLayoutPass()])
    after, _ = compare_before_after(str(converted), [FuseTransposedConvPass()])
    assert count_ops(after, "tensor.insert_slice") == 0


def test_planted_off_by_one_phase_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite that reads tap ``r(oy) + 1`` (a non-contributing pixel's phase) must
    change the values."""

    def wrong_phase(self: SpreadAxis) -> object:
        return simplify((Dim(self.out_loop) * (self.s - 1) + self.o + 1) % self.s)

    text = transposed(3, 5, 5, 7, 3, (2, 2), (1, 1), (1, 1))
    compare_before_after(text, [FuseTransposedConvPass()], exact=False)
    monkeypatch.setattr(fuse_transposed_conv.SpreadAxis, "phase_expr", wrong_phase)
    with pytest.raises(AssertionError):
        compare_before_after(text, [FuseTransposedConvPass()], exact=False)


def test_planted_off_by_one_row_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading input row ``iy + 1`` (shifted data) must change the values too."""
    original = fuse_transposed_conv.SpreadAxis.data_expr

    def shifted(self: SpreadAxis) -> object:
        return simplify(original(self) + 1)

    text = transposed(3, 2, 5, 5, 4, (2, 3), (1, 2), (0, 2))
    compare_before_after(text, [FuseTransposedConvPass()], exact=False)
    monkeypatch.setattr(fuse_transposed_conv.SpreadAxis, "data_expr", shifted)
    with pytest.raises(Exception):  # noqa: B017 (wrong values, or the verifier refusing a read past the input)
        compare_before_after(text, [FuseTransposedConvPass()], exact=False)


@pytest.mark.parametrize(
    ("c", "f", "h", "w", "k", "s", "p", "op"),
    [
        (3, 5, 5, 7, 3, (2, 2), (1, 1), (1, 1)),
        (5, 3, 3, 2, 5, (3, 2), (2, 0), (2, 1)),
        (3, 2, 4, 4, 2, (3, 3), (0, 1), (0, 0)),
    ],
)
def test_opencl_matches_the_evaluator(
    runtime: object, c: int, f: int, h: int, w: int, k: int, s: tuple[int, int],
    p: tuple[int, int], op: tuple[int, int],
) -> None:  # fmt: skip
    """physlayout-adreno (NCHW4c textures, the rewrite fused with its init) on the device
    against the evaluator on the source; the kernels execute the contributing taps'
    multiplies only (`contributing_multiplies`), not the spread conv's
    ``F * C * K * K * H_out * W_out`` nor the phase nest's ``ceil(K/s)^2`` per output."""
    from physlayout.runtime.model_report import run_model

    text = transposed(c, f, h, w, k, s, p, op)
    module = parse(text)
    inputs = _inputs(module)
    expected = run_graph(module, "main", inputs)[0]
    report = run_model(
        "t", text, {"x": inputs[0], "weight": inputs[1]}, {"result0": expected}, runtime,  # type: ignore[arg-type]
        "physlayout-adreno{schedule=false}",  # one output per work-item: exact trip counts
    )
    assert report.max_error <= 1e-5, report.errors
    assert report.multiplies == contributing_multiplies(c, f, h, w, k, s, p, op)


def contributing_multiplies(
    c: int, f: int, h: int, w: int, k: int, s: tuple[int, int], p: tuple[int, int],
    op: tuple[int, int],
) -> int:  # fmt: skip
    """The multiplies of the taps that land on the spread tensor's stride-s grid, counted
    on the source's zero-spread conv (an oracle independent of the rewrite): output
    ``oy``'s tap ``ky < K`` contributes when ``oy + ky - lo`` is a multiple of s (``lo``,
    the insert's offset; taps on grid rows outside the input read its zero border and are
    executed too), over every input channel and every output channel padded to the block
    of 4 (NCHW4c)."""
    counts: list[int] = []
    for axis, extent in ((0, h), (1, w)):
        lo = k - 1 - p[axis]
        out = (extent - 1) * s[axis] + 1 + lo + k - 1 - p[axis] + op[axis] - k + 1
        counts.append(sum((o + ky - lo) % s[axis] == 0 for o in range(out) for ky in range(k)))
    return -(-f // 4) * 4 * c * counts[0] * counts[1]


def lowered_kernels(text: str) -> tuple[int, str]:
    """The multiplies the kernels of `physlayout-adreno{schedule=false}` execute
    (`kernel_stats` over every kernel, each launched once here) and their OpenCL C, lowered
    without a device."""
    from physlayout.runtime.kernel_stats import kernel_stats
    from physlayout.runtime.opencl import DeviceLimits, device_pipeline, lower_module
    from physlayout.universe import make_context

    limits = DeviceLimits(True, 16384, 16384)
    module = parse(text)
    device_pipeline("physlayout-adreno{schedule=false}", limits).apply(make_context(), module)
    lowered = lower_module(module, limits, lowered_already=True)
    counts = [stats.multiplies for stats in kernel_stats(lowered.lowered, lowered.program.kernels).values()]
    assert None not in counts
    return sum(n for n in counts if n is not None), lowered.program.source


def executed_multiplies(text: str) -> int:
    return lowered_kernels(text)[0]


@settings(max_examples=20, deadline=None)
@given(cases())
def test_kernels_execute_exactly_the_contributing_multiplies(
    case: tuple[int, int, int, int, int, tuple[int, int], tuple[int, int], tuple[int, int]],
) -> None:
    """The tap guard skips every padded tap (s not dividing K): the lowered kernels'
    multiplies (counted by how often each guarded one runs) equal the contributing ones,
    ``1/s^2`` of the spread conv's when s divides K, and for K = 3, s = 2 a quarter."""
    c, f, h, w, k, s, p, op = case
    if not _valid(h, w, k, s, p, op) or s == (1, 1):
        return
    text = transposed(c, f, h, w, k, s, p, op)
    assert executed_multiplies(text) == contributing_multiplies(c, f, h, w, k, s, p, op)


def test_a_quarter_of_the_spread_conv_for_k3_s2() -> None:
    """ConvTranspose2d(k=3, stride 2, padding 1, output_padding 1) on 8x8 (the
    autoencoder's dec1, fewer channels): 16x16 outputs, per axis 8 rows of 2 taps and 8 of
    1, so 24 * 24 = 576 of the spread conv's 16 * 16 * 9 = 2304 products per channel pair."""
    text = transposed(3, 4, 8, 8, 3, (2, 2), (1, 1), (1, 1))
    multiplies, source = lowered_kernels(text)
    assert multiplies == 4 * 3 * 576 == 4 * 3 * 16 * 16 * 9 // 4
    # the guarded conv (its taps under `if`) stores the NCHW result itself through the
    # boundary relayout (relayout_stores); the other launches are the input's relayout and
    # the weight's fill and phase split (not lifted here; one kernel: the split reads each
    # element where the same work item of the fill stored it, merge-sibling-kernels)
    launched = "launches: main_transform_x, main_transform_generic, main_fused\n"
    assert "if (" in source and launched in source


def test_planted_unguarded_taps_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the guard (the plain body) the padded taps' multiplies run (and the count
    catches it): ``ceil(K/s)^2`` per output, 4/9 of the spread conv's for K = 3, s = 2."""
    text = transposed(3, 4, 8, 8, 3, (2, 2), (1, 1), (1, 1))

    def unguarded(generic: GenericOp, axes: tuple[SpreadAxis, ...]) -> Region:
        return generic.body.clone()

    monkeypatch.setattr(fuse_transposed_conv, "guarded_body", unguarded)
    assert executed_multiplies(text) == 4 * 3 * 16 * 16 * 4


def test_planted_guard_on_the_wrong_phase_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard testing the other phase (``r(oy) + 1``) skips contributing taps and runs
    padded ones: the values change."""

    def wrong_phase(self: SpreadAxis) -> object:
        return simplify((Dim(self.out_loop) * (self.s - 1) + self.o + 1) % self.s)

    original = fuse_transposed_conv.guarded_body
    text = transposed(3, 5, 5, 7, 3, (2, 2), (1, 1), (1, 1))

    def guarded_with_wrong_phase(generic: object, axes: tuple[SpreadAxis, ...]) -> object:
        with monkeypatch.context() as patch:
            patch.setattr(fuse_transposed_conv.SpreadAxis, "phase_expr", wrong_phase)
            return original(generic, axes)  # type: ignore[arg-type]

    monkeypatch.setattr(fuse_transposed_conv, "guarded_body", guarded_with_wrong_phase)
    with pytest.raises(AssertionError):
        compare_before_after(text, [FuseTransposedConvPass()])
