"""The attributes and types of the `layout` dialect (see `physlayout.dialects.layout`).

- `MemoryScope` / `MemoryScopeAttr`: the memory scopes (`global`, `shared`, `local` and the
  `global.texture*` 2-D RGBA images), spelled `scope = "..."` inside the types.
- `IndexMapAttr`: `#layout.index_map<MAP>`, an IndexMap with its axis separators.
- `BufferType`: `!layout.buffer<SHAPE x ELT [, transform = ...] [, pad_value = ...]
  [, axis_separators = [...]] [, scope = "..."]>`, verified by `buffer_type_problem`.
- `PtrType`: `!layout.ptr<ELT [, scope = "..."]>`, a data handle.

Also the element-size helpers (`scalar_type`, `element_byte_width`, `byte_size`) and the
separator check (`check_axis_separators`) that the ops and passes share.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from functools import lru_cache
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
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    TypeAttribute,
)
from xdsl.irdl import (
    irdl_attr_definition,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input
from xdsl.utils.str_enum import StrEnum

from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.shapes import validate_axis_separators


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
        """True for the `global.texture*` scopes, whose buffers are 2-D RGBA images rather than
        linear memory; False for `global`, `shared` and `local`."""
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


def count_text(count: int) -> str:
    """`count` in decimal, or `at least 2^K` when it has more than about 300 digits (Python
    refuses to print integers past 4300 digits, and nobody reads them)."""
    if count.bit_length() > 1000:
        return f"at least 2^{count.bit_length() - 1}"
    return str(count)


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
    count = prod(shape)
    if count > MAX_ELEMENTS:
        return (
            f"buffer of {count_text(count)} elements exceeds the index range "
            f"(at most {MAX_ELEMENTS})"
        )
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


@lru_cache(maxsize=1024)
def _ptr_type(element_type: Attribute, scope: MemoryScope) -> PtrType:
    """`PtrType(element_type, scope)`, built once per distinct (immutable) arguments: the
    verifier of every `layout.data` asks for it."""
    return PtrType(element_type, scope)


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
        return _ptr_type(self.element_type, self.get_scope())

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
        # A module repeats the same few buffer types in every access: a body text already
        # parsed from the same input (same aliases) gives the same parameters. Only a buffer
        # type outside any other's parameters consults the cache: finding its body scans it,
        # and a scan at every level of nested types (`pad_value = !layout.buffer<...>`) would
        # read the innermost text once per level, quadratic in the input.
        if _BODY_DEPTH[0]:
            return cls._parse_counted(parser)[0]
        body = _raw_body(parser)
        parsed = _parsed_bodies(parser)
        if body is not None and body[0] in parsed:
            parser._resume_from(body[1] + 1)  # pyright: ignore[reportPrivateUsage]
            return list(parsed[body[0]])
        parameters, closing = cls._parse_counted(parser)
        if body is not None and closing == body[1]:
            parsed[body[0]] = tuple(parameters)
        return parameters

    @classmethod
    def _parse_counted(cls, parser: AttrParser) -> tuple[list[Attribute], int]:
        """`_parse_body`, counted in `_BODY_DEPTH` while it runs."""
        _BODY_DEPTH[0] += 1
        try:
            return cls._parse_body(parser)
        finally:
            _BODY_DEPTH[0] -= 1

    @classmethod
    def _parse_body(cls, parser: AttrParser) -> tuple[list[Attribute], int]:
        """The parameters of `<...>` and the position of its closing `>`."""
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
        closing = parser.pos
        parser.parse_punctuation(">")
        problem = buffer_type_problem(shape, element_type, transforms, pad, separators, scope)
        if problem is not None:
            parser.raise_error(problem, start, parser.pos)
        parameters: list[Attribute] = [
            ArrayAttr(IntAttr(e) for e in shape),
            element_type,
            ArrayAttr(transforms),
            pad,
            ArrayAttr(IntAttr(s) for s in separators),
            MemoryScopeAttr(MemoryScope(scope)),
        ]
        return parameters, closing

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


_BODY_DEPTH = [0]
"""How many `!layout.buffer` parameter lists are being parsed (one inside another)."""

_PARSED_BODIES: tuple[weakref.ref[Input[str]], dict[str, tuple[Attribute, ...]]] | None = None


def _parsed_bodies(parser: AttrParser) -> dict[str, tuple[Attribute, ...]]:
    """The `!layout.buffer` bodies parsed so far from the parser's input text (only the
    latest input is remembered)."""
    global _PARSED_BODIES
    source = parser.lexer.input
    if _PARSED_BODIES is None or _PARSED_BODIES[0]() is not source:
        _PARSED_BODIES = (weakref.ref(source), {})
    return _PARSED_BODIES[1]


def _raw_body(parser: AttrParser) -> tuple[str, int] | None:
    """The text between the current `<` and its matching `>`, and the position of that
    `>` (scanned like a dialect symbol body, without moving the parser); None when the
    brackets do not balance (the parse reports it)."""
    if parser._current_token.text != "<":  # pyright: ignore[reportPrivateUsage]
        return None
    start = parser.pos + 1
    try:
        end = parser._raw_scan_balanced(start)  # pyright: ignore[reportPrivateUsage]
    except ParseError:
        return None
    return parser.lexer.input.content[start:end], end


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
