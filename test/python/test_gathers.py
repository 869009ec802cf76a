"""Gathers (a `linalg.generic` body reading another tensor with `tensor.extract` at computed
indices), numerically: the graph evaluator against the legalized kernels (buffer evaluator)
and against OpenCL, for torch-mlir's nearest and bilinear upsampling, the transposed
convolution's weight flip and zero spread, adaptive-pool windows, gathers from textures (3
and 5 channels, odd extents, batch 3, negative-wrapped indices, indices clamped at the
border), the families of the shipped models pass by pass, the value-bounds proofs, and
planted bugs caught on values."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from graph_harness import apply, compare_before_after, functions, parse
from legalize_harness import check_legalized, host_inputs, run_host
from model_files import model_inputs
from xdsl.dialects import tensor

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.opencl import compile_module
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms import legalize_kernels
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.transforms.legalize_layout import LegalizeLayoutPass
from physlayout.transforms.value_bounds import ValueBounds
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/legalize-gathers.mlir"
FOLD = ROOT / "test/graph/fold-gathers.mlir"
TEXTURE = ROOT / "test/python/inputs/gathers_texture.mlir"
MODELS = ROOT / "examples/models"


def _without(text: str, name: str) -> str:
    """`text` without the function `@name` (it needs inputs the random ones are not)."""
    return re.sub(rf"\nfunc\.func @{name}\(.*?\n}}\n", "\n", text, flags=re.S)


def _corner_inputs(rng: np.random.Generator, border: bool) -> list[Any]:
    """Inputs of @corner_unknown: the source, then i64 indices in [-n, n) (negative ones
    wrap to n + i); with `border` also the extreme indices -n and n - 1 at both ends."""
    source = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    shapes = {1: (1, 1, 1, 1), 3: (3, 1, 1), 4: (7, 1), 5: (9,)}
    indices = []
    for n, shape in shapes.items():
        values = rng.integers(-n, n, size=shape)
        if border and values.size > 2:
            flat = values.reshape(-1)
            flat[0], flat[-1] = -n, n - 1
        indices.append(values.astype(np.int64))
    return [source, *indices]


def _legalized_corner(text: str) -> Any:
    module = apply(parse(text), [RaiseLayoutRewritesPass(), LegalizeLayoutPass()])
    for stage in PhyslayoutAdrenoPass().passes()[-2:-1]:  # physlayout-opencl
        apply(module, [stage])
    return module


def test_lit_gathers_agree() -> None:
    """Every function of legalize-gathers.mlir (indices from random integer tensors aside):
    graph evaluator == legalized host on the buffer evaluator, bit for bit, after each
    buffer stage."""
    text = _without(_without(LIT.read_text(), "corner_unknown"), "corner_stated")
    check_legalized(text, [RaiseLayoutRewritesPass()], seed=3)


def _stated_inputs(rng: np.random.Generator) -> list[Any]:
    """Inputs of @corner_stated inside its stated bounds (and inside the tensor): batch 0,
    channels in [-3, 2] (negative ones wrap), rows in [0, 3], columns in [0, 4], with the
    extremes at both ends."""
    source = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    channel = np.array([-3, 0, 2], np.int64).reshape(3, 1, 1)
    row = np.array([0, 3, 1, 2, 3, 0, 1], np.int64).reshape(7, 1)
    column = np.array([4, 0, 1, 2, 3, 4, 0, 3, 4], np.int64)
    return [source, np.zeros((1, 1, 1, 1), np.int64), channel, row, column]


def _run_stated(module: Any, source: Any, function: Any, inputs: list[Any]) -> tuple[Any, Any]:
    (want,) = run_graph(source, "corner_stated", inputs)
    (got,) = run_host(module, "corner_stated", host_inputs(function, inputs), [want])
    return got, want


def test_stated_bounds_read_without_clamps() -> None:
    """@corner_stated (index tensors prepared elsewhere, `layout.bounds` on each argument):
    on inputs inside the stated bounds the kernel reads what the graph evaluator reads, with
    one clamp (the column, whose stated bound passes the last column)."""
    text = LIT.read_text()
    module = _legalized_corner(text)
    source = parse(text)
    function = next(f for f in functions(source) if f.sym_name.data == "corner_stated")
    got, want = _run_stated(module, source, function, _stated_inputs(np.random.default_rng(4)))
    np.testing.assert_array_equal(got, want)


def test_unknown_indices_wrap_and_clamp() -> None:
    """@corner_unknown's index tensors are parameters: every index in [-n, n) (negative ones
    wrap, -n and n - 1 at the borders) reads what the graph evaluator reads."""
    text = LIT.read_text()
    module = _legalized_corner(text)
    source = parse(text)
    function = next(f for f in functions(source) if f.sym_name.data == "corner_unknown")
    rng = np.random.default_rng(0)
    for border in (False, True):
        inputs = _corner_inputs(rng, border)
        (want,) = run_graph(source, "corner_unknown", inputs)
        (got,) = run_host(module, "corner_unknown", host_inputs(function, inputs), [want])
        np.testing.assert_array_equal(got, want)


def test_out_of_range_indices_read_the_border() -> None:
    """An index outside [-n, n) is undefined behaviour in the source (the evaluator refuses
    it); the kernel clamps it, so it reads the border element and stays inside its buffer."""
    text = LIT.read_text()
    module = _legalized_corner(text)
    function = next(f for f in functions(parse(text)) if f.sym_name.data == "corner_unknown")
    rng = np.random.default_rng(1)
    source, batch, channel, row, column = _corner_inputs(rng, border=False)
    row[:] = np.arange(7).reshape(7, 1) + 2  # 2..8: rows 4.. are past the end (n = 4)
    inputs = [source, batch, channel, row, column]
    want = np.zeros((1, 3, 7, 9), np.float32)
    (got,) = run_host(module, "corner_unknown", host_inputs(function, inputs), [want])
    wrap = lambda i, n: np.where(i < 0, i + n, i)  # noqa: E731
    c, h, w = wrap(channel[:, 0, 0], 3), np.minimum(row[:, 0], 3), wrap(column, 5)
    expected = source[0][c][:, h][:, :, w]
    np.testing.assert_array_equal(got[0], expected)


def test_planted_off_by_one_clamp_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clamp to extent - 2 (off by one) changes the values read at the last row or
    column: the comparison with the evaluator fails on values."""
    original = legalize_kernels._gather_index  # pyright: ignore[reportPrivateUsage]

    def off_by_one(
        kernel: Any, index: Any, mapper: Any, clamps: Any, extent: int, point: Any
    ) -> Any:
        shorter = extent - 1 if extent > 1 else extent
        return original(kernel, index, mapper, clamps, shorter, point)

    monkeypatch.setattr(legalize_kernels, "_gather_index", off_by_one)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        test_unknown_indices_wrap_and_clamp()


