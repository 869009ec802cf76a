"""Start-up imports only what a run needs (issue 28): loading physlayout's `xdsl.universe`
entry point and listing its passes imports no pass implementation, and none of islpy,
numpy, pyopencl, the runtime or the viz package; parsing and printing a file with
layout types and graph-level rewrites without padding does not import them either (the
verifier of a padded `layout.transform` computes its padding set with isl). Each check runs in a fresh interpreter
(`sys.modules` of this one already holds everything)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("islpy", "numpy", "pyopencl", "matplotlib", "physlayout.runtime", "physlayout.viz")
"""Packages a run that does not execute or draw anything should not import."""

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


NOT_AT_START_UP = (
    *HEAVY,
    "physlayout.transforms.",
    "physlayout.lowering.",
    "physlayout.semantics",
)
"""Module name prefixes that start-up must not import (the passes, targets, evaluator)."""


def _modules_after(code: str) -> list[str]:
    """The modules a fresh interpreter has imported after running `code`."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _imported_after(code: str) -> list[str]:
    """The modules matching `NOT_AT_START_UP` that a fresh interpreter has imported after
    running `code`."""
    return [m for m in _modules_after(code) if m.startswith(NOT_AT_START_UP)]


def test_listing_the_universe_imports_no_pass_and_nothing_heavy() -> None:
    code = (
        "from importlib.metadata import entry_points\n"
        "(entry,) = [e for e in entry_points(group='xdsl.universe') if e.name == 'physlayout']\n"
        "universe = entry.load()\n"
        "assert 'apply-layout' in universe.all_passes and 'layout' in universe.all_dialects\n"
        "from xdsl.universe import Universe\n"
        "names = sorted(Universe.get_multiverse().all_passes)\n"
        "assert 'physlayout-adreno' in names and 'canonicalize' in names\n"
    )
    assert _imported_after(code) == []


def test_the_public_api_module_imports_nothing_heavy() -> None:
    assert _imported_after("import physlayout, physlayout.universe") == []


@pytest.mark.parametrize(
    "example", ["relu_texture.mlir", "rfc_conv_relu_conv.mlir", "relayout_chains.mlir"]
)
def test_parsing_and_printing_layout_ir_imports_nothing_heavy(example: str) -> None:
    code = (
        "from xdsl.xdsl_opt_main import xDSLOptMain\n"
        f"xDSLOptMain(args=[{str(EXAMPLES / example)!r}, '-o', '/dev/null']).run()\n"
    )
    assert _imported_after(code) == []


def test_physlayout_opt_without_passes_imports_no_pass() -> None:
    code = (
        "from physlayout.cli import opt_main\n"
        "try:\n"
        f"    opt_main([{str(EXAMPLES / 'relu_texture.mlir')!r}, '-o', '/dev/null'])\n"
        "except SystemExit as exited:\n"
        "    assert exited.code == 0\n"
    )
    # The driver locates pass remarks through `transforms.diagnostics` and reads pass options
    # (bare flags, did-you-mean) through `transforms.pass_options`: no pass, no IR.
    assert sorted(_imported_after(code)) == [
        "physlayout.transforms.diagnostics",
        "physlayout.transforms.pass_options",
    ]


def test_physlayout_opt_loads_no_dialect_stock_xdsl_opt_does_not() -> None:
    """`physlayout-opt` running passes on a buffer-level file imports no xDSL dialect that
    stock `xdsl-opt` does not import for the same run (its verification memo patches
    `linalg.generic` only once linalg is loaded: before, no such op can exist)."""
    args = [str(EXAMPLES / "relu_texture.mlir"), "-p", "apply-layout,flatten-buffers"]
    args += ["-o", "/dev/null"]
    ours = _modules_after(
        "from physlayout.cli import opt_main\n"
        "try:\n"
        f"    opt_main({args!r})\n"
        "except SystemExit as exited:\n"
        "    assert exited.code == 0\n"
    )
    stock = _modules_after(
        f"from xdsl.xdsl_opt_main import xDSLOptMain\nxDSLOptMain(args={args!r}).run()\n"
    )
    assert [m for m in ours if m.startswith("xdsl.dialects.") and m not in stock] == []


