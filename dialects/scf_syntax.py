"""`scf.parallel` and `scf.reduce` in upstream MLIR's custom syntax (xDSL 0.74 has none for
`scf.parallel`, and writes the regions of `scf.reduce` without the comma upstream puts
between them).

physlayout registers these two classes under the same names in place of xDSL's (the `scf`
dialect of `universe.py`), so every tool that reads IR through physlayout's universe parses
and prints

    %r = scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) init (%x) -> f32 {
      ...
      scf.reduce(%v : f32) {
      ^bb0(%lhs: f32, %rhs: f32):
        %s = arith.addf %lhs, %rhs : f32
        scf.reduce.return %s : f32
      }
    } {attrs}

as `mlir-opt` does (`init (...)` and `-> types` only with reductions; the `scf.reduce`
terminator is always printed; several reduction regions are separated by `, `). The
generic form still parses. They are subclasses of xDSL's ops, so `isinstance(op,
scf.ParallelOp)` holds for them and xDSL's verifiers, traits and passes apply unchanged;
physlayout's passes build these classes, so their output prints in the custom form too.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer


class ParallelOp(scf.ParallelOp):
    """`scf.parallel` with upstream's custom syntax (see the module docstring). Its
    definition (operands, verifier, traits) is xDSL's."""

    name = "scf.parallel"

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.body.block.args, printer.print_ssa_value)
        printer.print_string(") = (")
        printer.print_list(self.lowerBound, printer.print_ssa_value)
        printer.print_string(") to (")
        printer.print_list(self.upperBound, printer.print_ssa_value)
        printer.print_string(") step (")
        printer.print_list(self.step, printer.print_ssa_value)
        printer.print_string(")")
        if self.initVals:
            printer.print_string(" init (")
            printer.print_list(self.initVals, printer.print_ssa_value)
            printer.print_string(")")
        _print_arrow_types(printer, [r.type for r in self.res])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ParallelOp:
        ivs = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        parser.parse_punctuation("=")
        lower = _parse_index_operands(parser)
        parser.parse_keyword("to")
        upper = _parse_index_operands(parser)
        parser.parse_keyword("step")
        steps = _parse_index_operands(parser)
        init: list[UnresolvedOperand] = []
        init_pos = parser.pos
        if parser.parse_optional_keyword("init"):
            init = parser.parse_comma_separated_list(
                Parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
        types = _parse_arrow_types(parser)
        if len(init) != len(types):
            parser.raise_error(
                f"scf.parallel has {len(init)} init values but {len(types)} result types",
                init_pos,
                parser.pos,
            )
        init_vals = parser.resolve_operands(init, types, init_pos)
        body = parser.parse_region([iv.resolve(IndexType()) for iv in ivs])
        attributes = parser.parse_optional_attr_dict()
        op = cls(lower, upper, steps, body, init_vals)
        op.attributes |= attributes
        block = op.body.block
        if not isinstance(block.last_op, scf.ReduceOp):
            block.add_op(ReduceOp())
        return op


class ReduceOp(scf.ReduceOp):
    """`scf.reduce` with upstream's custom syntax: `scf.reduce(%a, %b : T, U) {r1}, {r2}`.
    Its definition is xDSL's."""

    name = "scf.reduce"

    def print(self, printer: Printer) -> None:
        if self.args:
            printer.print_string("(")
            printer.print_list(self.args, printer.print_ssa_value)
            printer.print_string(" : ")
            printer.print_list((a.type for a in self.args), printer.print_attribute)
            printer.print_string(")")
        for k, region in enumerate(self.reductions):
            printer.print_string(", " if k else " ")
            printer.print_region(region)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        args = []
        if parser.parse_optional_punctuation("("):
            pos = parser.pos
            operands = parser.parse_comma_separated_list(
                Parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
            if len(operands) != len(types):
                parser.raise_error(
                    f"scf.reduce has {len(operands)} operands but {len(types)} types", pos, parser.pos
                )
            args = parser.resolve_operands(operands, types, pos)
        regions: list[Region] = []
        region = parser.parse_optional_region()
        while region is not None:
            regions.append(region)
            # Upstream separates the regions with commas; xDSL's own printer did not.
            if parser.parse_optional_punctuation(","):
                region = parser.parse_region()
            else:
                region = parser.parse_optional_region()
        attributes = parser.parse_optional_attr_dict()
        op = cls(args, regions)
        op.attributes |= attributes
        return op


def _parse_index_operands(parser: Parser) -> Sequence[SSAValue]:
    pos = parser.pos
    operands = parser.parse_comma_separated_list(
        Parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    return parser.resolve_operands(operands, [IndexType()] * len(operands), pos)


def _parse_arrow_types(parser: Parser) -> Sequence[Attribute]:
    """`-> T` or `-> (T, U)` (upstream's optional arrow type list); [] without an arrow."""
    if not parser.parse_optional_punctuation("->"):
        return []
    if parser.parse_optional_punctuation("("):
        if parser.parse_optional_punctuation(")"):
            return []
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation(")")
        return types
    return [parser.parse_type()]


def _print_arrow_types(printer: Printer, types: Sequence[Attribute]) -> None:
    """` -> T`, ` -> (T, U)` or nothing, as upstream's `printOptionalArrowTypeList`."""
    if not types:
        return
    printer.print_string(" -> ")
    if len(types) == 1:
        printer.print_attribute(types[0])
        return
    printer.print_string("(")
    printer.print_list(types, printer.print_attribute)
    printer.print_string(")")


ScfWithCustomParallel = Dialect(
    "scf",
    [
        ParallelOp if op is scf.ParallelOp else ReduceOp if op is scf.ReduceOp else op
        for op in scf.Scf.operations
    ],
    [*scf.Scf.attributes],
)
"""xDSL's `scf` dialect with `ParallelOp` and `ReduceOp` in upstream's custom syntax."""
