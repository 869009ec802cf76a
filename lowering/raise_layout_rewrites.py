"""raise-layout-rewrites: upstream relayout ops on static tensors -> graph-level layout
rewrites with the same meaning, so that `fold-layout-rewrites` and `flow-layout-rewrites`
apply to IR from an upstream pipeline (the reverse of `lower-layout-rewrites`).

What it rewrites (the maps are those of `physlayout.lowering.relayout_forms`):

- `linalg.transpose` -> `layout.transform` by `transpose_map(permutation)`;
- `tensor.expand_shape` / `tensor.collapse_shape` -> `layout.transform` by the row-major
  `grouped_reshape_map` of their reassociation (an axis that is its own group keeps its
  index, so a unit batch axis stays an axis of the map: the layout of the tensor flows
  through it unchanged);
- `linalg.pack` -> `layout.transform` by `pack_map`, with `pad_value` the padding value
  when the pack pads (it must then be an `arith.constant`);
- `linalg.unpack` -> `layout.transform` by `unpack_map` onto whole tiles, then a
  `layout.crop` at the origin when the destination drops the end of the last tiles (no
  `cropped_value` promise: nothing is known about the dropped elements);
- `tensor.pad` with static widths yielding an `arith.constant` -> `layout.pad`;
- `tensor.extract_slice` with static offsets and sizes and unit strides -> `layout.crop`
  (followed by a reshape transform when the slice drops unit dimensions);
- a `linalg.generic` carrying ``physlayout.layout_transform = "<map>"`` (the fallback of
  `lower-layout-rewrites`) -> `layout.transform` by that map, only when the generic is
  structurally identical to what `lower-layout-rewrites` emits for the map (the attribute
  alone proves nothing).

Left alone: dynamic shapes, tiles or index lists; pads and packs whose padding value is not
a constant; `tensor.pad` marked `nofold`, or yielding a value that depends on the position;
strided slices; anything else.

Guarantees: every result keeps its value (each rewrite is the op's definition); the
destinations (`outs`/`into` tensors) of the raised ops are only shapes, so nothing reads them
afterwards; a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, StringAttr, TensorType
from xdsl.dialects.linalg.ops import GenericOp, TransposeOp
from xdsl.ir import Attribute, Block, IRNode, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from physlayout.dialects.layout_graph import (
    CropOp,
    PadOp,
    ScalarAttr,
    TransformOp,
    constant_scalar,
    static_shape,
)
from physlayout.dialects.linalg_pack import PackOp, UnPackOp, static_tiles_of, unpack_map
from physlayout.indexing.index_map import IndexMap
from physlayout.lowering.lower_layout_rewrites import HINT, build_generic
from physlayout.lowering.relayout_forms import grouped_reshape_map, reshape_map, transpose_map
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker


def _transform(
    source: SSAValue, imap: IndexMap, result: Attribute, pad_value: Attribute | None = None
) -> TransformOp | None:
    """`layout.transform` of `source` by `imap` with result type `result`, or None when the
    map's structural shape is not `result`'s, or the map is not injective, or it pads
    without a pad value."""
    shape = static_shape(source)
    if shape is None or not isinstance(result, TensorType):
        return None
    try:
        if tuple(imap.map_shape(shape)) != tuple(result.get_shape()):
            return None
        if not imap.is_injective(shape):
            return None
        padding = imap.padding_predicate(shape) is not None
    except ValueError:
        return None
    if padding and pad_value is None:
        return None
    return TransformOp(source, imap, pad_value if padding else None, result)


def _static(values: Sequence[int]) -> bool:
    return DYNAMIC_INDEX not in values


class RaiseTranspose(RewritePattern):
    """`linalg.transpose` of tensors -> `layout.transform`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        if len(op.res) != 1 or static_shape(op.inputs[0]) is None:
            return
        perm = tuple(int(v) for v in op.permutation.get_values())
        transform = _transform(op.inputs[0], transpose_map(perm), op.res[0].type)
        if transform is not None:
            rewriter.replace(op, transform)


class RaiseReshape(RewritePattern):
    """`tensor.expand_shape` / `tensor.collapse_shape` -> a reshape `layout.transform`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, tensor.ExpandShapeOp | tensor.CollapseShapeOp):
            return
        source, result = op.operands[0], op.results[0]
        src, dst = static_shape(source), static_shape(result)
        if src is None or dst is None or not src or not dst:
            return
        groups = [[a.value.data for a in g.data] for g in op.reassociation.data]
        imap = grouped_reshape_map(src, dst, groups, isinstance(op, tensor.ExpandShapeOp))
        transform = _transform(source, imap, result.type)
        if transform is not None:
            rewriter.replace(op, transform)


class RaisePack(RewritePattern):
    """`linalg.pack` -> `layout.transform` by its `pack_map`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PackOp, rewriter: PatternRewriter) -> None:
        imap = op.index_map()
        if imap is None or static_shape(op.source) is None:
            return
        pad_value = constant_scalar(op.padding_value)
        transform = _transform(op.source, imap, op.result.type, pad_value)
        if transform is not None:
            rewriter.replace(op, transform)


