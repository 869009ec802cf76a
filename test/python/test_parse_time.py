"""Bad input never takes long (issue 28): the issue's unterminated string literals and the
kept slow cases (test/diagnostics/slow-parses.mlir) fail at once with a located ParseError,
in `physlayout-opt` and stock `xdsl-opt` alike; seeded token mutations of every lit input
run through `physlayout-opt` (with their file's pipeline) in bounded time; parsing nested
`!layout.buffer` types scans each character a bounded number of times.

The times are generous bounds against exponential or quadratic blow-ups (which take minutes),
not benchmarks: a case fails when it takes more than `ABSOLUTE_LIMIT` seconds, or more than
`RATIO_LIMIT` times its unmutated input and more than `NOISE_FLOOR` seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mutation_timing import Case, Hang, lit_chunks, mutations, run_timed
from xdsl.parser import AttrParser, Parser
from xdsl.utils.exceptions import ParseError

from physlayout.cli import run_with_deep_stack
from physlayout.universe import make_context

SEED = 28
MUTATIONS = 240
ABSOLUTE_LIMIT = 5.0
RATIO_LIMIT = 20.0
NOISE_FLOOR = 1.0
HANG = 60.0
"""Seconds without a result after which the timing process is stopped (a hang)."""

UNCLOSED = "string literal is not closed on its line"


def _issue_input(scope: str) -> str:
    return f'func.func @f(%p: !layout.ptr<f32, scope = "{scope}> -> !layout.buffer<8xf32>\n}}\n'


ISSUE_SCOPES = ["l", "lo", "loc", "loca", "local-1"]


def test_issue_inputs_fail_at_once(tmp_path: Path) -> None:
    cases = [Case(f"scope {s!r}", _issue_input(s), None) for s in ISSUE_SCOPES]
    for case, timing in zip(cases, run_timed(cases, tmp_path, HANG), strict=True):
        assert timing.status == 1, case.label
        assert timing.error.endswith(f":1:43: error: {UNCLOSED} (no closing '\"' before the "
                                     "end of the line)"), timing.error
        assert timing.seconds < ABSOLUTE_LIMIT, (case.label, timing.seconds)


def test_stock_xdsl_opt_rejects_the_issue_input_at_once(tmp_path: Path) -> None:
    """Stock `xdsl-opt` loads physlayout's universe, which installs the linear lexer."""
    path = tmp_path / "issue.mlir"
    path.write_text(_issue_input("local-1"))
    xdsl_opt = Path(sys.executable).with_name("xdsl-opt")
    done = subprocess.run(
        [str(xdsl_opt), str(path)], capture_output=True, text=True, timeout=HANG,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert done.returncode != 0 and UNCLOSED in done.stderr


def test_kept_slow_cases_fail_at_once(tmp_path: Path) -> None:
    cases = [c for c in lit_chunks() if c.label.startswith("diagnostics/slow-parses.mlir#")]
    assert len(cases) == 10
    for case, timing in zip(cases, run_timed(cases, tmp_path, HANG), strict=True):
        assert timing.status == 1 and ": error: " in timing.error, case.label
        assert timing.seconds < ABSOLUTE_LIMIT, (case.label, timing.seconds)


def test_token_mutations_of_the_lit_inputs_take_no_long(tmp_path: Path) -> None:
    pairs = mutations(SEED, MUTATIONS)
    originals = list({original.label: original for original, _ in pairs}.values())
    mutated = [case for _, case in pairs]
    try:
        timings = run_timed(originals + mutated, tmp_path, HANG)
    except Hang as hang:
        pytest.fail(f"a mutated input hangs: {hang}")
    baseline = {case.label: t.seconds for case, t in zip(originals, timings, strict=False)}
    slow: list[str] = []
    for (original, case), timing in zip(pairs, timings[len(originals):], strict=True):
        ratio = timing.seconds / max(baseline[original.label], 1e-3)
        too_slow = timing.seconds > ABSOLUTE_LIMIT or (
            ratio > RATIO_LIMIT and timing.seconds > NOISE_FLOOR
        )
        if too_slow:
            slow.append(f"{case.label}: {timing.seconds:.2f} s ({ratio:.0f}x)")
    assert not slow, "\n".join(slow)


def _nested_buffers(depth: int, closed: bool = True) -> str:
    inner = "!layout.buffer<4xf32, pad_value = " * depth + "0.0 : f32" + (">" * depth if closed else "")
    return f"func.func @f(%a: {inner}) {{\n  func.return\n}}\n"


@pytest.mark.parametrize("closed", [True, False])
def test_nested_buffer_types_are_scanned_once(closed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `!layout.buffer` body cache scans a type's text to find its end: only for a type
    outside any other's parameters, so nesting does not scan the inner text again."""
    scanned = [0]
    stock = AttrParser._raw_scan_balanced  # pyright: ignore[reportPrivateUsage]

    def counting(self: AttrParser, pos: int) -> int:
        try:
            end = stock(self, pos)
        except ParseError:
            scanned[0] += self.lexer.input.len - pos
            raise
        scanned[0] += end - pos
        return end

    monkeypatch.setattr(AttrParser, "_raw_scan_balanced", counting)
    text = _nested_buffers(400, closed)
    ctx = make_context()

    def parse() -> int:
        with pytest.raises(ParseError):  # pad_value needs a transform / the '>' is missing
            Parser(ctx, text).parse_module()
        return 0

    run_with_deep_stack(parse)
    assert 0 < scanned[0] <= len(text)


def test_dimension_names_are_checked_in_linear_time() -> None:
    """Duplicate dimension names are found with a set (a list made 16,000 names quadratic)."""
    from physlayout.indexing.index_map import IndexMap

    names = [f"d{k}" for k in range(20000)]
    index_map = IndexMap.parse(f"({', '.join(names)}) -> ({', '.join(names)})")
    assert index_map.ndim == 20000
    with pytest.raises(ValueError, match="duplicate dimension name 'd7'"):
        IndexMap.parse(f"({', '.join(names)}, d7) -> (d7)")


def test_huge_element_counts_are_reported_not_printed(tmp_path: Path) -> None:
    rank = 1500
    text = ("func.func @f(%a: !layout.buffer<" + "2x" * rank + "f32>) {\n  func.return\n}\n")
    case = Case("rank 1500", text, None)
    (timing,) = run_timed([case], tmp_path, HANG)
    assert timing.status == 1
    assert f"buffer of at least 2^{rank} elements exceeds the index range" in timing.error


def test_mutations_are_reproducible() -> None:
    assert [c.text for _, c in mutations(SEED, 20)] == [c.text for _, c in mutations(SEED, 20)]
