"""convert-layout{desired-layouts="conv2d=NCHW4c,OIHW4o,NCHW4c" allow-padding=true}:
freeze layout-critical ops in the desired layouts (the Adreno RFC's first stage; Relay's
ConvertLayout, Relax's "tune layout-critical operations and freeze layouts").

What it rewrites: every 2-D convolution, named (`conv_2d_nchw_fchw`, `conv_2d_nhwc_hwcf`,
`conv_2d_ngchw_gfchw` and the other grouped forms, `depthwise_conv_2d_nchw_chw`) or a
`linalg.generic` with the same structure, recognized by the roles of its loops: ``n``
(data and output), ``g`` (all three operands: a group), ``f`` (filter and output), ``c``
(a reduction over data and filter), and two windows ``oh * s + kh * d`` of the data (rows
first); the body is ``acc + x * w`` in floats. Each operand's axes, in whatever order it
has them, name the logical NCHW / OIHW / NCHW indices (`Conv.canonical`: a permutation,
with a group folded into the channels as ``g * C + c``, ``g * F + f``, and an absent
channel axis as 0). With the data, kernel and output layouts ``D, K, O`` of the option
(layout strings over ``NCHW`` and ``OIHW``, read by `IndexMap.from_layouts`), each operand
is transformed by its canonical map followed by its layout:

    %xt = layout.transform %x  {X -> D}        %wt = layout.transform %w {W -> K}
    %it = layout.transform %init {Y -> O}
    %yt = linalg.generic ins(%xt, %wt) outs(%it) attrs = {layout.frozen}   (blocked conv)
    %y  = layout.transform %yt {O -> Y}  [+ layout.crop when O pads]

so a grouped conv's transforms are the conv2d layouts of its ungrouped tensors, and cancel
(after `raise-layout-rewrites` and `fold-layout-rewrites`) with the reshapes into and out
of groups that frontends print around it. The blocked generic iterates over the axes of the
transformed output (parallel) and the conv's reduction loops, in their order; each access
is the old one composed with its operand's layout, simplified (``x[n, c floordiv 4, oh +
kh, ow + kw, c mod 4]``, ``w[f4, c, kh, kw, f]``), so it computes the transformed result
exactly and reduces in the same order. The body is kept.

Padding (a channel count not divisible by the block): the transforms pad with 0.0, the
init with its fill value ``v`` (0.0 when unknown). The padded output channels then hold
``v + sum(x * 0)``; the conversion is done only when isl proves that every access stays in
its transformed operand and that, on the padded output points, the filter is read only on
its padding (so each product is ``x * 0.0``). The crop back to the logical channels
carries the promise ``cropped_value = v``, which lets `fold-layout-rewrites` cancel it
against the padded transform of the next conv (``x * 0.0`` is 0 for finite ``x``: a
non-finite input breaks the promise, which the graph evaluator reports). With
``allow-padding=false`` a conv that would need padding is left unconverted.

Refused (left unconverted, with a ``remark:`` on stderr saying why): padding when not
allowed, or when the proofs above fail, or on the output of a grouped conv with several
channels per group (a padded channel would name no (group, channel) pair); layouts whose
transforms are not injective or whose reduction loop ``c`` no longer indexes an operand
axis alone (e.g. a kernel layout that splits ``I``: the loop would need splitting too). A
malformed option is an error.

Then `flow-layout-rewrites` and `fold-layout-rewrites` propagate the layout through the
graph and cancel the rewrites between convs. Guarantees: results are unchanged (up to the
promise above); converted convs are frozen, so a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException, VerifyException

from physlayout.dialects.layout_graph import CropOp, TransformOp, static_shape
from physlayout.dialects.linalg_generic import generic_form, located
from physlayout.indexing import proofs
from physlayout.indexing.bridges import isl as bridge
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.indexing.simplify import linear_terms, simplify
from physlayout.transforms.diagnostics import emit_remark
from physlayout.transforms.flow_layout_rewrites import FROZEN, loop_extents, loop_names
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker

DEFAULT_LAYOUTS = "conv2d=NCHW4c,OIHW4o,NCHW4c"
OP_KINDS = {"conv2d": (("NCHW", "OIHW", "NCHW"), ("data", "kernel", "output"))}
"""Op kind -> (the logical layouts of its operands and result, their roles)."""

if TYPE_CHECKING:
    import islpy as isl


def parse_desired_layouts(text: str) -> dict[str, tuple[str, str, str]]:
    """``"conv2d=NCHW4c,OIHW4o,NCHW4c[;...]"`` -> ``{"conv2d": ("NCHW4c", "OIHW4o",
    "NCHW4c")}``; a malformed option raises PassFailedException."""
    layouts: dict[str, tuple[str, str, str]] = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        kind, sep, values = entry.partition("=")
        parts = tuple(p.strip() for p in values.split(","))
        if not sep or kind.strip() not in OP_KINDS or len(parts) != 3:
            raise PassFailedException(
                f"convert-layout: bad desired-layouts entry '{entry}': expected "
                f"KIND=DATA,KERNEL,OUTPUT with KIND one of {sorted(OP_KINDS)}"
            )
        logical, _ = OP_KINDS[kind.strip()]
        for source, target in zip(logical, parts, strict=True):
            try:
                IndexMap.from_layouts(source, target)
            except ValueError as err:
                raise PassFailedException(
                    f"convert-layout: layout '{target}' for {kind.strip()}: {err}"
                ) from None
        layouts[kind.strip()] = (parts[0], parts[1], parts[2])
    return layouts


# Recognizing a convolution -----------------------------------------------------------------


@dataclass(frozen=True)
class Conv:
    """A 2-D convolution in generic form: its loops, its indexing maps and, per operand,
    the map from the operand's axes to the `conv2d` kind's logical axes."""

    op: LinalgStructuredOperation
    maps: tuple[IndexMap, IndexMap, IndexMap]
    """Input, filter and output maps over the loop names ``d0, ...``."""
    kinds: tuple[str, ...]
    extents: tuple[int, ...]
    canonical: tuple[IndexMap, IndexMap, IndexMap]
    """Input axes -> NCHW, filter axes -> OIHW, output axes -> NCHW (a permutation; a group
    axis ``g`` folds into the channels as ``g * C + c``, an absent channel axis is 0)."""

    @property
    def input(self) -> SSAValue:
        """The convolution's data operand (input #0)."""
        return self.op.inputs[0]

    @property
    def filter(self) -> SSAValue:
        """The convolution's filter operand (input #1)."""
        return self.op.inputs[1]

    @property
    def init(self) -> SSAValue:
        """The convolution's output operand (`outs`), whose values the products accumulate onto."""
        return self.op.outputs[0]


