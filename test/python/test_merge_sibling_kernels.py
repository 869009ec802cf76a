"""merge-sibling-kernels: every host function of the lit test leaves the same values in
every buffer before and after the pass (buffer evaluator, with the work items of every
parallel loop run in lockstep, and one at a time in order and in reverse: a merged kernel
whose work items race shows in one of them), the merged models keep their outputs, and
planted bugs in each part of the proof (store windows, moving a launch down, a read of what
the other launch writes, a forwarded read of another work item's element) are caught on
values; random sequences of launches over shared buffers keep their values (hypothesis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from graph_harness import parse
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from physlayout.dialects.layout import BufferType
from physlayout.semantics.evaluator import run_function
from physlayout.transforms import merge_sibling_kernels
from physlayout.transforms.merge_sibling_kernels import MergeSiblingKernelsPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "test/graph/merge-sibling-kernels.mlir"


def hosts(module: ModuleOp) -> list[func.FuncOp]:
    return [
        f for f in module.ops
        if isinstance(f, func.FuncOp) and any(isinstance(c, func.CallOp) for c in f.walk())
    ]  # fmt: skip


def one_at_a_time(module: ModuleOp, reverse: bool) -> ModuleOp:
    """A copy of `module` whose `scf.parallel` loops (constant bounds, no reductions) are
    nests of `scf.for` loops: the work items one at a time, in order or in reverse. The
    evaluator runs a parallel loop's work items in lockstep, one op for all of them, which
    hides a race between the work items of a merged kernel; one of these orders shows it."""
    module = module.clone()
    for loop in [op for op in module.walk() if op.name == "scf.parallel"]:
        assert isinstance(loop, scf.ParallelOp) and not loop.results
        body = loop.body.block
        outer: scf.ForOp | None = None
        block: Block | None = None
        ivs: list[SSAValue] = []
        for lb, ub, step in zip(loop.lowerBound, loop.upperBound, loop.step, strict=True):
            low, high, stride = (const_evaluate_operand(v) for v in (lb, ub, step))
            assert low is not None and high is not None and stride is not None
            trip = max(0, -(-(high - low) // stride))
            inner = Block(arg_types=[IndexType()])
            consts = [arith.ConstantOp.from_int_and_width(v, IndexType()) for v in (0, trip, 1)]
            nest = scf.ForOp(consts[0], consts[1], consts[2], [], inner)
            if block is None:
                loop.parent_block().insert_ops_before([*consts, nest], loop)  # type: ignore[union-attr]
                outer = nest
            else:
                block.add_ops([*consts, nest])
                block.add_op(scf.YieldOp())
            k: SSAValue = inner.args[0]
            ops: list[arith.ConstantOp | arith.AddiOp | arith.MuliOp | arith.SubiOp] = []
            if reverse:
                last = arith.ConstantOp.from_int_and_width(trip - 1, IndexType())
                ops += [last, arith.SubiOp(last, k)]
                k = ops[-1].results[0]
            scale = arith.ConstantOp.from_int_and_width(stride, IndexType())
            start = arith.ConstantOp.from_int_and_width(low, IndexType())
            ops += [scale, start, arith.MuliOp(k, scale)]
            ops.append(arith.AddiOp(ops[-1], start))
            inner.add_ops(ops)
            ivs.append(ops[-1].results[0])
            block = inner
        assert outer is not None and block is not None
        for old, new in zip(body.args, ivs, strict=True):
            old.replace_all_uses_with(new)
        for op in list(body.ops):
            if op.name != "scf.reduce":
                op.detach()
                block.add_op(op)
        block.add_op(scf.YieldOp())
        loop.detach()
        loop.erase()
    return module


def run_hosts(module: ModuleOp, seed: int, order: str = "lockstep") -> dict[str, list[np.ndarray]]:
    """Every buffer argument of every host function after running it on seeded inputs,
    the work items of parallel loops in `order` ("lockstep", "forward", "reverse")."""
    if order != "lockstep":
        module = one_at_a_time(module, reverse=order == "reverse")
    results: dict[str, list[np.ndarray]] = {}
    for host in hosts(module):
        rng = np.random.default_rng(seed)
        args: list[np.ndarray] = []
        for t in host.function_type.inputs.data:
            assert isinstance(t, BufferType)
            args.append(rng.standard_normal(tuple(t.get_shape())).astype(np.float32))
        run_function(module, host.sym_name.data, args, vectorize_loops=order == "lockstep")
        results[host.sym_name.data] = args
    return results


def compare(text: str, seed: int = 0) -> ModuleOp:
    """The module after the pass, checked: every host's buffers as before it, in each order."""
    before = parse(text)
    after = parse(text)
    MergeSiblingKernelsPass().apply(make_context(), after)
    after.verify()
    for order in ("lockstep", "forward", "reverse"):
        expected, got = run_hosts(before, seed, order), run_hosts(after, seed, order)
        for name, values in expected.items():
            for k, (x, y) in enumerate(zip(values, got[name], strict=True)):
                np.testing.assert_array_equal(y, x, err_msg=f"@{name} argument {k} ({order})")
    return after


