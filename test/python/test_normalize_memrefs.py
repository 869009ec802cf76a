"""Memref layout normalization (`normalize-memref-layouts`, also apply-layout's last step):
numeric equivalence before and after the pass (numpy evaluator), refusals, idempotence,
property tests over random layout maps, and linear running time in the number of
functions."""

from __future__ import annotations

import gc
import json
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from io import StringIO
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation
from xdsl.ir.affine import AffineMap
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from physlayout.indexing.bridges.affine import affine_to_expr
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.runtime.mlir_runner import MlirTools
from physlayout.semantics.evaluator import run_function
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.memref_layout_maps import MemRefNormalizations, is_layout_mapped
from physlayout.transforms.normalize_memrefs import AccessRewriting, normalize_memref_layouts
from physlayout.universe import make_context


def _context() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, scf.Scf, affine.Affine, memref.MemRef):
        ctx.load_dialect(dialect)
    return ctx


def parse(text: str) -> ModuleOp:
    return Parser(_context(), text).parse_module()


def apply_pass(module: ModuleOp, strict: bool = False) -> ModuleOp:
    """Run apply-layout on a clone of `module` and verify the result."""
    result = module.clone()
    ApplyLayoutPass(strict=strict).apply(_context(), result)
    result.verify()
    return result


def layout_results(memref_type: MemRefType) -> list[Expr]:
    """The layout map's results over dimensions d0, d1, ..."""
    layout = memref_type.layout
    assert isinstance(layout, builtin.AffineMapAttr)
    dims: list[Expr] = [Dim(f"d{k}") for k in range(layout.data.num_dims)]
    results = [affine_to_expr(r, dims, []) for r in layout.data.results]
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def to_physical(logical: np.ndarray, memref_type: MemRefType, shape: Sequence[int]) -> np.ndarray:
    """The normalized array holding `logical` (zeros in the padding)."""
    physical = np.zeros(tuple(shape), dtype=logical.dtype)
    physical[_physical_index(memref_type)] = logical
    return physical


def to_logical(physical: np.ndarray, memref_type: MemRefType) -> np.ndarray:
    return physical[_physical_index(memref_type)]


def _physical_index(memref_type: MemRefType) -> tuple[np.ndarray, ...]:
    grids = np.indices(memref_type.get_shape())
    env = {f"d{k}": grid for k, grid in enumerate(grids)}
    return tuple(
        np.broadcast_to(np.asarray(r.evaluate(env)), grids.shape[1:])
        for r in layout_results(memref_type)
    )


def compare_before_after(
    text: str, name: str, args: Sequence[np.ndarray | float | int]
) -> tuple[list[object], list[object]]:
    """Run function `name` before and after the pass on the same logical arguments; return
    the logical arguments after both runs (mapped back from the normalized layout) plus the
    results."""
    module = parse(text)
    after_module = apply_pass(module)
    function = next(
        op for op in module.walk() if isinstance(op, func.FuncOp) and op.sym_name.data == name
    )
    normalizations = MemRefNormalizations()
    before_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    after_args: list[np.ndarray | float | int] = []
    for value, arg_type in zip(args, function.function_type.inputs.data, strict=True):
        norm = normalizations.get(arg_type)
        if norm is None or not isinstance(value, np.ndarray):
            after_args.append(value.copy() if isinstance(value, np.ndarray) else value)
        else:
            after_args.append(to_physical(value, norm.source, norm.target.get_shape()))
    before_results = run_function(module, name, before_args)
    after_results = run_function(after_module, name, after_args)
    after_logical: list[object] = []
    for value, arg_type in zip(after_args, function.function_type.inputs.data, strict=True):
        norm = normalizations.get(arg_type)
        if norm is not None and isinstance(value, np.ndarray):
            value = to_logical(value, norm.source)
        after_logical.append(value)
    return [*before_args, *before_results], [*after_logical, *after_results]


# Numeric equivalence --------------------------------------------------------------------------

