"""Warnings from passes, printed MLIR-style on stderr.

A pass that completes but leaves part of the input as it is (and wants to say why) calls
`emit_warning(op, message)`. The warning is written to stderr as MLIR writes one:
``FILE:LINE:COL: warning: MESSAGE`` followed by the source line, when the op's location is
known, else ``warning: MESSAGE``. An op's location is its `FileLineColLoc` (written with
``loc(...)`` in the input), or the source position that the driver running the passes
recorded while parsing: `physlayout-opt` installs such a locator with `source_locator`;
stock `xdsl-opt` knows only explicit ``loc(...)`` locations.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

Locator = Callable[[Operation], tuple[str, str] | None]
"""Finds the source of an op: ``(FILE:LINE:COL, source line with a caret line)``."""

_locators: list[Locator] = []


@contextmanager
def source_locator(locate: Locator) -> Iterator[None]:
    """Locate the warnings emitted inside the `with` block with `locate` (innermost wins)."""
    _locators.append(locate)
    try:
        yield
    finally:
        _locators.remove(locate)


def warning_text(op: Operation | None, message: str) -> str:
    """The text `emit_warning` prints for `message` at `op` (without the final newline)."""
    if op is not None:
        location = op.location
        if isinstance(location, FileLineColLoc):
            where = f"{location.filename.data}:{location.line.data}:{location.column.data}"
            return f"{where}: warning: {message}"
        for locate in reversed(_locators):
            found = locate(op)
            if found is not None:
                where, context = found
                return f"{where}: warning: {message}" + (f"\n{context}" if context else "")
    return f"warning: {message}"


def emit_warning(op: Operation | None, message: str) -> None:
    """Print `message` as a warning located at `op` (where its location is known)."""
    print(warning_text(op, message), file=sys.stderr)
