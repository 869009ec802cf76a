"""`linalg.pack` and `linalg.unpack` (upstream MLIR's relayout ops, which xDSL 0.74 lacks),
with upstream's custom syntax, generic form and verifier rules (checked against
`mlir-opt-22`), and their exact meaning as IndexMaps.

Syntax (as upstream):

```mlir
%p = linalg.pack %src [padding_value(%pad : f32)] [outer_dims_perm = [1, 0]]
       inner_dims_pos = [0, 1] inner_tiles = [8, %t] into %dest
       : tensor<128x256xf32> -> tensor<8x16x8x?xf32>
%u = linalg.unpack %src [outer_dims_perm = [1, 0]] inner_dims_pos = [0, 1]
       inner_tiles = [8, 32] into %dest : tensor<8x16x8x32xf32> -> tensor<128x256xf32>
```

Generic form: properties `inner_dims_pos`, `static_inner_tiles` (dynamic tiles are
`-9223372036854775808` there and `index` operands), optional `outer_dims_perm`, and for pack
`operandSegmentSizes` (source, dest, padding value, dynamic tiles).

Semantics on static shapes (`n` = rank of the unpacked tensor, `k` = number of tiles,
``perm`` = `outer_dims_perm` or the identity):

- pack: ``packed_shape(S) = [O[perm[0]], ..., O[perm[n-1]], t_0, ..., t_{k-1}]`` with
  ``O[d] = ceil(S[d] / t_i)`` when ``d = inner_dims_pos[i]``, else ``S[d]``. The result is
  `layout.transform` of the source by `pack_map` (outer part ``x_d floordiv t_i`` of each
  dimension, permuted, then the inner parts ``x_d mod t_i``); positions past the end of a
  dimension hold `padding_value`. Every element of `dest` is overwritten: only its type
  matters.
- unpack into a destination of shape ``D``: ``result[i] = source[pack_map(i)]`` for every
  index ``i`` of ``D``; ``ceil(D / t)`` must give the source's outer extents, so the
  result may drop part of the last tile of a dimension (upstream's truncation).

Verifier rules (messages as upstream's): tiles positive or dynamic, one per entry of
`inner_dims_pos`, whose entries are distinct dimensions of the unpacked tensor;
`outer_dims_perm` empty or a permutation; packed rank = unpacked rank + number of tiles;
the packed type equals the one computed from the unpacked type (dynamic extents are
compatible with anything); the packed tensor's trailing extents are the static tiles; pack
without `padding_value` only when every static tile divides its static extent; the padding
value has the source's element type; result type = dest type. Unlike upstream, physlayout
also requires the source and the destination to have the same element type (upstream
accepts e.g. an f32 -> f64 unpack, whose meaning it does not define).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    TensorType,
    i64,
)
from xdsl.dialects.utils.dynamic_index_list import (
    parse_dynamic_index_list_without_types,
    print_dynamic_index_list,
    verify_dynamic_index_list,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout_graph import i64_array, int_tuple
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr

__all__ = [
    "PackOp",
    "UnPackOp",
    "pack_map",
    "packed_shape",
    "unpack_map",
]


# Meaning ----------------------------------------------------------------------------------


def _names(count: int, prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{k}" for k in range(count))


def _full_perm(rank: int, outer_dims_perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(outer_dims_perm) if outer_dims_perm else tuple(range(rank))


def packed_shape(
    shape: Sequence[int],
    inner_dims_pos: Sequence[int],
    tiles: Sequence[int],
    outer_dims_perm: Sequence[int] = (),
) -> tuple[int, ...]:
    """The packed shape of an unpacked `shape` (`DYNAMIC_INDEX` for dynamic extents and
    tiles, as upstream's `PackOp::inferPackedType`)."""
    outer = list(shape)
    for dim, tile in zip(inner_dims_pos, tiles, strict=True):
        if outer[dim] == DYNAMIC_INDEX or tile == DYNAMIC_INDEX:
            outer[dim] = DYNAMIC_INDEX
        else:
            outer[dim] = -(-outer[dim] // tile)
    perm = _full_perm(len(shape), outer_dims_perm)
    return (*(outer[d] for d in perm), *tiles)


def pack_map(
    rank: int,
    inner_dims_pos: Sequence[int],
    tiles: Sequence[int],
    outer_dims_perm: Sequence[int] = (),
) -> IndexMap:
    """The IndexMap of a pack (unpacked -> packed indices):
    ``(x0, ..., x{n-1}) -> (outer(x_perm[0]), ..., x_pos[0] mod t_0, ...)`` with
    ``outer(x_d) = x_d floordiv t_i`` for a tiled dimension ``d = pos[i]``, else ``x_d``."""
    names = _names(rank, "x")
    dims = [Dim(n) for n in names]
    tile_of = dict(zip(inner_dims_pos, tiles, strict=True))
    outer: list[Expr] = [dims[d] // tile_of[d] if d in tile_of else dims[d] for d in range(rank)]
    perm = _full_perm(rank, outer_dims_perm)
    inner = [dims[d] % t for d, t in zip(inner_dims_pos, tiles, strict=True)]
    return IndexMap(names, (*(outer[d] for d in perm), *inner))


def unpack_map(
    rank: int,
    inner_dims_pos: Sequence[int],
    tiles: Sequence[int],
    outer_dims_perm: Sequence[int] = (),
) -> IndexMap:
    """The IndexMap of an unpack without truncation (packed -> unpacked indices), the
    inverse of `pack_map` on whole tiles: unpacked dimension ``d`` is ``y_j * t_i + y_{n+i}``
    when ``d = inner_dims_pos[i]`` and ``perm[j] = d``, else ``y_j``."""
    count = len(tiles)
    names = _names(rank + count, "y")
    dims = [Dim(n) for n in names]
    perm = _full_perm(rank, outer_dims_perm)
    position = {d: j for j, d in enumerate(perm)}
    inner = {d: (rank + i, t) for i, (d, t) in enumerate(zip(inner_dims_pos, tiles, strict=True))}
    outputs: list[Expr] = []
    for d in range(rank):
        outer = dims[position[d]]
        if d in inner:
            slot, tile = inner[d]
            outputs.append(outer * tile + dims[slot])
        else:
            outputs.append(outer)
    return IndexMap(names, tuple(outputs))


# Parsing and printing ---------------------------------------------------------------------


def _parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(
        Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
    )


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


class _Relayout:
    """What the custom syntax of pack and unpack shares, parsed."""

    def __init__(self, parser: Parser, with_padding: bool):
        self.source = parser.parse_unresolved_operand()
        self.padding: tuple[UnresolvedOperand, Attribute] | None = None
        if with_padding and parser.parse_optional_keyword("padding_value") is not None:
            parser.parse_punctuation("(")
            value = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            self.padding = (value, parser.parse_type())
            parser.parse_punctuation(")")
        self.outer_dims_perm: list[int] = []
        if parser.parse_optional_keyword("outer_dims_perm") is not None:
            parser.parse_punctuation("=")
            self.outer_dims_perm = _parse_int_list(parser)
        parser.parse_keyword("inner_dims_pos")
        parser.parse_punctuation("=")
        self.inner_dims_pos = _parse_int_list(parser)
        parser.parse_keyword("inner_tiles")
        parser.parse_punctuation("=")
        self.dynamic_tiles, self.static_tiles = parse_dynamic_index_list_without_types(
            parser, DYNAMIC_INDEX
        )
        parser.parse_keyword("into")
        self.dest = parser.parse_unresolved_operand()
        self.attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        self.source_type = parser.parse_type()
        parser.parse_punctuation("->")
        self.dest_type = parser.parse_type()

    def resolve(self, parser: Parser) -> tuple[SSAValue, SSAValue, Sequence[SSAValue]]:
        source = parser.resolve_operand(self.source, self.source_type)
        dest = parser.resolve_operand(self.dest, self.dest_type)
        tiles = [parser.resolve_operand(t, IndexType()) for t in self.dynamic_tiles]
        return source, dest, tiles

    def properties(self) -> dict[str, Attribute]:
        return _relayout_properties(self.inner_dims_pos, self.static_tiles, self.outer_dims_perm)


def _relayout_properties(
    inner_dims_pos: Sequence[int], tiles: Sequence[int], outer_dims_perm: Sequence[int]
) -> dict[str, Attribute]:
    """The properties of a pack or unpack (`outer_dims_perm` left out when empty)."""
    properties: dict[str, Attribute] = {
        "inner_dims_pos": i64_array(inner_dims_pos),
        "static_inner_tiles": i64_array(tiles),
    }
    if outer_dims_perm:
        properties["outer_dims_perm"] = i64_array(outer_dims_perm)
    return properties


def _print_relayout(
    printer: Printer, op: PackOp | UnPackOp, padding: SSAValue | None = None
) -> None:
    printer.print_string(" ")
    printer.print_ssa_value(op.source)
    if padding is not None:
        printer.print_string(" padding_value(")
        printer.print_ssa_value(padding)
        printer.print_string(" : ")
        printer.print_attribute(padding.type)
        printer.print_string(")")
    if op.get_outer_dims_perm():
        printer.print_string(" outer_dims_perm = ")
        _print_int_list(printer, op.get_outer_dims_perm())
    printer.print_string(" inner_dims_pos = ")
    _print_int_list(printer, op.get_inner_dims_pos())
    printer.print_string(" inner_tiles = ")
    print_dynamic_index_list(
        printer, DYNAMIC_INDEX, op.inner_tiles, int_tuple(op.static_inner_tiles)
    )
    printer.print_string(" into ")
    printer.print_ssa_value(op.dest)
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(op.source.type)
    printer.print_string(" -> ")
    printer.print_attribute(op.dest.type)


# Verification -----------------------------------------------------------------------------


def _shape(type_: Attribute) -> tuple[int, ...]:
    assert isinstance(type_, TensorType)
    return tuple(type_.get_shape())


def _type_text(shape: Sequence[int], elt: Attribute) -> str:
    return str(TensorType(elt, list(shape)))


def _compatible(a: Sequence[int], b: Sequence[int]) -> bool:
    return len(a) == len(b) and all(
        x == y or DYNAMIC_INDEX in (x, y) for x, y in zip(a, b, strict=True)
    )


def _verify_relayout(op: PackOp | UnPackOp, unpacked: SSAValue, packed: SSAValue) -> None:
    """The rules pack and unpack share (upstream's common pack/unpack verifier)."""
    tiles = int_tuple(op.static_inner_tiles)
    verify_dynamic_index_list(tiles, op.inner_tiles, DYNAMIC_INDEX, " in the inner tiles")
    if any(t == 0 for t in tiles):
        raise VerifyException("invalid zero tile factor")
    unpacked_shape, packed_shape_ = _shape(unpacked.type), _shape(packed.type)
    rank = len(unpacked_shape)
    pos = op.get_inner_dims_pos()
    if len(set(pos)) != len(pos) or any(not 0 <= d < rank for d in pos):
        raise VerifyException("invalid inner_dims_pos vector")
    perm = op.get_outer_dims_perm()
    if perm and len(perm) != rank:
        raise VerifyException("outer_dims_perm must be a permutation or empty")
    if perm and sorted(perm) != list(range(rank)):
        raise VerifyException("invalid outer_dims_perm vector")
    if len(tiles) != len(pos):
        raise VerifyException("tiling factors must equal the number of dimensions to tile")
    if len(packed_shape_) != rank + len(tiles):
        raise VerifyException(
            f"packed rank != (unpacked rank + num tiling factors), got "
            f"{len(packed_shape_)} != {rank + len(tiles)}"
        )
    trailing = packed_shape_[rank:]
    if any(t < 0 and t != DYNAMIC_INDEX for t in tiles) or any(
        t != DYNAMIC_INDEX and e != DYNAMIC_INDEX and e != t
        for t, e in zip(tiles, trailing, strict=True)
    ):
        raise VerifyException(
            "mismatch in inner tile sizes specified and shaped of tiled dimension in the "
            "packed type"
        )
    expected = packed_shape(unpacked_shape, pos, tiles, perm)
    elt = _element(packed)
    if not _compatible(expected, packed_shape_):
        raise VerifyException(
            f"expected '{_type_text(expected, elt)}' for the packed domain value, got "
            f"'{packed.type}'"
        )
    if _element(op.source) != _element(op.dest):
        raise VerifyException(
            f"'{op.name}' op expects the source and the destination to have the same element "
            f"type, got {op.source.type} and {op.dest.type}"
        )
    if op.result.type != op.dest.type:
        raise VerifyException(
            f"'{op.name}' op failed to verify that result type matches type of dest"
        )


def _element(value: SSAValue) -> Attribute:
    type_ = value.type
    assert isinstance(type_, TensorType)
    return type_.get_element_type()


def static_tiles_of(op: PackOp | UnPackOp) -> tuple[int, ...] | None:
    """The tiles of a pack or unpack when all are static, else None."""
    tiles = int_tuple(op.static_inner_tiles)
    return None if DYNAMIC_INDEX in tiles else tiles


# The ops ----------------------------------------------------------------------------------


def _relayout_map(op: PackOp | UnPackOp, unpacked: SSAValue) -> IndexMap | None:
    """`pack_map` of a pack or unpack whose unpacked tensor is `unpacked` (None with a
    dynamic tile)."""
    tiles = static_tiles_of(op)
    if tiles is None:
        return None
    rank = len(_shape(unpacked.type))
    return pack_map(rank, int_tuple(op.inner_dims_pos), tiles, int_tuple(op.outer_dims_perm))


class _RelayoutOp(IRDLOperation):
    """What `linalg.pack` and `linalg.unpack` share: the tiling properties, the tensor
    result and their accessors (the operands are each op's own)."""

    outer_dims_perm = opt_prop_def(DenseArrayBase.constr(i64))
    inner_dims_pos = prop_def(DenseArrayBase.constr(i64))
    static_inner_tiles = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)

    traits = traits_def(Pure())

    def get_inner_dims_pos(self) -> tuple[int, ...]:
        """The dimensions tiled, in the order of the inner tiles."""
        return int_tuple(self.inner_dims_pos)

    def get_outer_dims_perm(self) -> tuple[int, ...]:
        """`outer_dims_perm` as written (empty when absent)."""
        return int_tuple(self.outer_dims_perm)


@irdl_op_definition
class PackOp(_RelayoutOp):
    """`linalg.pack`: tiles (and pads) a tensor into a packed layout (see the module
    docstring)."""

    name = "linalg.pack"

    source = operand_def(TensorType)
    dest = operand_def(TensorType)
    padding_value = opt_operand_def()
    inner_tiles = var_operand_def(IndexType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        source: SSAValue,
        dest: SSAValue,
        inner_dims_pos: Sequence[int],
        tiles: Sequence[int],
        outer_dims_perm: Sequence[int] = (),
        padding_value: SSAValue | None = None,
    ):
        properties = _relayout_properties(inner_dims_pos, tiles, outer_dims_perm)
        super().__init__(
            operands=[source, dest, [] if padding_value is None else [padding_value], []],
            result_types=[dest.type],
            properties=properties,
        )

    def index_map(self) -> IndexMap | None:
        """The pack's IndexMap (`pack_map`), or None with a dynamic tile."""
        return _relayout_map(self, self.source)

    @classmethod
    def parse(cls, parser: Parser) -> PackOp:
        parts = _Relayout(parser, with_padding=True)
        source, dest, tiles = parts.resolve(parser)
        padding = [] if parts.padding is None else [parser.resolve_operand(*parts.padding)]
        op = cls.build(
            operands=[source, dest, padding, tiles],
            result_types=[parts.dest_type],
            properties=parts.properties(),
            attributes=parts.attributes or {},
        )
        return op

    def print(self, printer: Printer) -> None:
        _print_relayout(printer, self, self.padding_value)

    def _needs_padding(self) -> bool:
        """Whether some tile is statically known not to divide its extent (with a dynamic
        tile: the source extent is not a multiple of the packed outer extent)."""
        shape = _shape(self.source.type)
        packed = _shape(self.dest.type)
        perm = _full_perm(len(shape), self.get_outer_dims_perm())
        outer = {d: packed[j] for j, d in enumerate(perm)}
        for d, t in zip(self.get_inner_dims_pos(), int_tuple(self.static_inner_tiles), strict=True):
            if shape[d] == DYNAMIC_INDEX:
                continue
            if t != DYNAMIC_INDEX and shape[d] % t:
                return True
            if t == DYNAMIC_INDEX and outer[d] > 0 and shape[d] % outer[d]:
                return True
        return False

    def verify_(self) -> None:
        _verify_relayout(self, self.source, self.dest)
        if self.padding_value is None and self._needs_padding():
            raise VerifyException(
                "'linalg.pack' op invalid tile factor or output size provided. Only full "
                "tiles are supported when padding_value is not set"
            )
        if self.padding_value is not None and self.padding_value.type != _element(self.source):
            raise VerifyException(
                f"'linalg.pack' op expected padding_value has '{_element(self.source)}' but "
                f"got: '{self.padding_value.type}'"
            )


@irdl_op_definition
class UnPackOp(_RelayoutOp):
    """`linalg.unpack`: the inverse of a pack, possibly dropping the end of the last tile
    of a dimension (see the module docstring)."""

    name = "linalg.unpack"

    source = operand_def(TensorType)
    dest = operand_def(TensorType)
    inner_tiles = var_operand_def(IndexType)

    def __init__(
        self,
        source: SSAValue,
        dest: SSAValue,
        inner_dims_pos: Sequence[int],
        tiles: Sequence[int],
        outer_dims_perm: Sequence[int] = (),
    ):
        properties = _relayout_properties(inner_dims_pos, tiles, outer_dims_perm)
        super().__init__(
            operands=[source, dest, []], result_types=[dest.type], properties=properties
        )

    def index_map(self) -> IndexMap | None:
        """The IndexMap of the matching pack (unpacked -> packed indices), or None with a
        dynamic tile: ``result[i] = source[index_map(i)]``."""
        return _relayout_map(self, self.dest)

    @classmethod
    def parse(cls, parser: Parser) -> UnPackOp:
        parts = _Relayout(parser, with_padding=False)
        source, dest, tiles = parts.resolve(parser)
        return cls.build(
            operands=[source, dest, tiles],
            result_types=[parts.dest_type],
            properties=parts.properties(),
            attributes=parts.attributes or {},
        )

    def print(self, printer: Printer) -> None:
        _print_relayout(printer, self)

    def verify_(self) -> None:
        _verify_relayout(self, self.dest, self.source)
