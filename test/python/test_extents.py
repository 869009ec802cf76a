"""Transformed extents (docs/semantics.md "Shapes and padding"): one definition for buffers and
tensors, `transformed_shape`, whose tiles are whole at every step. Buffers smaller than one
tile and transform lists are checked numerically: the physical buffer starts as garbage
and the WHOLE of it is compared with an expected array written by hand; the graph level
gives the same shapes and values; random transform lists agree at both levels and their
padding predicate is the exact set of points without a preimage (brute force)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_harness import parse
from xdsl.dialects import func

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import BufferType
from physlayout.indexing.extents import transformed_shape
from physlayout.indexing.index_map import IndexMap
from physlayout.semantics.evaluator import run_function
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
APPLY = ROOT / "test/transforms/apply-layout.mlir"
GARBAGE = np.float32(-777.0)

SPLIT4 = "(i) -> (i floordiv 4, i mod 4)"
SPLIT16 = "(i) -> (i floordiv 16, i mod 16)"
MOD16 = "(i) -> (i mod 16)"
NCHW4C = "(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)"


def _expected_relu_texture(x: np.ndarray) -> np.ndarray:
    out = np.zeros((1, 1, 4, 4, 4), np.float32)  # lane 3 is padding (pad value 0)
    for h, w, c in itertools.product(range(4), range(4), range(3)):
        out[0, 0, h, w, c] = max(x[0, h, w, c], 0.0)
    return out


def _ones_to(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float32)


# Function of apply-layout.mlir -> (logical input, physical output written by hand).
BUFFER_CASES = {
    "pad_tile_larger_than_buffer": (_ones_to(3), np.array([[1, 2, 3, -1]], np.float32)),
    "pad_split16_of_14": (_ones_to(14), np.array([[*range(1, 15), 7, 7]], np.float32)),
    "pad_mod16_of_14": (_ones_to(14), np.array([*range(1, 15), 0, 0], np.float32)),
    "pad_list_split_then_transpose": (_ones_to(3), np.array([[1], [2], [3], [-1]], np.float32)),
    "pad_list_split_then_fuse": (_ones_to(3), np.array([1, 2, 3, 5], np.float32)),
    "relu_nhwc3_to_nchw4c_texture": (
        np.arange(-24, 24, dtype=np.float32).reshape(1, 4, 4, 3),
        None,  # _expected_relu_texture
    ),
}


@pytest.mark.parametrize("rewrite_loops", [False, True])
@pytest.mark.parametrize("name", sorted(BUFFER_CASES))
def test_padded_buffer_from_garbage(name: str, rewrite_loops: bool) -> None:
    module = parse(APPLY.read_text())
    ApplyLayoutPass(rewrite_loops=rewrite_loops).apply(make_context(), module)
    module.verify()
    x, expected = BUFFER_CASES[name]
    if expected is None:
        expected = _expected_relu_texture(x)
    out = np.full(expected.shape, GARBAGE)
    run_function(module, name, [x.copy(), out])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("maps", "shape", "expected"),
    [
        ([SPLIT4], [3], [1, 4]),
        ([SPLIT4], [10], [3, 4]),
        ([SPLIT16], [14], [1, 16]),
        ([MOD16], [14], [16]),
        ([NCHW4C], [1, 4, 4, 3], [1, 1, 4, 4, 4]),
        ([SPLIT4, "(a, b) -> (b, a)"], [3], [4, 1]),
        ([SPLIT4, "(a, b) -> (a * 4 + b)"], [3], [4]),
        ([SPLIT4, "(a, b) -> (a * 4 + b)"], [6], [8]),
        (["(i, j) -> (j, i)", "(a, b) -> (a floordiv 2, b, a mod 2)"], [8, 3], [2, 8, 2]),
        ([], [5, 7], [5, 7]),
    ],
)
def test_transformed_shape(maps: list[str], shape: list[int], expected: list[int]) -> None:
    parsed = [IndexMap.parse(m) for m in maps]
    assert transformed_shape(parsed, shape) == expected
    buffer = _buffer_type(maps, shape)
    if maps:
        layout = PendingLayout.of(buffer)
        assert layout is not None and list(layout.shape) == expected


def test_composed_map_extents_differ_from_the_step_by_step_box() -> None:
    layout = PendingLayout.of(_buffer_type([SPLIT4], [3]))
    assert layout is not None
    assert str(layout.index_map) == "(i) -> (0, i)"
    assert layout.index_map.map_shape([3]) == [1, 3]
    assert layout.shape == (1, 4)
    assert layout.padding is not None and str(layout.padding) == "i1 == 3"
    assert [layout.padding([0, k]) for k in range(4)] == [False, False, False, True]


def test_padding_predicate_box_must_hold_the_image() -> None:
    split = IndexMap.parse(SPLIT4)
    assert split.padding_predicate([3], [1, 4]) is not None
    assert split.padding_predicate([4], [1, 4]) is None
    assert str(split.padding_predicate([4], [2, 4])) == "i0 == 1"
    with pytest.raises(ValueError, match=r"does not fit in the transformed box \[1, 3\]"):
        split.padding_predicate([4], [1, 3])
    with pytest.raises(ValueError, match="rank 2"):
        split.padding_predicate([4], [4])


def test_padding_is_described_with_the_maps_own_names() -> None:
    split = IndexMap.parse(SPLIT4)
    padding = split.padding_predicate([14])
    assert padding is not None and str(padding) == "i0 == 3 and i1 >= 2"
    labels = [str(e) for e in split.final_indices]
    assert padding.describe(labels) == "i floordiv 4 == 3 and i mod 4 >= 2"
    nchw4c = IndexMap.parse("(n, c, h, w) -> (n, c floordiv 4, h, w, c mod 4)")
    padded = nchw4c.padding_predicate([1, 6, 2, 2])
    assert padded is not None and str(padded) == "i1 == 1 and i4 >= 2"
    assert padded.describe([str(e) for e in nchw4c.final_indices]) == (
        "c floordiv 4 == 1 and c mod 4 >= 2"
    )
    # A compound label inside a larger expression keeps its parentheses.
    gap = IndexMap.parse("(i) -> (i * 2)")
    holes = gap.padding_predicate([4])
    assert holes is not None and holes.describe(["i * 2"]) == "(i * 2) mod 2 == 1"
    # Labels that look like the axis names are substituted once, not again.
    swap = IndexMap.parse("(i0, i1) -> (i1 floordiv 4, i1 mod 4, i0)")
    swapped = swap.padding_predicate([2, 6])
    assert swapped is not None
    assert swapped.describe([str(e) for e in swap.final_indices]) == (
        "i1 floordiv 4 == 1 and i1 mod 4 >= 2"
    )
    with pytest.raises(ValueError, match="expected 3 labels, got 1"):
        swapped.describe(["x"])


# Graph level -----------------------------------------------------------------------------


GRAPH = f"""
func.func @split4(%x: tensor<3xf32>) -> tensor<1x4xf32> {{
  %r = layout.transform %x {{index_map = #layout.index_map<{SPLIT4}>, pad_value = -1.0 : f32}} : tensor<3xf32> -> tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}}
func.func @split16(%x: tensor<14xf32>) -> tensor<1x16xf32> {{
  %r = layout.transform %x {{index_map = #layout.index_map<{SPLIT16}>, pad_value = 7.0 : f32}} : tensor<14xf32> -> tensor<1x16xf32>
  func.return %r : tensor<1x16xf32>
}}
func.func @mod16(%x: tensor<14xf32>) -> tensor<16xf32> {{
  %r = layout.transform %x {{index_map = #layout.index_map<{MOD16}>, pad_value = 0.0 : f32}} : tensor<14xf32> -> tensor<16xf32>
  func.return %r : tensor<16xf32>
}}
func.func @split_then_transpose(%x: tensor<3xf32>) -> tensor<4x1xf32> {{
  %a = layout.transform %x {{index_map = #layout.index_map<{SPLIT4}>, pad_value = -1.0 : f32}} : tensor<3xf32> -> tensor<1x4xf32>
  %b = layout.transform %a {{index_map = #layout.index_map<(a, b) -> (b, a)>}} : tensor<1x4xf32> -> tensor<4x1xf32>
  func.return %b : tensor<4x1xf32>
}}
func.func @split_then_fuse(%x: tensor<3xf32>) -> tensor<4xf32> {{
  %a = layout.transform %x {{index_map = #layout.index_map<{SPLIT4}>, pad_value = 5.0 : f32}} : tensor<3xf32> -> tensor<1x4xf32>
  %b = layout.transform %a {{index_map = #layout.index_map<(a, b) -> (a * 4 + b)>}} : tensor<1x4xf32> -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}}
"""

GRAPH_CASES = {
    "split4": "pad_tile_larger_than_buffer",
    "split16": "pad_split16_of_14",
    "mod16": "pad_mod16_of_14",
    "split_then_transpose": "pad_list_split_then_transpose",
    "split_then_fuse": "pad_list_split_then_fuse",
}


@pytest.mark.parametrize("fold", [False, True])
@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_graph_level_gives_the_same_tensors(name: str, fold: bool) -> None:
    """The tensors equal the physical buffers of the buffer-level cases above (same maps,
    same hand-written arrays), before and after fold-layout-rewrites."""
    module = parse(GRAPH)
    if fold:
        FoldLayoutRewritesPass().apply(make_context(), module)
        module.verify()
    x, expected = BUFFER_CASES[GRAPH_CASES[name]]
    assert expected is not None
    (result,) = run_graph(module, name, [x])
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


# Random transform lists: both levels agree -------------------------------------------------


def _buffer_type(maps: list[str], shape: list[int], pad: str = "-1.0") -> BufferType:
    dims = "x".join(map(str, shape))
    if not maps:
        return _parse_type(f"!layout.buffer<{dims}xf32>")
    listed = ", ".join(f"#layout.index_map<{m}>" for m in maps)
    return _parse_type(
        f"!layout.buffer<{dims}xf32, transform = [{listed}], pad_value = {pad} : f32>"
    )


def _parse_type(text: str) -> BufferType:
    module = parse(f'"test.op"() {{t = {text}}} : () -> ()')
    attr = next(iter(module.ops)).attributes["t"]
    assert isinstance(attr, BufferType)
    return attr


def _next_map(draw: st.DrawFn, shape: list[int]) -> str:
    """One injective map on the box `shape` (rank 1 to 3)."""
    rank = len(shape)
    names = ["a", "b", "c"][:rank]
    head = f"({', '.join(names)}) -> "
    k = draw(st.sampled_from([2, 3, 4, 5, 16]))
    if rank == 1:
        choice = draw(st.sampled_from(["split", "mod", "ceil"]))
        if choice == "mod" and shape[0] <= k:
            return f"{head}(a mod {k})"
        if choice == "ceil":
            return f"{head}(a ceildiv {k}, a mod {k})"
        return f"{head}(a floordiv {k}, a mod {k})"
    kind = draw(st.sampled_from(["permute", "fuse", "fuse_gap", "split_last"]))
    if kind == "permute" or (kind == "split_last" and rank == 3):
        order = draw(st.permutations(names))
        return f"{head}({', '.join(order)})"
    if kind in ("fuse", "fuse_gap"):
        stride = shape[-1] + (kind == "fuse_gap")
        fused = f"{names[-2]} * {stride} + {names[-1]}"
        return f"{head}({', '.join([*names[:-2], fused])})"
    last = names[-1]
    return f"{head}({', '.join([*names[:-1], f'{last} floordiv {k}', f'{last} mod {k}'])})"


@st.composite
def transform_lists(draw: st.DrawFn) -> tuple[list[str], list[int]]:
    rank = draw(st.integers(1, 2))
    logical = draw(st.lists(st.sampled_from([1, 2, 3, 5, 7]), min_size=rank, max_size=rank))
    maps: list[str] = []
    shape = list(logical)
    for _ in range(draw(st.integers(1, 3))):
        text = _next_map(draw, shape)
        maps.append(text)
        shape = IndexMap.parse(text).map_shape(shape)
    return maps, logical


@settings(derandomize=True, max_examples=60, deadline=None)
@given(transform_lists())
def test_buffer_and_graph_levels_agree(case: tuple[list[str], list[int]]) -> None:
    maps, logical = case
    layout = PendingLayout.of(_buffer_type(maps, logical))
    assert layout is not None
    # Graph level: the chain of layout.transform ops has the same extents and values.
    x = np.arange(1, int(np.prod(logical)) + 1, dtype=np.float32).reshape(logical)
    value, shape = "%x", list(logical)
    lines: list[str] = []
    for k, text in enumerate(maps):
        after = IndexMap.parse(text).map_shape(shape)
        t_in, t_out = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (shape, after))
        lines.append(
            f"  %t{k} = layout.transform {value} {{index_map = #layout.index_map<{text}>, "
            f"pad_value = -1.0 : f32}} : {t_in} -> {t_out}"
        )
        value, shape = f"%t{k}", after
    t_logical = f"tensor<{'x'.join(map(str, logical))}xf32>"
    t_result = f"tensor<{'x'.join(map(str, shape))}xf32>"
    graph = parse(
        f"func.func @chain(%x: {t_logical}) -> {t_result} {{\n"
        + "\n".join(lines)
        + f"\n  func.return {value} : {t_result}\n}}"
    )
    assert tuple(shape) == layout.shape
    physical = layout.map_ndarray(x)
    (tensor,) = run_graph(graph, "chain", [x])
    np.testing.assert_array_equal(tensor, physical)
    FoldLayoutRewritesPass().apply(make_context(), graph)
    np.testing.assert_array_equal(run_graph(graph, "chain", [x])[0], physical)
    np.testing.assert_array_equal(layout.unmap_ndarray(physical), x)
    # The composed map sends every logical index where the steps do, and the padding
    # predicate is exactly the rest of the box (brute force).
    image: set[tuple[int, ...]] = set()
    for index in np.ndindex(*logical):
        target = tuple(int(v) for v in layout.index_map.map_indices(list(index)))
        assert physical[target] == x[index]
        image.add(target)
    assert len(image) == x.size
    for point in np.ndindex(*layout.shape):
        is_pad = layout.padding is not None and bool(layout.padding(list(point)))
        assert is_pad == (point not in image), (point, layout.padding)


@settings(derandomize=True, max_examples=12, deadline=None)
@given(transform_lists())
def test_apply_layout_writes_the_whole_box(case: tuple[list[str], list[int]]) -> None:
    """A copy kernel into a buffer with a random transform list: after apply-layout the
    physical buffer, started as garbage, equals the step-by-step reference everywhere."""
    maps, logical = case
    target = _buffer_type(maps, logical)
    source = f"!layout.buffer<{'x'.join(map(str, logical))}xf32>"
    ivs = [f"%i{k}" for k in range(len(logical))]
    nest = "".join(
        f"scf.for {iv} = %c0 to %c{extent} step %c1 {{\n"
        for iv, extent in zip(ivs, logical, strict=True)
    )
    constants = "".join(f"%c{e} = arith.constant {e} : index\n" for e in sorted({0, 1, *logical}))
    text = (
        f"func.func @copy(%x: {source}, %y: {target}) {{\n{constants}{nest}"
        f"%v = layout.load %x[{', '.join(ivs)}] : {source}, f32\n"
        f"layout.store %v, %y[{', '.join(ivs)}] : {target}, f32\n"
        + "}\n" * len(logical)
        + "func.return\n}"
    )
    layout = PendingLayout.of(target)
    assert layout is not None
    x = np.arange(1, int(np.prod(logical)) + 1, dtype=np.float32).reshape(logical)
    for rewrite_loops in (False, True):
        module = parse(text)
        ApplyLayoutPass(rewrite_loops=rewrite_loops).apply(make_context(), module)
        module.verify()
        (function,) = (f for f in module.ops if isinstance(f, func.FuncOp))
        arg_type = function.function_type.inputs.data[1]
        assert isinstance(arg_type, BufferType) and arg_type.get_shape() == layout.shape
        out = np.full(layout.shape, GARBAGE)
        run_function(module, "copy", [x.copy(), out])
        np.testing.assert_array_equal(out, layout.map_ndarray(x))
