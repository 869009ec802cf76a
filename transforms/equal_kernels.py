"""Kernels equal up to their names: a hashable key of a function's whole definition.

`kernel_key(function)` is equal for two `func.func`s exactly when they differ at most in
`sym_name` and in the names of their SSA values: the same ops in the same order and nesting,
with the same attributes, properties, result types, block argument types, operands (each
value numbered by where it is defined) and successors. It is exact, not a hash: equal keys
mean either function can be called in place of the other. `legalize-layout` calls one
kernel per distinct key (the ops of a model repeat in blocks of equal shapes).

`regions_key(op, outer)` keys the regions of `op` the same way, each value used in them but
defined outside keyed by `outer` (what a clone of the regions would map it to):
`legalize-layout` keys a generic's body, whose outer values become kernel constants or
parameters, before it builds the kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from xdsl.dialects import func
from xdsl.ir import Attribute, Block, Operation, SSAValue


class _Unkeyable(Exception):
    """An outer value `outer` cannot key (the key is None)."""


def kernel_key(function: func.FuncOp) -> Hashable:
    """The key of `function` (module docstring); values defined outside it (there are none
    in an isolated function) are keyed by identity."""
    entries: list[Hashable] = []
    _Keyer(entries, lambda item: ("outer", id(item))).visit(function, True)
    return tuple(entries)


def regions_key(op: Operation, outer: Callable[[SSAValue], Hashable | None]) -> Hashable | None:
    """The key of the regions of `op` (module docstring): the ops in them in order with their
    names, operands (numbered by where they are defined inside; `outer(value)` for a value
    defined outside, None when `outer` gives None), result types, attributes, properties,
    successors and nested regions, and each block's argument types. `op` itself (its
    operands, attributes, results) is not keyed."""
    entries: list[Hashable] = []

    def outer_or_fail(value: SSAValue | Block) -> Hashable:
        key = outer(value) if isinstance(value, SSAValue) else None
        if key is None:
            raise _Unkeyable
        return ("outer", key)

    keyer = _Keyer(entries, outer_or_fail)
    try:
        keyer.visit_regions(op)
    except _Unkeyable:
        return None
    return tuple(entries)


class _Keyer:
    """Appends the entries of the ops it visits to `entries`, numbering the values and
    blocks they define in order (`outer` keys the others)."""

    def __init__(
        self, entries: list[Hashable], outer: Callable[[SSAValue | Block], Hashable]
    ) -> None:
        self.entries = entries
        self.outer = outer
        self.numbers: dict[SSAValue | Block, int] = {}

    def number(self, item: SSAValue | Block) -> Hashable:
        found = self.numbers.get(item)
        return self.outer(item) if found is None else found

    def visit(self, op: Operation, top: bool) -> None:
        properties = (
            {k: v for k, v in op.properties.items() if k != "sym_name"} if top else op.properties
        )
        numbers = self.numbers
        for region in op.regions:
            for block in region.blocks:
                numbers[block] = len(numbers)
        self.entries.append(
            (
                op.name,
                tuple(self.number(o) for o in op.operands),
                tuple(r.type for r in op.results),
                _items(op.attributes),
                _items(properties),
                tuple(self.number(s) for s in op.successors),
                tuple(len(r.blocks) for r in op.regions),
            )
        )
        self.visit_blocks(op)
        for result in op.results:
            numbers[result] = len(numbers)

    def visit_regions(self, op: Operation) -> None:
        self.entries.append(tuple(len(r.blocks) for r in op.regions))
        for region in op.regions:
            for block in region.blocks:
                self.numbers[block] = len(self.numbers)
        self.visit_blocks(op)

    def visit_blocks(self, op: Operation) -> None:
        numbers = self.numbers
        for region in op.regions:
            for block in region.blocks:
                self.entries.append(("block", tuple(a.type for a in block.args)))
                for arg in block.args:
                    numbers[arg] = len(numbers)
                for inner in block.ops:
                    self.visit(inner, False)


def _items(attributes: dict[str, Attribute]) -> tuple[tuple[str, Attribute], ...]:
    return tuple(sorted(attributes.items()))
