"""Kernels equal up to their names: a hashable key of a function's whole definition.

`kernel_key(function)` is equal for two `func.func`s exactly when they differ at most in
`sym_name` and in the names of their SSA values: the same ops in the same order and nesting,
with the same attributes, properties, result types, block argument types, operands (each
value numbered by where it is defined) and successors. It is exact, not a hash: equal keys
mean either function can be called in place of the other. `legalize-layout` calls one
kernel per distinct key (the ops of a model repeat in blocks of equal shapes).
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.dialects import func
from xdsl.ir import Attribute, Block, Operation, SSAValue


def kernel_key(function: func.FuncOp) -> Hashable:
    """The key of `function` (module docstring); values defined outside it (there are none
    in an isolated function) are keyed by identity."""
    numbers: dict[SSAValue | Block, int] = {}
    entries: list[Hashable] = []

    def number(item: SSAValue | Block) -> Hashable:
        found = numbers.get(item)
        return ("outer", id(item)) if found is None else found

    def visit(op: Operation, top: bool) -> None:
        properties = (
            {k: v for k, v in op.properties.items() if k != "sym_name"} if top else op.properties
        )
        for region in op.regions:
            for block in region.blocks:
                numbers[block] = len(numbers)
        entries.append(
            (
                op.name,
                tuple(number(o) for o in op.operands),
                tuple(r.type for r in op.results),
                _items(op.attributes),
                _items(properties),
                tuple(number(s) for s in op.successors),
                tuple(len(r.blocks) for r in op.regions),
            )
        )
        for region in op.regions:
            for block in region.blocks:
                entries.append(("block", tuple(a.type for a in block.args)))
                for arg in block.args:
                    numbers[arg] = len(numbers)
                for inner in block.ops:
                    visit(inner, False)
        for result in op.results:
            numbers[result] = len(numbers)

    visit(function, True)
    return tuple(entries)


def _items(attributes: dict[str, Attribute]) -> tuple[tuple[str, Attribute], ...]:
    return tuple(sorted(attributes.items()))
