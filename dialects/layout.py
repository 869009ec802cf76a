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

The graph-level ops are in `layout_graph.py` and `layout.copy` in `layout_scopes.py`;
`layout_dialect.py` registers them all as the one `layout` dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    VectorType,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Data,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryAllocEffect, MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.str_enum import StrEnum

from physlayout.indexing.index_map import IndexMap, validate_axis_separators


class MemoryScope(StrEnum):
    """The memory scopes a buffer or data handle may live in (TVM's storage scopes); the
    `global.texture*` ones are 2-D RGBA images (DESIGN.md "Textures")."""

    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    TEXTURE = "global.texture"
    TEXTURE_NHWC = "global.texture-nhwc"
    TEXTURE_WEIGHT = "global.texture-weight"

    @property
    def is_texture(self) -> bool:
        return self.value.startswith("global.texture")


SCOPES: tuple[str, ...] = tuple(s.value for s in MemoryScope)
"""The names of the memory scopes, in declaration order."""

TEXTURE_SCOPES: tuple[str, ...] = tuple(s.value for s in MemoryScope if s.is_texture)

MAX_ELEMENTS = 2**63 - 1
"""The most elements a buffer may have: its flat index must fit in a 64-bit `index`."""


def is_texture_scope(scope: str) -> bool:
    """True for the `global.texture*` scopes (2-D RGBA images)."""
    return scope in TEXTURE_SCOPES


def memory_scope_problem(scope: str) -> str | None:
    """Why `scope` names no memory scope, or None when it does."""
    if scope in SCOPES:
        return None
    return f"unknown memory scope '{scope}', expected one of {list(SCOPES)}"


@irdl_attr_definition
class MemoryScopeAttr(EnumAttribute[MemoryScope], SpacedOpaqueSyntaxAttribute):
    """`#layout<memory_scope "global.texture">`: a memory scope. Buffer and handle types
    spell it `scope = "..."` in their own syntax."""

    name = "layout.memory_scope"

    @staticmethod
    def from_name(scope: str) -> MemoryScopeAttr:
        """The attribute of the scope named `scope` (a VerifyException for another name)."""
        problem = memory_scope_problem(scope)
        if problem is not None:
            raise VerifyException(problem)
        return MemoryScopeAttr(MemoryScope(scope))


def check_axis_separators(separators: Sequence[int], rank: int) -> str | None:
    """Why `separators` are invalid for `rank` axes (`validate_axis_separators`), or None
    when they are valid: strictly increasing, each in `1..rank-1`."""
    try:
        validate_axis_separators(separators, rank)
    except ValueError as err:
        return str(err)
    return None


def scalar_type(element_type: Attribute) -> Attribute:
    """The scalar type of `element_type` (the element type of a vector type)."""
    if isinstance(element_type, VectorType):
        return element_type.get_element_type()
    return element_type


def element_byte_width(element_type: Attribute) -> int | None:
    """The size in bytes of one element, or None when unknown (e.g. `index`)."""
    if isinstance(element_type, VectorType):
        inner = element_byte_width(element_type.get_element_type())
        if inner is None:
            return None
        count = 1
        for extent in element_type.get_shape():
            count *= extent
        return inner * count
    width = getattr(element_type, "bitwidth", None)
    if isinstance(width, int) and width % 8 == 0 and not isinstance(element_type, IndexType):
        return width // 8
    return None


def byte_size(element_type: Attribute, count: int) -> int | None:
    """Bytes of `count` elements of `element_type`, None when the width is unknown."""
    width = element_byte_width(element_type)
    return None if width is None else width * count


@irdl_attr_definition
class IndexMapAttr(Data[tuple[IndexMap, tuple[int, ...]]]):
    """`#layout.index_map<...>`: an IndexMap with optional axis separators (`|`)."""

    name = "layout.index_map"

    @staticmethod
    def from_map(index_map: IndexMap, axis_separators: Sequence[int] = ()) -> IndexMapAttr:
        """The attribute of `index_map` with `axis_separators` (VerifyException when the
        separators are not strictly increasing within `1..rank-1` of the map's results)."""
        error = check_axis_separators(axis_separators, index_map.final_ndim)
        if error is not None:
            raise VerifyException(error)
        return IndexMapAttr((index_map, tuple(axis_separators)))

    @property
    def index_map(self) -> IndexMap:
        """The IndexMap (without its separators)."""
        return self.data[0]

    @property
    def axis_separators(self) -> tuple[int, ...]:
        """The axis separators written with `|` in the map's results."""
        return self.data[1]

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> tuple[IndexMap, tuple[int, ...]]:
        start = parser.pos
        if parser.parse_optional_punctuation("<") is None:
            parser.raise_error("expected '<' in index_map attribute")
        parser._resume_from(start)  # pyright: ignore[reportPrivateUsage]
        try:
            body = parser._parse_dialect_symbol_body()  # pyright: ignore[reportPrivateUsage]
        except ParseError as err:  # xDSL: "Unbalanced '>' in dialect symbol body"
            parser.raise_error(
                f"invalid index map: unbalanced brackets ({err.msg}): every '(' needs its "
                "')' before the closing '>'",
                err.span.start,
                err.span.end,
            )
        try:
            return IndexMap.parse_with_separators(body)
        except ValueError as err:
            parser.raise_error(f"invalid index map: {err}", start, parser.pos)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string("<" + self.index_map.to_string(self.axis_separators) + ">")


