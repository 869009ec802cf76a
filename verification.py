"""Module verification whose symbol lookups are indexed (issue 28: compile time).

xDSL verifies each `func.call` by `SymbolTable.lookup_symbol`, which scans the ops of the
nearest symbol table (the module) until it meets the callee: one scan per call, so verifying
a module of N functions and M calls costs O(N * M). A lowered model has both in the
thousands (a host `@main` calls every kernel): on regnet_x_400mf this scan was about 40%
of every verification, and the pipelines verify after every pass.

`verify_module(op)` is `op.verify()` with `indexed_symbol_lookups()` in force: while the
module is being verified nothing changes it, so the ops of each symbol table are read once
into a map from symbol name to its first op, and every lookup answers from that map. The
answers are the original's (the same op, the same exceptions): a name is indexed only up to
the first op whose symbol name cannot be read (xDSL raises there), and a lookup that the
index cannot answer is handed to xDSL's own `lookup_symbol`. The index lives only for the
duration of the `with` block; outside it `lookup_symbol` is xDSL's, unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolOpInterface, SymbolTable

_ORIGINAL: Any = SymbolTable.__dict__["lookup_symbol"]
"""xDSL's `SymbolTable.lookup_symbol` (a staticmethod object)."""


class _SymbolIndex:
    """The symbols of one symbol table op, read once: name -> first op with that name, and
    whether the whole table was read (False when an op's symbol name raised)."""

    def __init__(self, table: Operation):
        self.first: dict[StringAttr, Operation] = {}
        self.complete = True
        for op in table.regions[0].block.ops:
            interface = op.get_trait(SymbolOpInterface)
            if interface is None:
                continue
            try:
                name = interface.get_sym_attr_name(op)
            except Exception:  # xDSL raises here when a lookup reaches this op
                self.complete = False
                return
            if name is not None and name not in self.first:
                self.first[name] = op


def _symbol_table_of(op: Operation) -> Operation | None:
    anchor: Operation | None = op
    while anchor is not None and not anchor.has_trait(SymbolTable):
        anchor = anchor.parent_op()
    return anchor


@contextmanager
def indexed_symbol_lookups() -> Iterator[None]:
    """Within the block, `SymbolTable.lookup_symbol` answers from a per-table index built on
    first use; the IR must not change inside the block (verification does not change it).
    Nested uses share the outer index."""
    if SymbolTable.__dict__["lookup_symbol"] is not _ORIGINAL:
        yield
        return
    original = _ORIGINAL.__func__
    indexes: dict[int, tuple[Operation, _SymbolIndex]] = {}

    def lookup_symbol(
        op: Operation, name: str | StringAttr | SymbolRefAttr
    ) -> Operation | None:
        table = _symbol_table_of(op)
        if table is None:
            return original(op, name)  # raises xDSL's error
        entry = indexes.get(id(table))
        if entry is None or entry[0] is not table:
            entry = (table, _SymbolIndex(table))
            indexes[id(table)] = entry
        index = entry[1]
        reference = SymbolRefAttr(name) if isinstance(name, str | StringAttr) else name
        found = index.first.get(reference.root_reference)
        if found is None:
            if index.complete:
                return None
            return original(op, reference)
        if not reference.nested_references:
            return found
        nested_root, *nested_rest = reference.nested_references.data
        return SymbolTable.lookup_symbol(found, SymbolRefAttr(nested_root, nested_rest))

    SymbolTable.lookup_symbol = staticmethod(lookup_symbol)  # pyright: ignore[reportAttributeAccessIssue]
    try:
        yield
    finally:
        SymbolTable.lookup_symbol = _ORIGINAL


def verify_module(op: Operation) -> None:
    """`op.verify()` (the same checks, the same errors) with symbol lookups indexed."""
    with indexed_symbol_lookups():
        op.verify()
