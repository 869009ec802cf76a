"""Matmul kernels over blocks of output columns (issue 42): `vectorize-texels{vector-width}`
splits a reduction kernel's innermost output dimension into blocks of `vector<W>` lanes
(`SplitContiguousLaneDimension`), `apply-schedules` then tiles rows x blocks in registers.

Every check is on values: `linalg.matmul` / `linalg.batch_matmul` graphs (random M, N, K
with extents of 1 and primes, operands transposed by a `linalg.transpose` or not, a bias
and relu epilogue) lowered with and without the split, then with random tiles (larger
than the extent included: the rows' and the blocks' remainders), are evaluated by the
numpy buffer evaluator on the same seeded inputs and must equal each other bit-exactly
(the split computes each output's multiply-adds in the IR order, one lane each), and the
graph evaluator's result; on the OpenCL device the heuristic's schedule must give the
evaluator's values bit-exactly. Planted bugs (the last block of columns skipped, one
accumulator shared by a tile's elements) must fail the same checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_apply_schedules import (
    PHASES,
    TILE_VALUES,
    ValueMismatch,
    check_schedules,
    evaluate,
    host_inputs,
    kernels,
    lowered,
    run_on_device,
    scheduled,
)
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, VectorType

from physlayout.dialects.layout import LoadOp, StoreOp
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.opencl import parse_module
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms import vectorize_texels
from physlayout.transforms.apply_schedules import TileCloner, kernel_loop
from physlayout.transforms.schedule_heuristic import DeviceModel, default_schedule
from physlayout.universe import make_context


def matmul_graph(
    m: int, n: int, k: int, *, batch: int = 0, transpose_a: bool = False, transpose_b: bool = False
) -> str:
    """`@main(a, b, bias)`: relu(a @ b + bias), `a` given as [K, M] when `transpose_a` and
    `b` as [N, K] when `transpose_b` (a `linalg.transpose` makes the operand), a batch of
    `batch` when it is not 0 (`linalg.batch_matmul`)."""
    lead = [batch] if batch else []

    def tensor(*dims: int) -> str:
        return "tensor<" + "x".join(str(d) for d in (*lead, *dims)) + "xf32>"

    perm = "[0, 2, 1]" if batch else "[1, 0]"
    lines: list[str] = []
    a_arg = tensor(k, m) if transpose_a else tensor(m, k)
    b_arg = tensor(n, k) if transpose_b else tensor(k, n)
    a, b = "%a", "%b"
    if transpose_a:
        lines.append(f"  %ea = tensor.empty() : {tensor(m, k)}")
        lines.append(
            f"  %ta = linalg.transpose ins(%a : {a_arg}) outs(%ea : {tensor(m, k)}) "
            f"permutation = {perm}"
        )
        a = "%ta"
    if transpose_b:
        lines.append(f"  %eb = tensor.empty() : {tensor(k, n)}")
        lines.append(
            f"  %tb = linalg.transpose ins(%b : {b_arg}) outs(%eb : {tensor(k, n)}) "
            f"permutation = {perm}"
        )
        b = "%tb"
    out = tensor(m, n)
    op = "linalg.batch_matmul" if batch else "linalg.matmul"
    dims = "(z, i, j)" if batch else "(i, j)"
    kinds = ", ".join(['"parallel"'] * (3 if batch else 2))
    lines += [
        "  %zero = arith.constant 0.0 : f32",
        f"  %e = tensor.empty() : {out}",
        f"  %init = linalg.fill ins(%zero : f32) outs(%e : {out}) -> {out}",
        f"  %mm = {op} ins({a}, {b} : {tensor(m, k)}, {tensor(k, n)}) outs(%init : {out}) -> {out}",
        f"  %e2 = tensor.empty() : {out}",
        f"  %r = linalg.generic {{indexing_maps = [affine_map<{dims} -> {dims}>, "
        f"affine_map<{dims} -> (j)>, affine_map<{dims} -> {dims}>], iterator_types = [{kinds}]}} "
        f"ins(%mm, %bias : {out}, tensor<{n}xf32>) outs(%e2 : {out}) {{",
        "  ^bb0(%v: f32, %c: f32, %o: f32):",
        "    %s = arith.addf %v, %c : f32",
        "    %y = arith.maximumf %s, %zero : f32",
        "    linalg.yield %y : f32",
        f"  }} -> {out}",
        f"  func.return %r : {out}",
    ]
    header = f"func.func @main(%a: {a_arg}, %b: {b_arg}, %bias: tensor<{n}xf32>) -> {out} {{"
    return "\n".join([header, *lines, "}"]) + "\n"


def vector_widths(module: ModuleOp) -> set[int]:
    """The lanes of the vector loads and stores of `module`'s kernels."""
    found: set[int] = set()
    for op in module.walk():
        if isinstance(op, LoadOp | StoreOp):
            kind = op.result.type if isinstance(op, LoadOp) else op.value.type
            if isinstance(kind, VectorType):
                found.add(kind.get_shape()[0])
    return found


