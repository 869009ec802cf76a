"""Views of transformed storage in the numpy evaluator (RFC DeclBuffer aliases).

Once a transform is applied the storage is physical, so the evaluator gives a
`layout.decl_buffer` with a pending transform the meaning the compiled program has: element
`idx` lives at `map(idx)` of the transformed shape, row-major. A physical view of the same
handle, a second view with the same transform, and views at an offset see exactly those
scalars; padding holds the pad value where a function writes the buffer. Expected arrays
are written by hand (not with the IndexMap engine), and every program is also run before
and after apply-layout / flatten-buffers with equal results.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from layout_harness import compare_before_after, parse
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from physlayout.semantics.evaluator import run_function
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass

ROOT = Path(__file__).resolve().parents[2]
VIEWS = ROOT / "test/opencl/run-decl-buffer-views.mlir"

PIPELINES: dict[str, list[ModulePass]] = {
    "apply": [ApplyLayoutPass()],
    "apply-rewrite-loops": [ApplyLayoutPass(rewrite_loops=True)],
    "apply-flatten": [ApplyLayoutPass(), FlattenBuffersPass()],
    "apply-rewrite-loops-flatten": [ApplyLayoutPass(rewrite_loops=True), FlattenBuffersPass()],
}

SPLIT = "transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32"
SWAP = "transform = #layout.index_map<(i) -> (i mod 4, i floordiv 4)>"

OFFSET = f"""
func.func @offset(%buf: !layout.buffer<24xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %d = layout.data %buf : !layout.buffer<24xf32> -> !layout.ptr<f32>
  %t = layout.decl_buffer %d offset 8 : !layout.ptr<f32> -> !layout.buffer<8xf32, {SWAP}>
  scf.for %i = %c0 to %c8 step %c1 {{
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    layout.store %f, %t[%i] : !layout.buffer<8xf32, {SWAP}>, f32
  }}
  func.return
}}
"""

PADDED = f"""
func.func @fill(%x: !layout.buffer<6xf32>, %t: !layout.buffer<6xf32, {SPLIT}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {{
    %v = layout.load %x[%i] : !layout.buffer<6xf32>, f32
    layout.store %v, %t[%i] : !layout.buffer<6xf32, {SPLIT}>, f32
  }}
  func.return
}}

func.func @copy8(%p: !layout.buffer<8xf32>, %y: !layout.buffer<8xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {{
    %v = layout.load %p[%i] : !layout.buffer<8xf32>, f32
    layout.store %v, %y[%i] : !layout.buffer<8xf32>, f32
  }}
  func.return
}}

func.func @written(%x: !layout.buffer<6xf32>, %y: !layout.buffer<8xf32>) {{
  %p = layout.allocate [2, 4] : !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<6xf32, {SPLIT}>
  %flat = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<8xf32>
  func.call @fill(%x, %t) : (!layout.buffer<6xf32>, !layout.buffer<6xf32, {SPLIT}>) -> ()
  func.call @copy8(%flat, %y) : (!layout.buffer<8xf32>, !layout.buffer<8xf32>) -> ()
  func.return
}}

func.func @param(%t: !layout.buffer<6xf32, {SPLIT}>, %y: !layout.buffer<8xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %f = arith.constant 5.0 : f32
  layout.store %f, %t[%c1] : !layout.buffer<6xf32, {SPLIT}>, f32
  %d = layout.data %t : !layout.buffer<6xf32, {SPLIT}> -> !layout.ptr<f32>
  %flat = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<8xf32>
  func.call @copy8(%flat, %y) : (!layout.buffer<8xf32>, !layout.buffer<8xf32>) -> ()
  func.return
}}

