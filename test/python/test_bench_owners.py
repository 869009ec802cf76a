"""bench/bench_owners.py's arithmetic: each pass's seconds and its verification's are split
by the shares of their own samples (issue 28). The script's numbers are measured by
`make bench`; this pins what it computes from them."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_compile import ModelTiming  # noqa: E402
from bench_owners import Owners, Samples, section  # noqa: E402


def _owners() -> Owners:
    timing = ModelTiming("m", 10, passes=[("a", 2.0, 1.0), ("b", 1.0, 0.0)])
    counts = Counter(
        {
            ("a", "pass", "physlayout"): 1,
            ("a", "pass", "xDSL"): 3,
            ("a", "verify", "physlayout"): 1,
            ("a", "verify", "xDSL"): 1,
            ("b", "pass", "physlayout"): 2,
        }
    )
    return Owners(timing, Samples(counts), floor=1.0, whole=5.0)


def test_shares_per_phase() -> None:
    samples = _owners().samples
    assert samples.share("a", "xDSL", "pass") == pytest.approx(0.75)
    assert samples.share("a", "xDSL", "verify") == pytest.approx(0.5)
    assert samples.share("a", "xDSL") == pytest.approx(4 / 6)
    assert samples.share("b", "xDSL", "verify") == 0.0  # no samples: no share


def test_seconds_per_phase() -> None:
    owners = _owners()
    # a: 2 s of pass (1/4 physlayout), 1 s of verification (1/2); b: 1 s, all physlayout
    assert owners.seconds("physlayout", phase="pass") == pytest.approx(0.5 + 1.0)
    assert owners.seconds("physlayout", phase="verify") == pytest.approx(0.5)
    assert owners.seconds("physlayout") == pytest.approx(2.0)
    assert owners.seconds("xDSL", "a") == pytest.approx(1.5 + 0.5)
    assert owners.verifications() == pytest.approx(1.0)
    assert owners.total() == pytest.approx(4.0)


def test_section_bounds() -> None:
    lines = section([_owners()], Path("models"))
    row = next(line for line in lines if line.startswith("| m |"))
    # whole 5, physlayout 2 s in all: 3.00x; less physlayout in the passes (1.5 s) and all
    # the verifications (1 s): 2.50x
    assert row.endswith("| 5.00x | 3.00x | 2.50x |")


def test_samples_of_a_real_run_name_the_pass_and_the_phase() -> None:
    from bench_compile import time_passes
    from bench_owners import sampled

    with sampled() as samples:
        timing = time_passes(ROOT / "examples" / "models" / "bottleneck.mlir")
    assert timing.failure is None
    names = {name for name, _, _ in timing.passes}
    phases = {(name, phase) for name, phase, _ in samples.counts}
    assert {name for name, _ in phases} <= names
    # the module is verified after every pass that changed it: both phases are sampled
    assert ("legalize-layout", "pass") in phases
    assert any(phase == "verify" for _, phase in phases)
