"""Dead fills: a plan leaves out the fill of a storage whose next use is a kernel that
overwrites all of it without reading it (`lowering/opencl_coverage.py` proves the kernel
half, `runtime/plan_builder.dead_fills` the plan half).

Checked three ways: the coverage proof against brute force on random loops (extents of 1,
primes, steps, vector lanes, remainders, offsets); plans whose storages start as NaN
(what uninitialized device memory may hold) still compute the reference values; and the
planted bug: forcing out a fill the plan keeps (a padded or remainder write) changes the
values."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func

from physlayout.lowering.opencl_coverage import writes_whole
from physlayout.runtime.device import OpenCLRuntime, pyopencl_module
from physlayout.runtime.host import PlanRunner
from physlayout.runtime.opencl import compile_module, parse_module
from physlayout.runtime.plan import Fill, Plan, Step
from physlayout.runtime.plan_builder import build_plan
from physlayout.semantics.evaluator import run_function

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "examples" / "models"

# The coverage proof against brute force ---------------------------------------------------

Store = tuple[int, int, int, int, int, int]
"""(lower, upper, step, scale, shift, lanes): `for i = lower to upper step step`, a store of
`lanes` lanes at `i * scale + shift`."""


def _kernel(extent: int, stores: list[Store]) -> str:
    lines = [f"func.func @k(%b: !layout.buffer<{extent}xf32>, %v: f32) {{"]
    for k, (lower, upper, step, scale, shift, lanes) in enumerate(stores):
        value_type = "f32" if lanes == 1 else f"vector<{lanes}xf32>"
        value = "%v"
        if lanes > 1:
            lines.append(f"  %vec{k} = vector.broadcast %v : f32 to {value_type}")
            value = f"%vec{k}"
        lines += [
            f"  %lo{k} = arith.constant {lower} : index",
            f"  %hi{k} = arith.constant {upper} : index",
            f"  %st{k} = arith.constant {step} : index",
            f"  %sc{k} = arith.constant {scale} : index",
            f"  %sh{k} = arith.constant {shift} : index",
            f"  scf.for %i{k} = %lo{k} to %hi{k} step %st{k} {{",
            f"    %m{k} = arith.muli %i{k}, %sc{k} : index",
            f"    %j{k} = arith.addi %m{k}, %sh{k} : index",
            f"    layout.store {value}, %b[%j{k}] : !layout.buffer<{extent}xf32>, {value_type}",
            "  }",
        ]
    lines += ["  func.return", "}"]
    return "\n".join(lines)


def _covers(text: str, elements: int) -> bool:
    module = parse_module(text)
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return writes_whole(function, function.body.blocks[0].args[0], elements)


def _brute_force(extent: int, stores: list[Store]) -> bool:
    written: set[int] = set()
    for lower, upper, step, scale, shift, lanes in stores:
        for i in range(lower, upper, step):
            written.update(i * scale + shift + lane for lane in range(lanes))
    return set(range(extent)) <= written


_store = st.tuples(
    st.integers(0, 3), st.integers(0, 14), st.integers(1, 4), st.integers(1, 5),
    st.integers(-2, 3), st.sampled_from([1, 2, 4]),
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    extent=st.sampled_from([1, 2, 3, 5, 7, 8, 12, 13]),
    stores=st.lists(_store, min_size=1, max_size=3),
)
def test_coverage_matches_brute_force(extent: int, stores: list[Store]) -> None:
    assert _covers(_kernel(extent, stores), extent) == _brute_force(extent, stores)


@pytest.mark.parametrize(
    ("stores", "covers"),
    [
        ([(0, 13, 1, 1, 0, 1)], True),  # a prime extent, exactly
        ([(0, 12, 1, 1, 0, 1)], False),  # the remainder element 12 is missing
        ([(1, 12, 1, 1, 0, 1)], False),  # padding at both ends
        ([(0, 12, 4, 1, 0, 4), (12, 13, 1, 1, 0, 1)], True),  # texel body + scalar remainder
        ([(0, 7, 2, 2, 0, 2)], False),  # i * 2 with i in 0, 2, 4, 6: half of the buffer
    ],
)
def test_coverage_edge_cases(stores: list[Store], covers: bool) -> None:
    assert _covers(_kernel(13, stores), 13) == covers


CONDITIONAL = """
func.func @k(%b: !layout.buffer<4xf32>, %v: f32, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.if %flag {
      layout.store %v, %b[%i] : !layout.buffer<4xf32>, f32
    }
  }
  func.return
}
"""

LOADED_INDEX = """
func.func @k(%b: !layout.buffer<4xf32>, %idx: !layout.buffer<4xindex>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %j = layout.load %idx[%i] : !layout.buffer<4xindex>, index
    layout.store %v, %b[%j] : !layout.buffer<4xf32>, f32
  }
  func.return
}
"""

AT_OFFSET = """
func.func @k(%b: !layout.buffer<8xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = layout.data %b : !layout.buffer<8xf32> -> !layout.ptr<f32>
  %half = layout.decl_buffer %p offset 4 : !layout.ptr<f32> -> !layout.buffer<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    layout.store %v, %half[%i] : !layout.buffer<4xf32>, f32
  }
  func.return
}
"""

TEXTURE_ROWS = """
func.func @k(%t: !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, %v: f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %rows = arith.constant {rows} : index
  %c4 = arith.constant 4 : index
  %vec = vector.broadcast %v : f32 to vector<4xf32>
  scf.parallel (%r, %x) = (%c0, %c0) to (%rows, %c2) step (%c1, %c1) {{
    %col = arith.muli %x, %c4 : index
    layout.store %vec, %t[%r, %col] : !layout.buffer<3x8xf32, axis_separators = [1], scope = "global.texture">, vector<4xf32>
    scf.reduce
  }}
  func.return
}}
"""


def test_conditional_loaded_and_offset_stores_do_not_cover() -> None:
    assert not _covers(CONDITIONAL, 4)
    assert not _covers(LOADED_INDEX, 4)
    assert not _covers(AT_OFFSET, 8)


@pytest.mark.parametrize(("rows", "covers"), [(3, True), (2, False)])
def test_texture_rows_of_texels(rows: int, covers: bool) -> None:
    assert _covers(TEXTURE_ROWS.format(rows=rows), 24) == covers


# Plans, on values ------------------------------------------------------------------------

HOST = """
func.func @write(%x: !layout.buffer<12xf32>, %t: !layout.buffer<12xf32>) {{
  %lo = arith.constant {lower} : index
  %hi = arith.constant {upper} : index
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {{
    %v = layout.load %x[%i] : !layout.buffer<12xf32>, f32
    layout.store %v, %t[%i] : !layout.buffer<12xf32>, f32
  }}
  func.return
}}
func.func @copy(%t: !layout.buffer<12xf32>, %y: !layout.buffer<12xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  scf.for %i = %c0 to %c12 step %c1 {{
    %v = layout.load %t[%i] : !layout.buffer<12xf32>, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %y[%i] : !layout.buffer<12xf32>, f32
  }}
  func.return
}}
func.func @main(%x: !layout.buffer<12xf32>, %y: !layout.buffer<12xf32>) {{
  %p = layout.allocate [12] : !layout.ptr<f32>
  %t = layout.decl_buffer %p : !layout.ptr<f32> -> !layout.buffer<12xf32>
  func.call @write(%x, %t) : (!layout.buffer<12xf32>, !layout.buffer<12xf32>) -> ()
  func.call @copy(%t, %y) : (!layout.buffer<12xf32>, !layout.buffer<12xf32>) -> ()
  func.return
}}
"""

WRITES = {"whole": (0, 12), "padding": (1, 11), "remainder": (0, 11)}
"""The part of the allocation `@write` writes: all of it, its interior, all but the last."""


def _poisoned_run(plan: Plan, steps: tuple[Step, ...], compiled: Any, x: np.ndarray) -> np.ndarray:
    """Run `steps` of `plan` with every storage first holding NaN (as uninitialized device
    memory may); the output `y`."""
    cl = pyopencl_module()
    runtime = compiled.runtime
    runner = PlanRunner(plan, runtime, compiled.cl_program, kernels=compiled.cl_kernels)
    runner.ready(steps)
    for storage in runner.storage.values():
        size = max(1, int(np.prod(storage.physical_shape))) * storage.dtype.itemsize
        cl.enqueue_fill_buffer(runtime.queue, storage.memory, np.float32(np.nan), 0, size)
    return runner.run(steps, {"x": x}).outputs["y"]


@pytest.mark.parametrize("part", list(WRITES))
def test_only_fills_of_whole_writes_are_left_out(runtime: OpenCLRuntime, part: str) -> None:
    lower, upper = WRITES[part]
    compiled = compile_module(HOST.format(lower=lower, upper=upper), runtime)
    plan = build_plan(compiled, "main")
    filled = [plan.storages[s.storage].name for s in plan.steps if isinstance(s, Fill)]
    # `@copy` writes all of %y: its pad fill is always dead; the allocation's only for "whole"
    assert filled == ([] if part == "whole" else ["p"])
    x = np.arange(1, 13, dtype=np.float32)
    reference = np.zeros(12, np.float32)
    run_function(compiled.source, "main", [x.copy(), reference])
    np.testing.assert_array_equal(_poisoned_run(plan, plan.steps, compiled, x), reference)
    if part == "whole":
        return
    # the planted bug: a plan that leaves out the fill of the partial write anyway
    forced = tuple(s for s in plan.steps if not isinstance(s, Fill))
    wrong = _poisoned_run(plan, forced, compiled, x)
    unwritten = [k for k in range(12) if not lower <= k < upper]
    assert np.isnan(wrong[unwritten]).all()
    assert not np.isnan(reference).any()


def test_without_elision_every_fill_stays(runtime: OpenCLRuntime) -> None:
    compiled = compile_module(HOST.format(lower=0, upper=12), runtime)
    plan = build_plan(compiled, "main", elide_fills=False)
    assert sum(isinstance(s, Fill) for s in plan.steps) == 2


# Models ----------------------------------------------------------------------------------


def _model(name: str) -> tuple[Any, np.ndarray, np.ndarray]:
    import physlayout

    sys.path.insert(0, str(ROOT / "bench"))
    from results import model_inputs  # pyright: ignore[reportMissingImports]

    path = MODELS / f"{name}.mlir"
    arrays: dict[str, np.ndarray] = model_inputs(path)
    first = next(iter(arrays))
    params = {k: v for k, v in arrays.items() if k != first}
    model = physlayout.compile(str(path), params=params)
    expected = np.load(path.with_suffix(".expected.npz"))["result0"]
    return model, arrays[first], expected


def _poison(model: Any, steps: tuple[Step, ...]) -> None:
    """Fill every storage the call's steps allocate (and the outputs) with NaN."""
    cl = pyopencl_module()
    runner = model.session.runner
    runner.ready(steps)
    plan = model.plan
    for index, storage in runner.storage.items():
        if plan.storages[index].role not in ("allocation", "param"):
            continue
        if storage.kind == "texture":
            rows, cols = storage.physical_shape
            color = np.full(4, np.nan, np.float32)
            cl.enqueue_fill_image(
                runner.runtime.queue, storage.memory, color, (0, 0), (cols // 4, rows)
            )
        elif storage.dtype.kind == "f":
            size = max(1, int(np.prod(storage.physical_shape))) * storage.dtype.itemsize
            poison = np.asarray(np.nan, storage.dtype)
            cl.enqueue_fill_buffer(runner.runtime.queue, storage.memory, poison, 0, size)
    runner.runtime.queue.finish()


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("name", ["bottleneck", "espcn_pixelshuffle"])
def test_models_with_poisoned_storage_match_pytorch(runtime: OpenCLRuntime, name: str) -> None:
    """Every kernel of these two overwrites what it writes (espcn's input transform writes
    one channel into texels of four, and the pad value into the other three lanes, under
    an `scf.if`): no fill is left, and storage that starts as NaN changes nothing."""
    del runtime
    model, x, expected = _model(name)
    assert not [s for s in model.plan.steps if isinstance(s, Fill)]
    _poison(model, model.plan.steps)
    for _ in range(2):  # the second call sees what the first left in the storages
        assert _relative(model(x), expected) < 1e-5


GUARDED = """
func.func @k(%b: !layout.buffer<{extent}xf32>, %v: f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %tiles = arith.constant {tiles} : index
  %n = arith.constant {extent} : index
  scf.for %t = %c0 to %tiles step %c1 {{
    %base = arith.muli %t, %c3 : index
    %i1 = arith.addi %base, %c1 : index
    %two = arith.constant 2 : index
    %i2 = arith.addi %base, %two : index
    layout.store %v, %b[%base] : !layout.buffer<{extent}xf32>, f32
    %in1 = arith.cmpi {predicate}, %i1, %n : index
    scf.if %in1 {{
      layout.store %v, %b[%i1] : !layout.buffer<{extent}xf32>, f32
    }}
    %in2 = arith.cmpi slt, %i2, %n : index
    scf.if %in2 {{
      layout.store %v, %b[%i2] : !layout.buffer<{extent}xf32>, f32
    }} else {{
      layout.store %v, %b[%base] : !layout.buffer<{extent}xf32>, f32
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize(
    ("extent", "tiles", "predicate", "covers"),
    [
        (7, 3, "slt", True),  # tiles of 3 over 7: the last tile's guards hold for 6 only
        (9, 3, "slt", True),
        (7, 3, "sge", False),  # the guard of the middle store inverted
        (8, 2, "slt", False),  # one tile short: 6 and 7 are never written
    ],
)
def test_remainder_guards_are_modelled(
    extent: int, tiles: int, predicate: str, covers: bool
) -> None:
    text = GUARDED.format(extent=extent, tiles=tiles, predicate=predicate)
    assert _covers(text, extent) == covers


CLAMPED = """
func.func @k(%b: !layout.buffer<7xf32>, %v: f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c0 to %c7 step %c4 {{
    layout.store %v, %b[%i] : !layout.buffer<7xf32>, f32
    %m = arith.addi %i, %c1 : index
    layout.store %v, %b[%m] : !layout.buffer<7xf32>, f32
    %j = arith.addi %i, %c2 : index
    %k = arith.{clamp} %j, %c6 : index
    layout.store %v, %b[%k] : !layout.buffer<7xf32>, f32
    %n = arith.addi %i, %c3 : index
    %in = arith.cmpi {predicate}, %n, %c7 : index
    scf.if %in {{
      layout.store %v, %b[%n] : !layout.buffer<7xf32>, f32
    }}
  }}
  func.return
}}
"""


@pytest.mark.parametrize(
    ("clamp", "predicate", "covers"),
    [("minsi", "slt", True), ("maxsi", "slt", False), ("minsi", "sgt", False)],
)
def test_clamped_indices_are_modelled(clamp: str, predicate: str, covers: bool) -> None:
    """i in {0, 4}: stores at i, i + 1, min(i + 2, 6) and, where i + 3 < 7, at i + 3: all
    of 0..6. With max(i + 2, 6) element 2 is missing; with the guard i + 3 > 7, 3."""
    assert _covers(CLAMPED.format(clamp=clamp, predicate=predicate), 7) == covers


def test_too_many_iterations_are_not_examined(monkeypatch: pytest.MonkeyPatch) -> None:
    from physlayout.lowering import opencl_coverage

    text = _kernel(13, [(0, 13, 1, 1, 0, 1)])
    assert _covers(text, 13)
    monkeypatch.setattr(opencl_coverage, "MAX_POINTS", 12)
    assert not _covers(text, 13)  # the fill stays
