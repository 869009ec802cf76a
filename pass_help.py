"""`physlayout passes [NAME ...]`: help for physlayout's passes and their options, as
`mlir-opt --help` gives it for upstream passes.

Generated from each pass registered in `universe.PASSES`: the summary is the first paragraph
of the pass class's docstring; the options are the class's dataclass fields (name with `-`
for `_`, type from the annotation, default from the field); each option's meaning comes from
the `Options:` block of the class docstring, the one place options are described:

    Options:
        option-name (type, default): what it means, which may go on
            over more indented lines.

`documentation_problems` lists where that block and the fields disagree (the tests require
none); help is still printed for such a pass, a missing meaning shown as such. The pass
options table of docs/passes.md is `options_table()`; `python -m physlayout.pass_help
docs/passes.md` (run by `make docs`) rewrites it.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.passes import ModulePass

from physlayout.transforms.pass_options import did_you_mean
from physlayout.universe import PASSES, get_all_passes

NO_MEANING = "(not documented)"
"""What the help shows for an option the `Options:` block does not describe."""

TABLE_HEADER = "| pass | option | type | default | meaning |\n|---|---|---|---|---|\n"
"""The header of the pass options table in docs/passes.md (the rows follow it)."""

_OPTIONS_HEADING = re.compile(r"^\s*Options\b[^\n]*:[ \t]*$", re.MULTILINE)
_OPTION_LINE = re.compile(r"\s+([a-z][a-z0-9-]*) \(([^,()]+), (.*?)\): (.*)")
_MODULE_DOCSTRING_REFERENCE = re.compile(r"\s*\((?:see )?(?:the )?module docstring\)")


@dataclass(frozen=True)
class PassOption:
    """One option of a pass, as it is written in a pipeline (`-p 'pass{name=default}'`)."""

    name: str
    """The option name, `-` for the field's `_`."""
    type: str
    """The field's annotation: `bool`, `int`, `float`, `str`, ... ."""
    default: str
    """The default as pipeline text: `true`/`false`, numbers, strings in double quotes;
    `required` for a field without a default."""
    meaning: str
    """The `Options:` block's description joined into one line; empty when it has none."""


@dataclass(frozen=True)
class PassHelp:
    """The help of one registered pass."""

    name: str
    """The pass name (`-p NAME`)."""
    module: str
    """The module that defines the pass (its docstring holds the full semantics)."""
    summary: str
    """The first paragraph of the class docstring, one line; a reference to the module
    docstring in it is dropped (the help names the module instead)."""
    options: tuple[PassOption, ...]
    """The options in field order."""
    documented: tuple[tuple[str, str, str, str], ...]
    """The `Options:` block as written: (name, type, default, meaning) per entry."""

    def usage(self) -> str:
        """The pipeline text that runs the pass with every option at its default, e.g.
        `-p 'fold-layout-rewrites{max-constant-elements=1048576}'`."""
        values = " ".join(
            f"{o.name}={o.default}" for o in self.options if o.default != "required"
        )
        return f"-p '{self.name}{{{values}}}'" if values else f"-p '{self.name}'"

    def text(self, width: int = 88) -> str:
        """The help as `physlayout passes NAME` prints it (lines wrapped at `width`)."""
        lines = [f"{self.name}: {self.summary}", "", f"usage: {self.usage()}", ""]
        if not self.options:
            lines.append("options: none")
        else:
            lines.append("options:")
        for option in self.options:
            lines.append(f"  {option.name}=<{option.type}>  (default: {option.default})")
            lines.extend(
                textwrap.wrap(
                    option.meaning or NO_MEANING,
                    width,
                    initial_indent="      ",
                    subsequent_indent="      ",
                    break_on_hyphens=False,
                )
            )
        lines += ["", f"semantics: python -m pydoc {self.module}"]
        return "\n".join(lines)

    def table_rows(self) -> list[str]:
        """The README table rows of the pass's options, one per option in field order."""
        return [
            f"| `{self.name}` | `{o.name}` | {o.type} | `{o.default}` | {o.meaning} |"
            for o in self.options
        ]


def documented_options(doc: str) -> list[tuple[str, str, str, str]]:
    """(name, type, default, meaning) of each entry of the `Options:` block of a docstring,
    in order; a meaning's continuation lines are joined with single spaces. The block starts
    at a line `Options...:` and runs to the docstring's end (so it comes last); empty when
    there is none."""
    heading = _OPTIONS_HEADING.search(doc)
    if heading is None:
        return []
    options: list[list[str]] = []
    for line in doc[heading.end() :].splitlines():
        match = _OPTION_LINE.match(line)
        if match:
            options.append(list(match.groups()))
        elif options and line.strip():
            options[-1][3] += " " + line.strip()
    return [(name, type_, default, meaning) for name, type_, default, meaning in options]