def match_conv(op: Operation) -> Conv | None:
    """`op` as a convolution (module docstring), or None."""
    if not isinstance(op, LinalgStructuredOperation) or FROZEN in op.attributes:
        return None
    if len(op.inputs) != 2 or len(op.outputs) != 1 or len(op.results) != 1:
        return None
    if not isinstance(op, GenericOp | NamedOperation) or isinstance(op, FillOp):
        return None
    generic = op if isinstance(op, GenericOp) else generic_form(op)
    try:
        return _match_generic(op, generic)
    finally:
        if generic is not op:
            generic.erase()


def _match_generic(op: LinalgStructuredOperation, generic: GenericOp) -> Conv | None:
    kinds = tuple(str(t.data) for t in generic.iterator_types.data)
    shapes = [static_shape(v) for v in generic.operands]
    types = [v.type for v in generic.operands]
    if any(s is None for s in shapes) or not _same_float_elements(types):
        return None
    names = loop_names(len(kinds))
    try:
        maps = [IndexMap.from_affine_map(m.data, names) for m in generic.indexing_maps.data]
    except ValueError:
        return None
    roles = _conv_roles(maps, kinds)
    if roles is None or not is_mac(generic):
        return None
    extents = loop_extents(maps, [s for s in shapes if s is not None], len(kinds))
    if extents is None:
        return None
    canonical = _canonical_maps(maps, roles, dict(zip(names, extents, strict=True)))
    return Conv(op, (maps[0], maps[1], maps[2]), kinds, tuple(extents), canonical)


_ROLES = ("n", "g", "f", "c", "oh", "ow", "kh", "kw")


