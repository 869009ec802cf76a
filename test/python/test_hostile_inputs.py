"""Hostile inputs end with a result or a diagnostic, never a traceback, a hang or a wrong
result: shapes at the 64-bit index limit, maps with huge constants, many accesses in one
function (1,000-deep nests: test_cli.py). Overflow of the index range is a diagnostic."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from physlayout.cli import opt_main

LIMIT = 2**63 - 1
TILE = "#layout.index_map<(i) -> (i floordiv 4, i mod 4)>"


def _opt(tmp_path: Path, source: str, *args: str, capsys: pytest.CaptureFixture[str]):
    """`physlayout-opt FILE ARGS` in this process: (exit status, stdout, stderr)."""
    path = tmp_path / "hostile.mlir"
    path.write_text(source)
    with pytest.raises(SystemExit) as exited:
        opt_main([str(path), *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "unexpected" not in err
    return exited.value.code, out, err


def _one_buffer(buffer: str) -> str:
    return f"func.func @f(%a: !layout.buffer<{buffer}>) {{\n  func.return\n}}\n"


LOWERED = [
    # 2**62 elements tiled by 4: a result, with the exact physical shape.
    (f"{2**62}xf32, transform = {TILE}", "memref<1152921504606846976x4xf32>"),
    # 2**63 - 1 elements, padded to whole tiles of 4 would need 2**63: see OVERFLOWS.
    (f"{2**62 - 1}xf32, transform = {TILE}, pad_value = 0.0 : f32",
     "memref<1152921504606846976x4xf32>"),
    (f"{LIMIT}xf32", f"memref<{LIMIT}xf32>"),
]


@pytest.mark.parametrize(("buffer", "memref"), LOWERED)
def test_shapes_at_the_index_limit_lower(
    buffer: str, memref: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _opt(
        tmp_path, _one_buffer(buffer), "-p", "apply-layout,flatten-buffers,lower-layout",
        capsys=capsys,
    )
    assert status == 0 and memref in out


OVERFLOWS = [
    (f"{2**62}x2xf32", "buffer of 9223372036854775808 elements exceeds the index range"),
    (f"{LIMIT}xf32, transform = {TILE}, pad_value = 0.0 : f32",
     "gives shape [2305843009213693952, 4] on [9223372036854775807], 9223372036854775808 "
     "elements: more than the index range (at most 9223372036854775807)"),
    (f"{2**30}xf32, transform = #layout.index_map<(i) -> (i * {2**40})>",
     "1180591619617899675649 elements: more than the index range"),
    (f"16xf32, transform = #layout.index_map<(i) -> (i + {2**62})>",
     f"has minimum {2**62} on shape [16]; every output must start at 0"),
    ("16xf32, transform = #layout.index_map<(i) -> (i floordiv 99999999999999999999999, "
     "i mod 99999999999999999999999)>",
     "gives shape [1, 99999999999999999999999] on [16]"),
]


@pytest.mark.parametrize(("buffer", "message"), OVERFLOWS)
def test_overflow_is_a_diagnostic(
    buffer: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start = time.perf_counter()
    status, _, err = _opt(
        tmp_path, _one_buffer(buffer), "-p", "apply-layout,flatten-buffers", capsys=capsys
    )
    assert status == 1 and message in err and err.count("error:") == 1
    assert time.perf_counter() - start < 60


def test_allocation_overflow_is_a_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        "func.func @f() {\n"
        f"  %p = layout.allocate [{2**32}, {2**32}] : !layout.ptr<f32>\n"
        "  func.return\n}\n"
    )
    status, _, err = _opt(tmp_path, source, capsys=capsys)
    assert status == 1
    assert "allocation of 18446744073709551616 elements exceeds the index range" in err


def test_kernel_too_big_for_opencl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = (
        f"func.func @f(%a: !layout.buffer<{LIMIT}xf32>, %i: index) {{\n"
        f"  %x = layout.load %a[%i] : !layout.buffer<{LIMIT}xf32>, f32\n"
        f"  layout.store %x, %a[%i] : !layout.buffer<{LIMIT}xf32>, f32\n"
        "  func.return\n}\n"
    )
    status, _, err = _opt(tmp_path, source, "-t", "opencl", capsys=capsys)
    assert status == 1 and "has more than 2^31 - 1 elements" in err


ACCESSES = int(os.environ.get("PHYSLAYOUT_HOSTILE_ACCESSES", "2000"))
"""Loads and stores in the many-accesses test (100000 for the full-size run; the time per
access is constant: apply-layout's dead-code check used to make it grow with the function)."""


def test_many_accesses_in_one_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buffer = "!layout.buffer<64x64xf32, transform = #layout.index_map<(i, j) -> (j floordiv 4, i, j mod 4)>>"
    lines = [f"func.func @many(%a: {buffer}, %b: !layout.buffer<64x64xf32>, %i: index, %j: index) {{"]
    for k in range(ACCESSES // 2):
        lines.append(f"  %x{k} = layout.load %a[%i, %j] : {buffer}, f32")
        lines.append(f"  layout.store %x{k}, %b[%j, %i] : !layout.buffer<64x64xf32>, f32")
    lines += ["  func.return", "}"]
    status, out, _ = _opt(
        tmp_path, "\n".join(lines) + "\n", "-p", "apply-layout,flatten-buffers,verify-buffers",
        capsys=capsys,
    )
    assert status == 0
    assert out.count("layout.load") == ACCESSES // 2
    assert out.count("layout.store") == ACCESSES // 2


def test_locations_match_xdsl_spans(tmp_path: Path) -> None:
    """`attach_locations` (newlines found once per input) gives every op the line and
    column of xDSL's `Span.get_location`, with the chunk's line offset added."""
    from xdsl.dialects.builtin import FileLineColLoc

    from physlayout.located import LocatingParser, attach_locations
    from physlayout.universe import make_context

    source = (
        "func.func @f(%a: !layout.buffer<8xf32>, %i: index) {\n"
        "  %x = layout.load %a[%i] : !layout.buffer<8xf32>, f32\n\n"
        "      layout.store %x, %a[%i] : !layout.buffer<8xf32>, f32\n"
        "  func.return\n}\n"
    )
    parser = LocatingParser(make_context(), source, "in.mlir")
    parser.parse_module()
    attach_locations(parser.locations, 7)
    assert len(parser.locations) == 4
    for op, span in parser.locations.items():
        expected = span.get_location()
        assert isinstance(op.location, FileLineColLoc)
        assert (op.location.filename.data, op.location.line.data, op.location.column.data) == (
            expected.file, expected.line + 7, expected.col
        )


def test_each_op_is_verified_once_before_the_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsing verifies every op once, at its source line; the pipeline does not verify the
    module again before its first pass (it still does after every pass)."""
    from physlayout.dialects.layout import LoadOp

    calls: list[object] = []
    verify = LoadOp.verify_
    monkeypatch.setattr(LoadOp, "verify_", lambda op: calls.append(op) or verify(op))
    source = (
        "func.func @f(%a: !layout.buffer<8xf32>, %i: index) {\n"
        + "".join(f"  %x{k} = layout.load %a[%i] : !layout.buffer<8xf32>, f32\n" for k in range(3))
        + "  func.return\n}\n"
    )
    assert _opt(tmp_path, source, capsys=capsys)[0] == 0
    assert len(calls) == 3
    calls.clear()
    assert _opt(tmp_path, source, "-p", "verify-buffers", capsys=capsys)[0] == 0
    assert len(calls) == 6


def test_empty_block_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _opt(tmp_path, "func.func @f() {\n^bb0:\n}\n", capsys=capsys)
    assert status == 1
    assert err.strip() == (
        "error: Operation func.func contains empty block in single-block region that "
        "expects at least a terminator"
    )


ALIASED = (
    "#m = #layout.index_map<(i) -> (i floordiv {k}, i mod {k})>\n"
    "func.func @f(%a: !layout.buffer<16xf32, transform = #m>) {{\n  func.return\n}}\n"
)


def test_buffer_types_are_parsed_per_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A buffer type body parsed once is reused only within one input: the same text under
    another alias table is another type, and a body that failed fails again alike."""
    outputs = []
    for k in (4, 2):
        status, out, _ = _opt(
            tmp_path, ALIASED.format(k=k), "-p", "apply-layout", capsys=capsys
        )
        assert status == 0
        outputs.append(out)
    assert "!layout.buffer<4x4xf32" in outputs[0]
    assert "!layout.buffer<8x2xf32" in outputs[1]
    bad = _one_buffer("16xf32, pad_value = 0.0 : f32")
    errors = [_opt(tmp_path, bad, capsys=capsys) for _ in range(2)]
    assert errors[0] == errors[1]
    assert "pad_value is only meaningful with a pending transform" in errors[0][2]