def format_default(value: Any) -> str:
    """`value` as pipeline text, as xDSL parses it back: booleans `true`/`false`, strings
    in double quotes, tuples comma-separated, None `none`, numbers as Python prints them."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return ",".join(format_default(v) for v in value)
    if value is None:
        return "none"
    return str(value)


def _default_of(field: dataclasses.Field[Any]) -> str:
    if field.default is not dataclasses.MISSING:
        return format_default(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return format_default(field.default_factory())
    return "required"


def _type_of(field: dataclasses.Field[Any]) -> str:
    annotation: Any = field.type
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))


def help_of(cls: type[ModulePass]) -> PassHelp:
    """The help of the pass class `cls` (see the module docstring)."""
    doc = cls.__doc__ or ""
    first = doc.strip().split("\n\n", 1)[0]
    summary = _MODULE_DOCSTRING_REFERENCE.sub("", " ".join(first.split()))
    documented = documented_options(doc)
    meanings = {name: meaning for name, _, _, meaning in documented}
    options: list[PassOption] = []
    for field in dataclasses.fields(cls):
        name = field.name.replace("_", "-")
        options.append(PassOption(name, _type_of(field), _default_of(field), meanings.get(name, "")))
    return PassHelp(cls.name, cls.__module__, summary, tuple(options), tuple(documented))


def pass_help(name: str) -> PassHelp:
    """The help of the physlayout pass `name`. Raises KeyError (naming the known passes) for
    a name that is no physlayout pass."""
    factory = get_all_passes().get(name)
    if factory is None:
        hint = did_you_mean(name, PASSES, quote="'")
        raise KeyError(
            f"unknown pass '{name}'{hint} (physlayout's passes: {', '.join(sorted(PASSES))})"
        )
    return help_of(factory())


def all_pass_help() -> list[PassHelp]:
    """The help of every physlayout pass, sorted by name."""
    return [pass_help(name) for name in sorted(PASSES)]


def documentation_problems(help_: PassHelp) -> list[str]:
    """Where a pass's `Options:` block disagrees with its fields: an option without a
    meaning, a documented option that is no field, or a documented type or default other
    than the field's. Empty when the help is complete."""
    problems: list[str] = []
    documented = {name: (type_, default) for name, type_, default, _ in help_.documented}
    for option in help_.options:
        if not option.meaning:
            problems.append(f"{help_.name}: option '{option.name}' has no description")
        elif documented[option.name] != (option.type, option.default):
            problems.append(
                f"{help_.name}: option '{option.name}' is documented as "
                f"{documented[option.name]}, but is ({option.type!r}, {option.default!r})"
            )
    fields = {option.name for option in help_.options}
    for name in documented:
        if name not in fields:
            problems.append(f"{help_.name}: documented option '{name}' is not a field")
    return problems


def options_table() -> str:
    """The pass options table (docs/passes.md): its header and one row per option of every pass
    (passes sorted by name, options in field order)."""
    rows = [row for help_ in all_pass_help() for row in help_.table_rows()]
    return TABLE_HEADER + "".join(f"{row}\n" for row in rows)


def with_options_table(readme: str) -> str:
    """`readme` (a Markdown page) with its pass options table (from `TABLE_HEADER` to the first line that is
    not a table row) replaced by `options_table()`. Raises ValueError when it has none."""
    start = readme.find(TABLE_HEADER)
    if start < 0:
        raise ValueError("no pass options table (its header line) in the page")
    end = start + len(TABLE_HEADER)
    while readme.startswith("|", end):
        end = readme.index("\n", end) + 1
    return readme[:start] + options_table() + readme[end:]


def add_passes_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    """Register `physlayout passes` in `sub`."""
    passes = sub.add_parser(
        "passes",
        help="list physlayout's passes, or show the options of the named ones",
        description="Without NAME: every physlayout pass and its summary. With NAMEs: each "
        "pass's summary, pipeline syntax and options (type, default, meaning).",
    )
    passes.add_argument("names", nargs="*", metavar="NAME", help="a pass name, e.g. apply-layout")


def passes_command(args: argparse.Namespace) -> int:
    """Run `physlayout passes`: print the list or the help of each named pass; exit status
    1 (with `error: ...` on stderr, nothing on stdout) when a name is no physlayout pass."""
    names: list[str] = args.names
    if not names:
        helps = all_pass_help()
        width = max(len(h.name) for h in helps)
        for help_ in helps:
            print(f"{help_.name.ljust(width)}  {help_.summary}")
        return 0
    try:
        texts = [pass_help(name).text() for name in names]
    except KeyError as err:
        print(f"error: {err.args[0]}", file=sys.stderr)
        return 1
    print("\n\n".join(texts))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m physlayout.pass_help docs/passes.md`: rewrite the page's pass options table."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("readme", help="the Markdown page to update in place (docs/passes.md)")
    args = parser.parse_args(argv)
    with open(args.readme, encoding="utf-8") as file:
        text = file.read()
    updated = with_options_table(text)
    if updated != text:
        with open(args.readme, "w", encoding="utf-8") as file:
            file.write(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
