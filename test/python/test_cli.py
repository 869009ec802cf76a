"""physlayout-opt and the stock xdsl-opt plugin registration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

BAD_VERIFY = """\
func.func @h(%a: !layout.buffer<4x4xf32>, %i: index) {
  %v = layout.load %a[%i] : !layout.buffer<4x4xf32>, f32
  func.return
}
"""

BAD_PARSE = """\
func.func @f(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i, j) -> (i * j)>>) {
  func.return
}
"""

NOT_INJECTIVE = """\
func.func @h(%a: !layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i floordiv 2)>>) {
  func.return
}
"""

GOOD = """\
func.func @g(%a: !layout.buffer<16x64xf32>, %i: index, %j: index) -> f32 {
  %v = layout.load %a[%i, %j] : !layout.buffer<16x64xf32>, f32
  func.return %v : f32
}
"""


def run(tool: str, text: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "input.mlir"
    source.write_text(text)
    return subprocess.run(
        [str(BIN / tool), str(source), *args], capture_output=True, text=True, timeout=120
    )


def test_stock_xdsl_opt_lists_physlayout_passes() -> None:
    help_text = subprocess.run(
        [str(BIN / "xdsl-opt"), "--help"], capture_output=True, text=True, timeout=120
    ).stdout
    # argparse wraps the list at hyphens: drop the whitespace to read it back.
    listed = "".join(help_text.split())
    passes = listed.split("Availablepassesare:")[1].split(",")
    for name in ("apply-layout", "flatten-buffers"):
        assert name in passes


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        (BAD_VERIFY, (), "input.mlir:2:3: error: 'layout.load' expects 2 indices"),
        (BAD_PARSE, (), "input.mlir:1:69: error: invalid index map: expression 'i * j'"),
        (NOT_INJECTIVE, ("-p", "apply-layout"), "indices [0] and [1] both map to [0]"),
    ],
)
def test_physlayout_opt_reports_without_traceback(
    text: str, args: tuple[str, ...], expected: str, tmp_path: Path
) -> None:
    out = tmp_path / "out.mlir"
    result = run("physlayout-opt", text, *args, "-o", str(out), tmp_path=tmp_path)
    assert result.returncode == 1
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("text", [BAD_VERIFY, BAD_PARSE])
def test_stock_xdsl_opt_raises_only_diagnostic_exceptions(text: str, tmp_path: Path) -> None:
    result = run("xdsl-opt", text, tmp_path=tmp_path)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()
    exception_lines = [line for line in last if line.startswith("xdsl.utils.exceptions.")]
    assert exception_lines, result.stderr
    assert exception_lines[-1].split(":")[0] in (
        "xdsl.utils.exceptions.ParseError",
        "xdsl.utils.exceptions.VerifyException",
        "xdsl.utils.exceptions.DiagnosticException",
        "xdsl.utils.exceptions.PassFailedException",
    )


def test_physlayout_opt_writes_output_on_success(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    result = run("physlayout-opt", GOOD, "-p", "flatten-buffers", "-o", str(out), tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "!layout.buffer<1024xf32>" in out.read_text()