def launches(module: ModuleOp, name: str) -> int:
    (host,) = [h for h in hosts(module) if h.sym_name.data == name]
    return sum(1 for c in host.walk() if isinstance(c, func.CallOp))


@pytest.mark.parametrize("seed", [0, 1])
def test_merging_keeps_values(seed: int) -> None:
    after = compare(LIT.read_text(), seed)
    assert launches(after, "concat_windows") == 1
    assert launches(after, "moves_down") == 2
    assert launches(after, "layer_norm_stats") == 1
    for refused in ("other_row", "not_injective", "conditional_store", "texture_stats", "reader_writes",
                    "parameter_stats"):  # fmt: skip
        assert launches(after, refused) == 2
    again = parse(str(after))
    MergeSiblingKernelsPass().apply(make_context(), again)
    assert str(again) == str(after)


def test_planted_bug_in_the_window_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every pair of stores taken as disjoint, @overlapping_windows merges: a work item
    copies over channel 2 after another doubled into it."""
    original = merge_sibling_kernels._disjoint_stores  # pyright: ignore[reportPrivateUsage]

    def ranges_ignored(first: object, second: object, aliases: object) -> bool:
        def no_stores(launch: object) -> object:
            kernel = launch.kernel  # type: ignore[attr-defined]
            fake = merge_sibling_kernels.Kernel(kernel.function, kernel.loop, kernel.grid, kernel.reads, kernel.writes, ())  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            return merge_sibling_kernels.Launch(launch.call, fake)  # type: ignore[attr-defined]

        return original(no_stores(first), no_stores(second), aliases)  # type: ignore[arg-type]

    monkeypatch.setattr(merge_sibling_kernels, "_disjoint_stores", ranges_ignored)
    with pytest.raises(AssertionError, match="overlapping_windows"):
        compare(LIT.read_text())


def test_planted_bug_in_moving_down_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every launch movable, @blocked_by_writer doubles %x after it was scaled."""
    monkeypatch.setattr(merge_sibling_kernels, "_movable_past", lambda *args: True)  # pyright: ignore[reportUnknownLambdaType]
    with pytest.raises(AssertionError, match="blocked_by_writer"):
        compare(LIT.read_text())