def test_fold_gathers_agree() -> None:
    """fold-gathers.mlir before and after fold-layout-rewrites (graph evaluator), and its
    legalized kernels (buffer evaluator)."""
    compare_before_after(FOLD.read_text(), [FoldLayoutRewritesPass()], seed=2)
    check_legalized(FOLD.read_text(), [FoldLayoutRewritesPass()], seed=2)


# Value bounds -----------------------------------------------------------------------------


def _extract_bounds(text: str, function: str) -> list[list[Any]]:
    """The bounds of the indices of every `tensor.extract` of `@function`."""
    (found,) = [f for f in functions(parse(text)) if f.sym_name.data == function]
    bounds = ValueBounds()
    return [
        [bounds.of(i) for i in op.indices]
        for op in found.walk()
        if isinstance(op, tensor.ExtractOp)
    ]


def test_bounds_of_torch_index_arithmetic() -> None:
    """Nearest upsampling's floor/clamp, the weight flip's `2 - k`, the wraparound of an
    iota shifted to negative values (texture input): proven to the exact ranges; a
    parameter index tensor: unknown."""
    text = LIT.read_text()
    assert _extract_bounds(text, "nearest_upsample") == [[(0, 0), (0, 2), (0, 1), (0, 1)]]
    assert _extract_bounds(text, "weight_flip") == [[(0, 4), (0, 2), (0, 2), (0, 2)]]
    assert _extract_bounds(text, "corner_proven") == [[(0, 0), (0, 2), (1, 3), (0, 4)]]
    assert _extract_bounds(text, "corner_unknown") == [[None, None, None, None]]
    texture = TEXTURE.read_text().replace("CH", "3")
    shifted = _extract_bounds(texture, "gathers")[2]
    assert shifted == [(0, 0), (0, 2), (0, 4), (0, 6)]  # i - 2 and i - 1, wrapped