def matmul_kernel(module: ModuleOp) -> func.FuncOp:
    """The kernel holding the reduction (the matmul)."""
    return next(
        kernel
        for kernel in kernels(module)
        if any(op.name == "scf.for" and op.results for op in kernel.walk())
    )


def row_block_tile(kernel: func.FuncOp, rows: int, blocks: int) -> list[int]:
    """A tile of `rows` x `blocks` for the matmul kernel's loop (1 on batch axes; a loop
    left with one axis, the columns being one block, takes `rows`)."""
    loop = kernel_loop(kernel)
    assert loop is not None
    rank = len(loop.lowerBound)
    return [rows] if rank == 1 else [1] * (rank - 2) + [rows, blocks]


def graph_result(text: str, module: ModuleOp, inputs: list[np.ndarray]) -> np.ndarray:
    """The graph evaluator's result of `text` on the inputs `host_inputs` gave the lowered
    `module` (its `@main` takes the graph's arguments, then the result)."""
    (result,) = run_graph(parse_module(text), "main", inputs[:-1])
    return np.asarray(result)


@pytest.mark.parametrize(
    ("n", "width", "lanes"),
    [(16, 8, {8}), (24, 8, {8}), (12, 8, {4}), (4, 8, {4}), (16, 4, {4}), (10, 8, set()),
     (7, 8, set()), (1, 8, set()), (16, 1, set())],
)  # fmt: skip
def test_columns_split_by_the_widest_block_that_divides_them(
    n: int, width: int, lanes: set[int]
) -> None:
    module = lowered(matmul_graph(5, n, 7), vector_width=width)
    assert vector_widths(matmul_kernel(module)) == lanes


def test_transposed_right_operand_is_split_once_prepared() -> None:
    """`b` transposed is read in place (`b[j, k]`: a block of columns would gather one
    scalar per lane and step): the kernel keeps scalar columns. With prepared parameters
    the transpose runs once in `@main_prepare` and the matmul reads its result by rows, in
    blocks. `a` transposed is read at one index per row (a scalar per step) and splits."""
    text = matmul_graph(5, 16, 7, transpose_b=True)
    assert not vector_widths(matmul_kernel(lowered(text, vector_width=8)))
    assert vector_widths(matmul_kernel(lowered(text, vector_width=8, lift_params=True))) == {8}
    split = lowered(matmul_graph(5, 16, 7, transpose_a=True), vector_width=8)
    assert vector_widths(matmul_kernel(split)) == {8}


@st.composite
def matmul_cases(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "m": draw(st.sampled_from([1, 2, 3, 5, 8, 13])),
        "n": draw(st.sampled_from([1, 3, 4, 8, 12, 16, 24, 40])),
        "k": draw(st.sampled_from([1, 2, 7, 16])),
        "batch": draw(st.sampled_from([0, 0, 1, 2])),
        "transpose_a": draw(st.booleans()),
        "transpose_b": draw(st.booleans()),
    }


@settings(
    max_examples=25, deadline=None, phases=PHASES, suppress_health_check=list(HealthCheck)
)
@given(case=matmul_cases(), width=st.sampled_from([4, 8]), seed=st.integers(0, 3))
def test_split_and_tiled_matmuls_are_exact(case: dict[str, Any], width: int, seed: int) -> None:
    text = matmul_graph(**case)
    plain = lowered(text, vector_width=1)
    split = lowered(text, vector_width=width)
    inputs = host_inputs(plain, seed)
    expected = evaluate(plain, inputs)
    got = evaluate(split, inputs)
    for e, g in zip(expected, got, strict=True):
        assert np.array_equal(e, g), case
    assert np.array_equal(expected[-1], graph_result(text, plain, inputs)), case
    kernel = matmul_kernel(split)
    for rows, blocks in [(1, 1), (2, 3), (5, 2), (16, 8)]:
        tile = row_block_tile(kernel, rows, blocks)
        check_schedules(split, {kernel.sym_name.data: tile}, seed)