def buffer_type_problem(
    shape: Sequence[int],
    element_type: Attribute,
    transforms: Sequence[IndexMapAttr],
    pad: Attribute,
    separators: Sequence[int],
    scope: str,
) -> str | None:
    """Why the parameters of a `!layout.buffer` type are ill-formed, or None."""
    if any(e <= 0 for e in shape):
        shown = ", ".join("?" if e < 0 else str(e) for e in shape)
        return f"buffer extents must be static and positive, got [{shown}]"
    if prod(shape) > MAX_ELEMENTS:
        return f"buffer of {prod(shape)} elements exceeds the index range (at most {MAX_ELEMENTS})"
    problem = memory_scope_problem(scope) or element_type_problem(element_type)
    if problem is not None:
        return problem
    rank = len(shape)
    for i, transform in enumerate(transforms):
        index_map = transform.index_map
        if index_map.ndim != rank:
            return (
                f"transform #{i} expects {index_map.ndim} indices but the buffer "
                f"has rank {rank} at that point"
            )
        if transform.axis_separators and i != len(transforms) - 1:
            return f"only the last transform may carry axis separators ('|'), not #{i}"
        rank = index_map.final_ndim
    if transforms and separators:
        return (
            "a buffer with a pending transform takes its axis separators from the "
            "transform ('|'), not from axis_separators"
        )
    error = check_axis_separators(separators, len(shape))
    if error is not None:
        return error
    if isinstance(pad, NoneAttr):
        return None
    if not transforms:
        return "pad_value is only meaningful with a pending transform"
    if not isinstance(pad, FloatAttr | IntegerAttr) or pad.type != scalar_type(element_type):
        return f"pad_value must be a constant of type {scalar_type(element_type)}, got {pad}"
    return None


def element_type_problem(element_type: Attribute) -> str | None:
    """Why `element_type` cannot be the element type of a buffer or ptr, or None: elements
    are integers, floats, `index`, or vectors of them."""
    if isinstance(scalar_type(element_type), IntegerType | IndexType | AnyFloat):
        return None
    return (
        "element type must be an integer, float or index type, or a vector of one, "
        f"got {element_type}"
    )


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """`!layout.buffer<...>`: a statically shaped buffer, its pending layout and its scope."""

    name = "layout.buffer"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    transforms: ArrayAttr[IndexMapAttr]
    pad_value: Attribute
    axis_separators: ArrayAttr[IntAttr]
    scope: MemoryScopeAttr

    def __init__(
        self,
        shape: Sequence[int],
        element_type: Attribute,
        transforms: Sequence[IndexMapAttr] = (),
        axis_separators: Sequence[int] = (),
        scope: str = MemoryScope.GLOBAL,
        pad_value: Attribute | None = None,
    ):
        super().__init__(
            ArrayAttr(IntAttr(e) for e in shape),
            element_type,
            ArrayAttr(transforms),
            NoneAttr() if pad_value is None else pad_value,
            ArrayAttr(IntAttr(s) for s in axis_separators),
            MemoryScopeAttr.from_name(scope),
        )

    # Accessors --------------------------------------------------------------------------

    def get_shape(self) -> tuple[int, ...]:
        """The extents (logical while transforms are pending)."""
        return tuple(e.data for e in self.shape.data)

    @property
    def rank(self) -> int:
        """The number of axes."""
        return len(self.shape.data)

    def get_axis_separators(self) -> tuple[int, ...]:
        """The `axis_separators` parameter (empty when not given)."""
        return tuple(s.data for s in self.axis_separators.data)

    def get_transforms(self) -> tuple[IndexMapAttr, ...]:
        """The pending transforms, in the order they apply."""
        return self.transforms.data

    def get_scope(self) -> MemoryScope:
        """The memory scope (`global` by default)."""
        return self.scope.data

    def num_elements(self) -> int:
        """The product of the extents."""
        count = 1
        for extent in self.get_shape():
            count *= extent
        return count

    def get_pad_value(self) -> FloatAttr | IntegerAttr | None:
        """The `pad_value` attribute, or None."""
        if isinstance(self.pad_value, FloatAttr | IntegerAttr):
            return self.pad_value
        return None

    def with_layout(
        self,
        shape: Sequence[int],
        axis_separators: Sequence[int],
        transforms: Sequence[IndexMapAttr] = (),
    ) -> BufferType:
        """This buffer type with a new shape and separators (element type and scope kept)."""
        pad = self.get_pad_value() if transforms else None
        return BufferType(
            shape, self.element_type, transforms, axis_separators, self.get_scope(), pad
        )

    def ptr_type(self) -> PtrType:
        """The type of this buffer's data handle (`layout.data`): element type and scope."""
        return PtrType(self.element_type, self.get_scope())

    # Verification -----------------------------------------------------------------------

    def problem(self) -> str | None:
        """Why this type is ill-formed, or None."""
        return buffer_type_problem(
            self.get_shape(),
            self.element_type,
            self.get_transforms(),
            self.pad_value,
            self.get_axis_separators(),
            self.get_scope(),
        )

    def verify(self) -> None:
        problem = self.problem()
        if problem is not None:
            raise VerifyException(problem)

    # Syntax -----------------------------------------------------------------------------

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        parser.parse_punctuation("<")
        try:
            shape, element_type = parser.parse_ranked_shape()
        except ParseError as err:
            parser.raise_error(
                f"{err.msg.rstrip('.')}: !layout.buffer expects positive integer extents and an element "
                "type, e.g. !layout.buffer<4x8xf32>",
                err.span.start,
                err.span.end,
            )
        transforms: list[IndexMapAttr] = []
        separators: list[int] = []
        scope: str = MemoryScope.GLOBAL
        pad: Attribute = NoneAttr()
        seen: set[str] = set()
        while parser.parse_optional_punctuation(",") is not None:
            key = parser.parse_keyword_in(
                ("transform", "axis_separators", "scope", "pad_value"),
                " in !layout.buffer",
            )
            if key in seen:
                parser.raise_error(f"duplicate '{key}' in !layout.buffer")
            seen.add(key)
            parser.parse_punctuation("=")
            if key == "transform":
                transforms = _parse_transforms(parser)
            elif key == "axis_separators":
                separators = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_integer
                )
            elif key == "scope":
                scope = parser.parse_str_literal()
            else:
                pad = parser.parse_attribute()
        parser.parse_punctuation(">")
        problem = buffer_type_problem(shape, element_type, transforms, pad, separators, scope)
        if problem is not None:
            parser.raise_error(problem, start, parser.pos)
        return [
            ArrayAttr(IntAttr(e) for e in shape),
            element_type,
            ArrayAttr(transforms),
            pad,
            ArrayAttr(IntAttr(s) for s in separators),
            MemoryScopeAttr(MemoryScope(scope)),
        ]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        for extent in self.get_shape():
            printer.print_string(f"{extent}x")
        printer.print_attribute(self.element_type)
        transforms = self.get_transforms()
        if len(transforms) == 1:
            printer.print_string(", transform = ")
            printer.print_attribute(transforms[0])
        elif transforms:
            printer.print_string(", transform = [")
            printer.print_list(transforms, printer.print_attribute)
            printer.print_string("]")
        if not isinstance(self.pad_value, NoneAttr):
            printer.print_string(", pad_value = ")
            printer.print_attribute(self.pad_value)
        if self.axis_separators.data:
            printer.print_string(
                ", axis_separators = [" + ", ".join(map(str, self.get_axis_separators())) + "]"
            )
        _print_scope(printer, self.get_scope())
        printer.print_string(">")