def test_bounds_of_align_corners_resize_are_proven() -> None:
    """autoencoder_transpose's bilinear align_corners=True index tensors (f64 scale
    truncated in the body, clamp by cmpf ult + select, fptosi, + 1, minsi 15) and
    adaptive_pools_net's half-pixel ones: every gather proven inside, no clamp."""
    for name, count in [("autoencoder_transpose", 5), ("adaptive_pools_net", 5), ("fpn_tiny", 2)]:
        module = parse((MODELS / f"{name}.mlir").read_text())
        bounds = ValueBounds()
        extracts = [op for op in module.walk() if isinstance(op, tensor.ExtractOp)]
        assert len(extracts) == count
        for op in extracts:
            assert not any(any(c) for c in legalize_kernels.gather_clamps(op, bounds)), name


# Gathers from textures on OpenCL ----------------------------------------------------------


def _texture_text(channels: int, batch: int) -> str:
    text = TEXTURE.read_text().replace("CH", str(channels))
    if batch == 1:
        return text
    text = text.replace("tensor<1x", f"tensor<{batch}x").replace("%c0, %78", "%77, %78")
    text = text.replace(
        "    %78 = linalg.index 1", "    %77 = linalg.index 0 : index\n    %78 = linalg.index 1"
    )
    text = text.replace(
        "#map_n = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, 0)>",
        "#map_n = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>",
    )
    text = text.replace(
        "output_shape [1, 1, 1, 1] : tensor<1xi64>",
        f"output_shape [{batch}, 1, 1, 1] : tensor<{batch}xi64>",
    )
    text = text.replace(
        "%n0 = tensor.empty() : tensor<1xi64>", f"%n0 = tensor.empty() : tensor<{batch}xi64>"
    )
    text = text.replace("outs(%n0 : tensor<1xi64>)", f"outs(%n0 : tensor<{batch}xi64>)")
    text = text.replace("} -> tensor<1xi64>", f"}} -> tensor<{batch}xi64>")
    return text.replace(
        "%c1_i64 : i64\n    %54 = arith.select %52",
        f"%c{batch}_i64 : i64\n    %54 = arith.select %52",
    ).replace(
        "%c1_i64 = arith.constant 1 : i64",
        f"%c1_i64 = arith.constant 1 : i64\n  %c{batch}_i64 = arith.constant {batch} : i64",
    )


def _texture_inputs(channels: int, batch: int, rng: np.random.Generator, border: bool) -> list[Any]:
    """Inputs of @gathers: x, the weight, and index tensors in [-n, n) (with `border`, -n
    and n - 1 at their ends)."""
    x = rng.standard_normal((batch, channels, 7, 9)).astype(np.float32)
    weight = rng.standard_normal((channels, channels, 3, 3)).astype(np.float32)
    indices: list[Any] = []
    shapes = [(batch, (batch, 1, 1, 1)), (channels, (channels, 1, 1)), (5, (6, 1)), (7, (8,))]
    for n, shape in shapes:
        values = rng.integers(-n, n, size=shape)
        if border:
            values.reshape(-1)[0], values.reshape(-1)[-1] = -n, n - 1
        indices.append(values.astype(np.int64))
    return [x, weight, *indices]


