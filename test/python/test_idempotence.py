"""Every pass is idempotent: run on every lit input and example (each `// -----` chunk) that
it accepts, a second run of the same pass changes nothing (the printed IR is identical)."""

from __future__ import annotations

from importlib import import_module

import pytest
from test_no_crash import CHUNKS
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

from physlayout.universe import PASSES, make_context


def _text(module: ModuleOp) -> str:
    return str(module)


@pytest.mark.parametrize("name", sorted(PASSES))
def test_a_second_run_changes_nothing(name: str) -> None:
    module_name, class_name = PASSES[name]
    pass_class = getattr(import_module(f"physlayout.{module_name}"), class_name)
    applied = 0
    for where, text in CHUNKS:
        ctx = make_context(allow_unregistered=True)
        try:
            module = Parser(ctx, text).parse_module()
            module.verify()
            pass_class().apply(ctx, module)
        except (ParseError, DiagnosticException):
            continue
        once = _text(module)
        pass_class().apply(ctx, module)
        assert _text(module) == once, f"{name} is not idempotent on {where}"
        applied += 1
    assert applied > 0
