"""The `layout` dialect: buffers with a physical layout (TVM RFC 0039, RFC DeclBuffer).

Attributes and types
--------------------
- `#layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>`: an IndexMap
  (quasi-affine map from logical to transformed indices). A `|` between two results is an
  axis separator: it becomes the buffer's `axis_separators` when the map is applied.
- `!layout.buffer<SHAPE x ELT [, transform = MAP | [MAP, ...]] [, pad_value = ATTR]
  [, axis_separators = [s, ...]] [, scope = "..."]>`: a buffer over static logical
  extents. `transform` is the pending layout schedule (consumed by `apply-layout`, maps of a
  list applied in order); `axis_separators` refer to the buffer's own (current) shape.
- `!layout.ptr<ELT [, scope = "..."]>`: a data handle (the RFC's `Buffer::data`).
- `#layout<memory_scope global.texture>`: a memory scope (`MemoryScope`); the types above
  hold one and spell it `scope = "..."` (default `global`).

Operations
----------
- `layout.allocate [e0, e1, ...] : !layout.ptr<..>`: physical storage of the given extents.
- `layout.decl_buffer %ptr [offset N] : !layout.ptr<..> -> !layout.buffer<..>`: declares a
  buffer (or, for a second declaration, an alias) over a data handle.
- `layout.data %buf : !layout.buffer<..> -> !layout.ptr<..>`: the handle of a buffer.
- `layout.load %B[%i, ...] : !layout.buffer<..>, T` and `layout.store %v, %B[%i, ...] :
  !layout.buffer<..>, T`: N-d accesses; T is the element type, or `vector<N x ELT>` for N
  consecutive elements along the innermost axis.

The attributes and types are defined in `layout_types.py` and re-exported here (this is the
dialect's public module); the graph-level ops are in `layout_graph.py` and `layout.copy` in
`layout_scopes.py`; `layout_dialect.py` registers them all as the one `layout` dialect.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntAttr,
    VectorType,
)
from xdsl.ir import (
    Attribute,
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryAllocEffect, MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout_types import (
    MAX_ELEMENTS,
    SCOPES,
    TEXTURE_SCOPES,
    BufferType,
    IndexMapAttr,
    MemoryScope,
    MemoryScopeAttr,
    PtrType,
    buffer_type_problem,
    byte_size,
    check_axis_separators,
    element_byte_width,
    is_texture_scope,
    memory_scope_problem,
    scalar_type,
)

__all__ = [
    "MAX_ELEMENTS",
    "SCOPES",
    "TEXTURE_SCOPES",
    "AllocateOp",
    "BufferType",
    "DataOp",
    "DeclBufferOp",
    "IndexMapAttr",
    "LoadOp",
    "MemoryScope",
    "MemoryScopeAttr",
    "PtrType",
    "StoreOp",
    "buffer_type_problem",
    "byte_size",
    "check_axis_separators",
    "element_byte_width",
    "is_texture_scope",
    "memory_scope_problem",
    "scalar_type",
]


def _verify_indices(op: Operation, buffer: BufferType, indices: Sequence[SSAValue], lanes: int):
    if len(indices) != buffer.rank:
        raise VerifyException(
            f"'{op.name}' expects {buffer.rank} indices for a rank-{buffer.rank} buffer, "
            f"got {len(indices)}"
        )
    shape = buffer.get_shape()
    for axis, index in enumerate(indices):
        value = const_evaluate_operand(index)
        if value is None:
            continue
        extent = shape[axis] - (lanes - 1 if axis == buffer.rank - 1 else 0)
        if not 0 <= value < extent:
            raise VerifyException(
                f"'{op.name}' index {value} on axis {axis} is out of bounds for extent "
                f"{shape[axis]}"
                + (f" (accessing {lanes} lanes)" if lanes > 1 and axis == buffer.rank - 1 else "")
            )


def _access_lanes(op: Operation, buffer: BufferType, value_type: Attribute) -> int:
    """How many consecutive innermost elements an access of `value_type` touches."""
    if value_type == buffer.element_type:
        return 1
    if (
        isinstance(value_type, VectorType)
        and not isinstance(buffer.element_type, VectorType)
        and value_type.get_num_dims() == 1
        and value_type.get_element_type() == buffer.element_type
    ):
        return value_type.get_shape()[0]
    raise VerifyException(
        f"'{op.name}' value type {value_type} does not match the buffer element type "
        f"{buffer.element_type} (or a 1-D vector of it)"
    )


@irdl_op_definition
class AllocateOp(IRDLOperation):
    """Allocates storage of the given extents in the result handle's scope (RFC 0039: the
    allocation is in the physical layout; passes keep the extents in step with the buffer
    declared over the handle)."""

    name = "layout.allocate"

    extents = prop_def(ArrayAttr[IntAttr])
    ptr = result_def(PtrType)

    traits = traits_def(MemoryAllocEffect())

    def __init__(self, extents: Sequence[int], ptr_type: PtrType):
        super().__init__(
            properties={"extents": ArrayAttr(IntAttr(e) for e in extents)},
            result_types=[ptr_type],
        )

    def get_extents(self) -> tuple[int, ...]:
        """The allocation's extents (physical)."""
        return tuple(e.data for e in self.extents.data)

    def num_elements(self) -> int:
        """The number of elements allocated."""
        count = 1
        for extent in self.get_extents():
            count *= extent
        return count

    def verify_(self) -> None:
        if not self.extents.data or any(e <= 0 for e in self.get_extents()):
            raise VerifyException(
                f"allocation extents must be positive, got {list(self.get_extents())}"
            )
        if self.num_elements() > MAX_ELEMENTS:
            raise VerifyException(
                f"allocation of {self.num_elements()} elements exceeds the index range "
                f"(at most {MAX_ELEMENTS})"
            )

    @classmethod
    def parse(cls, parser: Parser) -> AllocateOp:
        extents = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        ptr_type = parser.parse_type()
        if not isinstance(ptr_type, PtrType):
            parser.raise_error("expected !layout.ptr type", pos, parser.pos)
        op = AllocateOp(extents, ptr_type)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" [" + ", ".join(map(str, self.get_extents())) + "]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)


