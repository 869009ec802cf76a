"""fuse-transposed-conv: a transposed convolution as torch-mlir prints it (the input spread
into zeros, then a stride-1 convolution) -> ONE convolution that reads only the input pixels
and kernel taps that contribute.

torch-mlir prints ``ConvTranspose2d(stride=s, padding=p, output_padding=op)`` as

    %z0 = linalg.fill ins(%zero) outs(tensor.empty())              (Hz = (H-1)*s + 1 + ...)
    %z  = tensor.insert_slice %x into %z0[0, 0, o, o] [N, C, H, W] [1, 1, s, s]
    %y  = linalg.conv_2d_nchw_fchw {strides = 1} ins(%z, %w_flipped) outs(%init)

so the convolution multiplies ``(s*s - 1) / (s*s)`` of its data by inserted zeros. Along a
spread axis, ``z[oy + ky]`` is ``x[iy]`` when ``oy + ky = o + s * iy``, else 0: for an output
row ``oy`` the contributing taps are ``ky = r(oy) + s * j`` with ``r(oy) = (o - oy) mod s``,
and they read ``iy = ceil((oy - o) / s) + j``. The rewrite iterates ``j`` over
``J = ceil(K / s)`` instead of ``ky`` over ``K``:

    %xp = layout.pad %x  (zero rows/columns where iy leaves [0, H): the conv's own border)
    %wq = layout.transform %w {(.., KH, KW) -> (.., KH mod s, KH floordiv s, KW mod s, KW floordiv s)}
          (pad_value 0.0: the taps past K when s does not divide K; a layout.pad to s taps
          first when K < s)
    %y  = linalg.generic ins(%xp, %wq) outs(%init)
            x[n, c, (oy + e) floordiv s + j + g, ...]    w[f, c, (oy * (s-1) + o) mod s, j, ...]

(``e``, ``g`` constants with ``(oy + e) floordiv s + g = ceil((oy - o) / s)``), same loops
(``ky`` now ranges over ``J``), same init. When s does not divide K, phase ``r`` has only
``ceil((K - r) / s)`` taps: the body's multiply-accumulate runs under
``scf.if r(oy) + s * j < K`` (per such axis, `guarded_body`), whose else branch yields the
accumulator, so the padded taps are read but never multiplied. A stride-s transposed conv
thus executes exactly the multiplies of the taps that land on the spread grid (for
K = 3, s = 2: per axis 2 taps for one phase, 1 for the other, 1/4 of the naive multiplies;
``1 / s^2`` whenever the output covers whole phases), never one by an inserted zero; the
zero-spread tensor is never built. Each output sums the same non-zero products in the
same order as the source (the omitted terms are ``0 * w``, with ``w`` finite), so results
are bit-identical (up to the sign of a zero sum).

The convolution may be the named ``linalg.conv_2d_nchw_fchw`` or any `linalg.generic` with a
multiply-accumulate body (`convert_layout.is_mac`, also the mixed-precision one), frozen by
`convert-layout` or not, whose data operand is the spread tensor, directly or through a
`layout.transform` that leaves the spread axes alone (convert-layout's NCHW4c: the new data
operand is the same transform of the padded input, which `flow-layout-rewrites` then moves
and cancels). The pass runs in `physlayout-adreno` right after `convert-layout`, so the
layouts are decided on the convolution as the frontend printed it and the rewritten one
stays frozen in them.

Proved before rewriting, else the IR is left alone (with a remark under ``remarks=true``):
the destination of the `tensor.insert_slice` is a `linalg.fill` of +0.0 (an
`arith.constant`) read by nothing else; offsets, sizes and strides are static, every axis
not spread is copied whole (offset 0, stride 1, full size), some stride is > 1; the spread
tensor (and its transform) is read only by the convolution, as its data; each spread axis is
read at ``oy + ky`` (stride 1, dilation 1) with ``ky`` a reduction loop the filter indexes
alone on one axis and nothing else reads. Not handled (left alone): a `tensor.pad` between
the spread and the conv (torch-mlir folds the padding into the insert's offsets), dilated
or grouped transposed convolutions.

Guarantees: results keep their values (above); a second run changes nothing (the new conv
reads no spread tensor). The guard is an `scf.if` on loop indices only: the graph
evaluator runs it, `annotate-texture-scope`/`fuse-elementwise` and `vectorize-texels` keep
the conv on whole texels (one `scf.if` for all four lanes), and `kernel_stats` counts the
multiplies under it by how often they run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, FloatAttr, ModuleOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, NamedOperation
from xdsl.dialects.linalg.ops import FillOp, GenericOp, IndexOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from physlayout.dialects.layout_graph import (
    PadOp,
    TransformOp,
    constant_scalar,
    element_type,
    static_shape,
)
from physlayout.dialects.linalg_generic import generic_form, located
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.indexing.simplify import linear_terms, simplify
from physlayout.transforms.convert_layout import is_mac
from physlayout.transforms.diagnostics import emit_remark
from physlayout.transforms.flow_layout_rewrites import loop_names
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker


@dataclass(frozen=True)
class SpreadAxis:
    """One spread axis: the insert's stride `s` and offset `o`, the source extent `h`, the
    kernel extent `k`, the output extent `out`; where the data map reads it (`data_axis`,
    its loops `out_loop` + `tap_loop`) and the filter axis the tap loop indexes; `axis`:
    the insert's (and the source's) axis."""

    axis: int
    s: int
    o: int
    h: int
    k: int
    out: int
    data_axis: int
    filter_axis: int
    out_loop: str
    tap_loop: str

    @property
    def taps(self) -> int:
        """``J``: the taps of one output phase."""
        return -(-self.k // self.s)

    @property
    def shift(self) -> tuple[int, int]:
        """``(e, g)`` with ``(oy + e) floordiv s + g = ceil((oy - o) / s)``."""
        e = (self.s - 1 - self.o) % self.s
        return e, (self.s - 1 - self.o - e) // self.s

    def input_padding(self) -> tuple[int, int]:
        """Zero rows below and above the input that the taps read."""
        e, g = self.shift
        last = (self.out - 1 + e) // self.s + self.taps - 1 + g
        return max(0, -g), max(0, last - (self.h - 1))

    def data_expr(self) -> Expr:
        """The padded input row the fused conv reads for output row `out_loop` and tap
        `tap_loop`: ``ceil((oy - o) / s) + j`` shifted by the input's low padding."""
        e, g = self.shift
        low, _ = self.input_padding()
        return simplify((Dim(self.out_loop) + e) // self.s + Dim(self.tap_loop) + (g + low))

    def phase_expr(self) -> Expr:
        """``r(oy) = (o - oy) mod s``, written with non-negative coefficients."""
        return simplify((Dim(self.out_loop) * (self.s - 1) + self.o % self.s) % self.s)


@dataclass(frozen=True)
class Spread:
    """What the rewrite reads of a matched transposed convolution."""

    source: SSAValue
    transform: TransformOp | None
    insert: tensor.InsertSliceOp
    fill: FillOp
    zero: FloatAttr
    axes: tuple[SpreadAxis, ...]


class _Refused(Exception):
    pass


def match_spread(op: LinalgStructuredOperation, generic: GenericOp) -> Spread:
    """The spread input of the convolution `op` (`generic`: its generic form), or
    `_Refused` with the reason."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or not is_mac(generic):
        raise _Refused("not a multiply-accumulate with one data and one filter operand")
    data, filt = op.inputs[0], op.inputs[1]
    transform = data.owner if isinstance(data.owner, TransformOp) else None
    spread = transform.input if transform is not None else data
    insert = spread.owner
    if not isinstance(insert, tensor.InsertSliceOp):
        raise _Refused("its data is not a tensor.insert_slice")
    if filt is data or _uses(data, generic) != 1 or (transform is not None and _uses(spread, generic) != 1):
        raise _Refused("the spread tensor is read by other ops than the conv's data operand")
    fill = insert.dest.owner
    if not isinstance(fill, FillOp) or _uses(fill.results[0], generic) != 1:
        raise _Refused("the insert's destination is not a linalg.fill read by it alone")
    zero = constant_scalar(fill.inputs[0])
    if not isinstance(zero, FloatAttr) or zero.value.data != 0.0 or math.copysign(1.0, zero.value.data) < 0:
        raise _Refused(f"the fill value is {zero if zero is not None else 'not a constant'}, not +0.0")
    offsets = tuple(insert.static_offsets.get_values())
    sizes = tuple(insert.static_sizes.get_values())
    strides = tuple(insert.static_strides.get_values())
    dest = static_shape(insert.dest)
    source = static_shape(insert.source)
    if insert.offsets or insert.sizes or insert.strides or dest is None or source is None:
        raise _Refused("the insert's offsets, sizes or strides are not static")
    if list(sizes) != list(source):
        raise _Refused("the insert's sizes are not its source's shape (a rank change)")
    window = [a for a in range(len(dest)) if (offsets[a], strides[a], sizes[a]) != (0, 1, dest[a])]
    if not any(strides[a] > 1 for a in window):
        raise _Refused("no axis is spread (every stride is 1)")
    names = loop_names(len(generic.iterator_types.data))
    kinds = dict(zip(names, (str(t.data) for t in generic.iterator_types.data), strict=True))
    x_map, w_map, y_map = (IndexMap.from_affine_map(m.data, names) for m in generic.indexing_maps.data)
    shapes = [static_shape(v) for v in generic.operands]
    if any(s is None for s in shapes):
        raise _Refused("a dynamic operand")
    axes = [
        _spread_axis(a, offsets[a], strides[a], source[a], transform, (x_map, w_map, y_map), kinds, shapes)
        for a in window
    ]
    return Spread(insert.source, transform, insert, fill, zero, tuple(axes))


def _uses(value: SSAValue, generic: GenericOp) -> int:
    """The uses of `value`, without those of `generic` (a detached generic form of the conv
    uses the conv's operands too)."""
    return sum(1 for use in value.uses if use.operation is not generic or generic.parent is not None)


def _spread_axis(
    axis: int, offset: int, stride: int, extent: int, transform: TransformOp | None,
    maps: tuple[IndexMap, IndexMap, IndexMap], kinds: dict[str, str],
    shapes: list[tuple[int, ...] | None],
) -> SpreadAxis:  # fmt: skip
    x_map, w_map, y_map = maps
    data_axis = axis
    if transform is not None:
        name = transform.map.initial_indices[axis]
        where = [b for b, e in enumerate(transform.map.final_indices) if name in e.dims()]
        if len(where) != 1 or transform.map.final_indices[where[0]] != Dim(name):
            raise _Refused(f"the data's layout transform {transform.map} moves spread axis {axis}")
        data_axis = where[0]
    terms, const = linear_terms(x_map.final_indices[data_axis])
    loops = [t.name for t, k in terms if isinstance(t, Dim) and k == 1]
    if const != 0 or len(terms) != 2 or len(loops) != 2:
        raise _Refused(f"spread axis {axis} is read at {x_map.final_indices[data_axis]}, not oy + ky (stride 1, dilation 1)")
    out_loop, tap = loops if kinds[loops[0]] == "parallel" else loops[::-1]
    if kinds[out_loop] != "parallel" or kinds[tap] != "reduction":
        raise _Refused(f"spread axis {axis} is not read at an output loop plus a reduction loop")
    filter_axes = [b for b, e in enumerate(w_map.final_indices) if tap in e.dims()]
    readers = [e for e in (*x_map.final_indices, *y_map.final_indices) if tap in e.dims()]
    if len(filter_axes) != 1 or w_map.final_indices[filter_axes[0]] != Dim(tap) or len(readers) != 1:
        raise _Refused(f"the tap loop {tap} is not a filter axis alone")
    if Dim(out_loop) not in y_map.final_indices:
        raise _Refused(f"the output loop {out_loop} is not an output axis")
    w_shape, y_shape = shapes[1], shapes[2]
    assert w_shape is not None and y_shape is not None
    out = y_shape[y_map.final_indices.index(Dim(out_loop))]
    return SpreadAxis(axis, stride, offset, extent, w_shape[filter_axes[0]], out, data_axis, filter_axes[0], out_loop, tap)


def phase_filter(filt: SSAValue, axes: tuple[SpreadAxis, ...]) -> list[Operation]:
    """The filter split into (phase, tap) axes on each spread axis,
    ``(.., K, ..) -> (.., K mod s, K floordiv s, ..)``, the taps past ``K`` (when s does not
    divide K) holding 0.0: the transform's padding, or a `layout.pad` first when ``K < s``
    (the phase axis would have only K values)."""
    shape, element = static_shape(filt), element_type(filt)
    assert shape is not None and isinstance(element, AnyFloat)
    zero: Attribute = FloatAttr(0.0, element)
    ops: list[Operation] = []
    high = [0] * len(shape)
    for axis in axes:
        if axis.k < axis.s:
            high[axis.filter_axis] = axis.s - axis.k
    if any(high):
        pad = PadOp(filt, [0] * len(shape), high, zero)
        pad.result.name_hint = filt.name_hint
        ops.append(pad)
        filt = pad.result
    names = tuple(f"a{k}" for k in range(len(shape)))
    stride = {axis.filter_axis: axis.s for axis in axes}
    finals: list[Expr] = []
    for k, name in enumerate(names):
        if k in stride:
            finals += [Dim(name) % stride[k], Dim(name) // stride[k]]
        else:
            finals.append(Dim(name))
    pads = any(axis.k % axis.s and axis.k > axis.s for axis in axes)
    split = TransformOp(filt, IndexMap(names, tuple(finals)), zero if pads else None)
    split.result.name_hint = filt.name_hint
    ops.append(split)
    return ops


def transposed_maps(
    generic: GenericOp, axes: tuple[SpreadAxis, ...]
) -> tuple[IndexMap, IndexMap, IndexMap]:
    """The data, filter and output maps of the rewritten conv (module docstring)."""
    names = loop_names(len(generic.iterator_types.data))
    x_map, w_map, y_map = (IndexMap.from_affine_map(m.data, names) for m in generic.indexing_maps.data)
    x = list(x_map.final_indices)
    by_filter_axis = {axis.filter_axis: axis for axis in axes}
    for axis in axes:
        x[axis.data_axis] = axis.data_expr()
    w: list[Expr] = []
    for k, expr in enumerate(w_map.final_indices):
        axis = by_filter_axis.get(k)
        w += [expr] if axis is None else [axis.phase_expr(), Dim(axis.tap_loop)]
    return IndexMap(x_map.initial_indices, tuple(x)), IndexMap(tuple(names), tuple(w)), y_map


def guarded_body(generic: GenericOp, axes: tuple[SpreadAxis, ...]) -> Region:
    """The conv's body, run for the taps that exist only: where a spread axis has taps past
    ``K`` (s does not divide K) the multiply-accumulate is wrapped in
    ``scf.if r(oy) + s * j < K (and so on per such axis)``, whose else branch yields the
    accumulator unchanged: no multiply reads a padded tap (the filter's padding is read,
    never used)."""
    body = generic.body.clone()
    guarded = [axis for axis in axes if axis.k % axis.s]
    if not guarded:
        return body
    old = body.block
    names = loop_names(len(generic.iterator_types.data))
    block = Block(arg_types=old.arg_types)
    for arg, new_arg in zip(old.args, block.args, strict=True):
        new_arg.name_hint = arg.name_hint
        arg.replace_all_uses_with(new_arg)
    loops: dict[str, SSAValue] = {}
    bounds: dict[str, tuple[int, int]] = {}
    for axis in guarded:
        for name, extent in ((axis.out_loop, axis.out), (axis.tap_loop, axis.taps)):
            if name not in loops:
                index = IndexOp(names.index(name))
                block.add_op(index)
                loops[name], bounds[name] = index.result, (0, extent - 1)
    emitter = ExprEmitter(InsertPoint.at_end(block), loops, bounds)
    condition: SSAValue | None = None
    for axis in guarded:
        tap = emitter.emit(simplify(axis.phase_expr() + Dim(axis.tap_loop) * axis.s))
        inside = arith.CmpiOp(tap, emitter.constant(axis.k), "ult")
        block.add_op(inside)
        if condition is not None:
            inside = arith.AndIOp(condition, inside.result)
            block.add_op(inside)
        condition = inside.result
    assert condition is not None
    done = old.last_op
    assert isinstance(done, LinalgYieldOp)
    then = Block()
    for inner in list(old.ops):
        if inner is not done:
            inner.detach()
            then.add_op(inner)
    then.add_op(scf.YieldOp(*done.operands))
    accumulators = block.args[len(block.args) - len(done.operands) :]
    guard = scf.IfOp(
        condition, [v.type for v in done.operands], Region(then), Region(Block([scf.YieldOp(*accumulators)]))
    )
    block.add_op(guard)
    block.add_op(LinalgYieldOp(*guard.results))
    return Region(block)


class TransposedConvFromSpreadInput(RewritePattern):
    """A stride-1 conv reading a zero-spread `tensor.insert_slice` -> the conv over the
    contributing taps only (module docstring)."""

    remarks: bool

    def __init__(self, remarks: bool = False):
        self.remarks = remarks

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LinalgStructuredOperation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp | NamedOperation) or isinstance(op, FillOp):
            return
        if not op.inputs or not _reads_insert(op.inputs[0]):
            return
        generic = op if isinstance(op, GenericOp) else generic_form(op)
        spread = None
        try:
            spread = match_spread(op, generic)
            rewrite(op, generic, spread, rewriter)
        except _Refused as reason:
            spread = None
            if self.remarks:
                emit_remark("fuse-transposed-conv", op, f"left alone: {reason}")
        finally:
            if generic is not op:
                generic.erase()
        if spread is not None:  # the spread tensor and its fill, now unused
            for dead in (spread.transform, spread.insert, spread.fill):
                if dead is not None and not any(r.uses for r in dead.results):
                    rewriter.erase(dead)


def _reads_insert(value: SSAValue) -> bool:
    owner = value.owner
    if isinstance(owner, TransformOp):
        owner = owner.input.owner
    return isinstance(owner, tensor.InsertSliceOp)


def rewrite(
    op: LinalgStructuredOperation, generic: GenericOp, spread: Spread, rewriter: PatternRewriter
) -> None:
    """Replace `op` by the conv over the contributing taps."""
    shape = static_shape(spread.source)
    assert shape is not None
    low, high = [0] * len(shape), [0] * len(shape)
    for axis in spread.axes:
        low[axis.axis], high[axis.axis] = axis.input_padding()
    new_ops: list[Operation] = []
    data = spread.source
    if any(low) or any(high):
        pad = PadOp(data, low, high, spread.zero)
        pad.result.name_hint = data.name_hint
        new_ops.append(pad)
        data = pad.result
    if spread.transform is not None:
        moved = TransformOp(data, spread.transform.map, spread.transform.pad_value)
        moved.result.name_hint = spread.transform.result.name_hint
        new_ops.append(moved)
        data = moved.result
    new_ops += phase_filter(op.inputs[1], spread.axes)
    filt = new_ops[-1].results[0]
    x, w, y = transposed_maps(generic, spread.axes)
    conv = GenericOp(
        [data, filt],
        list(op.outputs),
        guarded_body(generic, spread.axes),
        [AffineMapAttr(m.to_affine_map()) for m in (x, w, y)],
        generic.iterator_types.data,
        op.result_types,
    )
    conv.attributes.update(op.attributes)
    located(conv, op.location)
    conv.res[0].name_hint = op.results[0].name_hint
    new_ops.append(conv)
    rewriter.replace(op, new_ops, conv.results)


@dataclass(frozen=True)
class FuseTransposedConvPass(PhyslayoutPass):
    """Transposed convolutions over their contributing taps only (module docstring).

    Options:
        remarks (bool, false): say on stderr why a conv reading an insert_slice was left.
    """

    name = "fuse-transposed-conv"

    remarks: bool = False
    """Print a remark for each conv reading a `tensor.insert_slice` that is left alone."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        RootedWalker(TransposedConvFromSpreadInput(self.remarks), apply_recursively=False).rewrite_module(op)


__all__ = ["FuseTransposedConvPass", "SpreadAxis", "TransposedConvFromSpreadInput"]