def _conv_roles(maps: Sequence[IndexMap], kinds: Sequence[str]) -> dict[str, str] | None:
    """Each role of `_ROLES` -> its loop (``g``, ``f`` and ``c`` may be absent), when the
    maps are a convolution's: the output and the filter index bare loops, the input bare
    loops and two windows ``oh * s + kh * d`` (rows first); ``n`` indexes the input and the
    output, ``g`` all three operands, ``f`` the filter and the output, ``c`` (a reduction)
    the input and the filter."""
    if len(maps) != 3:
        return None
    x_map, w_map, y_map = maps
    outs, filt = _bare(y_map.final_indices), _bare(w_map.final_indices)
    if outs is None or filt is None:
        return None
    kind = dict(zip(loop_names(len(kinds)), kinds, strict=True))
    windows = [_window(e) for e in x_map.final_indices]
    spatial = [
        (a, b) if kind[a] == "parallel" else (b, a) for a, b in (w for w in windows if w is not None)
    ]
    bare_x = [e.name for e in x_map.final_indices if isinstance(e, Dim)]
    if len(spatial) != 2 or len(bare_x) + 2 != x_map.final_ndim or len(set(bare_x)) != len(bare_x):
        return None
    (oh, kh), (ow, kw) = spatial
    roles = {"oh": oh, "ow": ow, "kh": kh, "kw": kw}
    for loop in kind:
        if loop in roles.values():
            continue
        where = (loop in bare_x, loop in filt, loop in outs, kind[loop] == "parallel")
        role = {
            (True, False, True, True): "n",
            (True, True, True, True): "g",
            (False, True, True, True): "f",
            (True, True, False, False): "c",
        }.get(where)
        if role is None or role in roles:
            return None
        roles[role] = loop
    if "n" not in roles or set(outs) != {loop for loop, k in kind.items() if k == "parallel"}:
        return None
    ok = (
        kind[oh] == kind[ow] == "parallel"
        and kind[kh] == kind[kw] == "reduction"
        and {oh, ow}.issubset(outs)
        and {kh, kw}.issubset(filt)
        and not {oh, ow} & set(filt)
        and len(set(roles.values())) == len(roles)
    )
    return roles if ok else None


def _window(expr: Expr) -> tuple[str, str] | None:
    """The two loops of `expr` when it is ``out * s + kernel * d`` with ``s, d >= 1`` (in
    the simplifier's term order)."""
    terms, const = linear_terms(expr)
    if const != 0 or len(terms) != 2 or not all(k >= 1 for _, k in terms):
        return None
    (a, _), (b, _) = terms
    if not isinstance(a, Dim) or not isinstance(b, Dim):
        return None
    return (a.name, b.name)


def _canonical_maps(
    maps: Sequence[IndexMap], roles: dict[str, str], extents: dict[str, int]
) -> tuple[IndexMap, IndexMap, IndexMap]:
    """Each operand's axes -> its logical NCHW / OIHW / NCHW indices (`Conv.canonical`)."""

    def channels(group: str, inner: str) -> Expr:
        expr: Expr = Const(0)
        if group in roles:
            expr = Dim(roles[group])
            if inner in roles:
                expr = expr * extents[roles[inner]] + Dim(roles[inner])
        elif inner in roles:
            expr = Dim(roles[inner])
        return expr

    oh, ow, kh, kw = (roles[r] for r in ("oh", "ow", "kh", "kw"))
    logical_x = (Dim(roles["n"]), channels("g", "c"), Dim(oh) + Dim(kh), Dim(ow) + Dim(kw))
    logical_w = (channels("g", "f"), channels("", "c"), Dim(kh), Dim(kw))
    logical_y = (Dim(roles["n"]), channels("g", "f"), Dim(oh), Dim(ow))
    letters = (
        {"n": "N", "g": "G", "c": "C", "oh": "H", "ow": "W"},
        {"g": "G", "f": "O", "c": "I", "kh": "H", "kw": "W"},
        {"n": "N", "g": "G", "f": "C", "oh": "H", "ow": "W"},
    )
    letter_of = [{roles[r]: name for r, name in table.items() if r in roles} for table in letters]
    result: list[IndexMap] = []
    for access, logical, letter in zip(maps, (logical_x, logical_w, logical_y), letter_of, strict=True):
        # axes named by their role's letter (N, G, C, H, W / G, O, I, H, W)
        axes: list[str] = []
        rename: dict[str, Expr] = {}
        for expr in access.final_indices:
            window = _window(expr)
            if window is None:
                assert isinstance(expr, Dim)
                loop = expr.name
            else:  # the window axis stands for ``out + kernel``
                loop, kernel = window if window[0] in (oh, ow) else window[::-1]
                rename[kernel] = Const(0)
            axes.append(letter[loop])
            rename[loop] = Dim(letter[loop])
        result.append(IndexMap(tuple(axes), tuple(simplify(e.substitute(rename)) for e in logical)))
    return (result[0], result[1], result[2])


