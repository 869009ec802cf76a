"""`linalg.generic` with upstream's syntax for several results.

Also `generic_form`: a named linalg op as its `linalg.generic` (no evaluator, no numpy: the
graph passes use it to read a named op's indexing maps and body).

Upstream prints a generic with several results as ``} -> (tensor<..>, tensor<..>)`` (e.g.
torch-mlir's softmax: a max with its argmax). xDSL 0.74 prints that form but reads the
result types as a bare comma-separated list, so ``(`` starts a function type and the parse
fails with "Expected '->'". `GenericOp` here is xDSL's op (a plain subclass, without a new IRDL
definition, registered under the same name, so `isinstance(op, xdsl's GenericOp)` holds) whose parser accepts the
parenthesized list as well as a single bare type. Everything else (attribute dictionary,
``ins``/``outs``, ``attrs = {..}``, the region) reads as in xDSL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from xdsl.dialects.builtin import ArrayAttr, LocationAttr, StringAttr, UnknownLoc
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp as XdslGenericOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser

__all__ = ["GenericOp", "generalized", "generic_form"]


def _operand_list(parser: Parser, keyword: str) -> Sequence[SSAValue]:
    """``KEYWORD(%a, %b : T1, T2)``, or nothing when `keyword` is absent."""
    pos = parser.pos
    if not parser.parse_optional_characters(keyword):
        return ()
    parser.parse_punctuation("(")
    names = parser.parse_comma_separated_list(
        Parser.Delimiter.NONE, parser.parse_unresolved_operand
    )
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    return parser.resolve_operands(names, types, pos)


def _iterator_types(
    parser: Parser, value: Attribute, start: int, end: int
) -> list[IteratorTypeAttr]:
    if not isinstance(value, ArrayAttr):
        parser.raise_error("iterator_types must be an array", start, end)
    kinds: list[IteratorTypeAttr] = []
    for entry in value.data:
        if isinstance(entry, IteratorTypeAttr):
            kinds.append(entry)
        elif isinstance(entry, StringAttr) and entry.data in {k.value for k in IteratorType}:
            kinds.append(IteratorTypeAttr(IteratorType(entry.data)))
        else:
            parser.raise_error(f"Unknown iterator type {entry}", start, end)
    return kinds


class GenericOp(XdslGenericOp):
    """`linalg.generic`, reading ``-> (T1, T2)`` result lists (module docstring)."""

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        start = parser.pos
        attrs = dict(parser.parse_optional_attr_dict())
        end = parser.pos
        for required in ("indexing_maps", "iterator_types"):
            if required not in attrs:
                parser.raise_error(f"Expected {required} for linalg.generic", start, end)
        maps = attrs.pop("indexing_maps")
        if not isinstance(maps, ArrayAttr):
            parser.raise_error("indexing_maps must be an array of affine maps", start, end)
        kinds = _iterator_types(parser, attrs.pop("iterator_types"), start, end)
        doc, library_call = attrs.pop("doc", None), attrs.pop("library_call", None)
        if not isinstance(doc, StringAttr | None) or not isinstance(
            library_call, StringAttr | None
        ):
            parser.raise_error("doc and library_call must be strings", start, end)
        ins = _operand_list(parser, "ins")
        outs = _operand_list(parser, "outs")
        extra: dict[str, Attribute] = {}
        if parser.parse_optional_keyword("attrs"):
            parser.parse_punctuation("=")
            extra = dict(parser.expect(parser.parse_optional_attr_dict, "expect extra attributes"))
        body = parser.parse_region()
        results: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            listed = parser.parse_optional_comma_separated_list(
                Parser.Delimiter.PAREN, parser.parse_type
            )
            results = list(listed) if listed is not None else [parser.parse_type()]
        generic = cls(ins, outs, body, maps, kinds, results, doc, library_call)  # pyright: ignore[reportArgumentType]
        generic.attributes |= attrs | extra
        return generic


def generic_form(op: NamedOperation) -> XdslGenericOp:
    """A detached `linalg.generic` with the semantics of the named linalg op `op` (its
    indexing maps, iterator types and body). It uses `op`'s operands: erase it after use."""
    return XdslGenericOp(
        op.inputs,
        op.outputs,
        op.body.clone(),
        op.get_indexing_maps(),
        op.get_iterator_types(),
        op.results.types,
    )


def generalized(op: NamedOperation) -> XdslGenericOp:
    """`generic_form(op)` carrying `op`'s discardable attributes (e.g. `layout.scope`) and
    location (given to its body ops too: the kernels made of it name their source line):
    what replaces a named op that a pass generalizes."""
    generic = generic_form(op)
    generic.attributes.update(op.attributes)
    located(generic, op.location)
    return generic


def located(op: Operation, location: LocationAttr) -> None:
    """Give `op` and every op nested in it that has no location (`loc(unknown)`) the
    location `location`."""
    for inner in op.walk():
        if isinstance(inner.location, UnknownLoc):
            inner.location = location
