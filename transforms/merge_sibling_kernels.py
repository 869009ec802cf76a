"""merge-sibling-kernels: two launches over the same grid become one launch (horizontal
fusion of independent kernels, and of a kernel with one that reads, in each work item,
only what the same work item of the first wrote; after `legalize-layout`).

What it rewrites: in a host function, a call of kernel ``K1`` and a later call of kernel
``K2`` whose bodies are each one `scf.parallel` (after side-effect-free ops, before
`func.return`) with the same constant bounds and steps and no reductions. They become one
call, at ``K2``'s place, of a new kernel whose parallel body runs ``K1``'s body and then
``K2``'s, over the arguments of both (a value passed to both is passed once). ShuffleNet's
units: the copy of the passed-through half into the next concat runs in the kernel of the
convolution that writes the concat's other half. A layer norm: the kernel of its variance
(which reads the mean of its own row) runs in the kernel of its mean. A merged kernel is
named after its parts (`HOST_merged_N` once that name would pass `MAX_NAME` characters:
OpenCL drivers refuse very long kernel names). Equal merged kernels are one kernel
(`equal_kernels.kernel_key`); a kernel no call names any more is erased.

The proof (refused, left alone, otherwise). Storages come from `BufferAliases`; what a
kernel reads and writes through each parameter from its `layout.load`/`layout.store`s
(`dependence.collect_accesses`: a call or an op with unknown memory effects in a body
refuses it; so does a parameter used by anything but loads and stores).
- ``K1``'s call moves down past every op between the two calls: those are side-effect-free
  ops, allocations, buffer declarations, `layout.check`s (they read their flags) and kernel
  calls, none of which writes a storage ``K1`` touches or touches a storage ``K1`` writes.
- In one work item ``K1``'s body runs before ``K2``'s, and work items run in any order, so
  no storage may be written by one kernel and read by the other, except as forwarded
  below. A storage both write must be passed to both as the same buffer value, and the
  elements they store must differ: for every pair of stores, one index dimension whose
  ranges over the loops' bounds (`IndexAnalysis.range_of`, texel lanes included) do not
  meet (two windows of a concat). Then every element is written by exactly the kernel that
  wrote it before, with the same value, whatever the order.
- Forwarded: ``K2`` may read a storage ``K1`` writes when both are passed it as the same
  buffer value, the host allocated it (a parameter of the host is its interface: a launch
  that reads one takes it as an input of the run), it is not a texture (an OpenCL 1.2
  kernel cannot read an image it writes),
  ``K1`` neither reads it nor is passed it twice, ``K2`` does not write it, and ``K1``
  writes it by one scalar store, outside any condition or inner loop, at indices over the
  work item's position alone that are injective on the grid (bounds from 0, step 1;
  `structural.is_injective_structurally`), while every load of ``K2`` from it is scalar, of
  the stored type, at the same indices. Each element ``K2`` reads is then written by the
  same work item of ``K1``, before, and by no other: the value it read after ``K1``'s
  launch.

Guarantees: the same values in every buffer; one launch fewer per merge; a second run finds
no new pair unless a merged kernel has another sibling. Pairs are taken greedily in call
order: each call is merged with the nearest earlier call it can be merged with, among the
last `WINDOW` calls.
"""


from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from physlayout.dialects.layout import AllocateOp, BufferType, DeclBufferOp, LoadOp, StoreOp
from physlayout.dialects.layout_check import CheckOp
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.indexing.structural import is_injective_structurally
from physlayout.transforms.buffer_aliases import BufferAliases, trace_declarations
from physlayout.transforms.dependence import Access, collect_accesses, is_pure_op
from physlayout.transforms.equal_kernels import kernel_key
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker

WINDOW = 8
"""How many earlier calls a call looks back at for a sibling."""
MAX_NAME = 48
"""The longest merged kernel name made of its parts' names (else `HOST_merged_N`)."""


Forwards = tuple[tuple[int, tuple[Expr, ...], Attribute], ...]
"""`Kernel.forwards`."""
Loads = tuple[tuple[int, tuple[Expr, ...] | None, Attribute], ...]
"""`Kernel.loads`."""


@dataclass(frozen=True)
class Kernel:
    """A kernel of the mergeable form: its parallel loop and what each parameter does."""

    function: func.FuncOp
    loop: scf.ParallelOp
    grid: tuple[tuple[int, int, int], ...]
    """(lower, upper, step) of each parallel dimension."""
    reads: frozenset[int]
    """Parameters loaded from."""
    writes: frozenset[int]
    """Parameters stored to."""
    stores: tuple[tuple[int, tuple[tuple[int, int], ...]], ...]
    """Per store: its parameter and the inclusive range of each index (lanes included)."""
    forwards: Forwards = ()
    """Per parameter a later kernel may read forwarded (module docstring: one scalar store,
    unconditional, injective on the grid): the parameter, the store's indices over the work
    item's position (`_forwarding`) and the stored type."""
    loads: Loads = ()
    """Per load: its parameter, its indices over the work item's position (None when they
    depend on anything else, or it is a vector load) and the loaded type."""


