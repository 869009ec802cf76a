"""Given schedules: a table of `#layout.schedule`s by kernel signature (what the tuner keeps).

`kernel_signature(kernel)` names what a kernel computes, independently of where it comes
from: a SHA-256 (its first `SIGNATURE_HEX` hex digits) of the kernel's text as printed
with its name, its discardable attributes (a schedule included) and every SSA name hint
left out. The text holds the whole body, so the launch extents (the constant bounds of
its `scf.parallel`), the buffer types (shapes, layouts, scopes, element types) and every
op are in it: two kernels of one signature compute the same thing on the same extents,
in one model or in two.

A table in text (the `schedules` option of `apply-schedules` and `physlayout-adreno`) is
`SIG=TILE[/WORKGROUP][/uUNROLL]` entries joined by `;`, each extent list written with `x`:

    3f0c...=1x2x1x4/1x1x4x16;9a1b...=1x1x2x4/u4

`apply-schedules{schedules=TABLE}` gives a kernel without a schedule the table's entry for
its signature (before its heuristic, which then leaves that kernel alone).
`SCHEDULE_FORMAT` versions what a table means (the schedule attribute's fields and the
signature's text): a tuning cache written under another is not used (`runtime/
tuning_cache.py`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout_schedule import ScheduleAttr

SCHEDULE_FORMAT = 1
"""The version of what a schedule table means (see the module docstring)."""

SIGNATURE_HEX = 24
"""Hex digits of a kernel signature (96 bits)."""


def kernel_signature(kernel: func.FuncOp) -> str:
    """The signature of `kernel` (module docstring); `kernel` is not changed."""
    copy = kernel.clone()
    copy.sym_name = StringAttr("kernel")
    copy.attributes.clear()
    for op in copy.walk():
        for result in op.results:
            result.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    text = str(copy)
    return hashlib.sha256(text.encode()).hexdigest()[:SIGNATURE_HEX]


def schedule_text(schedule: ScheduleAttr) -> str:
    """`TILE[/WORKGROUP][/uUNROLL]` of one table entry."""
    parts = ["x".join(map(str, schedule.tile))]
    if schedule.workgroup:
        parts.append("x".join(map(str, schedule.workgroup)))
    if schedule.unroll:
        parts.append(f"u{schedule.unroll}")
    return "/".join(parts)


def parse_schedule_text(text: str) -> ScheduleAttr:
    """The schedule of `TILE[/WORKGROUP][/uUNROLL]`; VerifyException when ill-formed."""
    parts = text.strip().split("/")
    try:
        tile = _extents(parts[0])
        workgroup: tuple[int, ...] = ()
        unroll = 0
        for part in parts[1:]:
            if part.startswith("u"):
                unroll = int(part[1:])
            elif not workgroup:
                workgroup = _extents(part)
            else:
                raise ValueError("two work-groups")
    except ValueError:
        raise VerifyException(
            f"bad schedule '{text}': expected TILE[/WORKGROUP][/uUNROLL], e.g. 1x2x1x4/1x1x4x16/u4"
        ) from None
    return ScheduleAttr.of(tile, workgroup, unroll)


def _extents(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in text.split("x"))


def schedule_table_text(table: Mapping[str, ScheduleAttr]) -> str:
    """The text of `table` (entries in signature order, so equal tables give equal text)."""
    return ";".join(f"{sig}={schedule_text(table[sig])}" for sig in sorted(table))


def parse_schedule_table(text: str) -> dict[str, ScheduleAttr]:
    """The table of `text` (module docstring); VerifyException naming a bad entry."""
    table: dict[str, ScheduleAttr] = {}
    for entry in text.split(";"):
        if not entry.strip():
            continue
        signature, equals, schedule = entry.partition("=")
        signature = signature.strip()
        if not equals or not signature or not all(c in "0123456789abcdef" for c in signature):
            raise VerifyException(
                f"bad schedule table entry '{entry}': expected SIGNATURE=TILE[/WORKGROUP][/uN] "
                "with a hex signature"
            )
        table[signature] = parse_schedule_text(schedule)
    return table
