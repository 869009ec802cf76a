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

`verify_module(op, passed)` also skips xDSL's generic IRDL checks of an op whose
*signature* already passed them (`memoized_generic_checks`). Those checks (`OpDef.verify`
without its trait verifiers: operand and result counts and constraints, region and block
counts, entry block argument types, successor counts, properties and attributes) read
nothing but the op's class, its operand and result types, the block counts and entry
argument types of its regions, its successor count and its properties and attributes (each
op gets a fresh constraint context), and xDSL's attributes are immutable values compared by
equality, so two ops with equal signatures pass or fail them alike. A signature is remembered
only after the checks passed; a failing op is always checked by xDSL (the same error). The
op's trait verifiers, its own `verify_` and `Operation.verify`'s structural checks always
run. A model repeats a few hundred signatures across thousands of ops, and the pipelines
keep one `PassedChecks` for all the verifications of a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.irdl import OpDef
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


_ORIGINAL_OPDEF_VERIFY: Any = OpDef.__dict__["verify"]
"""xDSL's `OpDef.verify` (the generic checks of an IRDL op, then its trait verifiers)."""

Signature = tuple[object, ...]


class PassedChecks:
    """The signatures whose generic IRDL checks passed, per op definition (see the module
    docstring). Forgets everything past `limit` signatures, so memory stays bounded."""

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self.count = 0
        self.by_definition: dict[int, tuple[OpDef, set[Signature]]] = {}

    def signatures(self, definition: OpDef) -> set[Signature]:
        """The passed signatures of ops of `definition` (kept alive with it)."""
        entry = self.by_definition.get(id(definition))
        if entry is None or entry[0] is not definition:
            entry = (definition, set())
            self.by_definition[id(definition)] = entry
        return entry[1]

    def add(self, signatures: set[Signature], signature: Signature) -> None:
        """Remember that `signature` passed (forget all first if the limit is reached)."""
        if self.count >= self.limit:
            for _, known in self.by_definition.values():
                known.clear()
            self.count = 0
        signatures.add(signature)
        self.count += 1


def signature(op: Operation) -> Signature | None:
    """What xDSL's generic checks of `op` read (see the module docstring), or None when some
    part cannot be hashed (then the op is always checked)."""
    regions = tuple(
        (len(region.blocks), None if (b := region.first_block) is None else b.arg_types)
        for region in op.regions
    )
    key = (
        type(op),
        tuple(operand.type for operand in op.operands),
        tuple(result.type for result in op.results),
        regions,
        len(op.successors),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


@contextmanager
def memoized_generic_checks(passed: PassedChecks) -> Iterator[None]:
    """Within the block, `OpDef.verify` runs xDSL's generic checks only for an op whose
    signature is not in `passed` (and adds it when they pass); trait verifiers always run.
    The IR must not change inside the block. Nested uses keep the outer memo."""
    if OpDef.__dict__["verify"] is not _ORIGINAL_OPDEF_VERIFY:
        yield
        return

    def verify(self: OpDef, op: Operation) -> None:
        key = signature(op)
        if key is None:
            _ORIGINAL_OPDEF_VERIFY(self, op)
            return
        known = passed.signatures(self)
        if key in known:
            for trait in self.traits:
                trait.verify(op)
            return
        _ORIGINAL_OPDEF_VERIFY(self, op)
        passed.add(known, key)

    OpDef.verify = verify  # pyright: ignore[reportAttributeAccessIssue]
    try:
        yield
    finally:
        OpDef.verify = _ORIGINAL_OPDEF_VERIFY


def verify_module(op: Operation, passed: PassedChecks | None = None) -> None:
    """`op.verify()` (the same checks, the same errors) with symbol lookups indexed and the
    generic checks of already passed signatures skipped (`passed`, or a memo of this
    verification alone)."""
    with indexed_symbol_lookups(), memoized_generic_checks(passed or PassedChecks()):
        op.verify()