def _bare(exprs: Sequence[Expr]) -> list[str] | None:
    names = [e.name for e in exprs if isinstance(e, Dim)]
    return names if len(names) == len(exprs) and len(set(names)) == len(names) else None


def _same_float_elements(types: Sequence[Attribute]) -> bool:
    """The inputs and the output have float element types: one type everywhere, or a
    mixed-precision conv's (f16 data and filters, or an f32 input it rounds to half in its
    body, see `is_mac`, and an f32 accumulator)."""
    if not all(isinstance(t, TensorType) for t in types):
        return False
    elements = [t.get_element_type() for t in types if isinstance(t, TensorType)]
    return all(isinstance(e, AnyFloat) for e in elements)


def is_mac(generic: GenericOp) -> bool:
    """Whether the body is ``yield acc + x * w`` (either operand order), where `x` and `w`
    may first be converted by `arith.extf`/`arith.truncf` (a mixed-precision conv: f16
    elements widened, or f32 ones rounded to half and widened back, as `to-mixed-precision`
    reads an f32 parameter)."""
    block = generic.body.blocks[0]
    ops = list(block.ops)
    if len(block.args) != 3:
        return False
    x, w, acc = block.args
    widened: dict[SSAValue, SSAValue] = {x: x, w: w}
    while (
        ops
        and isinstance(ops[0], arith.ExtFOp | arith.TruncFOp)
        and ops[0].input in widened
    ):
        widened[ops[0].result] = widened[ops[0].input]
        ops = ops[1:]
    if len(ops) != 3:
        return False
    mul, add, end = ops
    if isinstance(mul, arith.MulfOp):
        factors = {widened.get(mul.lhs, mul.lhs), widened.get(mul.rhs, mul.rhs)}
    else:
        factors = set[SSAValue]()
    return (
        isinstance(mul, arith.MulfOp)
        and factors == {x, w}
        and mul.lhs is not mul.rhs
        and isinstance(add, arith.AddfOp)
        and {add.lhs, add.rhs} == {mul.result, acc}
        and isinstance(end, LinalgYieldOp)
        and list(end.operands) == [add.result]
    )


# Building the blocked conv ---------------------------------------------------------------


class _Unconverted(Exception):
    """Internal: leave the conv alone (the message is the remark)."""


@dataclass(frozen=True)
class BlockedConv:
    """The maps and iteration space of a conv in its desired layouts."""

    transforms: tuple[IndexMap, IndexMap, IndexMap]
    maps: tuple[IndexMap, ...]
    iterator_types: tuple[IteratorTypeAttr, ...]
    shapes: tuple[tuple[int, ...], ...]
    """Transformed input, filter and output shapes."""
    back: IndexMap
    """Output layout -> the output's axes (over the padded extents)."""
    pads: tuple[bool, bool, bool]


def blocked_conv(conv: Conv, layouts: tuple[str, str, str], allow_padding: bool) -> BlockedConv:
    """Plan the blocked conv; raise `_Unconverted` with the reason when it is refused."""
    shapes = [static_shape(v) for v in (conv.input, conv.filter, conv.init)]
    assert all(s is not None for s in shapes)
    logical_shapes = tuple(s for s in shapes if s is not None)
    plan = _blocked_conv(
        ConvForm(conv.maps, conv.kinds, conv.extents, conv.canonical, logical_shapes),
        layouts,
        allow_padding,
    )
    if isinstance(plan, str):
        raise _Unconverted(plan)
    return plan


@dataclass(frozen=True)
class ConvForm:
    """All that the plan of a blocked conv reads of the conv (`Conv` without its op)."""

    maps: tuple[IndexMap, IndexMap, IndexMap]
    kinds: tuple[str, ...]
    extents: tuple[int, ...]
    canonical: tuple[IndexMap, IndexMap, IndexMap]
    shapes: tuple[tuple[int, ...], ...]
    """The input's, filter's and init's static shapes."""