def test_a_compile_cache_hit_loads_no_compiler(tmp_path: Path) -> None:
    """A second `physlayout compile` of the same file reads the artifact from the compile
    cache and writes it out: it imports no pass, no lowering (but the names of the graph
    stages, for `viz`'s help) and no evaluator (issue 43: a second compile costs about a
    parse). The first compile, in the same cache, does load them."""

    model = EXAMPLES / "models" / "bottleneck.mlir"
    code = (
        "import os, sys\n"
        f"os.environ['PHYSLAYOUT_CACHE_DIR'] = {str(tmp_path / 'cache')!r}\n"
        "from physlayout.cli import main\n"
        # with arguments: `main()` would end the process at once (`exit_without_teardown`)
        f"args = ['compile', {str(model)!r}, '-o', {str(tmp_path / 'out')!r}]\n"
        "try:\n"
        "    main(args)\n"
        "except SystemExit as exited:\n"
        "    assert not exited.code, exited.code\n"
    )
    first = _imported_after(code)
    assert "physlayout.transforms.legalize_layout" in first
    second = _imported_after(code)
    # the command line's own: pass-option reading, the tuning-table format, viz's parser
    allowed = {
        "physlayout.lowering.graph_stages", "physlayout.transforms.diagnostics",
        "physlayout.transforms.pass_options", "physlayout.transforms.given_schedules",
        "physlayout.viz", "physlayout.viz.command",
    }  # fmt: skip
    assert [m for m in second if m not in allowed and not m.startswith(("numpy", "physlayout.runtime"))] == []
    compiler = ("physlayout.runtime.opencl", "physlayout.runtime.plan_builder", "physlayout.runtime.deploy")
    assert [m for m in second if m.startswith(compiler)] == []


def test_a_cold_compile_loads_neither_opencl_nor_the_opt_driver(tmp_path: Path) -> None:
    """A first `physlayout compile` (no --device: nothing runs) imports neither pyopencl
    nor `physlayout-opt`'s driver (`physlayout.cli.opt` and xDSL's `xdsl_opt_main` under
    it), which `physlayout.cli` loads only for `opt_main` (issue 43: start-up is part of
    every cold compile); `physlayout-opt` still finds them there."""
    model = EXAMPLES / "models" / "bottleneck.mlir"
    code = (
        "import sys\n"
        "from physlayout.cli import main\n"
        f"args = ['compile', {str(model)!r}, '-o', {str(tmp_path / 'out')!r}, '--no-cache']\n"
        "try:\n"
        "    main(args)\n"
        "except SystemExit as exited:\n"
        "    assert not exited.code, exited.code\n"
    )
    loaded = _modules_after(code)
    assert "physlayout.transforms.legalize_layout" in loaded  # it did compile
    # nor the other sub-commands' parsers (`main` builds the invoked one's only)
    unwanted = (
        "pyopencl", "physlayout.cli.opt", "xdsl.xdsl_opt_main", "physlayout.viz",
        "physlayout.pass_help",
    )  # fmt: skip
    assert [m for m in loaded if m.startswith(unwanted)] == []
    from_cli = _modules_after(
        "import physlayout.cli as cli\nassert cli.PhyslayoutOptMain.__name__ == 'PhyslayoutOptMain'"
    )
    assert "physlayout.cli.opt" in from_cli


def test_version_text_is_made_only_for_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`physlayout`'s `--version` text (four packages' metadata read, about 45 ms) is made
    when `--version` is given, not for every command (issue 43)."""
    import importlib

    cli_main = importlib.import_module("physlayout.cli.main")

    def unwanted() -> str:
        raise AssertionError("versions_text called without --version")

    monkeypatch.setattr(cli_main, "versions_text", unwanted)
    with pytest.raises(SystemExit) as exited:
        cli_main.main(["passes"])
    assert exited.value.code == 0 and "apply-layout" in capsys.readouterr().out
    monkeypatch.setattr(cli_main, "versions_text", lambda: "physlayout 9 (stub)")
    with pytest.raises(SystemExit) as exited:
        cli_main.main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out == "physlayout 9 (stub)\n"


def test_help_before_a_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """`main` builds only the invoked sub-command's parser, but `physlayout -h compile` is
    `physlayout`'s own help: it lists every sub-command, as before."""
    import importlib

    cli_main = importlib.import_module("physlayout.cli.main")
    with pytest.raises(SystemExit) as exited:
        cli_main.main(["-h", "compile"])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert all(f"    {command}" in out for command in cli_main.COMMANDS), out