def test_batch3_family_pass_by_pass() -> None:
    """The texture gathers at batch 3 and 5 channels: the graph evaluator after each graph
    pass of physlayout-adreno equals it on the source."""
    module = parse(_texture_text(5, 3))
    inputs = _texture_inputs(5, 3, np.random.default_rng(9), border=True)
    _check_each_graph_pass(module, "gathers", inputs)


@pytest.mark.parametrize(("channels", "batch"), [(3, 1), (5, 3)])
def test_gathers_from_textures_on_opencl(runtime: OpenCLRuntime, channels: int, batch: int) -> None:
    """physlayout-adreno on a convolution (NCHW4c texture) read by a nearest upsample and
    by bilinear corner gathers: the upsample and the proven gather read the texture (texel
    and lane from the logical index); OpenCL equals the graph evaluator, with index
    tensors in [-n, n) and at the borders."""
    from physlayout.runtime.host import execute

    text = _texture_text(channels, batch)
    source = parse(text)
    lowered = parse(text)
    limits = runtime.limits.image_limits()
    PhyslayoutAdrenoPass(
        max_image_width=limits.max_width, max_image_height=limits.max_height
    ).apply(make_context(), lowered)
    compiled = compile_module(lowered, runtime, lowered_already=True)
    assert compiled.program.source.count("read_imagef") >= 2, "the gathers read no texture"
    rng = np.random.default_rng(channels)
    for border in (False, True):
        inputs = _texture_inputs(channels, batch, rng, border)
        expected = run_graph(source, "gathers", inputs)
        outputs = [np.zeros_like(e) for e in expected]
        execute(compiled, "gathers", [*inputs, *outputs])
        for got, want in zip(outputs, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


SCALARS = """
func.func @scalars(%x: tensor<7xf32>, %k: tensor<7xi64>) -> (tensor<7xf32>, tensor<7xi64>) {
  %c3_i64 = arith.constant 3 : i64
  %c2_i64 = arith.constant 2 : i64
  %cst = arith.constant 1.500000e+00 : f32
  %e = tensor.empty() : tensor<7xf32>
  %ei = tensor.empty() : tensor<7xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %k : tensor<7xf32>, tensor<7xi64>) outs(%e, %ei : tensor<7xf32>, tensor<7xi64>) {
  ^bb0(%in: f32, %ki: i64, %out: f32, %outi: i64):
    %0 = math.fpowi %in, %c3_i64 : f32, i64
    %1 = math.tanh %0 : f32
    %2 = math.floor %in : f32
    %3 = arith.minimumf %1, %2 : f32
    %4 = arith.sitofp %ki : i64 to f32
    %5 = arith.addf %3, %4 : f32
    %6 = arith.mulf %in, %cst : f32
    %7 = arith.fptosi %6 : f32 to i64
    %8 = arith.addi %7, %ki : i64
    %9 = arith.subi %8, %c2_i64 : i64
    %10 = arith.muli %9, %c3_i64 : i64
    %11 = arith.divsi %10, %c2_i64 : i64
    %12 = arith.cmpi slt, %11, %c2_i64 : i64
    %13 = arith.minsi %11, %c3_i64 : i64
    %14 = arith.select %12, %13, %11 : i64
    linalg.yield %5, %14 : f32, i64
  } -> (tensor<7xf32>, tensor<7xi64>)
  return %r#0, %r#1 : tensor<7xf32>, tensor<7xi64>
}
"""


def test_new_scalar_ops_on_opencl(runtime: OpenCLRuntime) -> None:
    """The scalar ops the second set of models uses (fpowi, tanh, floor, minimumf, sitofp,
    fptosi, i64 addi/subi/muli/divsi/cmpi/minsi, several results): OpenCL == evaluator."""
    from physlayout.runtime.host import execute

    source = parse(SCALARS)
    lowered = parse(SCALARS)
    PhyslayoutAdrenoPass().apply(make_context(), lowered)
    compiled = compile_module(lowered, runtime, lowered_already=True)
    x = np.array([-2.7, -1.0, -0.4, 0.0, 0.3, 1.6, 2.5], np.float32)
    k = np.array([-9, -3, -1, 0, 2, 5, 11], np.int64)
    expected = run_graph(source, "scalars", [x, k])
    outputs = [np.zeros_like(e) for e in expected]
    execute(compiled, "scalars", [x, k, *outputs])
    np.testing.assert_allclose(outputs[0], expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(outputs[1], expected[1])
    np.testing.assert_allclose(
        expected[0][:2], np.minimum(np.tanh(x[:2] ** 3), np.floor(x[:2])) + k[:2]
    )


# Families of the shipped models, pass by pass ------------------------------------------------

FAMILIES = {
    "adaptive_pools_net": "uneven adaptive pools, bilinear (align_corners=False), 2 results",
    "autoencoder_transpose": "transposed conv with output_padding, bilinear align_corners",
    "espcn_pixelshuffle": "pixel shuffle",
    "fpn_tiny": "nearest upsampling, 3 results",
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_pass_by_pass(name: str) -> None:
    """The graph evaluator after each graph pass of physlayout-adreno (up to legalization)
    equals it on the source, on the model's inputs, and matches PyTorch's output."""
    module = parse((MODELS / f"{name}.mlir").read_text())
    inputs = list(model_inputs(name).values())
    want = run_graph(module, "main", inputs)
    with np.load(MODELS / f"{name}.expected.npz") as archive:
        for k, value in enumerate(want):
            torch = archive[f"result{k}"]
            assert np.abs(value - torch).max() <= 1e-5 * np.abs(torch).max()
    _check_each_graph_pass(module, "main", inputs)


def _check_each_graph_pass(module: Any, name: str, inputs: list[Any]) -> None:
    """The graph evaluator on `@name` after each graph pass of physlayout-adreno (up to
    legalization) equals it before the first."""
    want = run_graph(module, name, inputs)
    for stage in PhyslayoutAdrenoPass().passes():
        if stage.name == "legalize-layout":
            break
        apply(module, [stage])
        got = run_graph(module, name, inputs)
        for have, expected in zip(got, want, strict=True):
            np.testing.assert_allclose(have, expected, rtol=1e-5, atol=1e-6, err_msg=stage.name)


def test_planted_align_corners_ignored_is_caught(runtime: OpenCLRuntime) -> None:
    """autoencoder_transpose (transposed conv with output_padding, bilinear with
    align_corners=True) end to end on OpenCL matches PyTorch; the same graph with the
    resize's scale of align_corners=False (16/32 instead of 15/31) does not."""
    from physlayout.runtime.model_report import run_model

    name = "autoencoder_transpose"
    text = (MODELS / f"{name}.mlir").read_text()
    names = [
        a.split("\t")[1].lstrip("%")
        for a in (MODELS / f"{name}.args.txt").read_text().splitlines()[1:]
    ]
    inputs = dict(zip(names, model_inputs(name).values(), strict=True))
    with np.load(MODELS / f"{name}.expected.npz") as archive:
        expected = {k: archive[k] for k in archive.files}
    good = run_model(name, text, inputs, expected, runtime)
    assert good.max_error <= 1e-4
    planted = text.replace("0.4838709677419355 : f64", "5.000000e-01 : f64")
    assert planted != text
    bad = run_model(name, planted, inputs, expected, runtime)
    assert bad.max_error > 1e-2
