"""When may the evaluator run a sequential loop as a parallel one? (`vectorize_loops` mode)

An `scf.for` / `affine.for` is run with all its iterations at once (as one parallel lane
axis) when `loop_is_parallelizable` holds:

1. the loop has no `iter_args`, and
2. no memory access in its body (including nested regions and the bodies of functions it
   calls, transitively) has a buffer whose storage cannot be traced, and
3. for every storage S written in the body, other than storage allocated inside the loop
   itself (fresh for each iteration, so private to it), one of:
   (a) *disjoint by the induction variable*: every access to S in the body (loads and
       stores, none inside a called function) goes through the same buffer SSA value, that
       buffer is injective (a `!layout.buffer`, a freshly allocated memref, or a memref view
       checked injective at run time), and at some axis k every access uses the loop's
       induction variable itself as its index; when k is the innermost axis every access
       must touch a single element. Each iteration then touches elements no other iteration
       touches.
   (b) *single writer*: S is not read anywhere in the body (`memref.copy` reads its source),
       exactly one store writes it, and every `scf.for`/`affine.for` between the loop and
       that store is itself parallelizable by this rule. Each iteration then writes each
       element at most once, so executing iterations as lanes and letting the last lane in
       iteration order win reproduces the sequential result.

   The padding fill of a buffer declared in the body or passed to a called function
   (`evaluator_values.fills_padding`) counts as a store to its storage at unknown indices.

"Storage" is what a buffer value traces back to through `layout.decl_buffer`, `layout.data`
and the memref view ops (`cast`, `reinterpret_cast`, `subview`, `collapse_shape`,
`expand_shape`): an allocation op inside the loop, or the run-time storage of a value
defined before the loop. Different SSA buffers over the same handle are the same storage.
Anything else (a buffer block argument inside the loop, a buffer result of `scf.if`, ...)
is untraceable and keeps the loop sequential. Reads of storages that the body does not
write never prevent vectorization.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.dialects.builtin import AffineMapAttr, MemRefType, VectorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineSymExpr

from physlayout.dialects.layout import BufferType
from physlayout.semantics.evaluator_values import fills_padding

SEQUENTIAL_LOOPS: frozenset[str] = frozenset({"scf.for", "affine.for"})
ALLOCATIONS: frozenset[str] = frozenset({"layout.allocate", "memref.alloc", "memref.alloca"})
_VIEW_OPS: dict[str, int] = {
    "layout.decl_buffer": 0,
    "layout.data": 0,
    "memref.cast": 0,
    "memref.reinterpret_cast": 0,
    "memref.subview": 0,
    "memref.collapse_shape": 0,
    "memref.expand_shape": 0,
    "memref.memory_space_cast": 0,
    "memref.assume_alignment": 0,
}
"""Ops whose memory result aliases the operand at the given position."""

_MAX_CALL_DEPTH = 16


class _Unknown:
    """The root of a buffer whose storage cannot be traced."""


UNKNOWN = _Unknown()

Root = object
"""A storage identity: an allocation op inside the analysed code, a run-time storage, or
UNKNOWN."""


@dataclass(frozen=True)
class Allocation:
    """The storage made by `op` (a static root)."""

    op: Operation


def defined_inside(value: SSAValue, scope: Operation) -> bool:
    """True when `value` is defined in a region of `scope` (at any depth)."""
    owner = value.owner
    return owner is not scope and scope.is_ancestor(owner)


class Tracer:
    """Traces memory values to their root storage.

    Values in `params` map to given roots; values defined outside `scope` are resolved by
    `outside`; everything else is traced statically through the view ops.
    """

    def __init__(
        self,
        scope: Operation | None,
        outside: Callable[[SSAValue], Root],
        params: dict[SSAValue, Root] | None = None,
    ):
        self.scope = scope
        self.outside = outside
        self.params = params or {}

    def root(self, value: SSAValue) -> Root:
        """The storage `value` addresses: a parameter's root, an allocation, or unknown,
        followed through views and casts (at most 10,000 steps: a longer chain is unknown)."""
        for _ in range(10_000):
            if value in self.params:
                return self.params[value]
            if self.scope is not None and not defined_inside(value, self.scope):
                return self.outside(value)
            owner = value.owner
            if isinstance(owner, Block):
                return UNKNOWN
            if owner.name in ALLOCATIONS:
                return Allocation(owner)
            if owner.name not in _VIEW_OPS:
                return UNKNOWN
            value = owner.operands[_VIEW_OPS[owner.name]]
        return UNKNOWN


@dataclass(frozen=True)
class Access:
    """One memory access in a loop body."""

    is_store: bool
    root: Root
    buffer: SSAValue | None
    """The accessed buffer value; None when the access is inside a called function."""
    axes: tuple[SSAValue | None, ...]
    """Per axis, the SSA value used as that axis' index when it is used as is."""
    width: int
    """Elements touched along the innermost axis."""
    loops: tuple[tuple[Operation, Tracer], ...]
    """The sequential loops between the analysed loop and the access, with their tracer."""


