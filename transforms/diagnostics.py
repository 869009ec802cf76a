"""Warnings and remarks from passes, printed MLIR-style on stderr.

A pass that completes but leaves part of the input as it is calls `emit_warning(op, message)`;
a pass with a `remarks` option reports what it did and why with
`emit_remark(pass_name, op, message)`. Both are written to stderr as MLIR writes them:
``FILE:LINE:COL: warning: MESSAGE`` (or ``remark: PASS: MESSAGE``), followed by the source
line and a caret where the driver knows it, else ``warning: MESSAGE``. An op's position is
the one the driver running the passes recorded while parsing (`physlayout-opt` installs such a
locator with `source_locator`), else its `FileLineColLoc` (`physlayout-opt` and
`physlayout run` attach one to every parsed op; stock `xdsl-opt` knows only explicit
``loc(...)`` locations). Diagnostics never change the IR.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException


class OpPassFailure(PassFailedException):
    """A pass failure about one op (a function whose signature holds an invalid buffer type,
    the op defining such a buffer): drivers report it at that op's source position, as
    `physlayout-opt` and `physlayout run` do."""

    op: Operation

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


Locator = Callable[[Operation], tuple[str, str] | None]
"""Finds the source of an op: ``(FILE:LINE:COL, source line with a caret line)``."""

_locators: list[Locator] = []


@contextmanager
def source_locator(locate: Locator) -> Iterator[None]:
    """Locate the diagnostics emitted inside the `with` block with `locate` (innermost wins)."""
    _locators.append(locate)
    try:
        yield
    finally:
        _locators.remove(locate)


def diagnostic_text(severity: str, op: Operation | None, message: str) -> str:
    """``[LOC: ]SEVERITY: MESSAGE`` (plus the source context where known), no final newline."""
    if op is not None:
        for locate in reversed(_locators):
            found = locate(op)
            if found is not None:
                where, context = found
                return f"{where}: {severity}: {message}" + (f"\n{context}" if context else "")
        location = op.location
        if isinstance(location, FileLineColLoc):
            where = f"{location.filename.data}:{location.line.data}:{location.column.data}"
            return f"{where}: {severity}: {message}"
    return f"{severity}: {message}"


def warning_text(op: Operation | None, message: str) -> str:
    """The text `emit_warning` prints for `message` at `op`."""
    return diagnostic_text("warning", op, message)


def emit_warning(op: Operation | None, message: str) -> None:
    """Print `message` as a warning located at `op` (where its location is known)."""
    print(warning_text(op, message), file=sys.stderr)


def format_remark(pass_name: str, op: Operation | None, message: str) -> str:
    """The text of a remark of `pass_name` about `op` (None: a remark without a location)."""
    return diagnostic_text("remark", op, f"{pass_name}: {message}")


def emit_remark(
    pass_name: str, op: Operation | None, message: str, stream: TextIO | None = None
) -> None:
    """Print a remark about `op` (None: without a location) to `stream` (default: stderr)."""
    print(format_remark(pass_name, op, message), file=stream or sys.stderr)


def require_options(pass_name: str, minimum: int = 1, **options: int) -> None:
    """Refuse integer options below `minimum` (image limits, sizes): a PassFailedException
    naming the option as written on the command line (`max-image-width`)."""
    for name, value in options.items():
        if value < minimum:
            raise PassFailedException(
                f"{pass_name}: option {name.replace('_', '-')} must be at least {minimum}, "
                f"got {value}"
            )
