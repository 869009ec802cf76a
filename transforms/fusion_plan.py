"""The legality of fused groups (`fuse-elementwise` decides them, `legalize-layout` checks
them again before it emits their one kernel).

A group computes, at every point of its *root*'s parallel loops, one element ``e`` of its
result: the root (the one `linalg.generic` of the group that may have reduction loops; in a
group without reductions, its first generic) runs its reductions to completion, then every
other generic of the group (a *stage*) runs its body once, on the same element ``e``:

- the root has one output, written at a map that is a permutation of its parallel loops
  (each parallel point writes one element, every element is written, by one point, from
  the final accumulator);
- a stage has only parallel loops, one output written at a permutation of its loops, and a
  body that does not read its output's initial value;
- a value computed in the group is read only by stages, each at *its own output map*: the
  stage iteration that writes element ``e`` reads exactly the element ``e`` that the same
  point of the root nest computed (so no iteration reads an element another iteration
  writes: a 3x3 window, a pool, a broadcast or a transposed read is not of this form);
- the root's initial value may be a `linalg.fill` or a splat dense `arith.constant` of the
  group, read by nothing else (it becomes the accumulator's starting value);
- a root input may be a `layout.pad` of the group (of a tensor from outside, with a scalar
  pad value), read by nothing but root inputs: the padded tensor is never stored, the
  root reads the source through the padding (`legalize_kernels.PaddedRead`). Any read
  pattern is legal (a 3x3 window, a pool): the pad is a function of a tensor computed
  before the kernel, so no iteration reads what another writes.

Because every internal edge joins two iterations that write the same element, the stages'
loops are functions of the root's parallel loops: stage loop ``s`` is ``O_R[t]``, where the
stage's output map puts ``s`` at position ``t`` and ``O_R`` is the root's output map.

Elements are matched with their dimensions of extent 1 dropped (`squeezed`): a stage may
write ``1x64x32`` from a root's ``64x32`` (the residual add after an MLP-Mixer matmul, its
batch dimension restored), reading the root at ``(d1, d2)`` while it writes ``(d0, d1, d2)``
with ``d0`` of extent 1; stage loops at unit positions are 0, the others take the root's
non-unit output indices in order, and the group stores its result at the yielded generic's
output map over the root's loops (`result_exprs`). Such a rank change is refused for a
texture result (its texel lane is the last dimension of both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, TensorType
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from physlayout.dialects.layout import is_texture_scope
from physlayout.dialects.layout_fused import FusedOp, YieldOp
from physlayout.dialects.layout_graph import PadOp, static_shape
from physlayout.dialects.layout_scopes import producer_scope
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.transforms.annotate_texture_scope import unvectorizable_body_op
from physlayout.transforms.flow_plan import loop_extents, loop_names
from physlayout.transforms.legalize_kernels import scalar_attr, texel_lane_loop

_T = TypeVar("_T")


def generic_maps(op: GenericOp) -> list[IndexMap] | None:
    """The indexing maps of `op` over loops ``d0, d1, ...`` (None: not quasi-affine)."""
    names = loop_names(len(op.iterator_types.data))
    try:
        return [IndexMap.from_affine_map(m.data, names) for m in op.indexing_maps.data]
    except ValueError:
        return None


def parallel_loops(op: GenericOp) -> list[str]:
    """The names of `op`'s parallel loops, in order."""
    kinds = [str(t.data) for t in op.iterator_types.data]
    return [f"d{m}" for m, kind in enumerate(kinds) if kind == "parallel"]


def has_reductions(op: GenericOp) -> bool:
    """Whether `op` has a loop that is not parallel."""
    return len(parallel_loops(op)) != len(op.iterator_types.data)


def is_permutation(exprs: Sequence[Expr], loops: Sequence[str]) -> bool:
    """Whether `exprs` are the loops `loops`, each once, in some order."""
    names = [e.name for e in exprs if isinstance(e, Dim)]
    return len(names) == len(exprs) and sorted(names) == sorted(loops)


def _map_text(exprs: Sequence[Expr]) -> str:
    return "(" + ", ".join(str(e) for e in exprs) + ")"


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a tensor"


def root_problem(op: GenericOp) -> str | None:
    """Why `op` cannot be the root of a group, or None."""
    maps = generic_maps(op)
    if maps is None:
        return "has an indexing map that is not quasi-affine"
    if len(op.outputs) != 1:
        return f"has {len(op.outputs)} outputs (a group stores one)"
    out = maps[-1].final_indices
    if not is_permutation(out, parallel_loops(op)):
        return (
            f"writes its output at {_map_text(out)}, not a permutation of its parallel loops "
            "(each element written once, whole)"
        )
    return None