@irdl_op_definition
class DeclBufferOp(IRDLOperation):
    """Declares a buffer over a data handle (RFC DeclBuffer). Declaring a second buffer over
    the same handle declares an alias. `elem_offset` (in elements of the handle's element
    type) places the buffer inside the allocation."""

    name = "layout.decl_buffer"

    ptr = operand_def(PtrType)
    elem_offset = prop_def(IntAttr, default_value=IntAttr(0))
    buffer = result_def(BufferType)

    traits = traits_def(Pure())

    def __init__(self, ptr: SSAValue, buffer_type: BufferType, elem_offset: int = 0):
        super().__init__(
            operands=[ptr],
            properties={"elem_offset": IntAttr(elem_offset)},
            result_types=[buffer_type],
        )

    def verify_(self) -> None:
        ptr_type = self.ptr.type
        buffer_type = self.buffer.type
        assert isinstance(ptr_type, PtrType) and isinstance(buffer_type, BufferType)
        if ptr_type.get_scope() != buffer_type.get_scope():
            raise VerifyException(
                f"buffer scope '{buffer_type.get_scope()}' does not match the data handle's "
                f"scope '{ptr_type.get_scope()}'"
            )
        if self.elem_offset.data < 0:
            raise VerifyException(f"elem_offset must be non-negative, got {self.elem_offset.data}")
        allocation = self.ptr.owner
        if not isinstance(allocation, AllocateOp):
            return
        buffer_bytes = byte_size(buffer_type.element_type, buffer_type.num_elements())
        offset_bytes = byte_size(ptr_type.element_type, self.elem_offset.data)
        alloc_bytes = byte_size(ptr_type.element_type, allocation.num_elements())
        if buffer_bytes is None or offset_bytes is None or alloc_bytes is None:
            return
        if buffer_bytes + offset_bytes > alloc_bytes:
            raise VerifyException(
                f"buffer of {buffer_bytes} bytes at byte offset {offset_bytes} does not fit "
                f"in its allocation of {alloc_bytes} bytes"
            )

    @classmethod
    def parse(cls, parser: Parser) -> DeclBufferOp:
        unresolved = parser.parse_unresolved_operand()
        offset = 0
        if parser.parse_optional_keyword("offset") is not None:
            offset = parser.parse_integer()  # negative: refused by the verifier
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ptr = parser.resolve_operand(unresolved, parser.parse_type())
        parser.parse_punctuation("->")
        pos = parser.pos
        buffer_type = parser.parse_type()
        if not isinstance(buffer_type, BufferType):
            parser.raise_error("expected !layout.buffer type", pos, parser.pos)
        op = DeclBufferOp(ptr, buffer_type, offset)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ptr)
        if self.elem_offset.data:
            printer.print_string(f" offset {self.elem_offset.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.buffer.type)


@irdl_op_definition
class DataOp(IRDLOperation):
    """The data handle of a buffer (the RFC's `Buffer::data`)."""

    name = "layout.data"

    buffer = operand_def(BufferType)
    ptr = result_def(PtrType)

    traits = traits_def(Pure())

    assembly_format = "$buffer attr-dict `:` type($buffer) `->` type($ptr)"

    def __init__(self, buffer: SSAValue):
        assert isinstance(buffer.type, BufferType)
        super().__init__(operands=[buffer], result_types=[buffer.type.ptr_type()])

    def verify_(self) -> None:
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, BufferType)
        if self.ptr.type != buffer_type.ptr_type():
            raise VerifyException(
                f"expected result type {buffer_type.ptr_type()} for the data handle of "
                f"{buffer_type}, got {self.ptr.type}"
            )


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Reads the element at N-d `indices` (or `N` consecutive innermost elements as a
    `vector<N x ELT>`)."""

    name = "layout.load"

    buffer = operand_def(BufferType)
    indices = var_operand_def(IndexType())
    result = result_def()

    traits = traits_def(MemoryReadEffect())

    assembly_format = "$buffer `[` $indices `]` attr-dict `:` type($buffer) `,` type($result)"

    def __init__(
        self, buffer: SSAValue, indices: Sequence[SSAValue], result_type: Attribute | None = None
    ):
        buffer_type = buffer.type
        assert isinstance(buffer_type, BufferType)
        super().__init__(
            operands=[buffer, indices],
            result_types=[buffer_type.element_type if result_type is None else result_type],
        )

    def verify_(self) -> None:
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, BufferType)
        lanes = _access_lanes(self, buffer_type, self.result.type)
        _verify_indices(self, buffer_type, self.indices, lanes)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Writes `value` at N-d `indices` (a `vector<N x ELT>` value writes N consecutive
    innermost elements)."""

    name = "layout.store"

    value = operand_def()
    buffer = operand_def(BufferType)
    indices = var_operand_def(IndexType())

    traits = traits_def(MemoryWriteEffect())

    assembly_format = (
        "$value `,` $buffer `[` $indices `]` attr-dict `:` type($buffer) `,` type($value)"
    )

    def __init__(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[value, buffer, indices])

    def verify_(self) -> None:
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, BufferType)
        lanes = _access_lanes(self, buffer_type, self.value.type)
        _verify_indices(self, buffer_type, self.indices, lanes)
