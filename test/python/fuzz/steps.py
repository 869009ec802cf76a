"""Steps of the differential checker and their outcomes: `Report`, `Step`, `Pipeline`, and
applying passes with every exception classified.

Outcomes of one step (a pipeline applied to the source, or a backend run):

- `equal`: the output verifies (op verifiers, and `verify-buffers` when the source
  passes it) and computes what the source computes: every buffer argument equal in its
  logical layout, every result equal, and the padding of every buffer the function writes
  holding the pad value (arguments start with garbage in their padding: reads never reach
  it);
- `refused`: the pass raised one of xDSL's diagnostic exceptions (`ParseError`,
  `VerifyException`, `PassFailedException`, `DiagnosticException`);
- `mismatch`: a different value, padding not filled, output IR that does not verify (or
  that `verify-buffers` rejects although the source passes; or that it accepts although
  the source is rejected: the pass hid an invalid buffer), or output the evaluator cannot
  run;
- `crash`: any other exception;
- `skipped`: the step did not apply (its prefix failed, a backend is missing, the
  function cannot be run there).

A `Pipeline` is a named step: passes applied to its parent step's output (steps share
their prefixes). `apply_verified` applies and verifies one, recording a refusal, invalid
output or crash; `check_idempotent` runs a pass documented as idempotent a second time on
its output, which must not change (step `NAME (again)`). `verified_source` and
`evaluate_source` say why a source is `invalid` (a generator bug); `crash_detail` names the
innermost physlayout frame of a crash. The checkers that use them are `fuzz.checker`
(buffer-level programs, graphs) and `fuzz.model_checker` (models).
"""

from __future__ import annotations

import io
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError

import physlayout
from physlayout.universe import make_context

DIAGNOSTICS = (ParseError, DiagnosticException)
"""xDSL's diagnostic exceptions (VerifyException and PassFailedException derive from
DiagnosticException)."""
OUTCOMES = ("equal", "refused", "mismatch", "crash", "skipped")


def module_text(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def verified_source(text: str, report: Report) -> ModuleOp | None:
    """`text` parsed and verified, or None with `report.invalid` saying why not."""
    try:
        source = parse(text)
        source.verify()
    except DIAGNOSTICS as err:
        report.invalid = f"source does not verify: {describe(err)}"
        return None
    return source


@dataclass
class Step:
    """The outcome of one step on one program."""

    name: str
    outcome: str
    detail: str = ""


@dataclass
class Report:
    """Every step's outcome for one program; `invalid` says why the source itself is bad."""

    steps: list[Step] = field(default_factory=list[Step])
    invalid: str | None = None

    def add(self, name: str, outcome: str, detail: str = "") -> Step:
        step = Step(name, outcome, detail)
        self.steps.append(step)
        return step

    def failures(self) -> list[Step]:
        return [s for s in self.steps if s.outcome in ("mismatch", "crash")]

    @property
    def outcome(self) -> str:
        """The program's outcome: `invalid` (generator bug), else `crash` or `mismatch` when
        any step has one, else `refused` when the level's main pipeline refused it
        (`apply-layout` for buffer-level programs, `flow-layout-rewrites` or
        `fold-layout-rewrites` for graph-level ones, `graph-passes` for models), else
        `equal`. Refusals of other steps
        (e.g. `flatten-buffers` before `apply-layout`, or an OpenCL limitation) are counted
        per step only."""
        if self.invalid is not None:
            return "invalid"
        kinds = {s.outcome for s in self.steps}
        for kind in ("crash", "mismatch"):
            if kind in kinds:
                return kind
        main = ("apply-layout", "fold-layout-rewrites", "flow-layout-rewrites", "graph-passes")
        if any(s.outcome == "refused" and s.name in main for s in self.steps):
            return "refused"
        return "equal"


def describe(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(err).__name__}: {first[:300]}"


_PACKAGE_ROOT = str(Path(physlayout.__file__).resolve().parent) + "/"
"""The installed physlayout package's folder (the checkout, for an editable install)."""


def _is_physlayout_frame(filename: str) -> bool:
    if "/site-packages/" in filename or "/test/" in filename:
        return False
    return filename.startswith(_PACKAGE_ROOT) or "physlayout" in filename or "/wt/" in filename


def evaluate_source(report: Report, run: Callable[[], list[Any]]) -> list[Any] | None:
    """The source's outputs (`run()`), or None after recording in `report` why it does not
    run: a diagnostic makes the program invalid, anything else is a crash."""
    try:
        return run()
    except DIAGNOSTICS as err:
        report.invalid = f"source does not run: {describe(err)}"
    except Exception as err:
        report.add("evaluate-source", "crash", crash_detail(err))
    return None


def crash_detail(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    where = next(
        (
            f"{f.filename.rsplit('/', 2)[-2]}/{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"
            for f in reversed(frames)
            if _is_physlayout_frame(f.filename)
        ),
        "?",
    )
    return f"{describe(err)} at {where}"


@dataclass(frozen=True)
class Pipeline:
    """A named step: `passes` applied to the output of `parent` (None: the source).
    `idempotent`: the last pass, run again on the output, must change nothing (checked
    as the extra step `NAME (again)`)."""

    name: str
    parent: str | None
    passes: Callable[[], list[ModulePass]]
    idempotent: bool = False


def apply_verified(
    report: Report,
    step: str,
    passes: Sequence[ModulePass],
    module: ModuleOp,
    label: str | None = None,
) -> bool:
    """Apply `passes` to `module`, then verify it; whether both succeeded. Otherwise the
    step is recorded in `report`: `refused` (an xDSL diagnostic), `mismatch` (output that
    does not verify) or `crash`; `label` (a pass name) prefixes the details."""
    ctx = make_context()
    prefix = f"{label}: " if label else ""
    try:
        for one_pass in passes:
            one_pass.apply(ctx, module)
    except DIAGNOSTICS as err:
        report.add(step, "refused", prefix + describe(err))
        return False
    except Exception as err:
        report.add(step, "crash", prefix + crash_detail(err))
        return False
    try:
        module.verify()
    except DIAGNOSTICS as err:
        what = f"{label} produced invalid IR" if label else "output does not verify"
        report.add(step, "mismatch", f"{what}: {describe(err)}")
        return False
    except Exception as err:
        output = f"{label}'s output" if label else "the output"
        report.add(step, "crash", f"verifying {output}: {crash_detail(err)}")
        return False
    return True


def check_idempotent(pipeline: Pipeline, module: ModuleOp, report: Report) -> None:
    """Run the step's own passes (after its prefix) again on its output: nothing may change."""
    if not pipeline.idempotent:
        return
    name = f"{pipeline.name} (again)"
    again = module.clone()
    try:
        for step_pass in pipeline.passes():
            step_pass.apply(make_context(), again)
    except DIAGNOSTICS as err:
        report.add(name, "mismatch", f"refuses its own output: {describe(err)}")
        return
    except Exception as err:
        report.add(name, "crash", crash_detail(err))
        return
    if module_text(again) != module_text(module):
        report.add(name, "mismatch", "not idempotent: a second run changes the module")
        return
    report.add(name, "equal")
