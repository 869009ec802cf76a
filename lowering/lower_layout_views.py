"""Memref views for `lower-layout`: a declared buffer as a view of its storage memref.

A `layout.decl_buffer` of shape `S'` at element offset `k` over a storage memref of shape
`S` (row-major) is the row-major block of `prod(S')` elements starting at element `k`.
The storage is an identity-layout memref, or a function parameter that callers may bind
to a view at an offset (`transforms.buffer_aliases.parameters_at_offsets`), typed
`memref<S x T, strided<[row-major], offset: ?>>` (`offset_parameter_type`). `build_view`
expresses the block with the cheapest upstream op that is exact:

- the storage itself when `k == 0` and `S' == S`;
- `memref.collapse_shape` when `k == 0` and `S'` merges consecutive axes of `S` (each
  extent of `S'` is the product of a run of extents of `S`), `memref.expand_shape` for the
  converse, and a collapse to one axis followed by an expand when both are needed (these
  keep the storage's offset, static 0 or dynamic);
- otherwise (an offset, or fewer elements than the storage), over identity storage,
  `memref.reinterpret_cast`: the result has static sizes `S'`, row-major strides and the
  offset, so its type is `memref<S' x T, strided<[...], offset: k>>` (identity layout when
  `k == 0`); over storage with a dynamic offset, a collapse to one axis, a
  `memref.subview` of `prod(S')` elements at `k` (relative to the storage's own offset,
  which a reinterpret_cast would drop) and an expand to `S'`, of type
  `memref<S' x T, strided<[...], offset: ?>>`.

All of these are views (no copy) and lower with `-expand-strided-metadata` and
`-finalize-memref-to-llvm`. `TypeOffsetParametersWithDynamicOffsets` gives such parameters
their type; `View`/`LoweringState` record the view of each lowered buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FunctionType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern


def row_major_strides(shape: Sequence[int]) -> list[int]:
    """Element strides of a row-major array of `shape`."""
    strides: list[int] = []
    stride = 1
    for extent in reversed(shape):
        strides.append(stride)
        stride *= extent
    return strides[::-1]


def merge_groups(fine: Sequence[int], coarse: Sequence[int]) -> list[list[int]] | None:
    """Group the axes of `fine` into runs whose extents multiply to the extents of `coarse`.

    Returns the reassociation (axis numbers of `fine` per axis of `coarse`), or None when no
    such grouping exists. Trailing unit axes of `fine` join the last group.
    """
    if not coarse or prod(fine) != prod(coarse):
        return None
    groups: list[list[int]] = []
    axis = 0
    for extent in coarse:
        group: list[int] = []
        product = 1
        while axis < len(fine) and (not group or product < extent):
            group.append(axis)
            product *= fine[axis]
            axis += 1
        if product != extent:
            return None
        groups.append(group)
    groups[-1].extend(range(axis, len(fine)))
    return groups


def _reassociation(groups: list[list[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr(ArrayAttr(IntegerAttr(axis, i64) for axis in group) for group in groups)


def _collapse(source: SSAValue, groups: list[list[int]], result: MemRefType) -> Operation:
    return memref.CollapseShapeOp.build(
        operands=[source],
        result_types=[result],
        properties={"reassociation": _reassociation(groups)},
    )


def _expand(source: SSAValue, groups: list[list[int]], result: MemRefType) -> Operation:
    return memref.ExpandShapeOp.build(
        operands=[source, []],
        result_types=[result],
        properties={
            "reassociation": _reassociation(groups),
            "static_output_shape": DenseArrayBase.from_list(i64, result.get_shape()),
        },
    )


def view_type(element_type: Attribute, shape: Sequence[int], offset: int) -> MemRefType:
    """The type of a row-major view of `shape` at element `offset`."""
    if offset == 0:
        return MemRefType(element_type, shape)
    layout = StridedLayoutAttr(row_major_strides(shape), offset)
    return MemRefType(element_type, shape, layout, NoneAttr())


def offset_parameter_type(element_type: Attribute, shape: Sequence[int]) -> MemRefType:
    """`memref<shape x element_type, strided<[row-major strides], offset: ?>>`: a row-major
    buffer at any offset (the type of a parameter that callers may bind to a view at an
    offset; any row-major view of that shape and element type casts to it)."""
    layout = StridedLayoutAttr(row_major_strides(shape), None)
    return MemRefType(element_type, shape, layout, NoneAttr())


def _has_dynamic_offset(memref_type: MemRefType) -> bool:
    return not isinstance(memref_type.layout, NoneAttr)


def _like(storage_type: MemRefType, shape: Sequence[int]) -> MemRefType:
    """A row-major memref type of `shape` whose offset is the storage's (0 or dynamic)."""
    element_type = storage_type.get_element_type()
    if _has_dynamic_offset(storage_type):
        return offset_parameter_type(element_type, shape)
    return MemRefType(element_type, shape)


