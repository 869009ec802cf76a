"""Which loop nests `apply-layout{rewrite-loops=true}` re-iterates in physical order.

An analysis, run before anything is rewritten: `plan_physical_order` walks the module's
outermost perfect loop nests (`loop_nests.loop_nest_at`) in order and picks, for each, the
first buffer it can re-iterate over (RFC 0039 option 3): a store in the nest body that
writes a whole buffer with a pending transform exactly at the loop variables, to a buffer
no earlier nest was picked for, whose map has a single quasi-affine inverse, where
`dependence.reorder_hazard` proves that the physical order keeps every dependence and the
nest carries no values between iterations. Nests inside a picked nest are not looked at
(they are rewritten with it). With `remarks`, it says on stderr, for each nest, what it
picked or why it kept the logical order; the remarks never change the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import StoreOp
from physlayout.transforms.buffer_aliases import BufferAliases, describe_value
from physlayout.transforms.dependence import (
    LayoutOf,
    access_lanes,
    aliased_parameters,
    enclosing_function,
    iteration_dims,
    reorder_hazard,
)
from physlayout.transforms.diagnostics import emit_remark
from physlayout.transforms.loop_nests import LoopNest, is_loop, loop_nest_at


@dataclass(frozen=True)
class PhysicalOrder:
    """A nest to re-iterate over the transformed box of `buffer`."""

    nest: LoopNest
    buffer: SSAValue
    layout: PendingLayout
    axes: dict[SSAValue, int]
    """The buffer axis each loop variable indexes."""


@dataclass(frozen=True)
class PhysicalOrderPlan:
    """The nests to re-iterate (by their outermost loop) and the buffers they cover (whose
    padding the re-iterated nest stores)."""

    nests: dict[Operation, PhysicalOrder]
    covered: frozenset[SSAValue]


def plan_physical_order(
    module: Operation,
    layout_of: LayoutOf,
    remarks: bool,
    pass_name: str,
    module_aliases: BufferAliases | None = None,
) -> PhysicalOrderPlan:
    """The nests of `module` to re-iterate in physical order (see the module docstring).

    `module_aliases`: the `BufferAliases` of `module` on this IR, when the caller has them.
    They then stand for each function's own: the questions asked here (`view_of`,
    `storage_of`, `handle_storage`, `may_alias` of values of one function) are answered
    alike, since a value's chain of declarations, data handles and allocations lies in its
    function (a `func.func` is isolated from above), and one analysis makes one `Storage`
    per root value either way. Without them, each function's are built when first asked."""
    aliases: dict[Operation, BufferAliases] = {}  # per function: planning changes no IR

    def aliases_in(scope: Operation) -> BufferAliases:
        if module_aliases is not None:
            return module_aliases
        if scope not in aliases:
            aliases[scope] = BufferAliases(scope)
        return aliases[scope]

    def aliases_of(nest: LoopNest) -> BufferAliases:
        return aliases_in(enclosing_function(nest.outer) or nest.outer)

    pairs_of = aliased_parameters(module, aliases_in)
    nests: dict[Operation, PhysicalOrder] = {}
    covered: set[SSAValue] = set()
    for op in _outside_picked_nests(module, nests):
        nest = loop_nest_at(op)
        if nest is None or is_loop(op.parent_op()):
            continue
        function = enclosing_function(nest.outer)
        pairs = set() if function is None else pairs_of.get(function.sym_name.data)
        picked, hazard = _pick(nest, layout_of, frozenset(covered), pairs or set(), aliases_of)
        if picked is not None:
            nests[op] = picked
            covered.add(picked.buffer)
            message = (
                f"re-iterated {_nest_name(nest)} in the physical order of "
                f"{describe_value(picked.buffer)}"
            )
        elif hazard is not None:
            message = f"kept the logical order of {_nest_name(nest)}: {hazard}"
        else:
            continue
        if remarks:
            emit_remark(pass_name, nest.outer, message)
    return PhysicalOrderPlan(nests, frozenset(covered))


def _outside_picked_nests(
    scope: Operation, picked: dict[Operation, PhysicalOrder]
) -> Iterator[Operation]:
    """The ops nested in `scope`, in order, except those inside a nest picked so far."""
    for region in scope.regions:
        for block in region.blocks:
            for op in block.ops:
                yield op
                if op not in picked:
                    yield from _outside_picked_nests(op, picked)


def _pick(
    nest: LoopNest,
    layout_of: LayoutOf,
    covered: frozenset[SSAValue],
    pairs: set[frozenset[int]],
    aliases_of: Callable[[LoopNest], BufferAliases],
) -> tuple[PhysicalOrder | None, str | None]:
    """The first store of the nest body that can be re-iterated in physical order, else
    the first reason why a candidate store cannot be."""
    first_hazard: str | None = None
    for store in [s for s in nest.body.ops if isinstance(s, StoreOp)]:
        layout = layout_of(store.buffer.type)
        if layout is None or store.buffer in covered:
            continue
        axes = _store_axes(store, nest, layout)
        if axes is None:
            continue
        hazard = _hazard(nest, store.buffer, layout, axes, layout_of, pairs, aliases_of(nest))
        if hazard is None and not has_inverse(layout):
            hazard = f"the map of {describe_value(store.buffer)} has no single quasi-affine inverse"
        if hazard is None:
            return PhysicalOrder(nest, store.buffer, layout, axes), None
        first_hazard = first_hazard or hazard
    return None, first_hazard


def _hazard(
    nest: LoopNest,
    buffer: SSAValue,
    layout: PendingLayout,
    axes: dict[SSAValue, int],
    layout_of: LayoutOf,
    pairs: set[frozenset[int]],
    aliases: BufferAliases,
) -> str | None:
    """Why re-iterating `nest` in the physical order of `buffer` may change the result
    (None when it provably does not)."""
    if nest.carried is not None:
        return f"loop {describe_value(nest.carried)} carries values between iterations"
    position = {iv: k for k, iv in enumerate(nest.ivs)}
    iterations = iteration_dims(len(nest.ivs))
    initial = layout.index_map.initial_indices
    logical = {initial[axis]: iterations[position[iv]] for iv, axis in axes.items()}
    new_order = [e.substitute(logical) for e in layout.index_map.final_indices]
    return reorder_hazard(
        nest.outer,
        nest.ivs,
        nest.extents,
        new_order,
        layout_of,
        pairs,
        buffer if layout.padding is not None else None,
        aliases,
    )


def _nest_name(nest: LoopNest) -> str:
    return "the loop nest over " + ", ".join(describe_value(iv) for iv in nest.ivs)


def has_inverse(layout: PendingLayout) -> bool:
    """Whether the layout's map has a single quasi-affine inverse on its image."""
    try:
        layout.index_map.non_surjective_inverse(list(layout.logical_shape))
    except ValueError:
        return False
    return True


def _store_axes(
    store: StoreOp, nest: LoopNest, layout: PendingLayout
) -> dict[SSAValue, int] | None:
    """Map each loop variable to the buffer axis it indexes, when the store writes the
    whole buffer exactly once at the loop variables."""
    if len(store.indices) != len(nest.ivs) or access_lanes(store) != 1:
        return None
    axes: dict[SSAValue, int] = {}
    for axis, index in enumerate(store.indices):
        if index not in nest.ivs or index in axes:
            return None
        axes[index] = axis
        if nest.extents[nest.ivs.index(index)] != layout.logical_shape[axis]:
            return None
    return axes
