"""Optimization remarks: MLIR-style notes that a pass prints about what it did and why.

A pass with a `remarks` option calls `emit_remark(pass_name, op, message)`; the remark goes
to stderr as `FILE:LINE:COL: remark: PASS: MESSAGE` when `op` carries a file location (the
`physlayout-opt` and `physlayout run` parsers attach one to every parsed op; stock
`xdsl-opt` does so only for an explicit `loc(...)`), else as `remark: PASS: MESSAGE`.
Remarks are diagnostics only: they never change the IR.
"""

from __future__ import annotations

import sys
from typing import TextIO

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation


def location_prefix(op: Operation) -> str:
    """`FILE:LINE:COL: ` of `op`'s file location, or an empty string without one."""
    location = op.location
    if not isinstance(location, FileLineColLoc):
        return ""
    return f"{location.filename.data}:{location.line.data}:{location.column.data}: "


def format_remark(pass_name: str, op: Operation, message: str) -> str:
    """The text of a remark about `op`."""
    return f"{location_prefix(op)}remark: {pass_name}: {message}"


def emit_remark(pass_name: str, op: Operation, message: str, stream: TextIO | None = None) -> None:
    """Print a remark about `op` to `stream` (default: stderr)."""
    print(format_remark(pass_name, op, message), file=stream or sys.stderr)