@settings(max_examples=15, deadline=None, phases=PHASES, suppress_health_check=list(HealthCheck))
@given(
    case=matmul_cases(),
    rows=st.sampled_from(TILE_VALUES),
    blocks=st.sampled_from(TILE_VALUES),
)
def test_random_tiles_of_split_matmuls_are_exact(
    case: dict[str, Any], rows: int, blocks: int
) -> None:
    split = lowered(matmul_graph(**case), vector_width=4)
    kernel = matmul_kernel(split)
    check_schedules(split, {kernel.sym_name.data: row_block_tile(kernel, rows, blocks)})


PLANTED = matmul_graph(5, 24, 7)
"""Three blocks of eight columns, five rows: tiles of 2 x 2 leave both remainders."""


def test_planted_skipped_last_block_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    original = vectorize_texels._split_lane_dimension  # pyright: ignore[reportPrivateUsage]

    def drop_last_block(op: Any, lanes: int) -> Any:
        split = original(op, lanes)
        if split is not None and split.constants:
            count = split.constants[-1]
            assert isinstance(count, arith.ConstantOp)
            assert isinstance(count.value, IntegerAttr)
            count.value = IntegerAttr(count.value.value.data - 1, IndexType())
        return split

    monkeypatch.setattr(vectorize_texels, "_split_lane_dimension", drop_last_block)
    plain = lowered(PLANTED, vector_width=1)
    split = lowered(PLANTED, vector_width=8)
    assert vector_widths(matmul_kernel(split)) == {8}
    inputs = host_inputs(plain, 0)
    expected, got = evaluate(plain, inputs), evaluate(split, inputs)
    assert not np.array_equal(expected[-1], got[-1])


def test_planted_shared_accumulator_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    original = TileCloner.jam

    def shared(self: TileCloner, op: Any, axes: frozenset[int], point: Any) -> None:
        original(self, op, frozenset(), point)  # one vector accumulator for the whole tile
        for value in (*op.body.block.args[1:], *op.results):
            self.deps[value] = axes

    split = lowered(PLANTED, vector_width=8)
    name = matmul_kernel(split).sym_name.data
    check_schedules(split, {name: (2, 2)})
    monkeypatch.setattr(TileCloner, "jam", shared)
    with pytest.raises(ValueMismatch):
        check_schedules(split, {name: (2, 2)})


def test_heuristic_counts_a_register_wide_accumulator_as_a_float4() -> None:
    """With eight-lane registers a `vector<8>` accumulator takes one register as a `float4`
    does: within the CPU budget (32) the heuristic keeps eight of them for a 64 x 64 x 32
    matmul, where counting its eight lanes would allow four."""
    split = lowered(matmul_graph(64, 64, 32), vector_width=8)
    loop = kernel_loop(matmul_kernel(split))
    assert loop is not None
    wide = default_schedule(loop, DeviceModel(registers=32, vector_width=8))
    narrow = default_schedule(loop, DeviceModel(registers=32, vector_width=4))
    assert wide is not None and narrow is not None
    assert int(np.prod(wide.tile)) == 8, wide
    assert int(np.prod(narrow.tile)) == 4, narrow


@pytest.mark.parametrize(
    "case",
    [dict(m=13, n=24, k=7), dict(m=5, n=40, k=16, transpose_a=True), dict(m=3, n=12, k=1),
     dict(m=8, n=16, k=7, batch=2), dict(m=1, n=8, k=2, transpose_b=True)],
)  # fmt: skip
@pytest.mark.parametrize("width", [4, 8])
def test_split_matmuls_on_the_device(runtime: Any, case: dict[str, Any], width: int) -> None:
    """The heuristic's schedule of the split kernels, in OpenCL C (`floatN` loads and
    accumulators), gives the evaluator's values bit-exactly."""
    text = matmul_graph(**case)
    module = parse_module(text)
    PhyslayoutAdrenoPass(vector_width=width, registers=32).apply(make_context(), module)
    unscheduled = scheduled(lowered(text, vector_width=width), {})
    inputs = host_inputs(unscheduled, 1)
    reference = evaluate(unscheduled, inputs)
    got = run_on_device(runtime, module, inputs)
    for e, g in zip(reference, got, strict=True):
        assert np.array_equal(e, g), case
