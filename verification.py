"""Module verification that gives xDSL's answers faster (issue 28: compile time).

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
only after the checks passed; a failing op is always checked by xDSL (the same error). An op
whose attribute objects are the very objects of a passed signature (the same shape, each
attribute `is` the remembered one: the memo holds them, so no other object can take their
identity) is looked up without hashing them (hashing a type hashes all its parameters again),
which is what an op unchanged since the last verification finds. The
op's trait verifiers, its own `verify_` and `Operation.verify`'s structural checks always
run, except for `linalg.generic`: xDSL's own verifier of it
(`LinalgStructuredOperation.verify_`: pure tensor or buffer operands, one indexing map per
operand over one loop per iterator type, block argument types, and operand shapes against
the loop ranges the maps infer) also reads nothing but the signature (operand types, the
`indexing_maps` and `iterator_types` properties, the body's entry argument types), so a
generic whose signature passed its whole `verify_` runs only its trait verifiers. (The
`linalg.generic` memo is installed only when xDSL's linalg ops are loaded: none can exist
before, and a buffer-level run then does not import that dialect to verify.) A model
repeats a few hundred signatures across thousands of ops, and the pipelines
keep one `PassedChecks` for all the verifications of a run.

`set_based_isolation_checks` answers xDSL's `IsolatedFromAbove` check (every operand of
the ops inside a function is defined inside it) with one set lookup per operand instead of
a walk up the parent chain of its owner: an owner whose block is one of the blocks reached
from the function with consistent parent pointers is inside it; any other owner is left to
xDSL's ancestor test, and a violation to xDSL's own check, so errors are xDSL's.
`fast_verification` puts the three in force; `verify_module` and `physlayout-opt` verify
within it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation
from xdsl.irdl import OpDef
from xdsl.traits import IsolatedFromAbove, SymbolOpInterface, SymbolTable

if TYPE_CHECKING:
    from xdsl.dialects.linalg.ops import GenericOp as XdslGenericOp

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

_LINALG_OPS = "xdsl.dialects.linalg.ops"
"""xDSL's linalg ops module: a `linalg.generic` exists only once it is imported, so a run
that never loads it (`physlayout-opt` on a buffer-level file) does not import it to verify."""


@cache
def _generic_op() -> tuple[type[XdslGenericOp], Any, OpDef]:
    """xDSL's `linalg.generic` class, its own `verify_` (`OpDef.verify`, then
    `LinalgStructuredOperation.verify_`) and its IRDL definition (read before any patch)."""
    from xdsl.dialects.linalg.ops import GenericOp

    return GenericOp, GenericOp.__dict__["verify_"], GenericOp.get_irdl_definition()


Signature = tuple[object, ...]


class _Passed:
    """The passed signatures of one op definition: by value, and by the identity of their
    attribute objects (`objects` keeps those alive, so an identity is never reused)."""

    def __init__(self, definition: OpDef | None):
        self.definition = definition
        self.by_value: set[Signature] = set()
        self.by_identity: dict[Signature, tuple[Attribute, ...]] = {}


class PassedChecks:
    """The signatures whose generic IRDL checks passed, per op definition (see the module
    docstring). Forgets everything past `limit` signatures, so memory stays bounded."""

    def __init__(self, limit: int = 200_000):
        self.limit = limit
        self.count = 0
        self.by_definition: dict[int, _Passed] = {}
        self.generic_ops = _Passed(None)
        """Signatures of `linalg.generic` ops that passed their whole `verify_`."""

    def of(self, definition: OpDef) -> _Passed:
        """The passed signatures of ops of `definition` (kept alive with it)."""
        entry = self.by_definition.get(id(definition))
        if entry is None or entry.definition is not definition:
            entry = _Passed(definition)
            self.by_definition[id(definition)] = entry
        return entry

    def distinct(self) -> int:
        """How many distinct signatures (by value) passed xDSL's checks: how often those
        checks ran and passed since the memo was made (or last forgot)."""
        entries = (*self.by_definition.values(), self.generic_ops)
        return sum(len(entry.by_value) for entry in entries)

    def add(
        self,
        known: _Passed,
        shape: Signature,
        objects: tuple[Attribute, ...],
        identity: Signature,
        by_value: bool,
    ) -> None:
        """Remember that the signature (`shape`, `objects`) passed, by identity (`identity`)
        and, when `by_value`, by value (forget all first if the limit is reached)."""
        if self.count >= self.limit:
            for entry in (*self.by_definition.values(), self.generic_ops):
                entry.by_value.clear()
                entry.by_identity.clear()
            self.count = 0
            by_value = True
        if by_value:
            known.by_value.add((shape, objects))
        known.by_identity[identity] = objects
        self.count += 1


def signature(op: Operation) -> tuple[Signature, tuple[Attribute, ...]]:
    """What xDSL's generic checks of `op` read (see the module docstring), as its shape (the
    op's class, counts, and property and attribute names) and its attribute objects in
    order (operand types, result types, entry block argument types, property values,
    attribute values); the shape's counts say where each part of the objects starts."""
    operands = op.operands
    results = op.results
    objects: list[Attribute] = [operand.type for operand in operands]
    objects += [result.type for result in results]
    regions: tuple[tuple[int, int], ...] = ()
    if op.regions:
        counts: list[tuple[int, int]] = []
        for region in op.regions:
            block = region.first_block
            if block is None:
                counts.append((0, -1))
                continue
            counts.append((1 if block.next_block is None else len(region.blocks), len(block.args)))
            objects += block.arg_types
        regions = tuple(counts)
    properties = op.properties
    attributes = op.attributes
    objects += properties.values()
    objects += attributes.values()
    shape = (
        type(op),
        len(operands),
        len(results),
        regions,
        len(op.successors),
        tuple(properties),
        tuple(attributes),
    )
    return shape, tuple(objects)


