"""legalize-layout's relayout stores (transforms/relayout_stores.py), numerically: every
function of test/graph/legalize-relayout-stores.mlir, and generated ones over shapes with
extents of 1, primes, 3- and 5-channel tensors, compute the graph evaluator's values in
their legalized host (after each buffer pass), with the transform's copy kernel gone; a
planted bug (a padding transform taken as a bijection) must fail on values. Also the
stores through a relayout and the crop of its window (guarded), with their planted bug. Also the
splat constant inputs of normalize-graph (`SplatInputAsScalar`) on a relu6."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from graph_harness import apply, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legalize_harness import check_legalized
from xdsl.dialects import func
from xdsl.dialects.builtin import f32

from physlayout.dialects.layout import BufferType, IndexMapAttr
from physlayout.dialects.layout_graph import CropOp, TransformOp
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim
from physlayout.transforms import legalize_layout, normalize_graph, relayout_stores
from physlayout.transforms.fuse_elementwise import FuseElementwisePass
from physlayout.transforms.legalize_layout import LegalizeLayoutPass
from physlayout.transforms.normalize_graph import NormalizeGraphPass

ROOT = Path(__file__).resolve().parents[2]
LIT = (ROOT / "test/graph/legalize-relayout-stores.mlir").read_text()


def _calls(text: str, graph_passes: list[object]) -> dict[str, list[str]]:
    """The kernels each host function of `text` calls after `graph_passes` and
    legalize-layout."""
    module = apply(parse(text), [*graph_passes, LegalizeLayoutPass()])  # type: ignore[list-item]
    hosts = [f for f in module.ops if isinstance(f, func.FuncOp) and not f.sym_name.data.count("_")]
    return {
        f.sym_name.data: [
            op.callee.string_value() for op in f.walk() if isinstance(op, func.CallOp)
        ]
        for f in hosts
    }


def test_lit_functions_keep_their_values() -> None:
    check_legalized(LIT, [FuseElementwisePass()])


def _relu_then_relayout(
    shape: tuple[int, ...], imap: str, result: tuple[int, ...], pad: str = ""
) -> str:
    dims = "x".join(map(str, shape))
    out = "x".join(map(str, result))
    rank = len(shape)
    names = ", ".join(f"d{k}" for k in range(rank))
    ident = f"affine_map<({names}) -> ({names})>"
    parallel = ", ".join(['"parallel"'] * rank)
    return f"""
func.func @main(%x: tensor<{dims}xf32>) -> tensor<{out}xf32> {{
  %e = tensor.empty() : tensor<{dims}xf32>
  %r = linalg.generic {{indexing_maps = [{ident}, {ident}], iterator_types = [{parallel}]}} ins(%x : tensor<{dims}xf32>) outs(%e : tensor<{dims}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.25 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  }} -> tensor<{dims}xf32>
  %t = layout.transform %r {{index_map = #layout.index_map<{imap}>{pad}}} : tensor<{dims}xf32> -> tensor<{out}xf32>
  func.return %t : tensor<{out}xf32>
}}"""


EXTENTS = st.sampled_from([1, 2, 3, 5, 7])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.sampled_from([1, 2]), c=st.sampled_from([1, 3, 4, 5, 8]), h=EXTENTS, w=EXTENTS,
    blocked=st.booleans(),
)  # fmt: skip
def test_generated_relayouts_store_directly_with_the_same_values(
    n: int, c: int, h: int, w: int, blocked: bool
) -> None:
    """NCHW4c back to NCHW (c blocks of 4 lanes), or NCHW to NHWC (any channel count):
    the relu writes the result through the transform, no transform kernel, same values."""
    if blocked:
        text = _relu_then_relayout(
            (n, c, h, w, 4), "(n, c, h, w, l) -> (n, c * 4 + l, h, w)", (n, 4 * c, h, w)
        )
    else:
        text = _relu_then_relayout((n, c, h, w), "(n, c, h, w) -> (n, h, w, c)", (n, h, w, c))
    assert _calls(text, []) == {"main": ["main_generic_r"]}
    check_legalized(text)


def test_padding_transform_keeps_its_copy_kernel() -> None:
    """5 channels blocked by 4 pad 3 lanes with 7.0: not a bijection, so the copy kernel
    (which fills the padding) stays."""
    text = _relu_then_relayout(
        (1, 5, 3, 2), "(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)", (1, 2, 3, 2, 4),
        ", pad_value = 7.0 : f32",
    )  # fmt: skip
    assert _calls(text, []) == {"main": ["main_generic_r", "main_transform_t"]}
    check_legalized(text)


def test_planted_bug_store_in_the_producers_layout_fails_on_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted bug: the producer writes the transform's storage in its own (NCHW4c)
    order, the relabelling forgotten (the view declared with the identity map). The
    storage holds the same bytes a copy-free NCHW4c buffer would, and the values show it."""
    text = _relu_then_relayout(
        (1, 2, 3, 5, 4), "(n, c, h, w, l) -> (n, c * 4 + l, h, w)", (1, 8, 3, 5)
    )
    check_legalized(text)

    def forgetful(self: legalize_layout.HostBuilder, op: TransformOp, storage: object) -> object:
        names = op.map.initial_indices
        identity = IndexMap(names, tuple(Dim(n) for n in names))
        shape = op.input_shape()
        plain = BufferType(shape, f32, [IndexMapAttr.from_map(identity)])
        return self._declare(self._handle(storage), plain, None)  # pyright: ignore[reportPrivateUsage, reportArgumentType]

    monkeypatch.setattr(legalize_layout.HostBuilder, "_pending_view", forgetful)
    assert _calls(text, []) == {"main": ["main_generic_r"]}
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(text)


def _relu_then_cropped_nchw(
    n: int, blocks: int, h: int, w: int, start: tuple[int, ...], sizes: tuple[int, ...]
) -> str:
    """A relu over NCHW4c, relayouted to NCHW and cropped to the window `start`/`sizes`."""
    text = _relu_then_relayout(
        (n, blocks, h, w, 4), "(n, c, h, w, l) -> (n, c * 4 + l, h, w)", (n, 4 * blocks, h, w)
    )
    out = "x".join(map(str, sizes))
    full = f"{n}x{4 * blocks}x{h}x{w}"
    crop = (
        f"  %c = layout.crop %t {{start = array<i64: {', '.join(map(str, start))}>, sizes = "
        f"array<i64: {', '.join(map(str, sizes))}>}} : tensor<{full}xf32> -> tensor<{out}xf32>\n"
        f"  func.return %c : tensor<{out}xf32>"
    )
    text = text.replace(f"  func.return %t : tensor<{full}xf32>", crop)
    return text.replace(f") -> tensor<{full}xf32> {{", f") -> tensor<{out}xf32> {{", 1)


@st.composite
def _windows(draw: st.DrawFn) -> tuple[int, int, int, int, tuple[int, ...], tuple[int, ...]]:
    """A batch, channel blocks, extents (1 and primes among them) and a window inside."""
    n, blocks = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2]))
    h, w = draw(EXTENTS), draw(EXTENTS)
    start: list[int] = []
    sizes: list[int] = []
    for extent in (n, 4 * blocks, h, w):
        lo = draw(st.integers(0, extent - 1))
        start.append(lo)
        sizes.append(draw(st.integers(1, extent - lo)))
    return n, blocks, h, w, tuple(start), tuple(sizes)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_windows())