func.func @logical_allocation(%x: !layout.buffer<6xf32>, %y: !layout.buffer<6xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %p = layout.allocate [6] : !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<6xf32, {SPLIT}>
  func.call @fill(%x, %t) : (!layout.buffer<6xf32>, !layout.buffer<6xf32, {SPLIT}>) -> ()
  scf.for %i = %c0 to %c6 step %c1 {{
    %v = layout.load %t[%i] : !layout.buffer<6xf32, {SPLIT}>, f32
    layout.store %v, %y[%i] : !layout.buffer<6xf32>, f32
  }}
  func.return
}}
"""

WIDE = f"""
func.func @rows(%x: !layout.buffer<16xf32>, %y: !layout.buffer<4xvector<4xf32>>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = layout.allocate [16] : !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32, {SWAP}>
  %flat = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<16xf32>
  scf.for %i = %c0 to %c4 step %c1 {{
    %j = arith.muli %i, %c4 : index
    %v = layout.load %x[%j] : !layout.buffer<16xf32>, vector<4xf32>
    layout.store %v, %flat[%j] : !layout.buffer<16xf32>, vector<4xf32>
  }}
  scf.for %i = %c0 to %c4 step %c1 {{
    %j = arith.muli %i, %c4 : index
    %v = layout.load %t[%j] : !layout.buffer<16xf32, {SWAP}>, vector<4xf32>
    layout.store %v, %y[%i] : !layout.buffer<4xvector<4xf32>>, vector<4xf32>
  }}
  func.return
}}
"""


def _random(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("vectorize", [True, False])
def test_physical_views_read_what_the_logical_view_wrote(vectorize: bool) -> None:
    x = _random((1, 4, 4, 8), 1)
    y = np.zeros((8, 16), np.float32)
    z = np.zeros((1, 2, 4, 4, 4), np.float32)
    w = np.zeros_like(x)
    run_function(parse(VIEWS.read_text()), "main", [x, y, z, w], vectorize_loops=vectorize)
    for h in range(4):
        for col in range(4):
            for c in range(8):
                # NCHW4c texture, separator after h: row (c floordiv 4) * 4 + h, x = col * 4 + lane
                assert y[(c // 4) * 4 + h, col * 4 + c % 4] == x[0, h, col, c]
                assert z[0, c // 4, h, col, c % 4] == x[0, h, col, c]
    np.testing.assert_array_equal(w, x)


def test_view_at_an_offset_addresses_physical_elements() -> None:
    buf = np.full(24, -7.0, np.float32)
    run_function(parse(OFFSET), "offset", [buf])
    # t[i] is the element (i mod 4, i floordiv 4) of a 4x2 block starting at element 8.
    expected = np.full(24, -7.0, np.float32)
    expected[8:16] = [0, 4, 1, 5, 2, 6, 3, 7]
    np.testing.assert_array_equal(buf, expected)


def test_written_padding_holds_the_pad_value_in_every_view() -> None:
    module = parse(PADDED)
    x = np.arange(1, 7, dtype=np.float32)
    y = np.zeros(8, np.float32)
    run_function(module, "written", [x, y])
    np.testing.assert_array_equal(y, [1, 2, 3, 4, 5, 6, -1, -1])
    t = np.full(6, 3.0, np.float32)
    run_function(module, "param", [t, y])
    np.testing.assert_array_equal(y, [3, 5, 3, 3, 3, 3, -1, -1])
    np.testing.assert_array_equal(t, [3, 5, 3, 3, 3, 3])


def test_allocation_of_the_logical_shape_holds_the_transformed_shape() -> None:
    x = np.arange(1, 7, dtype=np.float32)
    y = np.zeros(6, np.float32)
    run_function(parse(PADDED), "logical_allocation", [x, y])
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("vectorize", [True, False])
def test_vector_access_maps_each_lane(vectorize: bool) -> None:
    x = np.arange(16, dtype=np.float32)
    y = np.zeros((4, 4), np.float32)
    run_function(parse(WIDE), "rows", [x, y], vectorize_loops=vectorize)
    # t[j] is storage element (j mod 4) * 4 + j floordiv 4: t[4i .. 4i+3] is column i.
    np.testing.assert_array_equal(y, x.reshape(4, 4).T)


def test_refused_transform_of_a_view_is_a_diagnostic() -> None:
    text = """
func.func @f(%y: !layout.buffer<4xf32>) {
  %p = layout.allocate [4] : !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>
  func.return
}"""
    with pytest.raises(DiagnosticException, match="not injective"):
        run_function(parse(text), "f", [np.zeros(4, np.float32)])


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("text", [VIEWS.read_text(), OFFSET, PADDED], ids=["rfc", "offset", "pad"])
def test_views_mean_the_same_before_and_after_the_passes(text: str, pipeline: str) -> None:
    outcomes = compare_before_after(text, PIPELINES[pipeline])
    assert outcomes
    for name, (before, after) in outcomes.items():
        for logical, transformed in zip(before.buffers, after.buffers, strict=True):
            np.testing.assert_array_equal(logical, transformed, err_msg=name)


def test_transform_list_composes_in_order() -> None:
    maps = "[#layout.index_map<(i) -> (i floordiv 4, i mod 4)>, #layout.index_map<(a, b) -> (b, a)>]"
    text = OFFSET.replace(SWAP, f"transform = {maps}")
    buf = np.full(24, -7.0, np.float32)
    run_function(parse(text), "offset", [buf])
    # (i floordiv 4, i mod 4) then a swap: element (i mod 4, i floordiv 4) of a 4x2 block.
    expected = np.full(24, -7.0, np.float32)
    expected[8:16] = [0, 4, 1, 5, 2, 6, 3, 7]
    np.testing.assert_array_equal(buf, expected)
    outcomes = compare_before_after(text, [ApplyLayoutPass(), FlattenBuffersPass()])
    np.testing.assert_array_equal(outcomes["offset"][1].buffers[0][8:16], expected[8:16])
