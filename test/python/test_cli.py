"""physlayout-opt and the stock xdsl-opt plugin registration."""

from __future__ import annotations

import os
import stat
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


# Hostile inputs: never a traceback, never a partial file ----------------------------------

SEMI_AFFINE = """\
func.func @f(%a: memref<4x4xf32, affine_map<(d0, d1)[s0, s1] -> (d0 * s0 + d1 * s1)>>) {
  func.return
}
"""


def _deep_nest(depth: int) -> str:
    buffer = "!layout.buffer<4xf32, transform = #layout.index_map<(i) -> (i floordiv 2, i mod 2)>>"
    lines = [
        f"func.func @deep(%a: {buffer}, %b: !layout.buffer<4xf32>) {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
    ]
    lines += [f"scf.for %i{k} = %c0 to %c1 step %c1 {{" for k in range(depth)]
    lines.append(f"  %v = layout.load %a[%c1] : {buffer}, f32")
    lines.append("  layout.store %v, %b[%c0] : !layout.buffer<4xf32>, f32")
    lines += ["}"] * depth
    lines += ["  func.return", "}"]
    return "\n".join(lines) + "\n"


def test_xdsl_parser_exceptions_become_located_errors(tmp_path: Path) -> None:
    for tool in ("physlayout-opt", "physlayout"):
        args = ("run",) if tool == "physlayout" else ()
        source = tmp_path / "semi.mlir"
        source.write_text(SEMI_AFFINE)
        done = subprocess.run(
            [str(BIN / tool), *args, str(source)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 1
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith(
            f"{source}:1:74: error: not supported (by xDSL's IR): Multiplication with "
            "non-constant (semi-affine)"
        )


def test_a_loop_nest_1000_levels_deep_is_processed(tmp_path: Path) -> None:
    done = run("physlayout-opt", _deep_nest(1000), "-p", "verify-buffers", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("scf.for") == 1000
    # The rewriting passes too (their dead-code check memoizes effects: linear in the depth).
    done = run(
        "physlayout-opt", _deep_nest(1000), "-p", "apply-layout,flatten-buffers,verify-buffers",
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("scf.for") == 1000
    # (i) -> (i floordiv 2, i mod 2) on index 1 is [0, 1]: flattened row-major to 1.
    assert "layout.load %1[%2] : !layout.buffer<4xf32>, f32" in done.stdout


def test_failed_run_leaves_the_output_file_untouched(tmp_path: Path) -> None:
    output = tmp_path / "out.mlir"
    output.write_text("previous contents\n")
    done = run("physlayout-opt", NOT_INJECTIVE, "-p", "apply-layout", "-o", str(output),
               tmp_path=tmp_path)
    assert done.returncode == 1
    assert output.read_text() == "previous contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.mlir", "out.mlir"]
    done = run("physlayout-opt", GOOD, "-o", str(output), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "func.func @g" in output.read_text()


def test_the_input_file_is_never_overwritten(tmp_path: Path) -> None:
    source = tmp_path / "input.mlir"
    done = run("physlayout-opt", GOOD, "-o", str(source), tmp_path=tmp_path)
    assert done.returncode == 1
    assert done.stderr == f"error: refusing to overwrite the input file {source}\n"
    assert source.read_text() == GOOD


def test_a_missing_input_or_unwritable_output_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "missing.mlir"
    done = subprocess.run(
        [str(BIN / "physlayout-opt"), str(missing)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr == f"error: could not open '{missing}': No such file or directory\n"
    unwritable = tmp_path / "no-such-folder" / "out.mlir"
    done = run("physlayout-opt", GOOD, "-o", str(unwritable), tmp_path=tmp_path)
    assert done.returncode == 1
    assert done.stderr == f"error: could not write '{unwritable}': No such file or directory\n"


def test_output_to_a_device_is_written_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    done = run("physlayout-opt", GOOD, "-o", str(fifo), tmp_path=tmp_path)
    out, _ = reader.communicate(timeout=120)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert "func.func @g" in out


# Conventional options: bare flags, suggestions, --version, --help ------------------------

TRANSFORMED = """\
func.func @f(%a: !layout.buffer<8xf32, transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>>) {
  func.return
}
"""


@pytest.mark.parametrize("tool", ["physlayout-opt", "xdsl-opt"])
def test_a_bare_boolean_option_means_true(tool: str, tmp_path: Path) -> None:
    from physlayout.transforms.apply_layout import ApplyLayoutPass
    from physlayout.transforms.pass_options import pipeline_passes
    from physlayout.universe import get_all_passes

    (bare,) = pipeline_passes(get_all_passes(), "apply-layout{rewrite-loops strict=false}")
    assert bare == ApplyLayoutPass(rewrite_loops=True, strict=False)
    done = run(tool, TRANSFORMED, "-p", "apply-layout{rewrite-loops remarks}", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "!layout.buffer<2x4xf32>" in done.stdout


def test_a_bare_flag_of_an_xdsl_pass_means_true_in_physlayout_opt() -> None:
    from xdsl.universe import Universe

    from physlayout.transforms.pass_options import pipeline_passes

    (lowered,) = pipeline_passes(Universe.get_multiverse().all_passes, "convert-scf-to-openmp{nested}")
    assert lowered.nested is True


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("apply-layot", "unknown pass 'apply-layot' (did you mean 'apply-layout'?)"),
        ("flaten-buffers,canonicalize", "unknown pass 'flaten-buffers' (did you mean 'flatten-buffers'?)"),
        ("zzzz", "unknown pass 'zzzz'"),
        ("apply-layout{rewrite-loop}",
         "unknown option rewrite-loop (did you mean rewrite-loops?); "
         "the options are rewrite-loops, remarks, strict"),
        ("apply-layout{bogus=1}", "unknown option bogus; the options are rewrite-loops, remarks, strict"),
    ],
)
def test_misspelt_names_get_a_suggestion(pipeline: str, message: str, tmp_path: Path) -> None:
    done = run("physlayout-opt", TRANSFORMED, "-p", pipeline, tmp_path=tmp_path)
    assert done.returncode == 1
    assert done.stderr == f"error: invalid pass pipeline or target option: {message}\n"


def test_stock_xdsl_opt_suggests_physlayout_option_names(tmp_path: Path) -> None:
    done = run("xdsl-opt", TRANSFORMED, "-p", "apply-layout{rewrite-loop}", tmp_path=tmp_path)
    assert done.returncode != 0
    assert "unknown option rewrite-loop (did you mean rewrite-loops?)" in done.stderr


def test_a_bare_target_flag_means_true(tmp_path: Path) -> None:
    from xdsl.utils.arg_spec import parse_spec

    from physlayout.lowering.opencl import OpenCLTarget

    assert OpenCLTarget.from_spec(parse_spec("opencl{fp16}")).fp16
    done = run("physlayout-opt", "builtin.module {}\n", "-t", "opencl{fp16 fp64}", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run("physlayout-opt", "builtin.module {}\n", "-t", "opencl{fp15}", tmp_path=tmp_path)
    assert done.returncode == 1
    assert "unknown option fp15 (did you mean fp16?)" in done.stderr


@pytest.mark.parametrize("tool", ["physlayout-opt", "physlayout"])
def test_version_names_physlayout_and_its_dependencies(tool: str) -> None:
    from importlib.metadata import version

    done = subprocess.run([str(BIN / tool), "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"physlayout {version('physlayout')} (xDSL {version('xdsl')}, islpy {version('islpy')}, "
        f"numpy {version('numpy')}, pyopencl {version('pyopencl')})\n"
    )


def test_help_speaks_to_users() -> None:
    done = subprocess.run([str(BIN / "physlayout"), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for word in ("demo", "run", "viz", "passes", "physlayout-opt", "examples:"):
        assert word in done.stdout
    for internal in ("xDSLOptMain", "thread", "recursion", "traceback", "Traceback"):
        assert internal not in done.stdout


def test_run_refuses_a_pipeline_for_buffer_level_input(tmp_path: Path) -> None:
    source = tmp_path / "kernel.mlir"
    source.write_text(GOOD)
    done = subprocess.run(
        [str(BIN / "physlayout"), "run", str(source), "--pipeline", "canonicalize"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"error: --pipeline applies to graph-level input (functions over tensors); {source} is "
        "buffer-level, which always runs the physlayout-opencl pipeline (apply other passes "
        "first with physlayout-opt)\n"
    )


@pytest.mark.parametrize(
    ("pipeline", "expected"),
    [
        ("physlayout-adreno", "each pass"),  # the pipeline's own; the driver adds none
        ("physlayout-adreno{verify-each=false}", 1),  # the driver's, at the end
        ("apply-layout,flatten-buffers", 2),  # the driver's, after each pass
    ],
)
def test_physlayout_opt_verifies_each_module_state_once(
    pipeline: str, expected: int | str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole-module verifications of one run (after parsing, each op is verified on its
    own, not counted here): a declared pipeline verifies after each of its passes that
    changed the module (and after the first), and the driver does not verify the same
    module again after it."""
    from graph_harness import parse, verified_states
    from xdsl.dialects.builtin import ModuleOp

    from physlayout.cli import PhyslayoutOptMain
    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass

    example = "rfc_conv_relu_conv.mlir" if "adreno" in pipeline else "relu_texture.mlir"
    source = Path(__file__).resolve().parents[2] / "examples" / example
    if expected == "each pass":  # each that changed the module, and the first
        expected = verified_states(PhyslayoutAdrenoPass().passes(), parse(source.read_text()))
    count = [0]
    original = ModuleOp.verify

    def counted(self: ModuleOp, verify_nested_ops: bool = True) -> None:
        count[0] += verify_nested_ops
        original(self, verify_nested_ops)

    monkeypatch.setattr(ModuleOp, "verify", counted)
    out = tmp_path / "out.mlir"
    with pytest.raises(SystemExit) as exited:
        PhyslayoutOptMain(args=[str(source), "-p", pipeline, "-o", str(out)]).run()
    assert exited.value.code == 0 and out.read_text()
    assert count[0] == expected


@pytest.mark.parametrize("verify_each", [True, False])
def test_time_passes_times_the_passes_of_a_declared_pipeline(
    verify_each: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`physlayout-opt --time-passes`: under the pipeline's own `Pass NAME took` line, one
    indented line per pass it ran, in order, saying whether it was verified (after each
    pass that changed the module and after the first, as the pipeline verifies); the IR
    is the one printed without the flag."""
    from graph_harness import parse, verified_states

    from physlayout.cli import PhyslayoutOptMain
    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass

    source = Path(__file__).resolve().parents[2] / "examples" / "rfc_conv_relu_conv.mlir"
    spec = "physlayout-adreno" if verify_each else "physlayout-adreno{verify-each=false}"
    outputs: list[str] = []
    for timed in (False, True):
        out = tmp_path / f"out{timed}.mlir"
        args = [str(source), "-p", spec, "-o", str(out)] + (["--time-passes"] if timed else [])
        with pytest.raises(SystemExit) as exited:
            PhyslayoutOptMain(args=args).run()
        assert exited.value.code == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    lines = capsys.readouterr().out.splitlines()
    top = [k for k, line in enumerate(lines) if line.startswith("Pass physlayout-adreno took ")]
    assert len(top) == 1
    nested = [line for line in lines[top[0] + 1 :] if line.startswith("  Pass ")]
    assert len(nested) == len(lines) - top[0] - 1
    names = [line.split()[1] for line in nested]
    assert names == [p.name for p in PhyslayoutAdrenoPass().passes()]
    verified = [line for line in nested if "(verified in " in line]
    if verify_each:
        expected = verified_states(PhyslayoutAdrenoPass().passes(), parse(source.read_text()))
        assert len(verified) == expected
        assert all(line.endswith("(changed nothing: not verified)") for line in nested if line not in verified)
    else:
        assert verified == []
