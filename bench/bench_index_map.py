"""Benchmark of the IndexMap engine (a script, not a test; about 20 s).

Prints how long the exact (isl) proofs and the inverse take on 4-D and 5-D maps (cold:
caches cleared before every call), how fast `map_indices` evaluates, and the speed-up of the
vectorized `map_indices` / `map_ndarray` over a plain Python loop that evaluates the map
index by index.

Run: ``python bench/bench_index_map.py`` (with physlayout installed); writes its section of
bench/RESULTS.md.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
from results import machine, write_section

from physlayout.indexing.index_map import IndexMap, clear_caches

MAPS: list[tuple[str, IndexMap, list[int]]] = [
    (
        "4-D NHWC -> NCHW4c",
        IndexMap.parse("(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)"),
        [16, 64, 64, 128],
    ),
    (
        "4-D NCHW -> NHWC",
        IndexMap.from_layouts("NCHW", "NHWC"),
        [16, 128, 64, 64],
    ),
    (
        "5-D NCDHW -> NCDHW8c (padded C)",
        IndexMap.parse("(n, c, d, h, w) -> (n, c floordiv 8, d, h, w, c mod 8)"),
        [4, 30, 16, 32, 32],
    ),
    (
        "5-D NCHW4c -> NCHW16c",
        IndexMap.from_layouts("NCHW4c", "NCHW16c"),
        [8, 32, 56, 56, 4],
    ),
]


def best_of(func: Callable[[], object], repeat: int, cold: bool) -> float:
    """Median wall time of `func` in seconds over `repeat` runs."""
    times: list[float] = []
    for _ in range(repeat):
        if cold:
            clear_caches()
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def python_loop_map(imap: IndexMap, shape: list[int]) -> list[list[int]]:
    """The plain Python baseline: evaluate the map index by index."""
    return [[int(v) for v in imap.map_indices(list(idx))] for idx in np.ndindex(*shape)]


def python_loop_ndarray(imap: IndexMap, x: np.ndarray) -> np.ndarray:
    """The plain Python baseline of `map_ndarray` (no padding in the benchmark maps)."""
    out = np.zeros(imap.map_shape(x.shape), dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        out[tuple(int(v) for v in imap.map_indices(list(idx)))] = x[idx]
    return out


def small_shape(shape: list[int], points: int) -> list[int]:
    """Shrink `shape` (halving its largest extents) to at most `points` points."""
    result = list(shape)
    while np.prod(result) > points:
        k = result.index(max(result))
        result[k] = max(1, result[k] // 2)
    return result


TITLE = "## IndexMap engine (bench_index_map.py)"


def main() -> None:
    lines = [
        machine(),
        "Cold: caches cleared before every proof/inverse. `map_indices` is one index (median",
        "of 2000); \"loop\" is a plain Python loop over every index of the shape, \"vector\"",
        "the engine's numpy evaluation of all of them at once.",
        "",
        "| map | is_injective | inverse | padding | map_indices |",
        "|---|---|---|---|---|",
    ]
    for name, imap, shape in MAPS:
        injective = best_of(lambda imap=imap, shape=shape: imap.is_injective(shape), 5, True)
        inverse = best_of(
            lambda imap=imap, shape=shape: imap.non_surjective_inverse(shape), 5, True
        )
        padding = best_of(lambda imap=imap, shape=shape: imap.padding_predicate(shape), 5, True)
        index = [min(3, e - 1) for e in shape]
        scalar = best_of(lambda imap=imap, index=index: imap.map_indices(index), 2000, False)
        lines.append(
            f"| {name} | {injective * 1e3:.2f} ms | {inverse * 1e3:.2f} ms | "
            f"{padding * 1e3:.2f} ms | {scalar * 1e6:.2f} us |"
        )
        print(lines[-1], flush=True)
    lines += ["", "| operation (shape) | Python loop | vectorized | ratio |", "|---|---|---|---|"]
    for name, imap, shape in MAPS:
        loop_shape = small_shape(shape, 16384)
        grids = [g.ravel() for g in np.indices(loop_shape)]
        loop = best_of(lambda imap=imap, s=loop_shape: python_loop_map(imap, s), 1, False)
        vector = best_of(lambda imap=imap, g=grids: imap.map_indices(list(g)), 5, False)
        lines.append(
            f"| map_indices {name} {loop_shape} | {loop:.3f} s | {vector * 1e3:.2f} ms | "
            f"{loop / vector:.0f}x |"
        )
        print(lines[-1], flush=True)
        x = np.arange(int(np.prod(loop_shape)), dtype=np.float32).reshape(loop_shape)
        loop = best_of(lambda imap=imap, x=x: python_loop_ndarray(imap, x), 1, False)
        vector = best_of(lambda imap=imap, x=x: imap.map_ndarray(x, pad_value=0), 5, False)
        np.testing.assert_array_equal(python_loop_ndarray(imap, x), imap.map_ndarray(x, 0))
        lines.append(
            f"| map_ndarray {name} {loop_shape} | {loop:.3f} s | {vector * 1e3:.2f} ms | "
            f"{loop / vector:.0f}x |"
        )
        print(lines[-1], flush=True)
    name, imap, shape = MAPS[0]
    x = np.zeros(shape, dtype=np.float32)
    full = best_of(lambda: imap.map_ndarray(x), 3, False)
    points = int(np.prod(shape))
    lines += [
        "",
        f"`map_ndarray` {name} on {shape} ({points / 1e6:.1f}M elements): {full * 1e3:.0f} ms "
        f"({full / points * 1e9:.1f} ns/element).",
    ]
    print(lines[-1])
    write_section(TITLE, lines)


if __name__ == "__main__":
    main()