def test_planted_bug_in_the_read_write_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a read of what the other launch writes allowed, @read_after_write reverses %t
    before every work item has written it."""

    def reads_ignored(launch: object) -> object:
        kernel = launch.kernel  # type: ignore[attr-defined]
        fake = merge_sibling_kernels.Kernel(kernel.function, kernel.loop, kernel.grid, frozenset(), kernel.writes, kernel.stores)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        return merge_sibling_kernels.Launch(launch.call, fake)  # type: ignore[attr-defined]

    original = merge_sibling_kernels._disjoint_stores  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(
        merge_sibling_kernels, "_disjoint_stores",
        lambda first, second, aliases: original(reads_ignored(first), reads_ignored(second), aliases),  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    )  # fmt: skip
    with pytest.raises(AssertionError, match="read_after_write"):
        compare(LIT.read_text())


def _rows_and(host: str) -> str:
    """The lit test's kernels, the row statistics' kernels and host function `@host`."""
    text = LIT.read_text()
    kernels = text.split("// ShuffleNet's unit:")[0]
    rows = text[text.index("// A row's mean") : text.index("// CHECK-LABEL: func.func @row_var_row_mean(")]
    start = text.index(f"\nfunc.func @{host}(") + 1
    return kernels + rows + text[start : text.index("\n}\n", start) + 3]


def test_planted_bug_in_the_forwarding_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a forwarded load allowed at any index, @other_row merges: in one order a work
    item reads the other row's mean before that row's work item stored it."""

    def any_index(first: Any, i: int, second: Any, j: int, aliases: Any) -> bool:
        return (
            first.call.operands[i] is second.call.operands[j]
            and i not in first.kernel.reads and j not in second.kernel.writes
        )  # fmt: skip

    text = _rows_and("other_row")
    assert launches(compare(text), "other_row") == 2
    monkeypatch.setattr(merge_sibling_kernels, "_forwarded", any_index)
    with pytest.raises(AssertionError, match=r"other_row argument 1 \((forward|reverse)\)"):
        compare(text)


def test_forwarded_kernel_runs_the_writer_first() -> None:
    """The merged kernel of @layer_norm_stats runs the mean's store before the variance's
    loads in each work item (its body in call order): in lockstep too, the variance then
    reads this run's mean, not the buffer's old contents."""
    after = compare(_rows_and("layer_norm_stats"))
    (merged,) = [f for f in after.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "row_var_row_mean"]
    names = [op.name for op in merged.walk() if op.name in ("layout.load", "layout.store")]
    assert names.index("layout.store") < names.index("layout.load", 1)


SIGNATURES = {
    "copy_lo": ("x", "cat"),
    "double_hi": ("x", "cat"),
    "double_mid": ("x", "cat"),
    "double": ("x", "x"),
    "reverse": ("x", "x"),
    "scale_in_place": ("x",),
    "copy_other_grid": ("x", "x"),
}
POOLS = {"x": ["%a", "%b", "%c", "%d"], "cat": ["%p", "%q"]}


def random_host(calls: list[tuple[str, list[int]]]) -> str:
    """The lit test's kernels and one host function @h making `calls` (kernel, argument
    picks from the pools of its parameters' kinds)."""
    kernels = LIT.read_text().split("// ShuffleNet's unit:")[0]
    lines = ["func.func @h(%a: !x, %b: !x, %c: !x, %d: !x, %p: !cat, %q: !cat) {"]
    for name, picks in calls:
        kinds = SIGNATURES[name]
        args = [POOLS[k][i % len(POOLS[k])] for k, i in zip(kinds, picks, strict=False)]
        types = ", ".join(f"!{k}" for k in kinds)
        lines.append(f"  func.call @{name}({', '.join(args)}) : ({types}) -> ()")
    lines += ["  func.return", "}"]
    return kernels + "\n".join(lines)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(sorted(SIGNATURES)), st.lists(st.integers(0, 3), min_size=2, max_size=2)),
        min_size=2,
        max_size=7,
    ),
    st.integers(0, 2**16),
)
def test_random_launch_sequences_keep_values(calls: list[tuple[str, list[int]]], seed: int) -> None:
    compare(random_host(calls), seed)


def test_long_chains_get_short_names() -> None:
    """Twelve independent doublings over one grid merge into one kernel whose name stays
    short (drivers refuse very long kernel names), with the values kept."""
    kernels = LIT.read_text().split("// ShuffleNet's unit:")[0]
    params = ", ".join(f"%s{k}: !x, %t{k}: !x" for k in range(12))
    calls = "\n".join(f"  func.call @double(%s{k}, %t{k}) : (!x, !x) -> ()" for k in range(12))
    after = compare(f"{kernels}\nfunc.func @h({params}) {{\n{calls}\n  func.return\n}}\n")
    assert launches(after, "h") == 1
    names = [f.sym_name.data for f in after.ops if isinstance(f, func.FuncOp)]
    assert max(len(n) for n in names) <= merge_sibling_kernels.MAX_NAME + 8, names