def mergeable_kernel(function: func.FuncOp) -> Kernel | None:
    """`function` as a `Kernel`, or None when it has another form (module docstring)."""
    if not function.body.blocks:
        return None
    ops = list(function.body.block.ops)
    if len(ops) < 2 or not isinstance(ops[-1], func.ReturnOp) or not isinstance(ops[-2], scf.ParallelOp):
        return None
    loop = ops[-2]
    if loop.results or not all(is_pure_op(op) for op in ops[:-2]):
        return None
    grid: list[tuple[int, int, int]] = []
    for lb, ub, step in zip(loop.lowerBound, loop.upperBound, loop.step, strict=True):
        bounds = (const_evaluate_operand(lb), const_evaluate_operand(ub), const_evaluate_operand(step))
        if None in bounds:
            return None
        grid.append(bounds)  # type: ignore[arg-type]
    analysis = IndexAnalysis()
    accesses = collect_accesses(loop, analysis)
    if isinstance(accesses, str):
        return None
    params: list[SSAValue] = list(function.body.block.args)
    reads: set[int] = set()
    writes: set[int] = set()
    stores: list[tuple[int, tuple[tuple[int, int], ...]]] = []
    for access in accesses:
        if access.buffer not in params:
            return None
        index = params.index(access.buffer)
        (writes if access.is_store else reads).add(index)
        if isinstance(access.op, StoreOp):
            stores.append((index, _ranges(access, analysis)))
    for param in params:
        for use in param.uses:
            if not isinstance(use.operation, LoadOp | StoreOp) or use.operation.buffer is not param:
                return None
    forwards, loads = _forwarding(loop, grid, accesses, analysis, params)
    return Kernel(
        function, loop, tuple(grid), frozenset(reads), frozenset(writes), tuple(stores),
        forwards, loads,
    )  # fmt: skip


def _forwarding(
    loop: scf.ParallelOp,
    grid: Sequence[tuple[int, int, int]],
    accesses: Sequence[Access],
    analysis: IndexAnalysis,
    params: list[SSAValue],
) -> tuple[Forwards, Loads]:
    """`Kernel.forwards` and `Kernel.loads` of a kernel's accesses: indices over the work
    item's position are expressions over `w0`, `w1`, ... (the parallel loop's variables in
    order), so that two kernels of one grid compare them."""
    position: dict[str, Expr] = {}
    for k, iv in enumerate(loop.body.block.args):
        leaf = analysis.expr_of(iv)
        if isinstance(leaf, Dim):
            position[leaf.name] = Dim(f"w{k}")

    def positional(access: Access) -> tuple[Expr, ...] | None:
        if access.lanes != 1 or len(position) != len(grid):
            return None
        if any(not set(e.dims()) <= position.keys() for e in access.indices):
            return None
        return tuple(e.substitute(position) for e in access.indices)

    loads: list[tuple[int, tuple[Expr, ...] | None, Attribute]] = []
    stores_of: dict[int, list[Access]] = {}
    for access in accesses:
        index = params.index(access.buffer)
        if isinstance(access.op, LoadOp):
            loads.append((index, positional(access), access.op.result.type))
        else:
            stores_of.setdefault(index, []).append(access)
    forwards: list[tuple[int, tuple[Expr, ...], Attribute]] = []
    if any(lower != 0 or step != 1 for lower, _, step in grid):
        return (), tuple(loads)
    names = tuple(f"w{k}" for k in range(len(grid)))
    extents = tuple(upper for _, upper, _ in grid)
    for index, stores in stores_of.items():
        op = stores[0].op
        indices = positional(stores[0]) if len(stores) == 1 else None
        if indices is None or not isinstance(op, StoreOp) or op.parent_block() is not loop.body.block:
            continue
        if is_injective_structurally(IndexMap(names, indices), extents):
            forwards.append((index, indices, op.value.type))
    return tuple(forwards), tuple(loads)


def _ranges(access: Access, analysis: IndexAnalysis) -> tuple[tuple[int, int], ...]:
    ranges = [analysis.range_of(index) for index in access.indices]
    if ranges and access.lanes > 1:
        low, high = ranges[-1]
        ranges[-1] = (low, high + access.lanes - 1)
    return tuple(ranges)


@dataclass
class Launch:
    """A call of a mergeable kernel in the host function."""

    call: func.CallOp
    kernel: Kernel

    def touches(self, aliases: BufferAliases, value: SSAValue, written_only: bool) -> bool:
        """Whether the launch writes (or, unless `written_only`, reads) a buffer that may
        share bytes with `value`."""
        indices = self.kernel.writes if written_only else self.kernel.reads | self.kernel.writes
        return any(aliases.may_alias(self.call.operands[i], value) for i in indices)