LAYOUTS_8x12 = {
    "transpose": "(d0, d1) -> (d1, d0)",
    "tile_2d": "(d0, d1) -> (d0 floordiv 4, d1 floordiv 4, d0 mod 4, d1 mod 4)",
    "tile_padded": "(d0, d1) -> (d0 floordiv 3, d1 floordiv 5, d0 mod 3, d1 mod 5)",
    "spread": "(d0, d1) -> (d0 * 2, d1 + 1)",
    "skewed": "(d0, d1) -> (d0, (d0 + d1) mod 12)",
    "flattened": "(d0, d1) -> (d0 * 12 + d1)",
    "column_major_tiles": "(d0, d1) -> (d1 floordiv 4, d0, d1 mod 4)",
}


def roundtrip_program(layout: str, rows: int, cols: int) -> str:
    """Write `in` into a layout-mapped alloc with memref.store at computed indices (scf),
    read it back with affine.load (affine loops, a shifted access map) into `out`, and also
    read/write the layout-mapped argument `%M` in place."""
    mapped = f"memref<{rows}x{cols}xf32, affine_map<{layout}>>"
    plain = f"memref<{rows}x{cols}xf32>"
    return f"""
func.func @roundtrip(%in: {plain}, %out: {plain}, %M: {mapped}) -> f32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant {rows} : index
  %cols = arith.constant {cols} : index
  %half = arith.constant 0.5 : f32
  %T = memref.alloc() : {mapped}
  scf.for %i = %c0 to %rows step %c1 {{
    scf.for %j = %c0 to %cols step %c1 {{
      %jr = arith.subi %cols, %j : index
      %jj = arith.subi %jr, %c1 : index
      %v = memref.load %in[%i, %jj] : {plain}
      memref.store %v, %T[%i, %jj] : {mapped}
      %m = memref.load %M[%i, %j] : {mapped}
      %m2 = arith.addf %m, %half : f32
      memref.store %m2, %M[%i, %j] : {mapped}
    }}
  }}
  affine.for %i = 0 to {rows} {{
    affine.for %j = 0 to {cols - 1} {{
      %v = "affine.load"(%T, %i, %j) <{{map = affine_map<(d0, d1) -> (d0, d1 + 1)>}}> : ({mapped}, index, index) -> f32
      "affine.store"(%v, %out, %i, %j) <{{map = affine_map<(d0, d1) -> (d0, d1)>}}> : (f32, {plain}, index, index) -> ()
    }}
  }}
  %last_row = arith.constant {rows - 1} : index
  %last_col = arith.constant {cols - 1} : index
  %r = memref.load %T[%last_row, %last_col] : {mapped}
  memref.dealloc %T : {mapped}
  func.return %r : f32
}}
"""


