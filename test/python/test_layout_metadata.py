"""Layout metadata pinned by hand (docs/semantics.md "Textures" and "Axis separators").

Numeric tests compare passes, target and runtime with each other; a wrong default separator
or separators taken from the wrong map of a transform list would move data consistently
everywhere and pass them. These tests compare with numbers worked out by hand instead:
flattened physical shapes, image sizes (width = x extent in texels, height = y extent) and
the texel coordinates `(x, y)` and lane of one probed element, as the OpenCL target reads
them and as the runtime uploads them, for every texture scope, ranks 2 to 5, explicit
separators and transform lists (whose separators come from the LAST map).

For an NCHW4c texture [N, C4, H, W, 4] at [n, c4, h, w, lane] docs/semantics.md fixes:
`global.texture` (separator 3): y = (n * C4 + c4) * H + h, x = w;
`global.texture-nhwc` (separator 2; 1 at rank 3): y = n * C4 + c4, x = h * W + w;
`global.texture-weight` (separator 1): y = o4, x = (i * H + h) * W + w.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from layout_harness import parse
from xdsl.dialects import func
from xdsl.passes import ModulePass

from physlayout.dialects.buffer_layout import flattened_type, image_size
from physlayout.dialects.layout import BufferType, DeclBufferOp
from physlayout.lowering.opencl import generate_opencl
from physlayout.lowering.pipelines import PhyslayoutOpenCLPass
from physlayout.runtime.opencl import ParamLayout
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.universe import make_context

NCHW4C = "#layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>"
CHW4C = "#layout.index_map<(h, w, c) -> (c floordiv 4, h, w, c mod 4)>"
CW4C = "#layout.index_map<(w, c) -> (c floordiv 4, w, c mod 4)>"
TO_NCHW = "#layout.index_map<(n, h, w, c) -> (n, c, h, w)>"


@dataclass(frozen=True)
class Case:
    """A texture parameter of logical `shape` with `layout` (the type's text after the
    shape), probed at logical `index`; the rest is written by hand."""

    shape: tuple[int, ...]
    layout: str
    index: tuple[int, ...]
    flat: tuple[int, int]
    """[rows, cols] after flatten-buffers."""
    image: tuple[int, int]
    """(width, height) in texels."""
    texel: tuple[int, int, int]
    """(x, y, lane) of the probed element."""


# NHWC [2, 5, 7, 12] as NCHW4c is [N, C4, H, W, 4] = [2, 3, 5, 7, 4]; logical [1, 3, 4, 9] is
# [n, c4, h, w, lane] = [1, 2, 3, 4, 1].
CASES = {
    # y = (1 * 3 + 2) * 5 + 3 = 28, x = 4; rows 2 * 3 * 5 = 30, cols 7 * 4 = 28.
    "texture-rank5": Case(
        (2, 5, 7, 12),
        f'transform = {NCHW4C}, scope = "global.texture"',
        (1, 3, 4, 9),
        flat=(30, 28),
        image=(7, 30),
        texel=(4, 28, 1),
    ),
    # y = 1 * 3 + 2 = 5, x = 3 * 7 + 4 = 25; rows 2 * 3 = 6, cols 5 * 7 * 4 = 140.
    "nhwc-rank5": Case(
        (2, 5, 7, 12),
        f'transform = {NCHW4C}, scope = "global.texture-nhwc"',
        (1, 3, 4, 9),
        flat=(6, 140),
        image=(35, 6),
        texel=(25, 5, 1),
    ),
    # y = o4 = 1, x = (2 * 5 + 3) * 7 + 4 = 95; rows 2, cols 3 * 5 * 7 * 4 = 420.
    "weight-rank5": Case(
        (2, 5, 7, 12),
        f'transform = {NCHW4C}, scope = "global.texture-weight"',
        (1, 3, 4, 9),
        flat=(2, 420),
        image=(105, 2),
        texel=(95, 1, 1),
    ),
    # HWC [5, 7, 12] as [C4, H, W, 4] = [3, 5, 7, 4]; [3, 4, 9] is [2, 3, 4, 1].
    # Separator 2 (r - 2): y = 2 * 5 + 3 = 13, x = 4; rows 15, cols 28.
    "texture-rank4": Case(
        (5, 7, 12),
        f'transform = {CHW4C}, scope = "global.texture"',
        (3, 4, 9),
        flat=(15, 28),
        image=(7, 15),
        texel=(4, 13, 1),
    ),
    "nhwc-rank4": Case(
        (5, 7, 12),
        f'transform = {CHW4C}, scope = "global.texture-nhwc"',
        (3, 4, 9),
        flat=(15, 28),
        image=(7, 15),
        texel=(4, 13, 1),
    ),
    # Separator 1: y = 2, x = 3 * 7 + 4 = 25; rows 3, cols 140.
    "weight-rank4": Case(
        (5, 7, 12),
        f'transform = {CHW4C}, scope = "global.texture-weight"',
        (3, 4, 9),
        flat=(3, 140),
        image=(35, 3),
        texel=(25, 2, 1),
    ),
    # WC [7, 12] as [C4, W, 4] = [3, 7, 4]; [4, 9] is [2, 4, 1]. Every scope separates at 1
    # (`global.texture-nhwc` too: [a | b, lane]): y = 2, x = 4; rows 3, cols 28.
    "texture-rank3": Case(
        (7, 12),
        f'transform = {CW4C}, scope = "global.texture"',
        (4, 9),
        flat=(3, 28),
        image=(7, 3),
        texel=(4, 2, 1),
    ),
    "nhwc-rank3": Case(
        (7, 12),
        f'transform = {CW4C}, scope = "global.texture-nhwc"',
        (4, 9),
        flat=(3, 28),
        image=(7, 3),
        texel=(4, 2, 1),
    ),
    "weight-rank3": Case(
        (7, 12),
        f'transform = {CW4C}, scope = "global.texture-weight"',
        (4, 9),
        flat=(3, 28),
        image=(7, 3),
        texel=(4, 2, 1),
    ),
    # A rank-2 texture is its image: [6, 8] at [5, 6] is y = 5, x = 6 / 4 = 1, lane 2.
    "nhwc-rank2": Case(
        (6, 8),
        'scope = "global.texture-nhwc"',
        (5, 6),
        flat=(6, 8),
        image=(2, 6),
        texel=(1, 5, 2),
    ),
    # An explicit separator overrides the scope's default (here `|` at 3 in the map of a
    # `global.texture-nhwc` buffer gives the `global.texture` layout).
    "nhwc-explicit": Case(
        (2, 5, 7, 12),
        "transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, "
        'scope = "global.texture-nhwc"',
        (1, 3, 4, 9),
        flat=(30, 28),
        image=(7, 30),
        texel=(4, 28, 1),
    ),
    # Transform lists: the separators are the LAST map's. NHWC -> NCHW, then NCHW ->
    # [n, c4, h | w, lane] on a `global.texture-nhwc` buffer: the `global.texture` layout,
    # not the scope default (what the first map, which has none, would leave).
    "nhwc-list": Case(
        (2, 5, 7, 12),
        f"transform = [{TO_NCHW}, "
        "#layout.index_map<(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)>], "
        'scope = "global.texture-nhwc"',
        (1, 3, 4, 9),
        flat=(30, 28),
        image=(7, 30),
        texel=(4, 28, 1),
    ),
    # ... and [n | c4, h, w, lane] on a `global.texture` buffer: the weight layout,
    # y = 1, x = (2 * 5 + 3) * 7 + 4 = 95.
    "texture-list": Case(
        (2, 5, 7, 12),
        f"transform = [{TO_NCHW}, "
        "#layout.index_map<(n, c, h, w) -> (n | c floordiv 4, h, w, c mod 4)>], "
        'scope = "global.texture"',
        (1, 3, 4, 9),
        flat=(2, 420),
        image=(105, 2),
        texel=(95, 1, 1),
    ),
}


def _probe_module(case: Case) -> str:
    """A kernel that copies the probed element of texture %t into %o[0]."""
    dims = "x".join(map(str, case.shape))
    texture = f"!layout.buffer<{dims}xf32, {case.layout}>"
    constants = "\n".join(f"  %i{k} = arith.constant {v} : index" for k, v in enumerate(case.index))
    indices = ", ".join(f"%i{k}" for k in range(len(case.index)))
    return f"""