def _conflict(first: Launch, other: Launch, aliases: BufferAliases) -> bool:
    """Whether `first` writes what `other` touches or reads what `other` writes."""
    return any(
        other.touches(aliases, first.call.operands[i], written_only=i not in first.kernel.writes)
        for i in first.kernel.reads | first.kernel.writes
    )


def _disjoint_stores(first: Launch, second: Launch, aliases: BufferAliases) -> bool:
    """Whether the two launches touch no storage one of them writes, except buffers both
    only write, passed as one value, at elements their stores prove distinct."""
    shared: set[SSAValue] = set()
    for i in first.kernel.reads | first.kernel.writes:
        a = first.call.operands[i]
        for j in second.kernel.reads | second.kernel.writes:
            b = second.call.operands[j]
            if not aliases.may_alias(a, b):
                continue
            if i not in first.kernel.writes and j not in second.kernel.writes:
                continue  # both read
            if _forwarded(first, i, second, j, aliases):
                continue  # the same work item of `first` wrote what `second` reads
            if a is not b or i in first.kernel.reads or j in second.kernel.reads:
                return False
            shared.add(a)
    for value in shared:
        mine = [r for i, r in first.kernel.stores if first.call.operands[i] is value]
        theirs = [r for j, r in second.kernel.stores if second.call.operands[j] is value]
        for x in mine:
            for y in theirs:
                if not any(hi_x < lo_y or hi_y < lo_x for (lo_x, hi_x), (lo_y, hi_y) in zip(x, y, strict=True)):
                    return False
    return True


def _forwarded(first: Launch, i: int, second: Launch, j: int, aliases: BufferAliases) -> bool:
    """Whether `second`'s parameter `j` reads only what `first`'s parameter `i` wrote in the
    same work item (module docstring, "Forwarded")."""
    value = first.call.operands[i]
    if value is not second.call.operands[j] or i in first.kernel.reads or j in second.kernel.writes:
        return False
    param_type = first.kernel.function.body.block.args[i].type
    if not isinstance(param_type, BufferType) or param_type.get_scope().is_texture:
        return False
    if not isinstance(trace_declarations(value)[0].owner, AllocateOp):
        return False  # a parameter of the host: a launch reading it takes it as an input
    operands = first.call.operands
    touching = first.kernel.reads | first.kernel.writes
    if any(k != i and aliases.may_alias(operands[k], value) for k in touching):
        return False
    forward = next(((x, t) for k, x, t in first.kernel.forwards if k == i), None)
    loads = [(x, t) for k, x, t in second.kernel.loads if k == j]
    return forward is not None and bool(loads) and all(load == forward for load in loads)


def _movable_past(first: Launch, between: Sequence[Operation], launches: dict[Operation, Launch], aliases: BufferAliases) -> bool:
    """Whether `first`'s call can move down past the ops `between`."""
    for op in between:
        if isinstance(op, func.CallOp):
            other = launches.get(op)
            if other is None or _conflict(first, other, aliases):
                return False
        elif isinstance(op, CheckOp):
            if any(aliases.may_alias(first.call.operands[i], op.flags) for i in first.kernel.writes):
                return False
        elif not (is_pure_op(op) or isinstance(op, AllocateOp | DeclBufferOp)):
            return False
    return True


def merged_kernel(name: str, first: Launch, second: Launch) -> tuple[func.FuncOp, list[SSAValue]]:
    """The kernel running `first`'s body then `second`'s in one work item, and the host
    values to call it with."""
    operands: list[SSAValue] = list(second.call.operands)
    extra = [v for v in first.call.operands if v not in operands]
    operands += extra
    block = Block(arg_types=[v.type for v in operands])
    for launch in (second, first):
        for param, value in zip(launch.kernel.function.body.block.args, launch.call.operands, strict=True):
            arg = block.args[operands.index(value)]
            arg.name_hint = arg.name_hint or param.name_hint
    body = second.kernel.function.body.clone()
    inner = body.detach_block(0)
    for old, new in zip(inner.args, block.args, strict=False):
        old.replace_all_uses_with(new)
    for op in list(inner.ops):
        op.detach()
        block.add_op(op)
    loop = next(op for op in block.ops if isinstance(op, scf.ParallelOp))
    mapper: dict[SSAValue, SSAValue] = {}
    for param, value in zip(first.kernel.function.body.block.args, first.call.operands, strict=True):
        mapper[param] = block.args[operands.index(value)]
    for op in first.kernel.function.body.block.ops:
        if op is first.kernel.loop or isinstance(op, func.ReturnOp):
            continue
        block.insert_op_before(op.clone(value_mapper=mapper), loop)
    for old, new in zip(first.kernel.loop.body.block.args, loop.body.block.args, strict=True):
        mapper[old] = new
    start = loop.body.block.first_op  # `second`'s body: `first`'s goes before it
    assert start is not None
    for op in first.kernel.loop.body.block.ops:
        if isinstance(op, scf.ReduceOp):
            continue
        loop.body.block.insert_op_before(op.clone(value_mapper=mapper), start)
    function = func.FuncOp(name, FunctionType.from_lists([v.type for v in operands], []), Region(block))
    return function, operands


