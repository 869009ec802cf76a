"""`VerifyingPipeline` (lowering/pipelines.py) and the passes that say they changed nothing
(`PhyslayoutPass.apply_and_report`): the pipeline verifies after every pass that changed the
module and after the first, never after a pass that says it changed nothing; and a pass
says so only when the module is exactly the one it was given (its printed text, on the
examples, the bottleneck model and random torch-mlir-style models, at the stage where the
declared pipeline runs it)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fuzz.graphs import Graph
from fuzz.models import models
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import PassFailedException

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass, VerifyingPipeline
from physlayout.runtime.opencl import parse_module
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.universe import make_context
from physlayout.verification import PassedChecks

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Says(PhyslayoutPass):
    """Changes nothing; says `changed`."""

    name = "test-says"

    changed: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        return self.changed


@dataclass(frozen=True)
class Breaks(PhyslayoutPass):
    """Adds a function without a terminator (invalid IR); says it changed the module."""

    name = "test-breaks"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = func.FuncOp("broken", ((), ()))
        function.body.block.add_op(arith.ConstantOp(IntegerAttr(1, i32)))
        op.body.block.add_op(function)


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the passes after which the pipelines verify, in order."""
    from physlayout.lowering import pipelines

    seen: list[str] = []
    original = pipelines.verify_after

    def counted(
        previous: ModulePass | None,
        module: ModuleOp,
        next_: ModulePass | None,
        passed: PassedChecks | None = None,
    ) -> None:
        seen.append(previous.name if previous else "")
        original(previous, module, next_, passed)

    monkeypatch.setattr(pipelines, "verify_after", counted)
    return seen


def test_verifies_after_changes_and_after_the_first_pass(verifications: list[str]) -> None:
    passes = (
        Says(False), Says(True), Says(False), Says(False), Says(True), DeadCodeElimination()
    )  # fmt: skip
    VerifyingPipeline(passes).apply(make_context(), ModuleOp([]))
    # after the first (said nothing changed: the input is verified once), the second,
    # the fifth and xDSL's dce (which cannot say)
    assert verifications == ["test-says", "test-says", "test-says", "dce"]
    verifications.clear()
    VerifyingPipeline(passes, None, False).apply(make_context(), ModuleOp([]))
    assert verifications == []


def test_callbacks_are_those_of_xdsl_pass_pipeline() -> None:
    for passes in ((), (Says(True),), (Says(False), DeadCodeElimination(), Says(True))):
        calls: dict[str, list[tuple[str, str]]] = {"xdsl": [], "ours": []}
        for kind, pipeline in (("xdsl", PassPipeline), ("ours", VerifyingPipeline)):

            def record(
                previous: ModulePass | None,
                _module: ModuleOp,
                next_: ModulePass | None,
                into: list[tuple[str, str]] = calls[kind],
            ) -> None:
                into.append((previous.name if previous else "", next_.name if next_ else ""))

            pipeline(passes, record).apply(make_context(), ModuleOp([]))
        assert calls["ours"] == calls["xdsl"]


def test_invalid_ir_is_named_after_a_skipped_verification() -> None:
    with pytest.raises(PassFailedException, match="test-breaks produced invalid IR"):
        VerifyingPipeline((Says(False), Says(False), Breaks())).apply(make_context(), ModuleOp([]))


def stages(text: str) -> Iterator[tuple[PhyslayoutPass, str, bool, str]]:
    """Run `physlayout-adreno`'s passes on `text`: for each pass that can say it changed
    nothing, the pass, the module's text before it, what it said and the text after."""
    module = parse_module(text)
    ctx = make_context()
    for pass_ in PhyslayoutAdrenoPass().passes():
        if (
            not isinstance(pass_, PhyslayoutPass)
            or type(pass_).apply_and_report is PhyslayoutPass.apply_and_report
        ):
            pass_.apply(ctx, module)
            continue
        before = str(module)
        changed = pass_.apply_and_report(ctx, module)
        yield pass_, before, changed, str(module)


def check_reports(text: str) -> set[tuple[str, bool]]:
    """Every 'changed nothing' is true (see `stages`); the (pass, report) pairs seen."""
    seen: set[tuple[str, bool]] = set()
    for pass_, before, changed, after in stages(text):
        if not changed:
            assert after == before, pass_.name
        seen.add((pass_.name, changed))
    return seen


INPUTS = [
    ROOT / "examples" / "rfc_conv_relu_conv.mlir",
    ROOT / "examples" / "models" / "bottleneck.mlir",
]


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_passes_say_they_changed_nothing_only_when_true(path: Path) -> None:
    seen = check_reports(path.read_text())
    assert any(not changed for _, changed in seen)  # the skip is exercised here


@settings(
    max_examples=10,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(models())
def test_passes_say_they_changed_nothing_only_when_true_on_random_models(model: Graph) -> None:
    with warnings.catch_warnings(), contextlib.suppress(PassFailedException):
        # (a model the pipeline refuses is skipped: the fuzz campaign counts those)
        warnings.simplefilter("ignore")
        check_reports(model.text)