def test_generated_cropped_relayouts_store_directly_with_the_same_values(
    case: tuple[int, int, int, int, tuple[int, ...], tuple[int, ...]],
) -> None:
    """NCHW4c back to NCHW, then any window (the 3 or 5 channels of a padded tensor, rows
    and columns starting inside): the relu stores the window itself (guarded), no
    transform or crop kernel, the graph evaluator's values."""
    text = _relu_then_cropped_nchw(*case)
    assert _calls(text, []) == {"main": ["main_generic_r"]}
    check_legalized(text)


def test_planted_bug_cropped_store_ignoring_the_start_fails_on_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted bug: the cropped store forgets the window's start (stores channel c at c,
    not c - 1; the guard keeps it in bounds). The values show it."""
    text = _relu_then_cropped_nchw(1, 2, 3, 2, (0, 1, 0, 0), (1, 5, 3, 2))
    check_legalized(text)

    def forgetful(crop: CropOp) -> relayout_stores.CroppedStore:
        store = original(crop)
        return replace(store, start=tuple(0 for _ in store.start))

    original = relayout_stores.cropped_store
    monkeypatch.setattr(relayout_stores, "cropped_store", forgetful)
    assert _calls(text, []) == {"main": ["main_generic_r"]}
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(text)


RELU6 = """
func.func @relu6(%x: tensor<1x5x3x1xf32>) -> tensor<1x5x3x1xf32> {
  %six = arith.constant dense<6.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e = tensor.empty() : tensor<1x5x3x1xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %zero, %six : tensor<1x5x3x1xf32>, tensor<f32>, tensor<f32>) outs(%e : tensor<1x5x3x1xf32>) {
  ^bb0(%in: f32, %lo: f32, %hi: f32, %out: f32):
    %scaled = arith.mulf %in, %hi : f32
    %a = arith.maximumf %scaled, %lo : f32
    %b = arith.minimumf %a, %hi : f32
    linalg.yield %b : f32
  } -> tensor<1x5x3x1xf32>
  func.return %0 : tensor<1x5x3x1xf32>
}"""


def test_splat_inputs_become_scalars_with_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """normalize-graph drops both rank-0 splat inputs (no constant kernel is legalized) and
    the host computes the graph's values; a planted bug (the scalar taken as 0) fails."""
    assert _calls(RELU6, [NormalizeGraphPass()]) == {"relu6": ["relu6_generic"]}
    check_legalized(RELU6, [NormalizeGraphPass()])
    monkeypatch.setattr(normalize_graph, "splat_scalar", lambda op: _zero())  # pyright: ignore[reportUnknownLambdaType]
    with pytest.raises(AssertionError, match="Mismatched elements"):
        check_legalized(RELU6, [NormalizeGraphPass()])


def _zero() -> object:
    from xdsl.dialects.builtin import FloatAttr

    return FloatAttr(0.0, f32)