@lru_cache(maxsize=1024)
def _blocked_conv(
    conv: ConvForm, layouts: tuple[str, str, str], allow_padding: bool
) -> BlockedConv | str:
    """The plan, or why the conv is refused: a pure function of its arguments, cached (a
    model repeats a few conv shapes many times; a ValueError is raised, not cached)."""
    try:
        return _plan_blocked_conv(conv, layouts, allow_padding)
    except _Unconverted as reason:
        return str(reason)


def _plan_blocked_conv(
    conv: ConvForm, layouts: tuple[str, str, str], allow_padding: bool
) -> BlockedConv:
    (logical_x, logical_w, logical_y), _ = OP_KINDS["conv2d"]
    logical_shapes = conv.shapes
    layout_maps = (
        IndexMap.from_layouts(logical_x, layouts[0]),
        IndexMap.from_layouts(logical_w, layouts[1]),
        IndexMap.from_layouts(logical_y, layouts[2]),
    )
    # composed without the operand's box: bounds could turn ``C mod 4`` on 4 channels into a
    # bare ``C``, which no longer matches the padded extent of its axis
    transforms = tuple(
        canonical.compose(imap) for canonical, imap in zip(conv.canonical, layout_maps, strict=True)
    )
    pads_list: list[bool] = []
    new_shapes: list[tuple[int, ...]] = []
    for imap, shape in zip(transforms, logical_shapes, strict=True):
        collision = imap.find_collision(shape)
        if collision is not None:
            raise _Unconverted(f"layout map {imap} is not injective on {list(shape)}")
        new_shapes.append(tuple(imap.map_shape(shape)))
        pads_list.append(imap.padding_predicate(shape) is not None)
    pads = (pads_list[0], pads_list[1], pads_list[2])
    if any(pads) and not allow_padding:
        raise _Unconverted(
            f"its shapes {[list(s) for s in logical_shapes]} need padding for "
            f"{', '.join(layouts)} and allow-padding=false"
        )
    if pads[2] and not _is_permutation(conv.canonical[2]):
        raise _Unconverted(
            f"its output channels {conv.canonical[2].final_indices[1]} (groups of "
            f"{list(logical_shapes[2])}) would need padding for {layouts[2]}"
        )
    out_shape = new_shapes[2]
    # a grouped output is split back with the box's bounds: ``(C*4 + c) floordiv 4 -> C``;
    # extents of 1 are bounded as 2, so that no axis simplifies to 0: the blocked access
    # ``oh * 2 + kh`` must keep ``oh`` (a bare ``kh`` would index the input alone)
    grouped = not _is_permutation(conv.canonical[2])
    box = tuple(max(e, 2) for e in out_shape)
    back = IndexMap.from_layouts(layouts[2], logical_y).compose(
        _canonical_inverse(conv.canonical[2], logical_shapes[2]), box if grouped else None
    )
    rank = len(out_shape)
    y_map = conv.maps[2]
    reductions = [m for m, kind in enumerate(conv.kinds) if kind != "parallel"]
    names = [f"q{k}" for k in range(rank)] + [f"d{m}" for m in reductions]
    # Only the output loops are bounded: simplifying with the reduction ranges could turn
    # `c mod 4` into a bare `c` that no longer matches the padded extent of its axis.
    bounds = {f"q{k}": (0, e - 1) for k, e in enumerate(out_shape) if e > 1}
    rename = {back.initial_indices[k]: Dim(f"q{k}") for k in range(rank)}
    substitution: dict[str, Expr] = {}
    for axis, expr in enumerate(y_map.final_indices):
        assert isinstance(expr, Dim)
        substitution[expr.name] = back.final_indices[axis].substitute(rename)
    maps: list[IndexMap] = []
    for imap, access in zip(transforms[:2], conv.maps[:2], strict=True):
        accessed = [e.substitute(substitution) for e in access.final_indices]
        point = dict(zip(imap.initial_indices, accessed, strict=True))
        maps.append(
            IndexMap(tuple(names), tuple(simplify(e.substitute(point), bounds) for e in imap.final_indices))
        )
    maps.append(IndexMap(tuple(names), tuple(Dim(f"q{k}") for k in range(rank))))
    for m in reductions:
        if not any(Dim(f"d{m}") in imap.final_indices for imap in maps):
            raise _Unconverted(
                f"reduction loop d{m} indexes no axis of {', '.join(layouts[:2])} alone"
            )
    extents = [*out_shape, *(conv.extents[m] for m in reductions)]
    _prove(
        maps, new_shapes, extents, transforms[1], logical_shapes[1], pads[2], out_shape, back,
        logical_shapes[2],
    )
    iterator_types = [IteratorTypeAttr.parallel()] * rank + [
        IteratorTypeAttr.reduction() for _ in reductions
    ]
    return BlockedConv(
        (transforms[0], transforms[1], transforms[2]),
        tuple(maps),
        tuple(iterator_types),
        tuple(new_shapes),
        back,
        pads,
    )