class MergeSiblingLaunches(RewritePattern):
    """In one host function (a function that calls), merge sibling launches (module
    docstring); kernels no call names any more are erased."""

    def __init__(self) -> None:
        self.kernels: dict[str, Kernel | None] = {}
        """Each called function as a mergeable kernel, or None (another form)."""
        self.made: dict[Hashable, func.FuncOp] = {}
        """The merged kernels, by `kernel_key`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        module = op.parent_op()
        if not isinstance(module, ModuleOp) or not any(isinstance(c, func.CallOp) for c in op.walk()):
            return
        functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        aliases = BufferAliases(op)  # merging moves and replaces calls only: it stays valid
        for block in op.body.blocks:
            launches: dict[Operation, Launch] = {}
            recent: list[Launch] = []
            for call in list(block.ops):
                if not isinstance(call, func.CallOp):
                    continue
                name = call.callee.root_reference.data
                if name not in self.kernels:
                    target = functions.get(name)
                    self.kernels[name] = None if target is None else mergeable_kernel(target)
                kernel = self.kernels[name]
                if kernel is None:
                    recent.clear()  # an unknown call: nothing moves past it
                    continue
                launch = Launch(call, kernel)
                launches[call] = launch
                partner = _partner(launch, recent, launches, aliases)
                if partner is not None:
                    launches.pop(partner.call)
                    launches.pop(call)
                    recent = [r for r in recent if r is not partner]
                    launch = self._merge(op, partner, launch, functions, rewriter)
                    launches[launch.call] = launch
                recent = [*recent[-(WINDOW - 1) :], launch]
        called = {c.callee.root_reference.data for c in module.walk() if isinstance(c, func.CallOp)}
        for name, kernel in list(self.kernels.items()):
            if kernel is not None and name not in called and kernel.function.parent is not None:
                rewriter.erase(kernel.function)
                del self.kernels[name]

    def _merge(
        self,
        host: func.FuncOp,
        first: Launch,
        second: Launch,
        functions: dict[str, func.FuncOp],
        rewriter: PatternRewriter,
    ) -> Launch:
        """Call the kernel running `first`'s and `second`'s bodies in place of both."""
        prefix = host.sym_name.data + "_"
        second_name = second.kernel.function.sym_name.data
        name = f"{second_name}_{first.kernel.function.sym_name.data.removeprefix(prefix)}"
        if len(name) > MAX_NAME:  # merged again and again: a short name (drivers limit them)
            name = f"{prefix}merged_{len(self.made)}"
        function, operands = merged_kernel(name, first, second)
        existing = self.made.get(kernel_key(function))
        if existing is None:
            while name in functions:
                name += "_"
            function.sym_name = StringAttr(name)
            rewriter.insert(function, InsertPoint.before(host))
            functions[name] = self.made[kernel_key(function)] = existing = function
            self.kernels[name] = mergeable_kernel(function)
        call = func.CallOp(existing.sym_name.data, operands, [])
        rewriter.replace(second.call, call)
        rewriter.erase(first.call)
        kernel = self.kernels[existing.sym_name.data]
        assert kernel is not None
        return Launch(call, kernel)


def _partner(
    launch: Launch, recent: Sequence[Launch], launches: dict[Operation, Launch], aliases: BufferAliases
) -> Launch | None:
    """The nearest earlier launch of `recent` that `launch` can merge with, if any."""
    for candidate in reversed(recent):
        if candidate.kernel.grid != launch.kernel.grid:
            continue
        between: list[Operation] = []
        cursor = candidate.call.next_op
        while cursor is not None and cursor is not launch.call:
            between.append(cursor)
            cursor = cursor.next_op
        if cursor is None or not _movable_past(candidate, between, launches, aliases):
            continue
        if _disjoint_stores(candidate, launch, aliases):
            return candidate
    return None


@dataclass(frozen=True)
class MergeSiblingKernelsPass(PhyslayoutPass):
    """Two launches over the same grid, independent or forwarding per work item -> one
    launch (module docstring)."""

    name = "merge-sibling-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_and_report(ctx, op)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        walker = RootedWalker(MergeSiblingLaunches(), apply_recursively=False)
        return walker.rewrite_module(op)