def stage_problem(op: GenericOp) -> str | None:
    """Why `op` cannot be a stage (an elementwise epilogue) of a group, or None."""
    if has_reductions(op):
        return "has reduction loops (only the root of a group may reduce)"
    problem = root_problem(op)
    if problem is not None:
        return problem
    body = op.body.blocks[0]
    if body.args[len(op.inputs)].uses:
        return "reads the initial value of its output"
    return None


def aligned_read_problem(user: Operation, index: int) -> str | None:
    """Why operand `index` of `user` is not read element-aligned by a stage (the stage
    iteration writing element ``e`` must read element ``e``), or None."""
    if not isinstance(user, GenericOp):
        return f"is used by '{user.name}'"
    if index >= len(user.inputs):
        return "is the initial value of a consumer's output"
    maps = generic_maps(user)
    problem = stage_problem(user)
    if problem is not None:
        at = f" at {_map_text(maps[index].final_indices)}" if maps else ""
        return f"is read{at} by a consumer that {problem}"
    assert maps is not None
    read, written = maps[index].final_indices, maps[-1].final_indices
    shape, result = static_shape(user.operands[index]), static_shape(user.res[0])
    if shape is None or result is None:
        return "has a dynamic shape"
    at, to = _unit_loops_at_zero(user, maps, read), _unit_loops_at_zero(user, maps, written)
    if squeezed(at, shape) != squeezed(to, result):
        return (
            f"is read at {_map_text(read)} by a consumer that writes {_map_text(written)}: "
            "not the element the producer writes there (a neighbour, broadcast or "
            "transposed read)"
        )
    if squeezed(shape, shape) != squeezed(result, result):
        return "has another shape than its consumer's result"
    if shape != result and is_texture_scope(producer_scope(user.res[0])):
        return "has another rank than its consumer's texture result (texel lanes differ)"
    return None


def squeezed(items: Sequence[_T], shape: Sequence[int]) -> tuple[_T, ...]:
    """`items` (one per dimension of `shape`) without those of the dimensions of extent 1."""
    return tuple(item for item, extent in zip(items, shape, strict=True) if extent != 1)


def _unit_loops_at_zero(
    user: GenericOp, maps: Sequence[IndexMap], exprs: Sequence[Expr]
) -> tuple[Expr, ...]:
    """`exprs` (indices over `user`'s loops) with each loop of extent 1 replaced by 0: a
    read at ``(d0, 0, d2)`` where ``d1`` only takes the value 0 reads the element the
    iteration writes at ``(d0, d1, d2)``."""
    shapes = [static_shape(v) or () for v in user.operands]
    extents = loop_extents(maps, shapes, len(user.iterator_types.data))
    unit = {f"d{m}": 0 for m, e in enumerate(extents or ()) if e == 1}
    return tuple(e.substitute(unit) for e in exprs)


def splat_init(op: Operation) -> bool:
    """Whether `op` (the producer of a root's init) is an accumulator start a group can
    absorb: a `linalg.fill`, or a splat dense `arith.constant`."""
    if isinstance(op, FillOp):
        return len(op.outputs) == 1
    if isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
        value = op.value
        return isinstance(value, DenseIntOrFPElementsAttr) and _is_splat(value)
    return False


def splat_scalar(op: arith.ConstantOp) -> FloatAttr | IntegerAttr:
    """The element of a splat dense tensor constant (`splat_init`), as a scalar attribute
    of the tensor's element type."""
    value = op.value
    assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(op.result.type, TensorType)
    from physlayout.semantics.graph_evaluator import dense_array  # numpy: when used

    element = op.result.type.get_element_type()
    scalar = scalar_attr(dense_array(value, op.result.type).reshape(-1)[0], element)
    assert isinstance(scalar, FloatAttr | IntegerAttr)
    return scalar


def _is_splat(value: DenseIntOrFPElementsAttr) -> bool:
    values = value.get_values()
    return len(values) >= 1 and all(v == values[0] for v in values)


@dataclass(frozen=True)
class GroupPlan:
    """The structure of a `layout.fused` group (module docstring)."""

    root: GenericOp
    stages: tuple[GenericOp, ...]
    """The other generics, in block order."""
    start: Operation | None
    """The root's absorbed initial value (`linalg.fill` or splat `arith.constant`), if any."""