func.func @probe(%t: {texture}, %o: !layout.buffer<1xf32>) {{
  %c0 = arith.constant 0 : index
{constants}
  %v = layout.load %t[{indices}] : {texture}, f32
  layout.store %v, %o[%c0] : !layout.buffer<1xf32>, f32
  func.return
}}"""


def _function(module_text: str, passes: Sequence[ModulePass]) -> func.FuncOp:
    module = parse(module_text)
    ctx = make_context()
    for one_pass in passes:
        one_pass.apply(ctx, module)
    module.verify()
    (function,) = (op for op in module.ops if isinstance(op, func.FuncOp))
    return function


@pytest.mark.parametrize("name", sorted(CASES))
def test_flatten_buffers_physical_type(name: str) -> None:
    case = CASES[name]
    function = _function(_probe_module(case), [ApplyLayoutPass(), FlattenBuffersPass()])
    aliases = [op.buffer.type for op in function.walk() if isinstance(op, DeclBufferOp)]
    textures = [t for t in aliases if isinstance(t, BufferType) and "texture" in t.get_scope()]
    assert len(textures) == 1
    assert textures[0].get_shape() == case.flat
    assert textures[0].get_axis_separators() == (1,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_image_size_and_texel_coordinates_in_opencl(name: str) -> None:
    case = CASES[name]
    module = parse(_probe_module(case))
    ctx = make_context()
    PhyslayoutOpenCLPass().apply(ctx, module)
    program = generate_opencl(module)
    texture_arg = program.kernels["probe"].args[0]
    assert texture_arg.kind == "texture"
    assert texture_arg.image_size == case.image
    assert texture_arg.physical_shape == case.flat
    assert isinstance(texture_arg.type, BufferType)
    assert image_size(texture_arg.type) == case.image
    assert flattened_type(texture_arg.type).get_shape() == case.flat
    x, y, lane = case.texel
    read = re.search(
        r"read_imagef\(t, px_sampler, \(int2\)\((\d+), (\d+)\)\)\.s(\d)", program.source
    )
    assert read is not None, program.source
    assert tuple(int(g) for g in read.groups()) == (x, y, lane)


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_uploads_to_the_texel(name: str) -> None:
    """The runtime's physical array (the image's bytes, [rows, cols] = [height, width * 4])
    holds the probed element at [y, x * 4 + lane]."""
    case = CASES[name]
    source = _function(_probe_module(case), [])
    lowered = _function(_probe_module(case), [PhyslayoutOpenCLPass()])
    source_type = source.function_type.inputs.data[0]
    lowered_type = lowered.function_type.inputs.data[0]
    assert isinstance(source_type, BufferType) and isinstance(lowered_type, BufferType)
    layout = ParamLayout.of("t", source_type, lowered_type)
    assert layout.kind == "texture"
    assert layout.physical_shape == case.flat
    logical = np.arange(np.prod(case.shape), dtype=np.float32).reshape(case.shape)
    physical = layout.to_physical(logical)
    x, y, lane = case.texel
    assert physical[y, x * 4 + lane] == logical[case.index]
    np.testing.assert_array_equal(layout.to_logical(physical), logical)


@pytest.mark.parametrize(
    ("layout", "applied", "flat"),
    [
        # [8, 12] transposed to [12, 8], then [a | b floordiv 4, b mod 4]: [12, 2, 4] with
        # the separator at 1 -> [12, 8] (the first map's none would give [96]).
        (
            "transform = [#layout.index_map<(i, j) -> (j, i)>, "
            "#layout.index_map<(a, b) -> (a | b floordiv 4, b mod 4)>]",
            ((12, 2, 4), (1,)),
            (12, 8),
        ),
        # The separator in the first map is not allowed; no separator anywhere: one axis.
        (
            "transform = [#layout.index_map<(i, j) -> (j, i)>, "
            "#layout.index_map<(a, b) -> (a, b floordiv 4, b mod 4)>]",
            ((12, 2, 4), ()),
            (96,),
        ),
    ],
)
def test_global_buffer_separators(
    layout: str, applied: tuple[tuple[int, ...], tuple[int, ...]], flat: tuple[int, ...]
) -> None:
    text = f"""
