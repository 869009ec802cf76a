"""bench/bench_budget.py's arithmetic: what the 3x goal leaves for the passes (issue 28).
The script's numbers are measured by `make bench`; this pins what it computes from them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_budget import Budget, build_and_verify_once, pass_seconds, section  # noqa: E402

from physlayout.universe import make_context  # noqa: E402

ROW = Budget(
    "m", floor=2.0, whole=9.0, outside=3.5, passes=4.0, verify=1.5, build_once=0.2, verify_once=0.3
)


def test_budget_is_what_the_target_leaves_after_everything_else() -> None:
    assert ROW.budget == pytest.approx(2.5)  # 3 * 2 - 3.5
    assert ROW.once == pytest.approx(0.5)
    # A pipeline costing exactly the budget would run at 3x of the floor.
    assert (ROW.outside + ROW.budget) / ROW.floor == pytest.approx(3.0)


def test_pass_seconds_reads_time_passes_lines() -> None:
    printed = "\n".join(
        [
            "Pass raise-layout-rewrites took 0.5 seconds",
            "Pass physlayout-adreno took 2.25 seconds",
            "  Pass normalize-graph took 0.25 seconds (verified in 0.125 seconds)",
            "  Pass fold-layout-rewrites took 0.5 seconds (changed nothing: not verified)",
            "  Pass dce took 1e-3 seconds (verified in 0.5 seconds)",
            "some other line",
        ]
    )
    top, passes, verify = pass_seconds(printed)
    assert top == pytest.approx(2.75)
    assert passes == pytest.approx(0.751)
    assert verify == pytest.approx(0.625)


def test_section_rows() -> None:
    late = Budget(
        "late",
        floor=1.0,
        whole=9.0,
        outside=7.0,
        passes=1.0,
        verify=1.0,
        build_once=0.1,
        verify_once=0.1,
    )
    lines = section([ROW, late, "broken: a run failed"], Path("models"))
    assert (
        "| m | 2.00 | 9.00 | 4.50x | 3.50 | 2.50 | 4.00 | 1.50 | 0.60 | 2.20 | 1.60 "
        "| 0.50 (0.20 + 0.30) | 5.0 |"
    ) in lines
    # No budget left (outside alone is over 3x): no ratios to it.
    assert (
        "| late | 1.00 | 9.00 | 9.00x | 7.00 | -4.00 | 1.00 | 1.00 | - | - | - "
        "| 0.20 (0.10 + 0.10) | - |"
    ) in lines
    assert lines[-1] == "- broken: a run failed"


def test_build_and_verify_once_leaves_the_module_alone() -> None:
    from xdsl.parser import Parser

    text = (ROOT / "examples" / "relu_texture.mlir").read_text()
    module = Parser(make_context(), text).parse_module()
    before = str(module)
    build, verify = build_and_verify_once(module)
    assert build >= 0 and verify >= 0
    assert str(module) == before