def plan_group(op: FusedOp) -> GroupPlan | str:
    """The plan of `op`, or why its region is not a legal group."""
    block: Block = op.block
    generics = [g for g in block.ops if isinstance(g, GenericOp)]
    if not generics:
        return "the group holds no linalg.generic"
    for inner in generics:
        if len(inner.res) != 1:
            return f"the group holds a generic with {len(inner.res)} results (a group stores one)"
        for use in inner.res[0].uses:
            if isinstance(use.operation, YieldOp):
                continue
            problem = aligned_read_problem(use.operation, use.index)
            if problem is not None:
                return f"{_name(inner.res[0])} {problem}"
    reducing = [g for g in generics if has_reductions(g)]
    if len(reducing) > 1:
        return f"the group holds {len(reducing)} generics with reduction loops (one kernel runs one)"
    root = reducing[0] if reducing else generics[0]
    problem = root_problem(root)
    if problem is not None:
        return f"the group's root {_name(root.res[0])} {problem}"
    stages = tuple(g for g in generics if g is not root)
    for stage in stages:
        problem = stage_problem(stage)
        if problem is not None:
            return f"the group's stage {_name(stage.res[0])} {problem}"
    start: Operation | None = None
    owner = root.outputs[0].owner
    if isinstance(owner, Operation) and owner.parent_block() is block and not isinstance(owner, EmptyOp):
        if not splat_init(owner):
            return f"the group starts its root from '{owner.name}', not a fill or a splat constant"
        start = owner
    for inner in block.ops:
        if isinstance(inner, GenericOp | YieldOp):
            continue
        if isinstance(inner, PadOp):
            problem = pad_problem(inner, root, is_texture_scope(producer_scope(op.result)))
            if problem is not None:
                return f"the group's pad {_name(inner.result)} {problem}"
            continue
        if inner is not start and not isinstance(inner, EmptyOp) and not _is_scalar(inner):
            return f"the group holds '{inner.name}', which a fused kernel cannot compute"
    if start is not None and any(u.operation is not root for u in start.results[0].uses):
        return "the group reads its root's starting value elsewhere"
    if not isinstance(block.last_op, YieldOp) or block.last_op.value.owner not in generics:
        return "the group does not yield the result of one of its generics"
    return GroupPlan(root, stages, start)


def merge_problem(producer: Operation, consumer: Operation, value: SSAValue) -> str | None:
    """Why the group of `producer` (a generic or a group, the owner of `value`) and
    `consumer` (reading `value`) would not be legal, decided before it is built: the
    problems `plan_group` finds in every such merged group. It checks each read of the
    produced value with `aligned_read_problem`, which reads nothing but the reading generic
    (or op) and the operand index, and the merged group clones both unchanged; and it
    refuses two generics with reduction loops. None proves nothing: build the group and
    plan it."""
    if isinstance(consumer, GenericOp):
        reads = [(consumer, i) for i, v in enumerate(consumer.operands) if v is value]
    elif not isinstance(consumer, FusedOp):
        return None
    else:
        args = [a for a, v in zip(consumer.block.args, consumer.inputs, strict=True) if v is value]
        reads = [(use.operation, use.index) for arg in args for use in arg.uses]
    produced = value
    if isinstance(producer, FusedOp) and isinstance(producer.block.last_op, YieldOp):
        produced = producer.block.last_op.value
    for user, index in reads:
        if isinstance(user, YieldOp):
            continue
        problem = aligned_read_problem(user, index)
        if problem is not None:
            return f"{_name(produced)} {problem}"
    reducing = sum(1 for g in (*_generics(producer), *_generics(consumer)) if has_reductions(g))
    if reducing > 1:
        return f"the group holds {reducing} generics with reduction loops (one kernel runs one)"
    return None


def _generics(op: Operation) -> list[GenericOp]:
    """`op` itself (a generic) or the generics of its group (none for another op)."""
    if isinstance(op, GenericOp):
        return [op]
    if isinstance(op, FusedOp):
        return [g for g in op.block.ops if isinstance(g, GenericOp)]
    return []


def pad_problem(pad: PadOp, root: GenericOp, texture: bool) -> str | None:
    """Why the root of a group cannot read `pad` (a `layout.pad` of the group) through its
    padding, or None; `texture`: the group stores a texture (its texel lanes are one vector,
    so they must agree on whether they read padding)."""
    if not isinstance(pad.input, BlockArgument):
        return "pads a value computed in the group (only a tensor from outside is padded on read)"
    if not isinstance(pad.pad_value, FloatAttr | IntegerAttr):
        return f"has pad value {pad.pad_value}, not a scalar"
    for use in pad.result.uses:
        if use.operation is not root or use.index >= len(root.inputs):
            return "is read by another op than the group's root (as an input)"
    lane = texel_lane_loop(root) if texture else None
    maps = generic_maps(root)
    if lane is None or maps is None:
        return None
    widths = zip(pad.get_low(), pad.get_high(), strict=True)
    padded = [j for j, (lo, hi) in enumerate(widths) if lo or hi]
    for use in pad.result.uses:
        exprs = maps[use.index].final_indices
        if any(f"d{lane}" in exprs[j].dims() for j in padded):
            return (
                "is read through its padding along the texel lane loop of a texture group's "
                "root: whether a lane reads padding would differ between the lanes of one "
                "texel (vectorize-texels selects whole texels on one condition)"
            )
    return None