def _is_permutation(imap: IndexMap) -> bool:
    """Whether every output of `imap` is a distinct bare input."""
    return _bare(imap.final_indices) is not None and imap.final_ndim == imap.ndim


def _canonical_inverse(canonical: IndexMap, shape: tuple[int, ...]) -> IndexMap:
    """Logical NCHW -> the output's axes: a permutation's inverse (valid on padded extents
    too), else the exact inverse on the box of `shape`."""
    if _is_permutation(canonical):
        names = [f"i{k}" for k in range(canonical.final_ndim)]
        position = {e.name: k for k, e in enumerate(canonical.final_indices) if isinstance(e, Dim)}
        return IndexMap(tuple(names), tuple(Dim(names[position[a]]) for a in canonical.initial_indices))
    return canonical.inverse(shape)


def _prove(
    maps: Sequence[IndexMap],
    shapes: Sequence[tuple[int, ...]],
    extents: Sequence[int],
    filter_map: IndexMap,
    filter_shape: tuple[int, ...],
    output_pads: bool,
    out_shape: tuple[int, ...],
    back: IndexMap,
    logical_out: tuple[int, ...],
) -> None:
    """Prove (isl) that every access stays in its transformed operand and, when the output
    pads, that padded output points read the filter only on its padding."""
    with bridge.isl_errors("proving a blocked convolution"):
        for imap, shape in zip(maps, shapes, strict=True):
            if not proofs.image_within(imap, tuple(extents), tuple(shape)):
                raise _Unconverted(f"access {imap} may leave the transformed operand {list(shape)}")
        if not output_pads:
            return
        import islpy as isl

        padding = filter_map.padding_predicate(filter_shape)
        if padding is None:
            raise _Unconverted("the output pads but the filter does not")
        rank = len(out_shape)
        out_padding = _padding_points(back, out_shape, logical_out)
        reduction_box = bridge.build_box(extents[rank:])
        domain = out_padding.flat_product(reduction_box)
        w_map = maps[1]
        read = bridge.build_map(w_map.initial_indices, w_map.final_indices, None)
        image = read.intersect_domain(domain).range()
        if not image.is_subset(isl.Set(padding.to_isl())):
            raise _Unconverted("padded output channels would read real filter elements")


def _padding_points(back: IndexMap, out_shape: tuple[int, ...], logical: Sequence[int]) -> isl.Set:
    """The points of the transformed output box that `back` sends outside the logical
    (unpadded) output box."""
    mapping = bridge.build_map(back.initial_indices, back.final_indices, out_shape)
    inside = mapping.intersect_range(bridge.build_box(logical)).domain()
    return bridge.build_box(out_shape).subtract(inside)


def _fill_value(value: SSAValue, element: Attribute) -> FloatAttr:
    """The constant every element of `value` holds when it is a fill or a splat constant,
    else 0.0."""
    owner = value.owner
    scalar: Attribute | None = None
    if isinstance(owner, FillOp | GenericOp) and owner.inputs:
        source = owner.inputs[0].owner
        body = owner.body.blocks[0]
        yields_input = isinstance(owner, FillOp) or (
            len(body.ops) == 1
            and isinstance(body.last_op, LinalgYieldOp)
            and list(body.last_op.operands) == [body.args[0]]
            and len(owner.inputs) == 1
            and not isinstance(owner.inputs[0].type, TensorType)
        )
        if yields_input and isinstance(source, arith.ConstantOp):
            scalar = source.value
    elif isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        values = list(owner.value.get_values())
        if values and all(v == values[0] for v in values):
            scalar = FloatAttr(float(values[0]), element)  # type: ignore[arg-type]
    if isinstance(scalar, FloatAttr) and scalar.type == element:
        return scalar
    return FloatAttr(0.0, element)  # type: ignore[arg-type]