def _wide(value_type: object, element_type: object) -> int:
    if isinstance(value_type, VectorType) and not isinstance(element_type, VectorType):
        shape = value_type.get_shape()
        return shape[-1] if shape else 1
    return 1


def _element_type(buffer: SSAValue) -> object:
    type_ = buffer.type
    if isinstance(type_, BufferType):
        return type_.element_type
    if isinstance(type_, MemRefType):
        return type_.get_element_type()
    return None


def _affine_axes(op: Operation, operands: tuple[SSAValue, ...]) -> tuple[SSAValue | None, ...]:
    attr = op.properties.get("map")
    if not isinstance(attr, AffineMapAttr):
        return ()
    amap = attr.data
    axes: list[SSAValue | None] = []
    for expr in amap.results:
        if isinstance(expr, AffineDimExpr):
            axes.append(operands[expr.position])
        elif isinstance(expr, AffineSymExpr):
            axes.append(operands[amap.num_dims + expr.position])
        else:
            axes.append(None)
    return tuple(axes)


def access_parts(op: Operation) -> list[tuple[bool, SSAValue, tuple[SSAValue | None, ...], int]]:
    """The memory accesses made by `op`: (is_store, buffer, axes, width) for each."""
    name, ops = op.name, tuple(op.operands)
    if name in ("layout.load", "memref.load", "vector.load"):
        result = op.results[0].type
        return [(False, ops[0], ops[1:], _wide(result, _element_type(ops[0])))]
    if name in ("layout.store", "memref.store", "vector.store"):
        return [(True, ops[1], ops[2:], _wide(ops[0].type, _element_type(ops[1])))]
    if name in ("affine.load", "affine.vector_load"):
        width = _wide(op.results[0].type, _element_type(ops[0]))
        return [(False, ops[0], _affine_axes(op, ops[1:]), width)]
    if name in ("affine.store", "affine.vector_store"):
        width = _wide(ops[0].type, _element_type(ops[1]))
        return [(True, ops[1], _affine_axes(op, ops[2:]), width)]
    if name == "memref.copy":
        return [(False, ops[0], (), 0), (True, ops[1], (), 0)]
    return []


@dataclass
class _Collector:
    functions: Callable[[str], Operation | None]
    accesses: list[Access]

    def ops(
        self,
        ops: Iterable[Operation],
        tracer: Tracer,
        loops: tuple[tuple[Operation, Tracer], ...],
        in_callee: bool,
        depth: int,
    ) -> None:
        for op in ops:
            for is_store, buffer, axes, width in access_parts(op):
                self.accesses.append(
                    Access(
                        is_store,
                        tracer.root(buffer),
                        None if in_callee else buffer,
                        axes,
                        width,
                        loops,
                    )
                )
            if op.name == "layout.decl_buffer" and fills_padding(op.results[0]):
                self.accesses.append(Access(True, tracer.root(op.results[0]), None, (), 0, loops))
            if op.name == "func.call":
                self.call(op, tracer, loops, depth)
            if op.name == "scf.while":
                self.accesses.append(Access(True, UNKNOWN, None, (), 0, loops))
            inner = (*loops, (op, tracer)) if op.name in SEQUENTIAL_LOOPS else loops
            for region in op.regions:
                for block in region.blocks:
                    self.ops(block.ops, tracer, inner, in_callee, depth)

    def call(
        self,
        op: Operation,
        tracer: Tracer,
        loops: tuple[tuple[Operation, Tracer], ...],
        depth: int,
    ) -> None:
        callee_attr = op.properties.get("callee")
        callee_name = getattr(callee_attr, "root_reference", None)
        callee = None if callee_name is None else self.functions(callee_name.data)
        if callee is None or depth >= _MAX_CALL_DEPTH or not callee.regions[0].blocks:
            self.accesses.append(Access(True, UNKNOWN, None, (), 0, loops))
            return
        entry = callee.regions[0].blocks[0]
        params: dict[SSAValue, Root] = {
            arg: tracer.root(operand) for arg, operand in zip(entry.args, op.operands, strict=False)
        }
        for arg in entry.args:
            if arg in params and fills_padding(arg):
                self.accesses.append(Access(True, params[arg], None, (), 0, loops))
        callee_tracer = Tracer(None, lambda _v: UNKNOWN, params)
        self.ops(entry.ops, callee_tracer, loops, True, depth + 1)