def _reshape(
    source: SSAValue, source_shape: list[int], target_shape: list[int]
) -> tuple[list[Operation], SSAValue]:
    """Ops that view the contiguous `source` (same element count) as `target_shape`."""
    source_type = source.type
    assert isinstance(source_type, MemRefType)
    target = _like(source_type, target_shape)
    if source_shape == target_shape:
        return [], source
    collapse = merge_groups(source_shape, target_shape)
    if collapse is not None:
        op = _collapse(source, collapse, target)
        return [op], op.results[0]
    expand = merge_groups(target_shape, source_shape)
    if expand is not None:
        op = _expand(source, expand, target)
        return [op], op.results[0]
    flat_type = _like(source_type, [prod(source_shape)])
    flat = _collapse(source, [list(range(len(source_shape)))], flat_type)
    grow = _expand(flat.results[0], [list(range(len(target_shape)))], target)
    return [flat, grow], grow.results[0]


def build_view(
    storage: SSAValue, shape: Sequence[int], offset: int
) -> tuple[list[Operation], SSAValue]:
    """Ops that view `storage` (an identity-layout memref, or a row-major one with a dynamic
    offset) as row-major `shape` from element `offset`, and the resulting value. The
    caller checks that the view fits."""
    storage_type = storage.type
    assert isinstance(storage_type, MemRefType)
    element_type = storage_type.get_element_type()
    source_shape = list(storage_type.get_shape())
    target_shape = list(shape)
    if offset == 0 and prod(source_shape) == prod(target_shape):
        return _reshape(storage, source_shape, target_shape)
    if _has_dynamic_offset(storage_type):
        size = prod(target_shape)
        ops, flat = _reshape(storage, source_shape, [prod(source_shape)])
        sub = memref.SubviewOp.get(
            flat, [offset], [size], [1], offset_parameter_type(element_type, [size])
        )
        grow, value = _reshape(sub.result, [size], target_shape)
        return [*ops, sub, *grow], value
    cast = memref.ReinterpretCastOp.from_dynamic(
        storage,
        [offset],
        target_shape,
        row_major_strides(target_shape),
        view_type(element_type, target_shape, offset),
    )
    return [cast], cast.result


@dataclass
class TypeOffsetParametersWithDynamicOffsets(RewritePattern):
    """A buffer parameter that some call may bind to a view at an element offset
    (`parameters_at_offsets`) gets the type `memref<S x T, strided<[...], offset: ?>>`, so
    the callee addresses it from its first element wherever it lies (MLIR's convention for
    function arguments that are views)."""

    offsets: set[tuple[str, int]]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        name = op.sym_name.data
        inputs = list(op.function_type.inputs.data)
        changed = False
        for index, input_type in enumerate(inputs):
            if (name, index) not in self.offsets or not isinstance(input_type, MemRefType):
                continue
            new_type = offset_parameter_type(input_type.get_element_type(), input_type.get_shape())
            if new_type == input_type:
                continue
            inputs[index] = new_type
            if op.body.blocks:
                arg = op.body.blocks[0].args[index]
                hint = arg.name_hint
                rewriter.replace_value_with_new_type(arg, new_type).name_hint = hint
            changed = True
        if changed:
            op.function_type = FunctionType.from_lists(inputs, op.function_type.outputs.data)
            rewriter.notify_op_modified(op)


# Lowering state ---------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """How a buffer value is accessed after lowering: a memref, and how many of its scalars
    make one buffer element (1 unless a vector buffer views scalar storage)."""

    memref: SSAValue
    lanes: int = 1


@dataclass
class LoweringState:
    """What the lowering patterns share: the storage memref of each data handle, the view
    of each declared buffer, and the storage each view is a view of."""

    storage: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    views: dict[SSAValue, View] = field(default_factory=dict[SSAValue, View])
    roots: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])

    def view_of(self, buffer: SSAValue) -> View:
        """The memref view lowered for `buffer` (the buffer itself, offset 0, when none was
        recorded: a value that already is a memref)."""
        return self.views.get(buffer, View(buffer))

    def root_of(self, buffer: SSAValue) -> SSAValue:
        """The memref of the storage `buffer`'s view lies in (its allocation or function
        parameter), through any chain of views."""
        view = self.view_of(buffer).memref
        return self.roots.get(view, view)