@dataclass
class ConvertConvToDesiredLayout(RewritePattern):
    """A convolution -> its blocked form between layout rewrites (module docstring)."""

    layouts: tuple[str, str, str]
    allow_padding: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LinalgStructuredOperation, rewriter: PatternRewriter) -> None:
        conv = match_conv(op)
        if conv is None:
            return
        try:
            plan = blocked_conv(conv, self.layouts, self.allow_padding)
        except _Unconverted as reason:
            emit_remark(
                "convert-layout", None, f"{op.name} {_describe(op)} left unconverted: {reason}"
            )
            return
        except ValueError as err:
            raise PassFailedException(f"convert-layout: {op.name}: {err}") from None
        new_ops = _build(conv, plan)
        try:
            for new in new_ops:
                new.verify()
        except VerifyException as err:
            for new in reversed(new_ops):
                new.erase()
            emit_remark(
                "convert-layout", None, f"{op.name} {_describe(op)} left unconverted: {err}"
            )
            return
        rewriter.replace(op, new_ops, None)


def _describe(op: Operation) -> str:
    hint = op.results[0].name_hint if op.results else None
    return f"%{hint}" if hint else "(unnamed)"


def _zero_like(value: SSAValue) -> FloatAttr:
    """0.0 of the element type of the tensor `value`."""
    assert isinstance(value.type, TensorType)
    return FloatAttr(0.0, value.type.get_element_type())  # type: ignore[arg-type]


def _build(conv: Conv, plan: BlockedConv) -> list[Operation]:
    result = conv.op.results[0]
    assert isinstance(result.type, TensorType)
    element = result.type.get_element_type()
    fill = _fill_value(conv.init, element)
    # each operand pads with a zero of its own element type (a mixed-precision conv reads
    # f16 data and filters into an f32 accumulator)
    pad_values = (_zero_like(conv.input), _zero_like(conv.filter), fill)
    ops: list[Operation] = []
    operands: list[SSAValue] = []
    for value, imap, pads, pad in zip(
        (conv.input, conv.filter, conv.init), plan.transforms, plan.pads, pad_values, strict=True
    ):
        transform = TransformOp(value, imap, pad if pads else None)
        transform.result.name_hint = value.name_hint
        ops.append(transform)
        operands.append(transform.result)
    old = conv.op
    body = old.regions[0].clone()
    generic = GenericOp(
        operands[:2],
        operands[2:],
        body,
        [AffineMapAttr(m.to_affine_map()) for m in plan.maps],
        plan.iterator_types,
        [TensorType(element, plan.shapes[2])],
    )
    generic.attributes.update({k: v for k, v in old.attributes.items() if k != FROZEN})
    generic.attributes[FROZEN] = UnitAttr()
    located(generic, old.location)
    generic.res[0].name_hint = result.name_hint
    ops.append(generic)
    back = TransformOp(generic.res[0], plan.back)
    back.result.name_hint = result.name_hint
    ops.append(back)
    shape = static_shape(result)
    assert shape is not None
    if static_shape(back.result) != shape:
        crop = CropOp(back.result, [0] * len(shape), shape, fill)
        crop.result.name_hint = result.name_hint
        ops.append(crop)
    return ops


@dataclass(frozen=True)
class ConvertLayoutPass(PhyslayoutPass):
    """Freeze convolutions in the desired layouts (module docstring).

    Options:
        desired-layouts (str, "conv2d=NCHW4c,OIHW4o,NCHW4c"): `KIND=DATA,KERNEL,OUTPUT[;...]`
            layout strings per op kind (KIND is `conv2d`).
        allow-padding (bool, true): pad channel counts that are not a multiple of the block
            (else leave the op, with a remark).
    """

    name = "convert-layout"

    desired_layouts: str = DEFAULT_LAYOUTS
    """``KIND=DATA,KERNEL,OUTPUT[;...]``; KIND is ``conv2d``."""

    allow_padding: bool = True
    """Pad channel counts that are not a multiple of the block (else leave the op)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        layouts = parse_desired_layouts(self.desired_layouts)
        if "conv2d" not in layouts:
            return
        RootedWalker(
            ConvertConvToDesiredLayout(layouts["conv2d"], self.allow_padding),
            apply_recursively=False,
        ).rewrite_module(op)