def has_iter_args(loop: Operation) -> bool:
    """True when an scf.for / affine.for carries values between iterations."""
    return len(loop.results) > 0


def loop_is_parallelizable(
    loop: Operation,
    outside: Callable[[SSAValue], Root],
    injective: Callable[[SSAValue], bool],
    functions: Callable[[str], Operation | None],
) -> bool:
    """The rule of this module for `loop`; `outside` resolves values defined before the loop
    to their run-time storage (or UNKNOWN), `injective` tells whether such a value is an
    injective view, `functions` finds the module's functions by name."""
    if has_iter_args(loop):
        return False
    body = loop.regions[0].blocks[0]
    iv = body.args[0]
    tracer = Tracer(loop, outside)
    collector = _Collector(functions, [])
    collector.ops(body.ops, tracer, (), False, 0)
    groups: dict[Root, list[Access]] = {}
    for access in collector.accesses:
        if access.root is UNKNOWN:
            return False
        if isinstance(access.root, Allocation) and loop.is_ancestor(access.root.op):
            continue
        groups.setdefault(access.root, []).append(access)

    def inner_injective(value: SSAValue) -> bool:
        return _is_injective(value, loop, injective)

    for group in groups.values():
        if not any(a.is_store for a in group):
            continue
        if _disjoint_by_iv(group, iv, loop, injective):
            continue
        if _single_writer(group, inner_injective, functions):
            continue
        return False
    return True


def _disjoint_by_iv(
    group: list[Access],
    iv: SSAValue,
    loop: Operation,
    injective: Callable[[SSAValue], bool],
) -> bool:
    buffer = group[0].buffer
    if buffer is None or any(a.buffer is not buffer for a in group):
        return False
    if not _is_injective(buffer, loop, injective):
        return False
    rank = len(group[0].axes)
    for axis in range(rank):
        if not all(len(a.axes) == rank and a.axes[axis] is iv for a in group):
            continue
        if axis < rank - 1 or all(a.width == 1 for a in group):
            return True
    return False


def _is_injective(buffer: SSAValue, loop: Operation, injective: Callable[[SSAValue], bool]) -> bool:
    if isinstance(buffer.type, BufferType):
        return True
    if not defined_inside(buffer, loop):
        return injective(buffer)
    owner = buffer.owner
    return isinstance(owner, Operation) and owner.name in ("memref.alloc", "memref.alloca")


def _single_writer(
    group: list[Access],
    injective: Callable[[SSAValue], bool],
    functions: Callable[[str], Operation | None],
) -> bool:
    if len(group) != 1 or not group[0].is_store:
        return False
    return all(
        loop_is_parallelizable(inner, tracer.root, injective, functions)
        for inner, tracer in group[0].loops
    )


def external_memory_values(loop: Operation) -> list[SSAValue]:
    """The memory-typed values used inside `loop` but defined before it (the run-time
    inputs of the rule)."""
    seen: dict[SSAValue, None] = {}
    for op in loop.walk():
        if op is loop:
            continue
        for operand in op.operands:
            if _is_memory(operand) and not defined_inside(operand, loop):
                seen.setdefault(operand, None)
    return list(seen)


def _is_memory(value: SSAValue) -> bool:
    from physlayout.dialects.layout import PtrType

    return isinstance(value.type, BufferType | PtrType | MemRefType)
