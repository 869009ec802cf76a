"""Buffer alias analysis over explicit declarations (RFC DeclBuffer, "Future possibilities").

With every buffer declared explicitly (a function parameter or a `layout.decl_buffer`), the
storage behind each buffer can be read off the IR:

- A *storage root* is the storage a chain of declarations ends in: a function parameter
  (a `!layout.buffer` parameter's storage, or a `!layout.ptr` parameter), a
  `layout.allocate`, or the result of a call (`func.call` returning a `!layout.ptr`).
- Every data handle points at the start of its root: `layout.data %b` is the handle `%b`
  was declared over (like TVM's `Buffer::data`, it does not include `%b`'s offset), so
  its root is `%b`'s root. A buffer parameter is its own root at byte offset 0; a
  `layout.decl_buffer %h offset k` lies at byte offset ``k * sizeof(element of %h)`` of
  `%h`'s root.
- A buffer covers ``num_elements * sizeof(element)`` bytes of its current shape (a pending
  transform is not counted until `apply-layout` materializes it: the allocation follows the
  buffer then). A root covers: an allocation, its extents times its element size; a buffer
  parameter, its buffer's bytes; a `!layout.ptr` parameter or a call result, an unknown
  number of bytes. Sizes are unknown for element types without a byte width (`index`).

**May-alias.** Two buffers may alias iff they are declared over the same root storage and
their byte ranges ``[offset, offset + size)`` intersect; an unknown offset or size counts as
intersecting. Distinct roots never alias: like TVM's PrimFunc parameters (and C `restrict`),
distinct parameters are assumed to be distinct storage, and allocations and call results
are fresh. A buffer whose storage cannot be resolved (an implicit declaration or an
undefined handle, which `verify-buffers` rejects) may alias anything.

Use `BufferAliases(op)` on a module or a function: `storage_of`, `view_of`, `may_alias`,
`aliases_of` and `buffers_over` answer from tables built once (linear in the IR size);
rebuild the analysis after rewriting the IR.

**Parameters at an offset.** Since a parameter is its own root, a callee addresses its
parameter from the parameter's first element, wherever the caller's buffer lies in the
caller's storage. Targets whose parameters are storage start addresses (OpenCL buffers,
identity-layout memrefs) must pass the offset along for a parameter that may be bound to a
buffer not at offset 0 of its root: `parameters_at_offsets(module)` names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from math import prod
from typing import Literal

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, NoneAttr, UnrealizedConversionCastOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import CallableOpInterface

from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    DataOp,
    DeclBufferOp,
    PtrType,
    byte_size,
)
from physlayout.indexing.extents import transformed_shape

StorageKind = Literal["parameter", "allocation", "call"]


def describe_value(value: SSAValue) -> str:
    """`%name` of a value, or `of type T` when it has no name (it reads after a noun:
    "buffer %a", "buffer of type !layout.buffer<...>")."""
    if value.name_hint:
        return f"%{value.name_hint}"
    return f"of type {value.type}"


def is_function_parameter(value: SSAValue) -> bool:
    """True for an argument of the entry block of a function (a callable op's body)."""
    if not isinstance(value, BlockArgument):
        return False
    block = value.block
    region = block.parent
    if region is None or region.blocks.first is not block:
        return False
    owner = region.parent
    return owner is not None and (
        isinstance(owner, func.FuncOp) or owner.has_trait(CallableOpInterface)
    )


@lru_cache(maxsize=4096)
def buffer_byte_size(buffer_type: BufferType) -> int | None:
    """Bytes covered by a buffer of `buffer_type`: its physical footprint, i.e. the
    transformed shape when a transform is pending (storage is physical: apply-layout only
    renames the indices), else its shape. Computed once per distinct type (an immutable
    value compared by its parameters): the alias analysis and verify-buffers ask about
    every buffer value, and a model has a few hundred types for thousands of values."""
    return byte_size(buffer_type.element_type, prod(_footprint(buffer_type)))


def _footprint(buffer_type: BufferType) -> Sequence[int]:
    transforms = buffer_type.get_transforms()
    if not transforms:
        return buffer_type.get_shape()
    try:
        return transformed_shape([t.index_map for t in transforms], buffer_type.get_shape())
    except ValueError:  # an invalid map: apply-layout reports it
        return buffer_type.get_shape()


def _allocation_elements(allocation: AllocateOp) -> int:
    """Elements of an allocation, counting an allocation whose extents are the logical shape
    of a transformed buffer declared over it (at offset 0) as the transformed size:
    apply-layout resizes such an allocation together with the buffer."""
    count = allocation.num_elements()
    for use in allocation.ptr.uses:
        decl = use.operation
        if not isinstance(decl, DeclBufferOp) or decl.elem_offset.data != 0:
            continue
        buffer_type = decl.buffer.type
        assert isinstance(buffer_type, BufferType)
        if buffer_type.get_transforms() and buffer_type.get_shape() == allocation.get_extents():
            count = max(count, prod(_footprint(buffer_type)))
    return count


@dataclass(frozen=True, eq=False)
class Storage:
    """A storage root. Compared by identity: `BufferAliases` makes one object per root."""

    handle: SSAValue
    """The root value: a parameter (buffer or ptr), an allocation's handle or a call result."""
    kind: StorageKind
    byte_size: int | None
    """Bytes of the storage, None when unknown (ptr parameters, call results)."""
    element_type: Attribute
    scope: str

    def describe(self) -> str:
        """E.g. `parameter %A`, `allocation %p`, `call result %h`."""
        noun = {"parameter": "parameter", "allocation": "allocation", "call": "call result"}
        return f"{noun[self.kind]} {describe_value(self.handle)}"


@dataclass(frozen=True)
class BufferView:
    """Where a buffer lies in its root storage."""

    buffer: SSAValue
    storage: Storage
    byte_offset: int | None
    byte_size: int | None

    def overlaps(self, other: BufferView) -> bool:
        """Whether the byte ranges of two views of one storage may intersect."""
        if self.storage is not other.storage:
            return False
        if None in (self.byte_offset, self.byte_size, other.byte_offset, other.byte_size):
            return True
        assert self.byte_offset is not None and self.byte_size is not None
        assert other.byte_offset is not None and other.byte_size is not None
        return (
            self.byte_offset < other.byte_offset + other.byte_size
            and other.byte_offset < self.byte_offset + self.byte_size
        )


@dataclass
class BufferAliases:
    """Which buffers of `root` may share storage (see the module docstring)."""

    root: Operation
    _views: dict[SSAValue, BufferView | None] = field(
        default_factory=dict[SSAValue, BufferView | None]
    )
    _storages: dict[SSAValue, Storage] = field(default_factory=dict[SSAValue, Storage])
    _buffers: list[SSAValue] = field(default_factory=list[SSAValue])
    _in_progress: set[SSAValue] = field(default_factory=set[SSAValue])

    def __post_init__(self) -> None:
        for op in self.root.walk():
            for region in op.regions:
                for block in region.blocks:
                    self._buffers.extend(a for a in block.args if isinstance(a.type, BufferType))
            self._buffers.extend(r for r in op.results if isinstance(r.type, BufferType))
        for buffer in self._buffers:
            self.view_of(buffer)

    # Queries ----------------------------------------------------------------------------

    @property
    def buffers(self) -> tuple[SSAValue, ...]:
        """Every buffer value under `root`, in walk order."""
        return tuple(self._buffers)

    def storage_of(self, buffer: SSAValue) -> Storage | None:
        """The root storage of `buffer`; None when it is not explicitly declared over a
        defined handle."""
        view = self.view_of(buffer)
        return None if view is None else view.storage

    def view_of(self, buffer: SSAValue) -> BufferView | None:
        """Root storage, byte offset and byte size of `buffer` (None when unresolved)."""
        if buffer in self._views:
            return self._views[buffer]
        if buffer in self._in_progress:
            return None
        self._in_progress.add(buffer)
        view = self._resolve_buffer(buffer)
        self._in_progress.discard(buffer)
        self._views[buffer] = view
        return view

    def handle_storage(self, handle: SSAValue) -> Storage | None:
        """The root storage a data handle points at (the start of), None when the handle
        is not defined by a parameter, `layout.allocate`, `layout.data` or a call."""
        owner = handle.owner
        if isinstance(owner, DataOp):
            return self.storage_of(owner.buffer)
        if isinstance(owner, AllocateOp):
            known = self._storages.get(handle)  # `_storage` would return it: skip the size
            if known is not None:
                return known
            ptr_type = owner.ptr.type
            assert isinstance(ptr_type, PtrType)
            size = byte_size(ptr_type.element_type, _allocation_elements(owner))
            return self._storage(handle, "allocation", size, ptr_type)
        if isinstance(owner, func.CallOp) and isinstance(handle.type, PtrType):
            return self._storage(handle, "call", None, handle.type)
        if is_function_parameter(handle) and isinstance(handle.type, PtrType):
            return self._storage(handle, "parameter", None, handle.type)
        return None

    def may_alias(self, a: SSAValue, b: SSAValue) -> bool:
        """Whether buffers `a` and `b` may share bytes (True for `a is b`)."""
        if a is b:
            return True
        view_a, view_b = self.view_of(a), self.view_of(b)
        if view_a is None or view_b is None:
            return True
        return view_a.overlaps(view_b)

    def aliases_of(self, buffer: SSAValue) -> list[SSAValue]:
        """The other buffers under `root` that may alias `buffer`, in walk order."""
        return [b for b in self._buffers if b is not buffer and self.may_alias(buffer, b)]

    def buffers_over(self, storage: Storage) -> list[SSAValue]:
        """The buffers declared (directly or through aliases) over `storage`."""
        return [b for b in self._buffers if self.storage_of(b) is storage]

    # Resolution -------------------------------------------------------------------------

    def _storage(
        self, handle: SSAValue, kind: StorageKind, size: int | None, typ: PtrType | BufferType
    ) -> Storage:
        storage = self._storages.get(handle)
        if storage is None:
            storage = Storage(handle, kind, size, typ.element_type, typ.get_scope())
            self._storages[handle] = storage
        return storage

    def _resolve_buffer(self, buffer: SSAValue) -> BufferView | None:
        buffer_type = buffer.type
        if not isinstance(buffer_type, BufferType):
            return None
        size = buffer_byte_size(buffer_type)
        if is_function_parameter(buffer):
            storage = self._storage(buffer, "parameter", size, buffer_type)
            return BufferView(buffer, storage, 0, size)
        decl = buffer.owner if isinstance(buffer, OpResult) else None
        if not isinstance(decl, DeclBufferOp):
            return None
        storage = self.handle_storage(decl.ptr)
        if storage is None:
            return None
        ptr_type = decl.ptr.type
        assert isinstance(ptr_type, PtrType)
        offset = byte_size(ptr_type.element_type, decl.elem_offset.data)
        return BufferView(buffer, storage, offset, size)


def trace_declarations(buffer: SSAValue) -> tuple[SSAValue, int]:
    """The value a buffer (or handle) is declared over, through `layout.decl_buffer` and
    `layout.data` back to a parameter, an allocation or another opaque handle, and the sum
    of the `elem_offset`s of the declarations on the way (the syntactic chain; for the
    storage and byte offset, use `BufferAliases`)."""
    offset = 0
    value = buffer
    for _ in range(10_000):  # a chain in a graph region may be a cycle
        owner = value.owner
        if isinstance(owner, DeclBufferOp):
            offset += owner.elem_offset.data
            value = owner.ptr
        elif isinstance(owner, DataOp):
            value = owner.buffer
        else:
            break
    return value, offset


def buffer_root(buffer: SSAValue) -> SSAValue:
    """The value `buffer` is declared over (`trace_declarations`, without the offset)."""
    return trace_declarations(buffer)[0]


def defining_block(value: SSAValue) -> Block | None:
    """The block that defines `value` (its block for an argument, its op's block else)."""
    if isinstance(value, BlockArgument):
        return value.block
    owner = value.owner
    return owner.parent_block() if isinstance(owner, Operation) else None


def parameters_at_offsets(
    module: Operation, aliases: BufferAliases | None = None
) -> set[tuple[str, int]]:
    """The buffer parameters, as (function name, parameter index), that some `func.call`
    in `module` may bind to a buffer or handle not at byte offset 0 of its storage root:
    a declaration at a non-zero (or unknown) offset, a buffer of unresolved storage (other
    than an identity-layout memref cast to a buffer by memref code: it starts at its data)
    or over a call result, or a buffer at offset 0 of a parameter that is itself in the set
    (a fixpoint over the call graph). Every other parameter receives the start of its
    caller's storage root. `aliases`: the `BufferAliases` of `module`, when the caller
    builds them anyway (they are then built once)."""
    aliases = BufferAliases(module) if aliases is None else aliases
    calls = [op for op in module.walk() if isinstance(op, func.CallOp)]
    marked: set[tuple[str, int]] = set()
    changed = True
    while changed:
        changed = False
        for call in calls:
            callee = call.callee.root_reference.data
            for index, argument in enumerate(call.arguments):
                if (callee, index) in marked:
                    continue
                if _may_be_at_offset(argument, aliases, marked):
                    marked.add((callee, index))
                    changed = True
    return marked


def _may_be_at_offset(
    value: SSAValue, aliases: BufferAliases, marked: set[tuple[str, int]]
) -> bool:
    if isinstance(value.type, BufferType):
        view = aliases.view_of(value)
        if view is None:
            return not _from_identity_memref(value)
        storage, offset = view.storage, view.byte_offset
    elif isinstance(value.type, PtrType):
        found = aliases.handle_storage(value)
        if found is None:
            return True
        storage, offset = found, 0
    else:
        return False
    if offset != 0:
        return True
    if storage.kind == "call":
        return True
    if storage.kind == "allocation":
        return False
    handle = storage.handle
    assert isinstance(handle, BlockArgument)
    function = handle.block.parent_op()
    if not isinstance(function, func.FuncOp):
        return True
    return (function.sym_name.data, handle.index) in marked


def _from_identity_memref(buffer: SSAValue) -> bool:
    """A buffer that memref code hands over with a cast of an identity-layout memref."""
    cast = buffer.owner
    if not isinstance(cast, UnrealizedConversionCastOp) or len(cast.operands) != 1:
        return False
    source_type = cast.operands[0].type
    return isinstance(source_type, MemRefType) and isinstance(source_type.layout, NoneAttr)
