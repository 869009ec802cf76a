"""lower-layout-rewrites: graph-level layout rewrites -> upstream `linalg` / `tensor` ops with
the same meaning, in the most specific form that is proven to fit (the card's MLIR
interop; `raise-layout-rewrites` is the reverse).

What it rewrites (static tensors; forms recognized by `physlayout.lowering.relayout_forms`,
each proven equal to the map on the input box with isl before it is used):

- `layout.transform` whose map is the identity on the input box -> its input, or a
  `tensor.pad` at the high end when the structural shape is larger (``i -> i mod 16`` on 7
  elements);
- a permutation -> `linalg.transpose`;
- a row-major reshape (pure split / fuse of axes) -> `tensor.expand_shape`, or
  `tensor.collapse_shape`, or a collapse then an expand;
- a tiling (each axis plain, or split into ``floordiv t`` and ``mod t`` outputs) with any
  order of the outer parts and padding -> `linalg.pack` (`padding_value` from `pad_value`,
  an `arith.constant`), followed by a `linalg.transpose` when tile axes are not last;
- the inverse of a tiling (each output a plain axis or ``outer * t + inner`` with an inner
  axis of extent ``t``) -> `linalg.unpack` (after a `linalg.transpose` when the inner axes are
  not last); a `layout.crop` at the origin of such a transform's only result becomes one
  truncating `linalg.unpack` when the crop keeps every whole tile (upstream's unpack drops
  at most the end of the last tile of each dimension);
- a bijection that splits axes into digits at its own divisors, permutes the digits and fuses
  them (mixed div/mod without padding: ``i -> (i mod 4) * 4 + i floordiv 4``) ->
  `tensor.expand_shape`, `linalg.transpose`, `tensor.collapse_shape` (TVM's "reshape,
  transpose, reshape");
- any other map (shears, reversals, padded mixed div/mod) -> the generic fallback: a
  `linalg.generic` over the result whose body computes the source indices with the map's
  exact inverse (`IndexMap.non_surjective_inverse`), reads the input with `tensor.extract`
  and yields `pad_value` where the padding predicate holds (the index read there is
  replaced by 0, so no read is out of bounds). It carries the discardable attribute
  ``physlayout.layout_transform = "<map>"``, which lets `raise-layout-rewrites` recognize it;
- `layout.pad` -> `tensor.pad` yielding the pad value; `layout.crop` ->
  `tensor.extract_slice` with unit strides (a crop's `cropped_value` promise is dropped:
  upstream has no such notion, and dropping a promise is always safe).

Refused, with a diagnostic (`PassFailedException`) naming the op: a map whose inverse is
not quasi-affine (only possible for the generic fallback; the IndexMap engine reports it).

Guarantees: every result keeps its value (the forms are proven, the fallback is exact by
construction); no `layout.transform`/`pad`/`crop` remains, so a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, TransposeOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout_graph import (
    CropOp,
    PadOp,
    ScalarAttr,
    TransformOp,
    element_type,
)
from physlayout.dialects.linalg_pack import PackOp, UnPackOp, packed_shape
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.extents import Constraint
from physlayout.indexing.index_map import IndexMap
from physlayout.lowering.relayout_forms import (
    DigitPermutation,
    Pack,
    Reshape,
    Unpack,
    match_digit_permutation,
    match_pack,
    match_reshape,
    match_transpose,
    match_unpack,
)
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker

HINT = "physlayout.layout_transform"
"""Discardable attribute of a generic fallback: the map it computes, as text."""


def _tensor(like: SSAValue, shape: Sequence[int]) -> TensorType:
    elt = element_type(like)
    assert elt is not None
    return TensorType(elt, list(shape))


def _i64s(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, tuple(values))


def _groups(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr(ArrayAttr(IntegerAttr(k, i64) for k in group) for group in groups)


# Builders (each returns the new ops, the last one producing the value) -------------------


def build_transpose(source: SSAValue, perm: Sequence[int]) -> list[Operation]:
    """`linalg.transpose` of `source` by `perm` into a fresh `tensor.empty`."""
    shape = _shape(source)
    result = _tensor(source, [shape[p] for p in perm])
    empty = _empty(result)
    return [empty, TransposeOp(source, empty.tensor, _i64s(perm), result)]


def _collapse(value: SSAValue, groups: Sequence[Sequence[int]]) -> tensor.CollapseShapeOp:
    shape = _shape(value)
    result = _tensor(value, [prod(shape[k] for k in group) for group in groups])
    return tensor.CollapseShapeOp.build(
        operands=[value], result_types=[result], properties={"reassociation": _groups(groups)}
    )


def _expand(
    value: SSAValue, groups: Sequence[Sequence[int]], shape: Sequence[int]
) -> tensor.ExpandShapeOp:
    return tensor.ExpandShapeOp(value, [], _groups(groups), shape, _tensor(value, shape))


def build_reshape(source: SSAValue, form: Reshape, shape: Sequence[int]) -> list[Operation]:
    """`tensor.collapse_shape` and/or `tensor.expand_shape` of `source` into `shape`."""
    ops: list[Operation] = []
    value = source
    if form.collapse is not None:
        ops.append(_collapse(value, form.collapse))
        value = ops[-1].results[0]
    if form.expand is not None:
        ops.append(_expand(value, form.expand, shape))
    return ops


def build_digit_permutation(source: SSAValue, form: DigitPermutation) -> list[Operation]:
    """`tensor.expand_shape` into digits, `linalg.transpose`, `tensor.collapse_shape`."""
    ops: list[Operation] = []
    value = source
    if form.expand is not None:
        ops.append(_expand(value, form.expand, form.digits))
        value = ops[-1].results[0]
    if form.transpose is not None:
        ops += build_transpose(value, form.transpose)
        value = ops[-1].results[0]
    if form.collapse is not None:
        ops.append(_collapse(value, form.collapse))
    return ops


def _pad_constant(pad_value: Attribute | None) -> arith.ConstantOp | None:
    """An `arith.constant` of a pad value (a scalar attribute, checked by the verifiers)."""
    if pad_value is None:
        return None
    assert isinstance(pad_value, ScalarAttr)
    constant = arith.ConstantOp(pad_value)
    constant.result.name_hint = "pad"
    return constant


def _empty(type_: TensorType) -> tensor.EmptyOp:
    """A `tensor.empty` destination (its contents are never read)."""
    empty = tensor.EmptyOp([], type_)
    empty.tensor.name_hint = "dest"
    return empty


def build_pad(
    source: SSAValue, low: Sequence[int], high: Sequence[int], pad_value: Attribute | None
) -> list[Operation]:
    """`tensor.pad` of `source` by `low`/`high` yielding the constant `pad_value`."""
    constant = _pad_constant(pad_value)
    assert constant is not None
    shape = [lo + e + hi for lo, e, hi in zip(low, _shape(source), high, strict=True)]
    body = Block([tensor.YieldOp(constant.result)], arg_types=[IndexType()] * len(low))
    pad = tensor.PadOp(source, [], [], Region(body), low, high, _tensor(source, shape))
    return [constant, pad]


def build_pack(source: SSAValue, form: Pack, pad_value: Attribute | None) -> list[Operation]:
    """`linalg.pack` of `source` (padded with `pad_value` when given), then the transpose."""
    packed = _tensor(source, form.packed_shape(_shape(source)))
    constant = _pad_constant(pad_value)
    empty = _empty(packed)
    pack = PackOp(
        source,
        empty.tensor,
        form.inner_dims_pos,
        form.tiles,
        form.outer_dims_perm,
        None if constant is None else constant.result,
    )
    ops: list[Operation] = [*([] if constant is None else [constant]), empty, pack]
    if form.transpose is not None:
        ops += build_transpose(pack.result, form.transpose)
    return ops


def build_unpack(source: SSAValue, form: Unpack, dest_shape: Sequence[int]) -> list[Operation]:
    """The transpose (if any), then `linalg.unpack` of `source` into `dest_shape`."""
    ops: list[Operation] = []
    value = source
    if form.transpose is not None:
        ops += build_transpose(value, form.transpose)
        value = ops[-1].results[0]
    empty = _empty(_tensor(source, dest_shape))
    unpack = UnPackOp(value, empty.tensor, form.inner_dims_pos, form.tiles, form.outer_dims_perm)
    return [*ops, empty, unpack]


def build_generic(
    source: SSAValue, imap: IndexMap, pad_value: Attribute | None, result_shape: Sequence[int]
) -> list[Operation]:
    """The generic fallback for `layout.transform` of `source` by `imap` (see the module
    docstring). Raises ValueError when the inverse is not quasi-affine."""
    shape = _shape(source)
    inverse, predicate = imap.non_surjective_inverse(shape)
    result = _tensor(source, result_shape)
    elt = element_type(source)
    assert elt is not None
    body = Block(arg_types=[elt])
    indices = [IndexOp(k) for k in range(len(result_shape))]
    body.add_ops(indices)
    names = [f"i{k}" for k in range(len(result_shape))]
    emitter = ExprEmitter(
        InsertPoint.at_end(body),
        dict(zip(names, (op.result for op in indices), strict=True)),
        {name: (0, extent - 1) for name, extent in zip(names, result_shape, strict=True)},
    )
    reads = [emitter.emit(expr) for expr in inverse.final_indices]
    padding: SSAValue | None = None
    if predicate is not None and pad_value is not None:
        padding = _emit_predicate(emitter, body, predicate.disjuncts)
        zero = emitter.constant(0)
        safe = [arith.SelectOp(padding, zero, r) for r in reads]
        body.add_ops(safe)
        reads = [op.result for op in safe]
    extract = tensor.ExtractOp(source, reads, elt)
    body.add_op(extract)
    value: SSAValue = extract.result
    if padding is not None:
        constant = _pad_constant(pad_value)
        assert constant is not None
        choose = arith.SelectOp(padding, constant.result, value)
        body.add_ops([constant, choose])
        value = choose.result
    body.add_op(YieldOp(value))
    empty = _empty(result)
    rank = len(result_shape)
    generic = GenericOp(
        [],
        [empty.tensor],
        Region(body),
        [AffineMapAttr(AffineMap.identity(rank))],
        [IteratorTypeAttr.parallel()] * rank,
        [result],
    )
    generic.attributes[HINT] = StringAttr(str(imap))
    return [empty, generic]


def _emit_predicate(
    emitter: ExprEmitter, body: Block, disjuncts: Sequence[Sequence[Constraint]]
) -> SSAValue:
    """An `i1` that holds on the padding positions (a union of conjunctions of affine
    constraints ``e == 0`` / ``e >= 0``)."""
    zero = emitter.constant(0)
    terms: list[SSAValue] = []
    for conjunction in disjuncts:
        clause: SSAValue | None = None
        for constraint in conjunction:
            kind = "eq" if constraint.is_equality else "sge"
            compare = arith.CmpiOp(emitter.emit(constraint.expr), zero, kind)
            body.add_op(compare)
            if clause is None:
                clause = compare.result
            else:
                both = arith.AndIOp(clause, compare.result)
                body.add_op(both)
                clause = both.result
        if clause is None:
            true = arith.ConstantOp.from_int_and_width(1, 1)
            body.add_op(true)
            clause = true.result
        terms.append(clause)
    value = terms[0]
    for term in terms[1:]:
        either = arith.OrIOp(value, term)
        body.add_op(either)
        value = either.result
    return value


def _shape(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    assert isinstance(type_, TensorType)
    return tuple(type_.get_shape())


def lower_transform(op: TransformOp) -> list[Operation] | None:
    """The upstream ops for a `layout.transform` (None: the identity, use the input)."""
    imap, shape, result = op.map, op.input_shape(), op.result_shape()
    pad_value = op.pad_value if op.pads() else None
    if imap.is_identity_on(shape):
        if shape == result:
            return None
        high = [r - s for r, s in zip(result, shape, strict=True)]
        return build_pad(op.input, [0] * len(shape), high, pad_value)
    if pad_value is None:
        perm = match_transpose(imap, shape)
        if perm is not None:
            return build_transpose(op.input, perm)
        reshape = match_reshape(imap, shape)
        if reshape is not None:
            return build_reshape(op.input, reshape, result)
        unpack = match_unpack(imap, shape)
        if unpack is not None:
            return build_unpack(op.input, unpack, result)
    pack = match_pack(imap, shape)
    if pack is not None:
        return build_pack(op.input, pack, pad_value)
    if pad_value is None:
        digits = match_digit_permutation(imap, shape)
        if digits is not None:
            return build_digit_permutation(op.input, digits)
    try:
        return build_generic(op.input, imap, pad_value, result)
    except ValueError as err:
        raise PassFailedException(
            f"lower-layout-rewrites: cannot lower {op.name} with map {imap} on {list(shape)}: {err}"
        ) from None


# Patterns ---------------------------------------------------------------------------------


class LowerTransform(RewritePattern):
    """`layout.transform` -> its most specific upstream form."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        ops = lower_transform(op)
        if ops is None:
            rewriter.replace(op, [], [op.input])
            return
        rewriter.replace(op, ops)


