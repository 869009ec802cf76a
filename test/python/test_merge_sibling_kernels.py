"""merge-sibling-kernels: every host function of the lit test leaves the same values in
every buffer before and after the pass (buffer evaluator), the merged models keep their
outputs, and planted bugs in each part of the proof (store windows, moving a launch down,
a read of what the other launch writes) are caught on values; random sequences of launches
over shared buffers keep their values (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graph_harness import parse
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

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


def run_hosts(module: ModuleOp, seed: int) -> dict[str, list[np.ndarray]]:
    """Every buffer argument of every host function after running it on seeded inputs."""
    results: dict[str, list[np.ndarray]] = {}
    for host in hosts(module):
        rng = np.random.default_rng(seed)
        args: list[np.ndarray] = []
        for t in host.function_type.inputs.data:
            assert isinstance(t, BufferType)
            args.append(rng.standard_normal(tuple(t.get_shape())).astype(np.float32))
        run_function(module, host.sym_name.data, args)
        results[host.sym_name.data] = args
    return results


def compare(text: str, seed: int = 0) -> ModuleOp:
    before = parse(text)
    after = parse(text)
    MergeSiblingKernelsPass().apply(make_context(), after)
    after.verify()
    expected, got = run_hosts(before, seed), run_hosts(after, seed)
    for name, values in expected.items():
        for k, (x, y) in enumerate(zip(values, got[name], strict=True)):
            np.testing.assert_array_equal(y, x, err_msg=f"@{name} argument {k}")
    return after


def launches(module: ModuleOp, name: str) -> int:
    (host,) = [h for h in hosts(module) if h.sym_name.data == name]
    return sum(1 for c in host.walk() if isinstance(c, func.CallOp))


@pytest.mark.parametrize("seed", [0, 1])
def test_merging_keeps_values(seed: int) -> None:
    after = compare(LIT.read_text(), seed)
    assert launches(after, "concat_windows") == 1
    assert launches(after, "moves_down") == 2
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
