"""Whose code a model's compile time is spent in: physlayout's, xDSL's, or the libraries
physlayout calls (islpy, numpy), per model and per pass (issue 28: "write down what is
xDSL's"; a script, not a test).

For each model of the models folder (as `bench_compile.py`: `examples/models` of the
repository, or `--models DIR`), `bench_compile.time_passes` runs
`raise-layout-rewrites` and `physlayout-adreno`'s passes in this process, verifying as the
pipelines do, while a thread samples the main thread's stack every millisecond; a second,
unsampled run gives the seconds. A
sample belongs to the innermost frame on its stack that is in physlayout's package, in
xDSL's or in islpy's or numpy's; frames of the standard library (the `__init__`, `__eq__`
and `__hash__` that `dataclasses` generates for xDSL's attributes, `abc`'s instance checks)
count for the code that called them. Each pass's CPU seconds, and those of the
verification after it, are split by the shares of their own samples (a sample is of the
verification while `verify_module` is on the stack).

"If physlayout's code took no time" is the whole run of `xdsl-opt FILE -p PIPELINE` (the
median of `--pairs` subprocess runs alternating with the floor's, CPU seconds) less the
seconds attributed to physlayout's code, over the floor `xdsl-opt FILE` (parse + print): a
bound that no speed-up of physlayout's own Python could pass while the pipeline builds,
walks and verifies the ops it does. "And nothing verified after each pass" also takes
away all the verifications' seconds (the driver's own verifications stay): what would be
left of xDSL's work in the passes themselves.

Run: ``python bench/bench_owners.py [--models DIR] [--only NAME,...] [--no-write]``; writes
its section of bench/RESULTS.md.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from bench_compile import PIPELINE, ModelTiming, floor_and_whole, time_passes
from results import machine, models_main

from physlayout.verification import verify_module

TITLE = "## Whose code the compile time is spent in (bench_owners.py)"
OWNERS = ("physlayout", "xDSL", "islpy/numpy")
PERIOD = 0.001
"""Seconds between samples; while sampling, Python is asked to hand the GIL over as often
(its default, 5 ms, would let about 200 samples a second reach the main thread)."""


def _roots() -> dict[str, str]:
    """Package folder (with a trailing separator) -> owner, longest folder first."""
    import islpy
    import numpy
    import xdsl

    import physlayout

    folders = {
        physlayout.__path__[0]: "physlayout",
        xdsl.__path__[0]: "xDSL",
        islpy.__path__[0]: "islpy/numpy",
        numpy.__path__[0]: "islpy/numpy",
    }
    roots = {os.path.join(folder, ""): owner for folder, owner in folders.items()}
    # the longest folder first: the venv holding xDSL may lie inside physlayout's checkout
    return dict(sorted(roots.items(), key=lambda item: -len(item[0])))


def owner_of(frame: FrameType | None, roots: dict[str, str], cache: dict[str, str | None]) -> str:
    """The owner of the innermost frame from `frame` outward that lies in one of `roots`
    (the first, longest, folder that holds its file; "other" when none does)."""
    while frame is not None:
        filename = frame.f_code.co_filename
        owner = cache.get(filename, "")
        if owner == "":
            owner = next((o for root, o in roots.items() if filename.startswith(root)), None)
            cache[filename] = owner
        if owner is not None:
            return owner
        frame = frame.f_back
    return "other"


def current_pass(frame: FrameType | None) -> tuple[str, str] | None:
    """The pass `bench_compile.time_passes` is running in the sampled stack (its loop
    variable `item`) and the phase, "pass" or "verify" (in `verify_module` after it), or
    None while it parses."""
    phase = "pass"
    while frame is not None:
        if frame.f_code is verify_module.__code__:
            phase = "verify"
        if frame.f_code is time_passes.__code__:
            item = frame.f_locals.get("item")
            if item is None:
                return None
            return str(getattr(item, "name", type(item).__name__)), phase
        frame = frame.f_back
    return None


@dataclass
class Samples:
    """Sample counts per (pass, phase, owner), in order of first sight of each pass."""

    counts: Counter[tuple[str, str, str]] = field(default_factory=Counter[tuple[str, str, str]])

    def share(self, name: str, owner: str, phase: str | None = None) -> float:
        """The share of pass `name`'s samples (of `phase`, "pass" or "verify", or both)
        whose owner is `owner`."""
        total = sum(
            n for (p, f, _), n in self.counts.items() if p == name and phase in (None, f)
        )
        mine = sum(
            n
            for (p, f, o), n in self.counts.items()
            if p == name and o == owner and phase in (None, f)
        )
        return mine / total if total else 0.0


@contextmanager
def sampled() -> Iterator[Samples]:
    """Within the block, a thread samples the calling thread's stack every `PERIOD` (the
    pass `time_passes` is running, and its owner)."""
    samples = Samples()
    target = threading.get_ident()
    roots = _roots()
    cache: dict[str, str | None] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(PERIOD):
            frame = sys._current_frames().get(target)  # pyright: ignore[reportPrivateUsage]
            running = current_pass(frame)
            if running is not None:
                samples.counts[(*running, owner_of(frame, roots, cache))] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(PERIOD)
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(interval)


@dataclass
class Owners:
    """One model: its per-pass timing, the samples, and the two subprocess runs."""

    timing: ModelTiming
    samples: Samples
    floor: float | None
    whole: float | None

    def seconds(self, owner: str, name: str | None = None, phase: str | None = None) -> float:
        """The CPU seconds attributed to `owner`, in pass `name` or in all of them, in the
        passes themselves (`phase` "pass"), the verifications after them ("verify") or
        both (None)."""
        share = self.samples.share
        return sum(
            (seconds * share(pass_name, owner, "pass") if phase in (None, "pass") else 0.0)
            + (verify * share(pass_name, owner, "verify") if phase in (None, "verify") else 0.0)
            for pass_name, seconds, verify in self.timing.passes
            if name is None or pass_name == name
        )

    def total(self) -> float:
        return sum(seconds + verify for _, seconds, verify in self.timing.passes)

    def verifications(self) -> float:
        return sum(verify for _, _, verify in self.timing.passes)


def measure(path: Path, timeout: float, pairs: int) -> Owners:
    """Sample the in-process pipeline of `path`, time it again unsampled (the sampling
    thread's own CPU time would count in the first run's), then time the floor and the
    whole run (`pairs` alternating runs of each, medians)."""
    with sampled() as samples:
        time_passes(path)
    timing = time_passes(path)
    if timing.failure is not None:
        return Owners(timing, samples, None, None)
    floor, whole, _ = floor_and_whole(path, timeout, pairs)
    return Owners(timing, samples, floor, whole)


def section(rows: Sequence[Owners], models: Path) -> list[str]:
    """The RESULTS.md section: one row per model, then per pass for the largest one."""
    lines = [
        machine(),
        f"Models: `{models.name}/*.mlir`. \"passes\": CPU seconds of `{PIPELINE}`'s passes "
        "and the verifications after them, in process; each split by the share of its "
        "stack samples whose innermost physlayout, xDSL or islpy/numpy frame is of that "
        "package (standard-library frames count for their caller; \"other\": none on the "
        "stack). \"whole\" and \"floor\": `xdsl-opt FILE -p "
        f"{PIPELINE}` and `xdsl-opt FILE`, medians of alternating runs (CPU seconds, start-up "
        "included); \"if physlayout's code took no time\": (whole - physlayout's seconds) / "
        "floor; \"and nothing verified after each pass\": (whole - physlayout's seconds in "
        "the passes - all the verifications' seconds) / floor. xDSL's seconds are time spent in xDSL's code, much of it on the ops the "
        "passes build, walk and verify: what the pipeline's design asks of xDSL, not a "
        "fixed cost.",
        "",
        "| model | samples | passes | physlayout | xDSL | islpy/numpy | other | whole / floor "
        "| if physlayout's code took no time | and nothing verified after each pass |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row.timing.failure is not None or not row.floor or row.whole is None:
            lines.append(f"| {row.timing.name} | - | - | - | - | - | - | - | - | - |")
            continue
        total = row.total()
        cells = [f"{row.seconds(o):.2f} s ({row.seconds(o) / total:.0%})" for o in OWNERS]
        other = max(0.0, total - sum(row.seconds(o) for o in OWNERS))
        ours = row.seconds("physlayout")
        bare = row.whole - row.seconds("physlayout", phase="pass") - row.verifications()
        lines.append(
            f"| {row.timing.name} | {sum(row.samples.counts.values())} | {total:.2f} | "
            + " | ".join(cells)
            + f" | {other:.2f} | {row.whole / row.floor:.2f}x | "
            f"{(row.whole - ours) / row.floor:.2f}x | {bare / row.floor:.2f}x |"
        )
    done = [r for r in rows if r.timing.failure is None and r.timing.passes]
    if done:
        largest = max(done, key=lambda r: r.total())
        lines += [
            "",
            f"Per pass on {largest.timing.name} (CPU seconds, pass + verification after it):",
            "",
            "| pass | seconds | physlayout | xDSL | islpy/numpy |",
            "|---|---|---|---|---|",
        ]
        seen: set[str] = set()
        for name, _, _ in largest.timing.passes:
            if name in seen:
                continue
            seen.add(name)
            spent = sum(s + v for n, s, v in largest.timing.passes if n == name)
            shares = " | ".join(f"{largest.samples.share(name, o):.0%}" for o in OWNERS)
            lines.append(f"| {name} | {spent:.2f} | {shares} |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    models_main((__doc__ or "").splitlines()[0], TITLE, measure, section, argv)


if __name__ == "__main__":
    main()
