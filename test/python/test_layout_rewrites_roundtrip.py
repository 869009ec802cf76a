"""Property tests (hypothesis, derandomized): for every IndexMap family of the test suite
(test_index_map_properties' permute/split/fuse/skew compositions, test_graph_hypothesis'
random maps and chains of transforms, pads and crops), lower-layout-rewrites leaves no
layout op and keeps the results, raise-layout-rewrites of that output leaves no upstream
relayout op and keeps the results, and fold-layout-rewrites then folds a single lowered
transform back into one transform whose map is proven equal to the original."""

from __future__ import annotations

import numpy as np
from graph_harness import apply, count_ops, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_graph_hypothesis import _tensor, bijections, chains, random_map
from test_index_map_properties import INJECTIVE_OPS, MapCase, map_cases

from physlayout.dialects.layout_graph import TransformOp
from physlayout.indexing.index_map import IndexMap
from physlayout.lowering.lower_layout_rewrites import LowerLayoutRewritesPass
from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass

ROUND_TRIP = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LAYOUT_OPS = ("layout.transform", "layout.pad", "layout.crop")
UPSTREAM_OPS = (
    "linalg.pack",
    "linalg.unpack",
    "linalg.transpose",
    "linalg.generic",
    "tensor.expand_shape",
    "tensor.collapse_shape",
    "tensor.pad",
    "tensor.extract_slice",
)


def transform_text(imap: IndexMap, shape: tuple[int, ...], pad: float) -> str:
    out = tuple(imap.map_shape(shape))
    pads = imap.padding_predicate(shape) is not None
    pad_text = f", pad_value = {pad} : f32" if pads else ""
    return (
        f"func.func @chain(%x: {_tensor(shape)}) -> {_tensor(out)} {{\n"
        f"  %r = layout.transform %x {{index_map = #layout.index_map<{imap}>{pad_text}}} : "
        f"{_tensor(shape)} -> {_tensor(out)}\n"
        f"  func.return %r : {_tensor(out)}\n}}\n"
    )


def check_round_trip(text: str, x: np.ndarray) -> tuple[object, object]:
    """Lower then raise `text`; every stage computes the original results."""
    expected = run_graph(parse(text), "chain", [x])[0]
    lowered = apply(parse(text), [LowerLayoutRewritesPass()])
    assert not any(count_ops(lowered, name) for name in LAYOUT_OPS)
    np.testing.assert_array_equal(run_graph(lowered, "chain", [x])[0], expected)
    raised = apply(lowered, [RaiseLayoutRewritesPass()])
    assert not any(count_ops(raised, name) for name in UPSTREAM_OPS)
    np.testing.assert_array_equal(run_graph(raised, "chain", [x])[0], expected)
    return lowered, raised


def check_single_transform(imap: IndexMap, shape: tuple[int, ...], pad: float) -> None:
    """lower, raise and fold one transform: the same results, and one transform with a
    proven-equal map is left (none for an identity; fold-layout-rewrites may write a padded
    transform whose structural shape shrank on extent-1 axes as a transform and a pad)."""
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    text = transform_text(imap, shape, pad)
    _, raised = check_round_trip(text, x)
    folded = apply(raised, [FoldLayoutRewritesPass()])  # pyright: ignore[reportArgumentType]
    expected = run_graph(parse(text), "chain", [x])[0]
    np.testing.assert_array_equal(run_graph(folded, "chain", [x])[0], expected)
    transforms = [op for op in folded.walk() if isinstance(op, TransformOp)]
    pads = count_ops(folded, "layout.pad")
    assert count_ops(folded, "layout.crop") == 0 and len(transforms) <= 1 and pads <= 1
    if pads:
        assert 1 in shape
        return
    if not transforms:
        assert tuple(imap.map_shape(shape)) == shape
        assert imap.is_equivalent_to(IndexMap.identity(imap.ndim), shape)
        return
    assert transforms[0].map.is_equivalent_to(imap, shape)


@ROUND_TRIP
@given(map_cases(INJECTIVE_OPS), st.sampled_from([0.0, 1.0]))
def test_index_map_families_round_trip(case: MapCase, pad: float) -> None:
    check_single_transform(case.imap, case.shape, pad)


@st.composite
def graph_maps(draw: st.DrawFn) -> tuple[IndexMap, tuple[int, ...]]:
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    return random_map(draw, shape), shape


@ROUND_TRIP
@given(graph_maps(), st.sampled_from([0.0, 1.0]))
def test_graph_random_maps_round_trip(case: tuple[IndexMap, tuple[int, ...]], pad: float) -> None:
    imap, shape = case
    check_single_transform(imap, shape, pad)


@ROUND_TRIP
@given(bijections())
def test_composed_bijections_round_trip(case: tuple[tuple[int, ...], IndexMap]) -> None:
    shape, imap = case
    check_single_transform(imap, shape, 0.0)


@ROUND_TRIP
@given(chains())
def test_chains_of_rewrites_round_trip(case: tuple[str, np.ndarray]) -> None:
    text, x = case
    check_round_trip(text, x)
