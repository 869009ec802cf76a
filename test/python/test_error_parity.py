"""Error parity: cases of the invalid-input corpus (test/diagnostics) give the same message
through `physlayout-opt` (the lit files), through `physlayout run`, and through the Python
API (parser, verifier, `PassPipeline`, the OpenCL target), always as one of xDSL's
diagnostic exceptions (DESIGN.md "Errors"), never an internal exception."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError

from physlayout.cli import main
from physlayout.universe import get_all_passes, make_context

CORPUS = Path(__file__).parent.parent / "diagnostics"

RUN_AREAS = {"index-map-syntax", "buffer-type", "ops", "separators", "padding", "calls", "aliases"}
"""Areas whose cases also go through `physlayout run` (its own pipeline reports the same
message): the textures area uses smaller image limits than a device, the targets area needs
the un-vectorized input the lit file feeds to `-t opencl`."""

PARSE_ONLY = {"index-map-syntax", "buffer-type", "ops", "separators"}
"""Areas whose cases fail while parsing or verifying: `physlayout run` needs no device."""

SAMPLE = 5
"""Cases per area (the first ones of each file)."""

_CHECK = re.compile(r"^// CHECK: (.*)$")


def _message(check: str) -> str:
    """The message a CHECK line of the corpus expects (without location and severity)."""
    check = check.replace("{{\\[\\[}}", "[[")
    if check.startswith("{{^}}"):
        return check.removeprefix("{{^}}").removesuffix("{{$}}")
    return check.split(": error: ", 1)[1].removesuffix("{{$}}")


def _pipeline(run_line: str) -> tuple[str | None, bool]:
    """The `-p` pipeline and whether `-t opencl` is given, from a physlayout-opt RUN line."""
    passes = re.search(r" -p (?:'([^']*)'|(\S+))", run_line)
    spec = None if passes is None else passes.group(1) or passes.group(2)
    return spec, " -t opencl" in run_line


def _cases() -> list[object]:
    cases: list[object] = []
    for path in sorted(CORPUS.glob("*.mlir")):
        text = path.read_text()
        run_line = next(
            (line for line in text.splitlines() if "--split-input-file" in line), None
        )
        if run_line is None:  # RUN-line-per-case files (pass-options, pass-order, hostile)
            continue
        spec, target = _pipeline(run_line)
        chunks = text.split("\n// -----\n")
        for index, chunk in enumerate(chunks[:SAMPLE]):
            checks = [m.group(1) for line in chunk.splitlines() if (m := _CHECK.match(line))]
            source = "\n".join(
                line for line in chunk.splitlines() if not line.startswith("// CHECK")
            )
            cases.append(
                pytest.param(
                    path.stem, source, _message(checks[0]), spec, target,
                    id=f"{path.stem}-{index}",
                )
            )
    return cases


CASES = _cases()


def _normalized(text: str) -> str:
    return " ".join(text.split())


def _api_error(source: str, spec: str | None, target: bool) -> DiagnosticException | ParseError:
    """The diagnostic the Python API raises on `source` (any other exception fails)."""
    ctx = make_context()
    try:
        module = Parser(ctx, source, "case.mlir").parse_module()
        module.verify()
        if spec is not None:
            PassPipeline.parse_spec(get_all_passes(), spec).apply(ctx, module)
        if target:
            from physlayout.lowering.opencl import OpenCLTarget

            OpenCLTarget().emit(ctx, module, StringIO())
    except (ParseError, DiagnosticException) as err:
        return err
    pytest.fail("the Python API accepted an invalid case")


def test_corpus_sample_is_large() -> None:
    areas = {case.values[0] for case in CASES}  # pyright: ignore[reportAttributeAccessIssue]
    assert len(areas) >= 8 and len(CASES) >= 40


@pytest.mark.parametrize(("area", "source", "message", "spec", "target"), CASES)
def test_python_api_raises_the_same_diagnostic(
    area: str, source: str, message: str, spec: str | None, target: bool
) -> None:
    error = _api_error(source, spec, target)
    # The verifier's own text lacks the "'op' op " prefix physlayout-opt adds to it.
    core = re.sub(r"^'[\w.]+' op ", "", message)
    assert _normalized(core) in _normalized(str(error))


@pytest.mark.parametrize(
    ("area", "source", "message", "spec", "target"),
    [case for case in CASES if case.values[0] in RUN_AREAS],  # pyright: ignore[reportAttributeAccessIssue]
)
def test_physlayout_run_reports_the_same_diagnostic(
    area: str,
    source: str,
    message: str,
    spec: str | None,
    target: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    if area not in PARSE_ONLY:
        request.getfixturevalue("runtime")  # the passes run after the device is opened
    path = tmp_path / "case.mlir"
    path.write_text(source)
    with pytest.raises(SystemExit) as exited:
        main(["run", str(path)])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "unexpected" not in err
    assert _normalized(message) in _normalized(err)