def _is_scalar(op: Operation) -> bool:
    values = [*op.operands, *op.results]
    return not op.regions and all(not isinstance(v.type, TensorType) for v in values)


def stage_loops(stage: GenericOp, root: GenericOp, root_out: Sequence[Expr]) -> dict[str, Expr]:
    """Each loop of `stage` as an expression of the loops of `root` (whose output map is
    `root_out`): the loop at the ``k``-th position of the stage's output map whose extent
    is not 1 is the root's ``k``-th such output index; a loop at a position of extent 1 is
    0 (module docstring; with equal shapes: the root's output index at the same position)."""
    maps = generic_maps(stage)
    shape, root_shape = static_shape(stage.res[0]), static_shape(root.res[0])
    assert maps is not None and shape is not None and root_shape is not None
    out = maps[-1].final_indices
    if shape == root_shape:
        return {e.name: root_out[t] for t, e in enumerate(out) if isinstance(e, Dim)}
    loops: dict[str, Expr] = {e.name: Const(0) for e in out if isinstance(e, Dim)}
    kept = zip(squeezed(out, shape), squeezed(root_out, root_shape), strict=True)
    loops.update((e.name, index) for e, index in kept if isinstance(e, Dim))
    return loops


def result_exprs(op: FusedOp, root: GenericOp, root_out: Sequence[Expr]) -> tuple[Expr, ...]:
    """The element of group `op`'s result that the root's parallel point computes, over
    the root's loops, when it is not `root_out` (a result of another rank; else ()): the
    yielded generic's output map through `stage_loops`."""
    yielded = op.yielded().owner
    if yielded is root or not isinstance(yielded, GenericOp):
        return ()
    maps = generic_maps(yielded)
    assert maps is not None
    by_loop = stage_loops(yielded, root, root_out)
    exprs = tuple(e.substitute(by_loop) for e in maps[-1].final_indices)
    return () if exprs == tuple(root_out) else exprs


def is_gather(op: GenericOp) -> bool:
    """Whether `op` is a gather a consumer may recompute: parallel loops only, one output
    whose initial value it does not read, and a body that yields one `tensor.extract` of a
    tensor defined outside it (at indices computed from `linalg.index` and index operands:
    torch-mlir's nearest upsampling and the corners of a bilinear one)."""
    if len(op.outputs) != 1 or has_reductions(op):
        return False
    body = op.body.blocks[0]
    if body.args[len(op.inputs)].uses:
        return False
    terminator = body.last_op
    if terminator is None or len(terminator.operands) != 1:
        return False
    extract = terminator.operands[0].owner
    if not isinstance(extract, tensor.ExtractOp) or extract.parent_block() is not body:
        return False
    owner = extract.tensor.owner
    parent = owner.parent_op() if isinstance(owner, Block) else owner
    return parent is None or not op.is_ancestor(parent)


def store_problem(plan: GroupPlan, scope: str) -> str | None:
    """Why the group `plan` cannot store its result in `scope` (None: it can): a texture
    result is stored as whole texels, so the root needs a texel lane loop and every generic
    of the group a body `vectorize-texels` can run on the lanes of one texel."""
    if not is_texture_scope(scope):
        return None
    lane = texel_lane_loop(plan.root)
    if lane is None:
        return (
            f"would store whole texels of its {scope} result from no texel lane loop of the "
            f"root {_name(plan.root.res[0])}"
        )
    root_maps = generic_maps(plan.root)
    assert root_maps is not None  # the plan proved them quasi-affine
    root_out = root_maps[-1].final_indices
    for generic in (plan.root, *plan.stages):
        loop = lane if generic is plan.root else _stage_lane(generic, plan.root, root_out, lane)
        problem = unvectorizable_body_op(generic, loop)
        if problem is not None:
            return f"would store whole texels of its {scope} result, but {problem}"
    return None


def _stage_lane(
    stage: GenericOp, root: GenericOp, root_out: Sequence[Expr], lane: int
) -> int | None:
    """The loop of `stage` that runs as the root's texel lane loop `lane` (`stage_loops`)."""
    for name, expr in stage_loops(stage, root, root_out).items():
        if isinstance(expr, Dim) and expr.name == f"d{lane}":
            return int(name[1:])
    return None