@contextmanager
def memoized_generic_checks(passed: PassedChecks) -> Iterator[None]:
    """Within the block, `OpDef.verify` runs xDSL's generic checks only for an op whose
    signature is not in `passed` (and adds it when they pass); trait verifiers always run.
    Nested uses keep the outer memo."""
    if OpDef.__dict__["verify"] is not _ORIGINAL_OPDEF_VERIFY:
        yield
        return

    def verify(self: OpDef, op: Operation) -> None:
        if not _check(passed, passed.of(self), op, lambda: _ORIGINAL_OPDEF_VERIFY(self, op)):
            for trait in self.traits:
                trait.verify(op)

    generic = _generic_op() if _LINALG_OPS in sys.modules else None
    OpDef.verify = verify  # pyright: ignore[reportAttributeAccessIssue]
    if generic is not None:
        generic_class, original_verify_, definition = generic

        def generic_verify_(self: XdslGenericOp) -> None:
            if not _check(passed, passed.generic_ops, self, lambda: original_verify_(self)):
                definition.verify(self)  # traits (and the generic checks, memoized)

        generic_class.verify_ = generic_verify_
    try:
        yield
    finally:
        OpDef.verify = _ORIGINAL_OPDEF_VERIFY
        if generic is not None:
            generic[0].verify_ = generic[1]


def _check(passed: PassedChecks, known: _Passed, op: Operation, checks: Callable[[], None]) -> bool:
    """Run `checks` of `op` unless its signature is in `known`, and remember it when they
    pass; True when they ran (the caller then has nothing left to do)."""
    shape, objects = signature(op)
    identity = (shape, tuple(map(id, objects)))
    if identity in known.by_identity:
        return False
    try:
        seen = (shape, objects) in known.by_value
    except TypeError:  # an attribute that cannot be hashed: always checked
        checks()
        return True
    if not seen:
        checks()
    passed.add(known, shape, objects, identity, not seen)
    return not seen


_ORIGINAL_ISOLATED_VERIFY: Any = IsolatedFromAbove.__dict__["verify"]
"""xDSL's `IsolatedFromAbove.verify` (a parent-chain walk per operand of the ops inside)."""


def _checked_blocks(op: Operation) -> list[Block] | None:
    """The blocks whose ops' operands xDSL's `IsolatedFromAbove.verify` checks for `op`:
    those nested in it but not inside a nested isolated op; None when a block's or region's
    parent pointer is not the container it was reached from."""
    blocks: list[Block] = []
    stack = [op]
    while stack:
        node = stack.pop()
        for region in node.regions:
            if region.parent is not node:
                return None
            for block in region.blocks:
                if block.parent is not region:
                    return None
                blocks.append(block)
                for child in block.ops:
                    if child.regions and not child.has_trait(IsolatedFromAbove):
                        stack.append(child)
    return blocks


def _owned_below(op: Operation, blocks: list[Block]) -> bool:
    """Whether every operand of the ops of `blocks` (`_checked_blocks(op)`) passes xDSL's
    test `op.is_ancestor(owner) and owner is not op`, decided by one set lookup where the
    owner's block (the owner itself for a block argument) is one of `blocks`: the parent
    chain from it reaches `op`."""
    nested = set(map(id, blocks))
    for block in blocks:
        for child in block.ops:
            for value in child.operands:
                owner = value.owner
                if owner is op:
                    return False
                if id(owner if isinstance(owner, Block) else owner.parent) in nested:
                    continue
                if not op.is_ancestor(owner):
                    return False
    return True


def _isolated_from_above_verify(self: IsolatedFromAbove, op: Operation) -> None:
    """xDSL's check, answered by `_owned_below` when the parent pointers on the way down
    are consistent and nothing fails; any other case goes to xDSL's own check (which then
    raises the same error)."""
    blocks = _checked_blocks(op)
    if blocks is None or not _owned_below(op, blocks):
        _ORIGINAL_ISOLATED_VERIFY(self, op)


@contextmanager
def set_based_isolation_checks() -> Iterator[None]:
    """Within the block, `IsolatedFromAbove.verify` answers as xDSL's does, with a set of
    the blocks nested in the op instead of a parent-chain walk per operand; the IR must not
    change inside the block (verification does not change it)."""
    if IsolatedFromAbove.__dict__["verify"] is not _ORIGINAL_ISOLATED_VERIFY:
        yield
        return
    IsolatedFromAbove.verify = _isolated_from_above_verify  # pyright: ignore[reportAttributeAccessIssue]
    try:
        yield
    finally:
        IsolatedFromAbove.verify = _ORIGINAL_ISOLATED_VERIFY


@contextmanager
def fast_verification(passed: PassedChecks | None = None) -> Iterator[None]:
    """Within the block, verification gives xDSL's answers faster: symbol lookups indexed,
    the generic checks of already passed signatures skipped (`passed`, or a memo of this
    block alone) and isolation checked by set (`set_based_isolation_checks`)."""
    with (
        indexed_symbol_lookups(),
        memoized_generic_checks(passed or PassedChecks()),
        set_based_isolation_checks(),
    ):
        yield


def verify_module(op: Operation, passed: PassedChecks | None = None) -> None:
    """`op.verify()` (the same checks, the same errors) within `fast_verification`."""
    with fast_verification(passed):
        op.verify()
