"""`physlayout passes`: every registered pass has a summary and a described option for every
field, with its real type and default; the help's pipeline text parses back (with xDSL) into
the pass at its defaults; docs/passes.md's table is the generated one."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from dataclasses import dataclass

import pytest
from xdsl.passes import ModulePass, PassPipeline

from physlayout.pass_help import (
    NO_MEANING,
    TABLE_HEADER,
    all_pass_help,
    documentation_problems,
    documented_options,
    help_of,
    options_table,
    pass_help,
    passes_command,
    with_options_table,
)
from physlayout.universe import PASSES, get_all_passes


def test_every_registered_pass_has_complete_help() -> None:
    helps = all_pass_help()
    assert [h.name for h in helps] == sorted(PASSES)
    for help_ in helps:
        assert help_.summary and "module docstring" not in help_.summary, help_.name
        assert documentation_problems(help_) == []
        assert all(option.meaning for option in help_.options)
    assert sum(len(h.options) for h in helps) >= 18


@pytest.mark.parametrize("name", sorted(PASSES))
def test_help_states_the_real_types_and_defaults(name: str) -> None:
    cls = get_all_passes()[name]()
    help_ = pass_help(name)
    fields = dataclasses.fields(cls)
    assert [o.name for o in help_.options] == [f.name.replace("_", "-") for f in fields]
    for option, field in zip(help_.options, fields, strict=True):
        assert option.type == type(field.default).__name__
        value = field.default
        expected = f'"{value}"' if isinstance(value, str) else str(value)
        if isinstance(value, bool):
            expected = expected.lower()
        assert option.default == expected


@pytest.mark.parametrize("name", sorted(PASSES))
def test_usage_parses_back_into_the_default_pass(name: str) -> None:
    """The `-p '...'` text the help prints is a pipeline xDSL parses into the pass with
    every option at its default (so the printed defaults are spelled as the parser wants)."""
    usage = pass_help(name).usage()
    assert usage.startswith("-p '") and usage.endswith("'")
    pipeline = PassPipeline.parse_spec(get_all_passes(), usage[4:-1])
    (parsed,) = pipeline.passes
    assert parsed == get_all_passes()[name]()()


def test_documented_options_reads_wrapped_meanings() -> None:
    doc = """Summary.

    More text: with a colon.

    Options (passed on):
        first-option (int, 3): one line.
        second (str, "a,b"): a meaning that goes on
            over two lines.
    """
    assert documented_options(doc) == [
        ("first-option", "int", "3", "one line."),
        ("second", "str", '"a,b"', "a meaning that goes on over two lines."),
    ]
    assert documented_options("No options here: none.") == []


@dataclass(frozen=True)
class _DriftingPass(ModulePass):
    """A pass whose Options block drifted from its fields.

    Options:
        kept (int, 2): documented with the wrong default.
        gone (bool, false): no such field.
    """

    name = "drifting-pass"

    kept: int = 1
    missing: bool = True

    def apply(self, ctx: object, op: object) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        pass


def test_documentation_problems_finds_drift() -> None:
    help_ = help_of(_DriftingPass)
    assert help_.summary == "A pass whose Options block drifted from its fields."
    problems = documentation_problems(help_)
    assert len(problems) == 3
    assert "'kept' is documented as ('int', '2'), but is ('int', '1')" in problems[0]
    assert "'missing' has no description" in problems[1]
    assert "'gone' is not a field" in problems[2]
    assert f"      {NO_MEANING}" in help_.text()


def test_readme_table_is_replaced() -> None:
    stale = f"intro\n\n{TABLE_HEADER}| `x` | `y` | int | `1` | old |\n\nafter\n"
    assert with_options_table(stale) == f"intro\n\n{options_table()}\nafter\n"
    with pytest.raises(ValueError, match="no pass options table"):
        with_options_table("no table")


def test_passes_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    assert passes_command(argparse.Namespace(names=["fold-layout-rewrites", "flatten-buffers"])) == 0
    out = capsys.readouterr().out
    assert out.startswith("fold-layout-rewrites: Fold adjacent layout rewrites")
    assert "usage: -p 'fold-layout-rewrites{max-constant-elements=1048576}'" in out
    assert "  max-constant-elements=<int>  (default: 1048576)\n      the largest constant" in out
    assert "\n\nflatten-buffers: " in out and "options: none" in out
    assert passes_command(argparse.Namespace(names=[])) == 0
    listing = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listing] == sorted(PASSES)


def test_unknown_pass_is_an_error() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from physlayout.cli import main; main()", "passes", "nope"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: unknown pass 'nope' (physlayout's passes: ")
    assert "Traceback" not in result.stderr