class RaiseUnpack(RewritePattern):
    """`linalg.unpack` -> `layout.transform` onto whole tiles (+ `layout.crop`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnPackOp, rewriter: PatternRewriter) -> None:
        tiles = static_tiles_of(op)
        dest = static_shape(op.result)
        if tiles is None or dest is None or static_shape(op.source) is None:
            return
        imap = unpack_map(len(dest), op.get_inner_dims_pos(), tiles, op.get_outer_dims_perm())
        packed = static_shape(op.source)
        assert packed is not None
        try:
            whole = tuple(imap.map_shape(packed))
        except ValueError:
            return
        transform = _transform(
            op.source, imap, TensorType(op.result.type.get_element_type(), whole)
        )
        if transform is None or len(whole) != len(dest):
            return
        if whole == dest:
            rewriter.replace(op, transform)
            return
        crop = CropOp(transform.result, [0] * len(dest), dest)
        rewriter.replace(op, [transform, crop])


class RaisePad(RewritePattern):
    """`tensor.pad` with static widths and a constant -> `layout.pad`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.PadOp, rewriter: PatternRewriter) -> None:
        low, high = tuple(op.static_low.get_values()), tuple(op.static_high.get_values())
        if op.nofold is not None or not _static(low) or not _static(high):
            return
        if any(width < 0 for width in (*low, *high)):
            return
        if static_shape(op.source) is None:
            return
        yielded = op.region.block.last_op
        if not isinstance(yielded, tensor.YieldOp) or len(yielded.operands) != 1:
            return
        value = constant_scalar(yielded.operands[0])
        if value is None or value.type != op.result.type.get_element_type():
            return
        rewriter.replace(op, PadOp(op.source, low, high, value))


class RaiseExtractSlice(RewritePattern):
    """`tensor.extract_slice` with unit strides -> `layout.crop` (+ reshape)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.ExtractSliceOp, rewriter: PatternRewriter) -> None:
        offsets = tuple(op.static_offsets.get_values())
        sizes = tuple(op.static_sizes.get_values())
        strides = tuple(op.static_strides.get_values())
        result = static_shape(op.result)
        if not _static(offsets) or not _static(sizes) or any(s != 1 for s in strides):
            return
        if result is None or static_shape(op.source) is None:
            return
        crop = CropOp(op.source, offsets, sizes)
        if result == sizes:
            rewriter.replace(op, crop)
            return
        if not sizes or not result:
            return
        transform = _transform(crop.result, reshape_map(sizes, result), op.result.type)
        if transform is not None:
            rewriter.replace(op, [crop, transform])


class RaiseLoweredGeneric(RewritePattern):
    """The generic fallback of `lower-layout-rewrites` -> the `layout.transform` it
    computes, when it is exactly what lowering that transform emits."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        hint = op.attributes.get(HINT)
        if not isinstance(hint, StringAttr) or op.inputs or len(op.res) != 1:
            return
        found = _lowered_source(op)
        if found is None:
            return
        source, pad_value = found
        result = static_shape(op.res[0])
        try:
            imap = IndexMap.parse(hint.data)
        except ValueError:
            return
        transform = _transform(source, imap, op.res[0].type, pad_value)
        if transform is None or result is None or not _is_lowering_of(op, imap, pad_value):
            return
        rewriter.replace(op, transform)


def _lowered_source(op: GenericOp) -> tuple[SSAValue, ScalarAttr | None] | None:
    """The tensor a lowered generic reads (its only `tensor.extract` of an outer value)
    and its pad constant (the only scalar constant of the element type), if any."""
    block = op.body.block
    extracts = [o for o in block.ops if isinstance(o, tensor.ExtractOp)]
    if len(extracts) != 1 or static_shape(extracts[0].tensor) is None:
        return None
    elt = extracts[0].result.type
    constants = [c.value for c in block.ops if isinstance(c, ConstantOp) and c.result.type == elt]
    if len(constants) > 1 or any(not isinstance(c, ScalarAttr) for c in constants):
        return None
    pad_value = constants[0] if constants else None
    assert pad_value is None or isinstance(pad_value, ScalarAttr)
    return extracts[0].tensor, pad_value


def _is_lowering_of(op: GenericOp, imap: IndexMap, pad_value: ScalarAttr | None) -> bool:
    """Whether `op` is structurally what `build_generic` emits for `imap` (its source and
    init stand for placeholders)."""
    source = _lowered_source(op)
    result = static_shape(op.res[0])
    if source is None or result is None:
        return False
    placeholders = Block(arg_types=[source[0].type, op.outputs[0].type])
    try:
        built = build_generic(placeholders.args[0], imap, pad_value, result)
    except ValueError:
        return False
    empty, candidate = built
    candidate.attributes[HINT] = op.attributes[HINT]
    context: dict[IRNode | SSAValue, IRNode | SSAValue] = {
        placeholders.args[0]: source[0],
        empty.results[0]: op.outputs[0],
    }
    equal = candidate.is_structurally_equivalent(op, context)
    candidate.erase(safe_erase=False)
    empty.erase(safe_erase=False)
    return equal


@dataclass(frozen=True)
class RaiseLayoutRewritesPass(PhyslayoutPass):
    """Raise upstream relayout ops to graph-level layout rewrites (see the module
    docstring)."""

    name = "raise-layout-rewrites"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise_layout_rewrites(op)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        return raise_layout_rewrites(op)


def raise_layout_rewrites(module: ModuleOp) -> bool:
    """Apply `raise-layout-rewrites` to `module`; whether it changed anything."""
    return RootedWalker(
        GreedyRewritePatternApplier(
            [
                RaiseTranspose(),
                RaiseReshape(),
                RaisePack(),
                RaiseUnpack(),
                RaisePad(),
                RaiseExtractSlice(),
                RaiseLoweredGeneric(),
            ]
        ),
        apply_recursively=False,
        walk_reverse=True,
    ).rewrite_module(module)