def _parse_transforms(parser: AttrParser) -> list[IndexMapAttr]:
    def parse_one() -> IndexMapAttr:
        pos = parser.pos
        attr = parser.parse_attribute()
        if not isinstance(attr, IndexMapAttr):
            parser.raise_error("expected a #layout.index_map attribute", pos, parser.pos)
        return attr

    if parser.parse_optional_punctuation("[") is None:
        return [parse_one()]
    transforms = [parse_one()]
    while parser.parse_optional_punctuation(",") is not None:
        transforms.append(parse_one())
    parser.parse_punctuation("]")
    return transforms


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """`!layout.ptr<ELT [, scope = "..."]>`: a handle to storage of ELT in a memory scope."""

    name = "layout.ptr"

    element_type: Attribute
    scope: MemoryScopeAttr

    def __init__(self, element_type: Attribute, scope: str = MemoryScope.GLOBAL):
        super().__init__(element_type, MemoryScopeAttr.from_name(scope))

    def get_scope(self) -> MemoryScope:
        """The memory scope of the data."""
        return self.scope.data

    def verify(self) -> None:
        problem = element_type_problem(self.element_type)
        if problem is not None:
            raise VerifyException(problem)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        parser.parse_punctuation("<")
        element_type = parser.parse_type()
        scope: str = MemoryScope.GLOBAL
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("scope")
            parser.parse_punctuation("=")
            scope = parser.parse_str_literal()
        parser.parse_punctuation(">")
        problem = memory_scope_problem(scope) or element_type_problem(element_type)
        if problem is not None:
            parser.raise_error(problem, start, parser.pos)
        return [element_type, MemoryScopeAttr(MemoryScope(scope))]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.element_type)
        _print_scope(printer, self.get_scope())
        printer.print_string(">")


def _print_scope(printer: Printer, scope: MemoryScope) -> None:
    """`, scope = "..."` inside a type's parameters (nothing for the default, global)."""
    if scope != MemoryScope.GLOBAL:
        printer.print_string(f', scope = "{scope}"')


# Operations -----------------------------------------------------------------------------


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
        if prod(self.get_extents()) > MAX_ELEMENTS:
            raise VerifyException(
                f"allocation of {prod(self.get_extents())} elements exceeds the index range "
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
