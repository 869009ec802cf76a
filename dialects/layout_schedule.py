"""`#layout.schedule<...>`: the register-tile schedule of one buffer-level kernel.

A kernel (a `func.func` whose body is one top-level `scf.parallel`) carries its schedule in
the discardable attribute `layout.schedule` until `apply-schedules` applies it, then in
`layout.scheduled` (kept for `-t opencl`, which takes the work-group size from it, and so a
second run changes nothing):

    func.func @conv(...) attributes {layout.schedule = #layout.schedule<tile = [1, 2, 1, 4],
                                                                      workgroup = [1, 1, 4, 16]>}

- `tile[k]` (>= 1): how many consecutive iterations of axis k of the kernel's `scf.parallel`
  one work-item computes (axes in the loop's order, e.g. batch, channel blocks, rows,
  columns of an NCHW4c convolution); all 1 is the unscheduled kernel.
- `unroll` (>= 0, optional, default 0): the reduction loops the tile jams (`scf.for`s with
  constant bounds) that run at most `unroll` iterations are unrolled, in order (a small
  window written out: each iteration's ops follow the previous one's, as before).
- `workgroup[k]` (>= 1, optional): the work-group extent along axis k, counted in work-items
  (tiles). The axes `-t opencl` maps to work-item indices take their extent from it (an
  extent that does not divide that axis's work-items is lowered to its largest divisor that
  does); without it the runtime chooses (`work_group_shape`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

SCHEDULE = "layout.schedule"
"""The function attribute holding a kernel's pending schedule."""
SCHEDULED = "layout.scheduled"
"""The function attribute holding a kernel's applied schedule."""


@irdl_attr_definition
class ScheduleAttr(Data[tuple[tuple[int, ...], tuple[int, ...], int]]):
    """`#layout.schedule<tile = [...] [, unroll = N] [, workgroup = [...]]>` (see the module
    docstring)."""

    name = "layout.schedule"

    @staticmethod
    def of(tile: Sequence[int], workgroup: Sequence[int] = (), unroll: int = 0) -> ScheduleAttr:
        """The schedule of `tile`, `workgroup` and `unroll` (VerifyException when ill-formed)."""
        attr = ScheduleAttr((tuple(tile), tuple(workgroup), unroll))
        attr.verify()
        return attr

    @property
    def tile(self) -> tuple[int, ...]:
        """Iterations per work-item along each parallel axis."""
        return self.data[0]

    @property
    def workgroup(self) -> tuple[int, ...]:
        """Work-items per work-group along each parallel axis (empty: the runtime's choice)."""
        return self.data[1]

    @property
    def unroll(self) -> int:
        """Reduction loops of at most this many iterations are unrolled (0: none)."""
        return self.data[2]

    def verify(self) -> None:
        tile, workgroup, unroll = self.data
        if unroll < 0:
            raise VerifyException(f"#layout.schedule: unroll must not be negative, got {unroll}")
        if not tile:
            raise VerifyException("#layout.schedule: tile must name at least one axis")
        if any(t < 1 for t in tile) or any(w < 1 for w in workgroup):
            raise VerifyException(
                f"#layout.schedule: tile {list(tile)} and workgroup {list(workgroup)} must be "
                "positive"
            )
        if workgroup and len(workgroup) != len(tile):
            raise VerifyException(
                f"#layout.schedule: workgroup has {len(workgroup)} axes, tile {len(tile)}"
            )

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        parser.parse_punctuation("<")
        parser.parse_keyword("tile")
        parser.parse_punctuation("=")
        tile = cls._ints(parser)
        workgroup: tuple[int, ...] = ()
        unroll = 0
        more = parser.parse_optional_punctuation(",") is not None
        if more and parser.parse_optional_keyword("unroll"):
            parser.parse_punctuation("=")
            unroll = parser.parse_integer(allow_boolean=False)
            more = parser.parse_optional_punctuation(",") is not None
        if more:
            parser.parse_keyword("workgroup")
            parser.parse_punctuation("=")
            workgroup = cls._ints(parser)
        parser.parse_punctuation(">")
        return tile, workgroup, unroll

    @staticmethod
    def _ints(parser: AttrParser) -> tuple[int, ...]:
        values = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
        return tuple(values)

    def print_parameter(self, printer: Printer) -> None:
        text = f"<tile = {list(self.tile)}"
        if self.unroll:
            text += f", unroll = {self.unroll}"
        if self.workgroup:
            text += f", workgroup = {list(self.workgroup)}"
        printer.print_string(text + ">")