@pytest.mark.parametrize("layout", sorted(LAYOUTS_8x12))
def test_roundtrip_through_layout_agrees(layout: str) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((8, 12)).astype(np.float32)
    out = np.zeros((8, 12), np.float32)
    mapped = rng.standard_normal((8, 12)).astype(np.float32)
    text = roundtrip_program(LAYOUTS_8x12[layout], 8, 12)
    before, after = compare_before_after(text, "roundtrip", [data, out, mapped])
    for x, y in zip(before, after, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    np.testing.assert_array_equal(np.asarray(before[1])[:, :11], data[:, 1:])
    np.testing.assert_array_equal(np.asarray(before[2]), mapped + 0.5)


CALLS = """
#tile = affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>
func.func @fill(%A: memref<10xf32, #tile>, %x: f32) -> memref<10xf32, #tile> {
  affine.for %i = 0 to 10 {
    %f = arith.index_cast %i : index to i32
    %g = arith.sitofp %f : i32 to f32
    %v = arith.mulf %g, %x : f32
    "affine.store"(%v, %A, %i) <{map = affine_map<(d0) -> (d0)>}> : (f32, memref<10xf32, #tile>, index) -> ()
  }
  func.return %A : memref<10xf32, #tile>
}
func.func @main(%out: memref<10xf32>, %x: f32) {
  %A = memref.alloca() : memref<10xf32, #tile>
  %B = func.call @fill(%A, %x) : (memref<10xf32, #tile>, f32) -> memref<10xf32, #tile>
  affine.for %i = 0 to 10 {
    %v = "affine.load"(%B, %i) <{map = affine_map<(d0) -> (9 - d0)>}> : (memref<10xf32, #tile>, index) -> f32
    "affine.store"(%v, %out, %i) <{map = affine_map<(d0) -> (d0)>}> : (f32, memref<10xf32>, index) -> ()
  }
  func.return
}
"""


def test_calls_agree() -> None:
    out = np.zeros(10, np.float32)
    before, after = compare_before_after(CALLS, "main", [out, 2.0])
    np.testing.assert_array_equal(np.asarray(before[0]), np.asarray(after[0]))
    np.testing.assert_array_equal(np.asarray(after[0]), 2.0 * np.arange(9, -1, -1))
    normalized = apply_pass(parse(CALLS))
    types = {str(op.results[0].type) for op in normalized.walk() if isinstance(op, memref.AllocaOp)}
    assert types == {"memref<3x4xf32>"}


# Refusals ---------------------------------------------------------------------------------------


def _single_function(arg_type: str, body: str = "") -> str:
    return f"func.func @f(%A: {arg_type}) {{\n{body}  func.return\n}}\n"


@pytest.mark.parametrize(
    ("arg_type", "body", "message"),
    [
        (
            "memref<10xf32, affine_map<(d0) -> (d0 floordiv 2)>>",
            "",
            "not injective on shape [10]: indices [0] and [1] both map to [0]",
        ),
        ("memref<16xf32, affine_map<(d0)[s0] -> (d0 + s0)>>", "", "its layout map has symbols"),
        ("memref<?xf32, affine_map<(d0) -> (d0 mod 4, d0 floordiv 4)>>", "", "not static"),
        ("memref<8xf32, affine_map<(d0) -> (3 - d0)>>", "", "negative minimum -4"),
        (
            "memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>",
            '  "memref.copy"(%A, %A) : (memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, '
            "d0 mod 4)>>, memref<16xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>) "
            "-> ()\n",
            "used by 'memref.copy'",
        ),
    ],
)
def test_refusals_name_the_type_and_reason(arg_type: str, body: str, message: str) -> None:
    module = parse(_single_function(arg_type, body))
    printed = str(module)
    with pytest.raises(PassFailedException) as info:
        normalize_memref_layouts(module, strict=True)
    assert "cannot normalize memref<" in str(info.value)
    assert message in str(info.value)
    assert str(module) == printed, "a refused module must be left unchanged"


def test_non_injective_collision_is_real() -> None:
    module = parse(_single_function("memref<6x6xf32, affine_map<(d0, d1) -> (d0 * 3 + d1)>>"))
    with pytest.raises(
        PassFailedException, match=r"indices \[0, 3\] and \[1, 0\] both map to \[3\]"
    ):
        normalize_memref_layouts(module, strict=True)


def test_idempotent() -> None:
    once = apply_pass(parse(roundtrip_program(LAYOUTS_8x12["tile_padded"], 8, 12)))
    twice = apply_pass(once)
    assert str(once) == str(twice)


def test_module_without_layout_maps_is_untouched() -> None:
    text = _single_function("memref<4x4xf32, strided<[1, 4]>>")
    module = parse(text)
    normalize_memref_layouts(module)
    assert str(module) == str(parse(text))


# Property tests over random layout maps -------------------------------------------------------

_ATOMS: list[Callable[[int], str]] = [
    lambda k: f"d0 floordiv {k}",
    lambda k: f"d0 mod {k}",
    lambda k: f"d1 floordiv {k}",
    lambda k: f"d1 mod {k}",
    lambda k: f"d0 * {k} + d1",
    lambda k: f"(d0 + d1) mod {k}",
    lambda k: f"d1 * {k} + d0 + 1",
    lambda k: "d0",
    lambda k: "d1",
]


@st.composite
def layouts(draw: st.DrawFn) -> tuple[int, int, str]:
    rows = draw(st.integers(1, 9))
    cols = draw(st.integers(1, 9))
    count = draw(st.integers(1, 4))
    results = [
        _ATOMS[draw(st.integers(0, len(_ATOMS) - 1))](draw(st.integers(1, 5))) for _ in range(count)
    ]
    return rows, cols, f"(d0, d1) -> ({', '.join(results)})"


def parse_affine_map(text: str) -> AffineMap:
    attr = Parser(_context(), f"affine_map<{text}>").parse_attribute()
    assert isinstance(attr, builtin.AffineMapAttr)
    return attr.data


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(layouts())
def test_random_layouts_are_normalized_soundly_or_refused(case: tuple[int, int, str]) -> None:
    rows, cols, layout = case
    index_map = IndexMap.from_affine_map(parse_affine_map(layout))
    text = roundtrip_program(layout, rows, cols)
    if not index_map.is_injective((rows, cols)):
        event("refused: not injective")
        with pytest.raises(PassFailedException, match="is not injective") as info:
            apply_pass(parse(text), strict=True)
        # Without strict, the memref is left as it is (never aliased).
        assert str(apply_pass(parse(text))) == str(parse(text))
        # The two indices named in the message really collide.
        named = re.search(r"indices (\[[\d, ]*\]) and (\[[\d, ]*\])", str(info.value))
        assert named is not None
        first, second = (json.loads(g) for g in named.groups())
        assert first != second
        assert index_map.map_indices(first) == index_map.map_indices(second)
        return
    event("normalized")
    module = apply_pass(parse(text))
    alloc = next(op for op in module.walk() if isinstance(op, memref.AllocOp))
    assert isinstance(alloc.memref.type, MemRefType)
    new_shape = alloc.memref.type.get_shape()
    # Every logical index lands inside the normalized box, and distinct ones stay distinct.
    images = {
        tuple(int(v) for v in index_map.map_indices([i, j]))
        for i, j in product(range(rows), range(cols))
    }
    assert len(images) == rows * cols
    assert all(0 <= c < e for image in images for c, e in zip(image, new_shape, strict=True))
    # The program computes the same thing before and after.
    rng = np.random.default_rng(rows * 31 + cols)
    data = rng.standard_normal((rows, cols)).astype(np.float32)
    mapped = rng.standard_normal((rows, cols)).astype(np.float32)
    before, after = compare_before_after(text, "roundtrip", [data, np.zeros_like(data), mapped])
    for x, y in zip(before, after, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    # A second run changes nothing.
    assert str(apply_pass(module)) == str(module)


_ACCESS_RESULTS = [
    "d0",
    "d1",
    "d0 + s0",
    "d1 floordiv 2 + 1",
    "(d0 * 3 + d1) mod 8",
    "d0 + d1 - 2",
    "s0 * 2 + d1 floordiv 3",
    "11 - d1",
]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.sampled_from(sorted(LAYOUTS_8x12)),
    st.sampled_from(_ACCESS_RESULTS),
    st.sampled_from(_ACCESS_RESULTS),
)
def test_composed_access_maps_agree_pointwise(layout: str, first: str, second: str) -> None:
    """`(layout o access)(x)` as built by the pass equals `layout(access(x))` at every point
    where the access is in bounds (out-of-bounds accesses are undefined)."""
    memref_type = MemRefType(
        builtin.f32, [8, 12], builtin.AffineMapAttr(parse_affine_map(LAYOUTS_8x12[layout]))
    )
    access = parse_affine_map(f"(d0, d1)[s0] -> ({first}, {second})")
    normalizations = MemRefNormalizations()
    norm = normalizations.get(memref_type)
    assert norm is not None
    operands = Block(arg_types=[builtin.IndexType()] * 3).args
    composed = AccessRewriting(normalizations).composed_map(norm, access, operands)
    assert (composed.num_dims, composed.num_symbols) == (2, 1)
    layout_map = parse_affine_map(LAYOUTS_8x12[layout])
    checked = 0
    for d0, d1, s0 in product(range(-2, 10), range(-2, 14), range(0, 3)):
        logical = access.eval([d0, d1], [s0])
        if not (0 <= logical[0] < 8 and 0 <= logical[1] < 12):
            continue
        assert composed.eval([d0, d1], [s0]) == layout_map.eval(list(logical), []), (d0, d1, s0)
        checked += 1
    assert checked


# Linear time ------------------------------------------------------------------------------------

_TYPES = [
    "memref<64x64xf32, affine_map<(d0, d1) -> (d0 floordiv 4, d1 floordiv 8, d0 mod 4, d1 mod 8)>>",
    "memref<32x48xf32, affine_map<(d0, d1) -> (d1, d0)>>",
    "memref<100xf32, affine_map<(d0) -> (d0 floordiv 16, d0 mod 16)>>",
]


def many_functions(count: int, accesses: int = 10) -> str:
    """`count` functions, each with `accesses` loads/stores on layout-mapped memrefs (affine
    and memref accesses) and a call to the previous function."""
    t0, t1, t2 = _TYPES
    signature = f"({t0}, {t1}, {t2}, index, index) -> {t0}"
    lines: list[str] = []
    for f in range(count):
        lines.append(
            f"func.func @f{f}(%A: {t0}, %C: {t1}, %B: {t2}, %i: index, %j: index) -> {t0} {{"
        )
        for a in range(accesses // 2):
            source, source_type = ("%A", t0) if a % 2 else ("%C", t1)
            lines.append(
                f'  %v{a} = "affine.load"({source}, %i, %j) <{{map = affine_map<(d0, d1) -> '
                f"(d0, d1 + {a})>}}> : ({source_type}, index, index) -> f32"
            )
            lines.append(f"  memref.store %v{a}, %B[%j] : {t2}")
        if f:
            lines.append(f"  %r = func.call @f{f - 1}(%A, %C, %B, %i, %j) : {signature}")
        lines.append(f"  func.return %A : {t0}")
        lines.append("}")
    return "\n".join(lines) + "\n"


def _normalize_time(module: ModuleOp) -> float:
    """CPU time of one run on a fresh clone of `module` (CPU time, not wall time, so other
    processes on the machine disturb the measurement less)."""
    fresh = module.clone()
    gc.collect()
    start = time.process_time()
    normalize_memref_layouts(fresh)
    return time.process_time() - start


def many_functions_module(count: int) -> ModuleOp:
    """`many_functions(count)` built by cloning (parsing large modules is slow)."""
    first, other = parse(many_functions(2)).ops
    assert isinstance(other, func.FuncOp)
    functions: list[Operation] = [first.clone()]
    for f in range(1, count):
        function = other.clone()
        function.sym_name = StringAttr(f"f{f}")
        for call in function.walk():
            if isinstance(call, func.CallOp):
                call.callee = SymbolRefAttr(f"f{f - 1}")
        functions.append(function)
    module = ModuleOp(functions)
    module.verify()
    return module


def test_time_is_linear_in_the_number_of_functions() -> None:
    # Same types in every function: the per-type work is done once, the rest is per op.
    small, large = many_functions_module(100), many_functions_module(200)
    _normalize_time(many_functions_module(5))  # warm up the caches shared by both sizes
    t_small = t_large = float("inf")
    for _ in range(3):  # interleaved, best of three
        t_small = min(t_small, _normalize_time(small))
        t_large = min(t_large, _normalize_time(large))
    assert t_large / t_small < 3.0, (t_small, t_large)


# Partial normalization (memrefs left with a warning) ------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
PARTIAL = ROOT / "test/transforms/apply-layout-memref-partial.mlir"
TOOLS = MlirTools.find()


def _parse_any(text: str) -> ModuleOp:
    return Parser(make_context(allow_unregistered=True), text).parse_module()


def _typed_results(module: ModuleOp) -> dict[tuple[str, ...], Attribute]:
    """Every memref type a function signature, allocation or call defines, keyed by
    (function, what, position); positions count allocations and calls in walk order."""
    types: dict[tuple[str, ...], Attribute] = {}
    for function in module.walk():
        if not isinstance(function, func.FuncOp):
            continue
        name = function.sym_name.data
        signature = function.function_type
        for kind, sig_types in (("in", signature.inputs), ("out", signature.outputs)):
            for k, typ in enumerate(sig_types):
                types[(name, kind, str(k))] = typ
        ordinal = 0
        for op in function.walk():
            if isinstance(op, memref.AllocOp | memref.AllocaOp | func.CallOp):
                for k, result in enumerate(op.results):
                    types[(name, op.name, str(ordinal), str(k))] = result.type
                ordinal += 1
    return types


@pytest.mark.skipif(TOOLS is None, reason="mlir-opt-22 not installed")
@pytest.mark.parametrize(
    "path", [PARTIAL, ROOT / "test/transforms/apply-layout-memref.mlir"], ids=lambda p: p.name
)
def test_types_agree_with_upstream_where_upstream_normalizes(path: Path) -> None:
    """On every memref that `mlir-opt -normalize-memrefs` normalizes, apply-layout gives the
    same type, except the maps it proves not injective (left, with a warning); it may
    normalize more (upstream leaves whole call graphs)."""
    assert TOOLS is not None
    source = _parse_any(path.read_text())
    generic = StringIO()
    Printer(generic, print_generic_format=True).print_op(source)
    done = subprocess.run(
        [TOOLS.opt, "-normalize-memrefs", "-allow-unregistered-dialect", "-mlir-print-op-generic"],
        input=generic.getvalue(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    upstream = _typed_results(_parse_any(done.stdout))
    ours_module = source.clone()
    ApplyLayoutPass().apply(make_context(allow_unregistered=True), ours_module)
    ours, before = _typed_results(ours_module), _typed_results(source)
    assert upstream.keys() == ours.keys() == before.keys()
    normalizations = MemRefNormalizations()
    agreed = finer = 0
    for key, original in before.items():
        if not is_layout_mapped(original) or is_layout_mapped(upstream[key]):
            finer += not is_layout_mapped(ours[key]) and is_layout_mapped(original)
            continue
        refusal = normalizations.refusal(original)
        if refusal is not None:
            assert "not injective" in refusal, (key, refusal)
            assert ours[key] == original
            continue
        assert ours[key] == upstream[key], key
        agreed += 1
    assert agreed >= 5
    if path == PARTIAL:
        assert finer >= 1  # the allocation in @chain_c, left by upstream with its call graph


def test_partial_normalization_is_numerically_sound(capsys: pytest.CaptureFixture[str]) -> None:
    """One function with a memref left (its map is not injective) and one normalized: the
    program computes the same before and after, and the warning names the left type."""
    text = """
func.func @f(%in: memref<8xf32>, %out: memref<8xf32>) {
  %T = memref.alloc() : memref<8xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>
  %S = memref.alloc() : memref<8xf32, affine_map<(d0) -> (d0 floordiv 2)>>
  affine.for %i = 0 to 8 {
    %v = "affine.load"(%in, %i) <{map = affine_map<(d0) -> (d0)>}> : (memref<8xf32>, index) -> f32
    "affine.store"(%v, %T, %i) <{map = affine_map<(d0) -> (7 - d0)>}> : (f32, memref<8xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>, index) -> ()
    "affine.store"(%v, %S, %i) <{map = affine_map<(d0) -> (d0)>}> : (f32, memref<8xf32, affine_map<(d0) -> (d0 floordiv 2)>>, index) -> ()
  }
  affine.for %i = 0 to 8 {
    %v = "affine.load"(%T, %i) <{map = affine_map<(d0) -> (d0)>}> : (memref<8xf32, affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>>, index) -> f32
    "affine.store"(%v, %out, %i) <{map = affine_map<(d0) -> (d0)>}> : (f32, memref<8xf32>, index) -> ()
  }
  func.return
}
"""
    data = np.arange(8, dtype=np.float32)
    before, after = compare_before_after(text, "f", [data, np.zeros(8, np.float32)])
    np.testing.assert_array_equal(np.asarray(before[1]), data[::-1])
    np.testing.assert_array_equal(np.asarray(after[1]), data[::-1])
    normalized = apply_pass(parse(text))
    types = [str(op.memref.type) for op in normalized.walk() if isinstance(op, memref.AllocOp)]
    assert types == ["memref<2x4xf32>", "memref<8xf32, affine_map<(d0) -> ((d0 floordiv 2))>>"]
    warnings = capsys.readouterr().err
    assert (
        "warning: apply-layout: left memref<8xf32, affine_map<(d0) -> ((d0 floordiv 2))>> "
        "unnormalized: its layout map is not injective on shape [8]"
    ) in warnings


def test_left_memrefs_are_returned_in_order() -> None:
    module = _parse_any(PARTIAL.read_text())
    left = normalize_memref_layouts(module)
    starts = [
        "layout result d1 - 100 has the negative minimum -100 on shape [2, 3]",
        "its layout map has symbols (it uses s0)",
        "its layout map is not injective on shape [10]",
        "it is used by 'test.opaque'",
        "it is used by 'memref.copy'",
    ]
    assert len(left) == len(starts)
    for item, start in zip(left, starts, strict=True):
        assert item.reason.startswith(start), (item.reason, start)
    assert left[3].also_in == ("chain_a", "chain_c", "chain_d")
    assert isinstance(left[3].op, builtin.UnregisteredOp)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            '  %f = "func.constant"() <{value = @g}> : () -> ((memref<16xf32, #tile>) -> ())\n',
            "its function @g is referenced by 'func.constant'",
        ),
        (
            "  func.call @nowhere(%A) : (memref<16xf32, #tile>) -> ()\n",
            "it is passed to or returned from @nowhere, which is not a function of this module",
        ),
        (
            '  %v = "affine.load"(%A, %n, %n) <{map = affine_map<(d0, d1) -> (d0 floordiv -2)>}> '
            ": (memref<16xf32, #tile>, index, index) -> f32\n",
            "it is accessed by 'affine.load' with the access map",
        ),
    ],
)
def test_uses_that_cannot_be_followed_leave_the_memref(body: str, reason: str) -> None:
    text = f"""
#tile = affine_map<(d0) -> (d0 floordiv 4, d0 mod 4)>
func.func @g(%A: memref<16xf32, #tile>) {{
  func.return
}}
func.func @h(%A: memref<16xf32, #tile>, %n: index) {{
  func.call @g(%A) : (memref<16xf32, #tile>) -> ()
{body}  func.return
}}
"""
    module = _parse_any(text)
    printed = str(module)
    left = normalize_memref_layouts(module)
    assert len(left) == 1 and reason in left[0].reason, left
    assert str(module) == printed
    with pytest.raises(PassFailedException, match=re.escape(reason)):
        normalize_memref_layouts(module, strict=True)


# apply-layout runs the normalization only on modules holding a memref type -----------------

_DECLARATION_ONLY = """
func.func private @ext(memref<4x6xf32, affine_map<(d0, d1) -> (d1, d0)>>)
"""
_GLOBAL_ONLY = """
"test.op"() {kept = memref<4x6xf32, affine_map<(d0, d1) -> (d1, d0)>>} : () -> ()
"""


def _lit_modules() -> list[str]:
    chunks: list[str] = []
    for path in sorted((ROOT / "test").rglob("*.mlir")):
        chunks += path.read_text().split("// -----")
    return chunks


def test_apply_layout_skips_normalization_exactly_when_it_would_do_nothing() -> None:
    """`holds_memref_type` False: `normalize_memref_layouts` changes and reports nothing (on
    every lit input that parses); True on a signature-only memref (which the normalization
    changes) and on one held only by an attribute."""
    from physlayout.transforms.apply_layout import holds_memref_type

    ctx = make_context()
    ctx.allow_unregistered = True
    seen = {True: 0, False: 0}
    for text in _lit_modules():
        try:
            module = Parser(ctx, text).parse_module()
        except Exception:
            continue
        holds = holds_memref_type(module)
        seen[holds] += 1
        if not holds:
            before = str(module)
            assert normalize_memref_layouts(module) == []
            assert str(module) == before
    assert seen[True] >= 5 and seen[False] >= 50
    declaration = Parser(ctx, _DECLARATION_ONLY).parse_module()
    assert holds_memref_type(declaration)
    before = str(declaration)
    normalize_memref_layouts(declaration)
    assert str(declaration) != before  # the declaration's signature is normalized
    held = Parser(ctx, _GLOBAL_ONLY).parse_module()
    assert holds_memref_type(held)  # (conservative: an attribute alone leaves no value)
