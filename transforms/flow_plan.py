"""The analysis behind `flow-layout-rewrites`: how a `linalg.generic` is rebuilt over its
transformed result (the rules are in `flow_layout_rewrites`).

`flow_refusal` says why a generic cannot be rebuilt at all; `derive_operand_transform` reads
an operand's transform from its access pattern (the design's "block signatures");
`rebuild_over_transformed_result` builds the new ops (operand transforms, the new init and
the new generic, unattached) after proving what it relies on (inverse, padding), or returns
None. `loop_names`, `loop_extents` and `FROZEN` are shared with the other graph passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ShapedType,
)
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException, VerifyException

from physlayout.dialects.layout_graph import (
    TransformOp,
    constant_scalar,
    element_type,
    static_shape,
)
from physlayout.indexing.bridges import isl as bridge
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.extents import PaddingPredicate
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.indexing.simplify import simplify

FROZEN = "layout.frozen"
"""Unit attribute that freezes the layout of a `linalg.generic` (flow stops there)."""

OperandTransformCallback = Callable[[GenericOp, TransformOp], Sequence[IndexMap | None] | None]
"""Supplies the operand transforms for a generic whose result is transformed: one IndexMap
(over the operand's dimensions) or None (keep the operand) per input of the generic, or
None to decline (the pass then uses its own analysis)."""

if TYPE_CHECKING:
    import numpy as np


# Access patterns ---------------------------------------------------------------------------------


def loop_names(count: int) -> list[str]:
    """Names of the loops of a generic in its indexing maps: d0, d1, ..."""
    return [f"d{m}" for m in range(count)]


def loop_extents(
    maps: Sequence[IndexMap], shapes: Sequence[tuple[int, ...]], count: int
) -> list[int] | None:
    """Each loop's extent, from an operand dimension it indexes alone."""
    position = {name: m for m, name in enumerate(loop_names(count))}
    extents: list[int | None] = [None] * count
    for imap, shape in zip(maps, shapes, strict=True):
        for expr, extent in zip(imap.final_indices, shape, strict=True):
            if isinstance(expr, Dim) and extents[position[expr.name]] is None:
                extents[position[expr.name]] = extent
    if any(e is None for e in extents):
        return None
    return [e for e in extents if e is not None]


def derive_operand_transform(
    result_map: IndexMap, output_loops: Sequence[int], access: IndexMap, shape: Sequence[int]
) -> IndexMap | None:
    """The transform of an operand read through `access` (over the loops ``d0, ...``) when
    the result, written at loops `output_loops` (one per result dimension), is transformed
    by `result_map`; None when an output of `result_map` mixes dimensions the operand has
    with dimensions it lacks, or a result dimension indexes two operand dimensions.
    (Rules in the module docstring.)"""
    result_dim = {f"d{m}": r for r, m in enumerate(output_loops)}
    tied: dict[int, int] = {}
    for k, expr in enumerate(access.final_indices):
        if not isinstance(expr, Dim) or expr.name not in result_dim:
            continue
        r = result_dim[expr.name]
        if r in tied:
            return None
        tied[r] = k
    names = _operand_names(result_map, access, tied)
    untied_loops = {
        name for k, e in enumerate(access.final_indices) if k not in tied.values() for name in e.dims()
    }
    windowed = {r for r, m in enumerate(output_loops) if r not in tied and f"d{m}" in untied_loops}
    slots: list[Expr | None] = []
    for expr in result_map.final_indices:
        used = {r for r, name in enumerate(result_map.initial_indices) if name in expr.dims()}
        if used and used <= tied.keys():
            rename = {result_map.initial_indices[r]: Dim(names[tied[r]]) for r in used}
            slots.append(expr.substitute(rename))
        elif used and used <= windowed:
            continue  # read through the operand's own (compound) dimensions, placed below
        elif not used & tied.keys():
            slots.append(None)
        else:
            return None
    before: dict[int, list[int]] = {}
    after: dict[int, list[int]] = {}
    for k, extent in enumerate(shape):
        bare_loop = isinstance(access.final_indices[k], Dim)
        if k in tied.values() or (extent == 1 and not bare_loop):
            continue
        following = [t for t in sorted(tied.values()) if t > k]
        preceding = [t for t in sorted(tied.values()) if t < k]
        if following:
            before.setdefault(_first_slot(slots, names[following[0]]), []).append(k)
        elif preceding:
            after.setdefault(_first_slot(slots, names[preceding[-1]]), []).append(k)
        else:
            before.setdefault(0, []).append(k)
    outputs: list[Expr | None] = []
    for position in range(len(slots) + 1):  # len(slots): after every slot
        outputs += [Dim(names[k]) for k in before.get(position, [])]
        if position < len(slots):
            outputs.append(slots[position])
        outputs += [Dim(names[k]) for k in after.get(position, [])]
    placed = [k for group in (*before.values(), *after.values()) for k in group]
    outputs = _stand_in_for_broadcasts(outputs, {names[k] for k in placed})
    while outputs and outputs[0] is None:
        outputs.pop(0)
    while outputs and outputs[-1] is None:
        outputs.pop()
    return IndexMap(tuple(names), tuple(Const(0) if e is None else e for e in outputs))


def _stand_in_for_broadcasts(outputs: list[Expr | None], untied: set[str]) -> list[Expr | None]:
    """Drop a run of broadcast outputs (None) next to a run of as many untied operand
    dimensions: those stand where the unit result axes were (a keepdim reduction's input:
    ``x[n, c, h, w]`` summed into ``(n, c, 0, 0)`` in NCHW4c keeps NCHW4c, not
    ``(n, c floordiv 4, h, w, 0, 0, c mod 4)``)."""

    def is_untied(expr: Expr | None) -> bool:
        return isinstance(expr, Dim) and expr.name in untied

    def broadcasts(start: int, stop: int) -> bool:  # exactly the run [start, stop) is None
        inside = start >= 0 and stop <= len(result) and all(e is None for e in result[start:stop])
        return inside and (start == 0 or result[start - 1] is not None) and (
            stop == len(result) or result[stop] is not None
        )

    result = list(outputs)
    k = 0
    while k < len(result):
        if not is_untied(result[k]):
            k += 1
            continue
        end = k
        while end < len(result) and is_untied(result[end]):
            end += 1
        run = end - k
        if broadcasts(end, end + run):
            del result[end : end + run]
        elif broadcasts(k - run, k):
            del result[k - run : k]
            end -= run
        k = end
    return result


def _operand_names(result_map: IndexMap, access: IndexMap, tied: dict[int, int]) -> list[str]:
    """Readable names for the dimensions of an operand: the result map's name for a tied
    dimension, the loop name for one indexed by a bare loop, else ``a<k>`` (made unique)."""
    names = [e.name if isinstance(e, Dim) else f"a{k}" for k, e in enumerate(access.final_indices)]
    for r, k in tied.items():
        names[k] = result_map.initial_indices[r]
    seen: set[str] = set()
    for k, name in enumerate(names):
        while name in seen:
            name = f"{name}_{k}"
        names[k] = name
        seen.add(name)
    return names


def _first_slot(slots: Sequence[Expr | None], name: str) -> int:
    """The first slot that reads dimension `name`; past the last slot when none does (a tied
    dimension of extent 1 the result map sends to a constant)."""
    return next(
        (s for s, expr in enumerate(slots) if expr is not None and name in expr.dims()), len(slots)
    )


@dataclass
class FlowPlan:
    """How to rebuild a generic over its transformed result."""

    loop_count: int
    """Number of loops of the new generic."""
    bounds: dict[str, tuple[int, int]]
    """Inclusive bounds of the new loops ``q0, ...``."""
    substitution: dict[str, Expr]
    """Old loop name -> expression over the new loops."""
    iterator_types: list[IteratorTypeAttr]
    reduction_extents: list[int]
    inputs: list[SSAValue] = field(default_factory=list[SSAValue])
    maps: list[IndexMap] = field(default_factory=list[IndexMap])
    new_ops: list[Operation] = field(default_factory=list[Operation])
    input_pads: list[Attribute | None] = field(default_factory=list[Attribute | None])
    """The value each new input holds on its padding (None: no padding)."""
    input_padding: list[PaddingPredicate | None] = field(
        default_factory=list[PaddingPredicate | None]
    )
    """The padding of each new input's transform (None: none)."""
    input_shapes: list[tuple[int, ...]] = field(default_factory=list[tuple[int, ...]])


def flow_refusal(generic: GenericOp) -> str | None:
    """Why the generic cannot be rebuilt at all (None when it can be analysed further)."""
    if FROZEN in generic.attributes:
        return "frozen"
    if len(generic.res) != 1 or len(generic.outputs) != 1:
        return "several results"
    if not generic.res[0].has_one_use():
        return "other uses"
    for operand in generic.operands:
        if isinstance(operand.type, ShapedType) and static_shape(operand) is None:
            return "dynamic shape"
    if any(isinstance(m, AffineMapAttr) and m.data.num_symbols for m in generic.indexing_maps.data):
        return "symbols"
    return None


def _output_loops(output_map: IndexMap, kinds: Sequence[str]) -> list[int] | None:
    """The loop of each result dimension when the output map is a projected permutation of
    exactly the parallel loops, else None."""
    position = {name: m for m, name in enumerate(loop_names(len(kinds)))}
    loops: list[int] = []
    for expr in output_map.final_indices:
        if not isinstance(expr, Dim) or position[expr.name] in loops:
            return None
        loops.append(position[expr.name])
    parallel = {m for m, kind in enumerate(kinds) if kind == "parallel"}
    return loops if set(loops) == parallel else None


class _Decline(Exception):
    """Internal: this generic is left alone."""


def rebuild_over_transformed_result(
    generic: GenericOp, op: TransformOp, callback: OperandTransformCallback | None = None
) -> list[Operation] | None:
    """The ops that compute `op` (a transform of the only result of `generic`) by a new
    generic over the transformed result: operand transforms, the new init, the new
    generic last; none of them attached. None when the generic is left alone."""
    created: list[Operation] = []
    try:
        _rebuild(generic, op, callback, created)
    except (_Decline, ValueError):
        for new in reversed(created):
            new.erase()
        return None
    return created


def _rebuild(
    generic: GenericOp,
    op: TransformOp,
    callback: OperandTransformCallback | None,
    created: list[Operation],
) -> None:
    """Build the new ops into `created` (the new generic last); raise `_Decline` or
    ValueError to leave the generic alone."""
    kinds = [str(t.data) for t in generic.iterator_types.data]
    count = len(kinds)
    maps = [IndexMap.from_affine_map(m.data, loop_names(count)) for m in generic.indexing_maps.data]
    shapes = [static_shape(v) or () for v in generic.operands]
    extents = loop_extents(maps, shapes, count)
    output_loops = _output_loops(maps[-1], kinds)
    if extents is None or output_loops is None:
        raise _Decline
    if op.pads() and any(isinstance(inner, IndexOp) for inner in generic.body.walk()):
        raise _Decline  # on a padding point the old loops have no value for linalg.index
    plan = _plan(op, kinds, extents, output_loops, created)
    transforms = _operand_transforms(generic, op, maps, output_loops, callback)
    for k, operand in enumerate(generic.inputs):
        _add_input(plan, op, operand, maps[k], transforms[k])
    init = generic.outputs[0]
    body = generic.body.blocks[0]
    out_arg = body.args[len(generic.inputs)]
    if out_arg.uses:
        init_transform = TransformOp(init, op.map, op.pad_value if op.pads() else None)
        init_transform.result.name_hint = init.name_hint
        plan.new_ops.append(init_transform)
        new_init: SSAValue = init_transform.result
    else:
        empty = EmptyOp([], op.result.type)
        empty.tensor.name_hint = init.name_hint
        plan.new_ops.append(empty)
        new_init = empty.tensor
    if op.pads():
        _prove_padding(plan, op, generic)
    names = tuple(f"q{k}" for k in range(plan.loop_count))
    rank = len(op.result_shape())
    output_map = IndexMap(names, tuple(Dim(n) for n in names[:rank]))
    new_generic = GenericOp(
        plan.inputs,
        [new_init],
        generic.body.clone(),
        [AffineMapAttr(m.to_affine_map()) for m in [*plan.maps, output_map]],
        plan.iterator_types,
        [op.result.type],
        generic.doc,
        generic.library_call,
    )
    new_generic.attributes.update(generic.attributes)
    _index_old_loops(new_generic, plan)
    created.append(new_generic)
    try:
        # The body is a clone of the verified generic's, over the same element types, so
        # only the new generic's own checks (maps, loops, shapes) can fail here.
        new_generic.verify(verify_nested_ops=False)
    except VerifyException:
        raise _Decline from None


def _index_old_loops(generic: GenericOp, plan: FlowPlan) -> None:
    """Each `linalg.index k` of the rebuilt body (an old loop) becomes its expression over
    the new loops (`plan.substitution`, the exact inverse of the transform: it pads
    nothing), emitted as index arithmetic over `linalg.index` of the new loops."""
    block = generic.body.blocks[0]
    old = [inner for inner in block.ops if isinstance(inner, IndexOp)]
    if not old:
        return
    first = block.first_op
    assert first is not None
    names = [f"q{k}" for k in range(plan.loop_count)]
    new_loops: dict[str, SSAValue] = {}
    for k, name in enumerate(names):
        index = IndexOp(k)
        Builder(InsertPoint.before(first)).insert(index)  # a body not yet in the IR
        new_loops[name] = index.result
    bounds = {n: plan.bounds.get(n, (0, 0)) for n in names}
    emitter = ExprEmitter(InsertPoint.before(first), new_loops, bounds)
    for index in old:
        expr = simplify(plan.substitution[f"d{index.dim.value.data}"], bounds)
        index.result.replace_all_uses_with(emitter.emit(expr))
    for index in old:  # after the emission, which inserts before the first old op
        index.detach()
        index.erase()


def _plan(
    op: TransformOp,
    kinds: Sequence[str],
    extents: Sequence[int],
    output_loops: Sequence[int],
    created: list[Operation],
) -> FlowPlan:
    result_shape = op.input_shape()
    new_shape = op.result_shape()
    try:
        inverse, _ = op.map.non_surjective_inverse(result_shape)
    except ValueError:  # only a piecewise inverse: the transform stays where it is
        raise _Decline from None
    rank = len(new_shape)
    others = [m for m in range(len(kinds)) if m not in output_loops]
    names = [f"q{k}" for k in range(rank + len(others))]
    bounds = {names[k]: (0, extent - 1) for k, extent in enumerate(new_shape) if extent > 1}
    rename = {inverse.initial_indices[k]: Dim(names[k]) for k in range(rank)}
    substitution: dict[str, Expr] = {}
    for r, m in enumerate(output_loops):
        substitution[f"d{m}"] = inverse.final_indices[r].substitute(rename)
    for t, m in enumerate(others):
        substitution[f"d{m}"] = Dim(names[rank + t])
        if extents[m] > 1:
            bounds[names[rank + t]] = (0, extents[m] - 1)
    iterator_types = [IteratorTypeAttr.parallel()] * rank
    iterator_types += [IteratorTypeAttr(IteratorType(kinds[m])) for m in others]
    return FlowPlan(
        rank + len(others),
        bounds,
        substitution,
        iterator_types,
        [extents[m] for m in others],
        new_ops=created,
    )


def _operand_transforms(
    generic: GenericOp,
    op: TransformOp,
    maps: Sequence[IndexMap],
    output_loops: Sequence[int],
    callback: OperandTransformCallback | None,
) -> list[IndexMap | None]:
    count = len(generic.inputs)
    if callback is not None:
        supplied = callback(generic, op)
        if supplied is not None:
            return _checked_callback(generic, supplied)
    result: list[IndexMap | None] = []
    for k in range(count):
        shape = static_shape(generic.inputs[k])
        if shape is None:
            result.append(None)
            continue
        derived = derive_operand_transform(op.map, output_loops, maps[k], shape)
        if derived is None:
            raise _Decline
        result.append(derived)
    return result


def _add_input(
    plan: FlowPlan,
    op: TransformOp,
    operand: SSAValue,
    access: IndexMap,
    transform: IndexMap | None,
) -> None:
    shape = static_shape(operand)
    accessed = [
        simplify(e.substitute(plan.substitution), plan.bounds) for e in access.final_indices
    ]
    if (
        shape is None
        or transform is None
        or (tuple(transform.map_shape(shape)) == shape and transform.is_identity_on(shape))
    ):
        plan.inputs.append(operand)
        plan.maps.append(_map(plan, accessed))
        plan.input_pads.append(None)
        plan.input_padding.append(None)
        plan.input_shapes.append(shape or ())
        return
    padding = transform.padding_predicate(shape)
    pads = padding is not None
    pad_value: Attribute | None = None
    if pads:
        pad_value = _operand_pad_value(op, operand)
    new = TransformOp(operand, transform, pad_value)
    new.result.name_hint = operand.name_hint
    plan.new_ops.append(new)
    plan.inputs.append(new.result)
    position = dict(zip(transform.initial_indices, accessed, strict=True))
    plan.maps.append(
        _map(
            plan,
            [simplify(e.substitute(position), plan.bounds) for e in transform.final_indices],
        )
    )
    plan.input_pads.append(pad_value)
    plan.input_padding.append(padding)
    plan.input_shapes.append(tuple(transform.map_shape(shape)))


def _prove_padding(plan: FlowPlan, op: TransformOp, generic: GenericOp) -> None:
    """Raise `_Decline` unless the padding points of the new result provably hold the
    pad value (rules in the module docstring)."""
    # isl and the evaluator (numpy) are imported when a padded flow is proven.
    import islpy as isl
    import numpy as np

    from physlayout.semantics.graph_evaluator import evaluate_body

    predicate = op.map.padding_predicate(op.input_shape())
    assert predicate is not None and op.pad_value is not None
    with bridge.isl_errors("proving the padding of a flow"):
        domain = isl.Set(predicate.to_isl())
        if plan.reduction_extents:
            domain = domain.flat_product(bridge.build_box(plan.reduction_extents))
    body = generic.body.blocks[0]
    values: list[np.ndarray | None] = []
    for k, operand in enumerate(plan.inputs):
        arg = body.args[k]
        shape = plan.input_shapes[k]
        if not isinstance(operand.type, ShapedType):
            values.append(_constant_value(operand))
            continue
        imap = plan.maps[k]
        with bridge.isl_errors("proving the padding of a flow"):
            image = bridge.build_map(imap.initial_indices, imap.final_indices, None)
            image = image.intersect_domain(domain).range()
            if not image.is_subset(bridge.build_box(shape)):
                raise _Decline
        pad, padding = plan.input_pads[k], plan.input_padding[k]
        if pad is None or padding is None:
            values.append(None)
            continue
        with bridge.isl_errors("proving the padding of a flow"):
            known = image.is_subset(isl.Set(padding.to_isl()))
        values.append(_scalar_array(pad, arg.type) if known else None)
    out_arg = body.args[len(plan.inputs)]
    values.append(_scalar_array(op.pad_value, out_arg.type))
    yielded = evaluate_body(body, values, outer=_constant_value, strict=False)[0]
    expected = _scalar_array(op.pad_value, out_arg.type)
    if yielded is None or np.asarray(yielded).tobytes() != expected.tobytes():
        raise _Decline


def _operand_pad_value(op: TransformOp, operand: SSAValue) -> Attribute:
    """The pad value of an operand transform: the result's pad value when the element types
    agree, else zero of the operand's type (its padding is then never proven read)."""
    elt = element_type(operand)
    if op.pad_value is not None and element_type(op.input) == elt:
        return op.pad_value
    if isinstance(elt, AnyFloat):
        return FloatAttr(0.0, elt)
    if isinstance(elt, IntegerType | IndexType):
        return IntegerAttr(0, elt)
    raise _Decline


def _constant_value(value: SSAValue) -> np.ndarray | None:
    """The value of a scalar `arith.constant` used inside a body, else None (unknown)."""
    attr = constant_scalar(value)
    return None if attr is None else _scalar_array(attr, value.type)


def _scalar_array(attr: Attribute | None, type_: Attribute) -> np.ndarray:
    import numpy as np

    from physlayout.semantics.evaluator_values import dtype_of

    assert isinstance(attr, FloatAttr | IntegerAttr)
    return np.asarray(attr.value.data, dtype=dtype_of(type_))


def _map(plan: FlowPlan, outputs: Sequence[Expr]) -> IndexMap:
    names = tuple(f"q{k}" for k in range(plan.loop_count))
    return IndexMap(names, tuple(outputs))


def _checked_callback(
    generic: GenericOp, supplied: Sequence[IndexMap | None]
) -> list[IndexMap | None]:
    if len(supplied) != len(generic.inputs):
        raise PassFailedException(
            f"layout flow callback returned {len(supplied)} operand transforms for a "
            f"linalg.generic with {len(generic.inputs)} inputs"
        )
    result: list[IndexMap | None] = []
    for k, (imap, operand) in enumerate(zip(supplied, generic.inputs, strict=True)):
        if imap is None:
            result.append(None)
            continue
        shape = static_shape(operand)
        if shape is None or not isinstance(imap, IndexMap) or imap.ndim != len(shape):
            raise PassFailedException(
                f"layout flow callback returned {imap!r} for input #{k} of type {operand.type}"
            )
        try:
            collision = imap.find_collision(shape)
            imap.map_shape(shape)
        except ValueError as err:
            raise PassFailedException(f"layout flow callback: input #{k}: {err}") from None
        if collision is not None:
            raise PassFailedException(
                f"layout flow callback: index map {imap} for input #{k} is not injective on "
                f"shape {list(shape)}"
            )
        result.append(imap)
    return result
