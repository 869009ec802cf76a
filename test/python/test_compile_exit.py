"""The `physlayout` program ends a `compile` without the interpreter's teardown
(`cli.common.exit_without_teardown`, issue 43: freeing a compiler's objects one by one took
0.4 to 0.9 s after the compile was done): everything it prints and writes is complete, the
exit status is the command's, and no `atexit` handler runs. Called with arguments (as a
library and these tests do), `main` still raises `SystemExit` and returns to its caller.
Each program runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from physlayout.cli import main

GRAPH = """#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<3x5xf32>, %b: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = tensor.empty() : tensor<3x5xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<3x5xf32>, tensor<3x5xf32>) outs(%0 : tensor<3x5xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.addf %in, %in_0 : f32
    linalg.yield %2 : f32
  } -> tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
"""

TEARDOWN = "atexit handler ran"


def _program(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`physlayout ARGS` as its console script runs it (`main()` reading `sys.argv`), with
    an `atexit` handler that prints `TEARDOWN` when the interpreter tears down."""
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print({TEARDOWN!r}))\n"
        "from physlayout.cli import main\n"
        f"sys.argv = ['physlayout', *{list(args)!r}]\n"
        "main()\n"
    )
    env = {**os.environ, "PHYSLAYOUT_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_a_compile_ends_without_teardown_its_output_complete(tmp_path: Path) -> None:
    source = tmp_path / "add.mlir"
    source.write_text(GRAPH)
    out = tmp_path / "out"
    done = _program(tmp_path, "compile", str(source), "-o", str(out), "--no-cache")
    assert done.returncode == 0, done.stderr
    assert TEARDOWN not in done.stdout
    # every line it printed came through (the last ones are the parameters)
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"compiled @main to {out}:")
    assert [line.split()[:3] for line in lines[1:]] == [
        ["in", "%x", "float32"], ["in", "%b", "float32"], ["out", "%result0", "float32"]
    ]  # fmt: skip
    plan = json.loads((out / "plan.json").read_text())
    assert plan["entry"] == "main"
    assert (out / "kernels.cl").read_text().count("__kernel") >= 1


def test_a_failed_compile_ends_with_status_1_and_its_diagnostic(tmp_path: Path) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  oops\n}\n")
    done = _program(tmp_path, "compile", str(source), "-o", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "error" in done.stderr and "Traceback" not in done.stderr
    assert TEARDOWN not in done.stdout
    assert not (tmp_path / "out").exists()


def test_other_commands_and_calls_with_arguments_exit_as_usual(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`main([...])` raises `SystemExit` (this test's process goes on), and a command
    other than `compile` exits through the interpreter's teardown."""
    source = tmp_path / "add.mlir"
    source.write_text(GRAPH)
    monkeypatch.setenv("PHYSLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(SystemExit) as exited:
        main(["compile", str(source), "-o", str(tmp_path / "out"), "--no-cache"])
    assert exited.value.code == 0
    assert "compiled @main" in capsys.readouterr().out
    done = _program(tmp_path, "passes", "apply-layout")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith(TEARDOWN)