class LowerPad(RewritePattern):
    """`layout.pad` -> `tensor.pad` yielding the pad value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, build_pad(op.input, op.get_low(), op.get_high(), op.pad_value))


class LowerCrop(RewritePattern):
    """`layout.crop` -> `tensor.extract_slice` with unit strides."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropOp, rewriter: PatternRewriter) -> None:
        start, sizes = op.get_start(), op.get_sizes()
        rewriter.replace(
            op, tensor.ExtractSliceOp(op.input, start, sizes, [1] * len(sizes), op.result.type)
        )


class FuseCropIntoUnpack(RewritePattern):
    """``crop(T(y))`` at the origin, where ``T`` is an unpack form and the crop keeps every
    whole tile -> one truncating `linalg.unpack` of ``y``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CropOp, rewriter: PatternRewriter) -> None:
        transform = op.input.owner
        if not isinstance(transform, TransformOp) or any(op.get_start()):
            return
        if not transform.result.has_one_use() or transform.pads():
            return
        form = match_unpack(transform.map, transform.input_shape())
        if form is None:
            return
        sizes = op.get_sizes()
        packed = transform.input_shape()
        if form.transpose is not None:
            packed = tuple(packed[p] for p in form.transpose)
        expected = packed_shape(sizes, form.inner_dims_pos, form.tiles, form.outer_dims_perm)
        if expected != packed:
            return
        rewriter.replace(op, build_unpack(transform.input, form, sizes))
        rewriter.erase(transform)


@dataclass(frozen=True)
class LowerLayoutRewritesPass(PhyslayoutPass):
    """Lower graph-level layout rewrites to upstream ops (see the module docstring)."""

    name = "lower-layout-rewrites"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_layout_rewrites(op)


def lower_layout_rewrites(module: ModuleOp) -> None:
    """Apply `lower-layout-rewrites` to `module`."""
    RootedWalker(FuseCropIntoUnpack(), apply_recursively=False).rewrite_module(module)
    RootedWalker(
        GreedyRewritePatternApplier(
            [LowerTransform(), LowerPad(), LowerCrop()], dce_enabled=False
        ),
        apply_recursively=False,
    ).rewrite_module(module)


__all__ = [
    "HINT",
    "LowerLayoutRewritesPass",
    "build_digit_permutation",
    "build_generic",
    "build_pack",
    "build_pad",
    "build_reshape",
    "build_transpose",
    "build_unpack",
    "lower_layout_rewrites",
    "lower_transform",
]