func.func @f(%b: !layout.buffer<8x12xf32, {layout}>, %i: index, %j: index) -> f32 {{
  %v = layout.load %b[%i, %j] : !layout.buffer<8x12xf32, {layout}>, f32
  func.return %v : f32
}}"""
    after_apply = _function(text, [ApplyLayoutPass()])
    param = after_apply.function_type.inputs.data[0]
    assert isinstance(param, BufferType)
    assert (param.get_shape(), param.get_axis_separators()) == applied
    after_flatten = _function(text, [ApplyLayoutPass(), FlattenBuffersPass()])
    (alias,) = (op.buffer.type for op in after_flatten.walk() if isinstance(op, DeclBufferOp))
    assert isinstance(alias, BufferType) and alias.get_shape() == flat


def test_allocations_become_physical() -> None:
    """flatten-buffers rewrites a texture allocation to its image [rows, cols] (here the
    `global.texture-nhwc` default at 1 for rank 3: [5, 7 * 4])."""
    text = """
func.func @f(%v: f32, %i: index) {
  %p = layout.allocate [5, 7, 4] : !layout.ptr<f32, scope = "global.texture-nhwc">
  %b = layout.decl_buffer %p : !layout.ptr<f32, scope = "global.texture-nhwc"> -> !layout.buffer<5x7x4xf32, scope = "global.texture-nhwc">
  layout.store %v, %b[%i, %i, %i] : !layout.buffer<5x7x4xf32, scope = "global.texture-nhwc">, f32
  func.return
}"""
    function = _function(text, [FlattenBuffersPass()])
    (allocation,) = (op for op in function.walk() if op.name == "layout.allocate")
    assert str(allocation).startswith("%p = layout.allocate [5, 28]")
