"""flatten-buffers: flatten buffers to their physical rank (RFC 0039 FlattenBuffer, with the
DeclBuffer flow of RFC DeclBuffer).

Every buffer that is loaded from or stored to and is not yet flat becomes rank
`len(axis_separators) + 1`: the axes of each separator group are merged row-major, the
group's extent is the product of its extents. Texture-scope buffers without separators
use their scope's default (`global.texture`: before the last two axes, `-nhwc`: 2,
`-weight`: 1), so they become 2-D images; other buffers without separators become 1-D.

How: next to each such buffer the pass declares a flattened alias over the same data handle
(`FlattenParameterThroughAlias`: a `layout.data` of a function parameter at entry;
`FlattenDeclaredBufferThroughAlias`: the declaration's own handle and offset, right after
it), and `MoveAccessToFlatAlias` moves every `layout.load`/`layout.store` of the buffer to
that alias (found in the IR next to the buffer's data or declaration, never one of the
input's own aliases) with flattened, simplified indices. One walk in order does it all (a
buffer is defined before its accesses are visited); a second walk erases the declarations
left dead. Function parameters therefore keep their logical type (callers are unchanged);
an allocation whose extents were the buffer's shape gets the flattened extents (it is the
physical allocation). A flattened buffer carries the separators `[1, .., k]`, and a buffer
without accesses is left alone, so a second run changes nothing.

Refused with a diagnostic: input that `verify-buffers` rejects (checked first: the greedy
rewrite erases dead declarations, which would hide an invalid alias), buffers that still
have a pending transform (run `apply-layout` first) and invalid separators.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import flattened_type, flattening_separators, is_flat
from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    DataOp,
    DeclBufferOp,
    LoadOp,
    StoreOp,
    check_axis_separators,
)
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.quasi_affine import Dim
from physlayout.indexing.shapes import flatten_exprs
from physlayout.transforms.dead_code import GreedyApplierWithMemoizedDce
from physlayout.transforms.loop_nests import RewritingEmitter, rebuild_access
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.verify_buffers import refuse_invalid_buffers


def _accesses(buffer: SSAValue) -> list[LoadOp | StoreOp]:
    return [
        use.operation
        for use in buffer.uses
        if isinstance(use.operation, LoadOp | StoreOp) and use.operation.buffer is buffer
    ]


def _needs_flattening(buffer: SSAValue) -> BufferType | None:
    """The buffer's type when it must be flattened (it is accessed and not flat)."""
    buffer_type = buffer.type
    if not isinstance(buffer_type, BufferType) or is_flat(buffer_type):
        return None
    if not _accesses(buffer):
        return None
    if buffer_type.get_transforms():
        raise PassFailedException(
            f"flatten-buffers: {buffer_type} still has a pending transform; run apply-layout first"
        )
    error = check_axis_separators(flattening_separators(buffer_type), buffer_type.rank)
    if error is not None:
        raise PassFailedException(f"flatten-buffers: {buffer_type}: {error}")
    return buffer_type


def _flat_alias_of_parameter(
    parameter: SSAValue, flat_type: BufferType, written: frozenset[Operation]
) -> SSAValue | None:
    """The flat alias `FlattenParameterThroughAlias` declared for `parameter`: a
    `layout.decl_buffer` of `flat_type` right after a `layout.data` of the parameter, not
    in the input (`written`)."""
    for use in parameter.uses:
        data = use.operation
        if not isinstance(data, DataOp) or data in written:
            continue
        alias = data.next_op
        if (
            isinstance(alias, DeclBufferOp)
            and alias.ptr is data.ptr
            and alias.buffer.type == flat_type
        ):
            return alias.buffer
    return None


def _flat_alias_of_declaration(
    decl: DeclBufferOp, flat_type: BufferType, written: frozenset[Operation]
) -> SSAValue | None:
    """The flat alias `FlattenDeclaredBufferThroughAlias` declared for `decl`: the
    `layout.decl_buffer` of `flat_type` right after it, over the same handle and offset,
    not in the input (`written`)."""
    alias = decl.next_op
    if (
        isinstance(alias, DeclBufferOp)
        and alias not in written
        and alias.ptr is decl.ptr
        and alias.elem_offset == decl.elem_offset
        and alias.buffer.type == flat_type
    ):
        return alias.buffer
    return None


def _flat_alias(
    buffer: SSAValue,
    buffer_type: BufferType,
    written: frozenset[Operation],
    flat_type: BufferType | None = None,
) -> SSAValue | None:
    flat_type = flattened_type(buffer_type) if flat_type is None else flat_type
    owner = buffer.owner
    if isinstance(owner, DeclBufferOp):
        return _flat_alias_of_declaration(owner, flat_type, written)
    return _flat_alias_of_parameter(buffer, flat_type, written)


def declarations_written(module: Operation) -> frozenset[Operation]:
    """The `layout.data` and `layout.decl_buffer` ops of the input: aliases the user wrote,
    which the pass never takes for the flat aliases it declares."""
    return frozenset(op for op in module.walk() if isinstance(op, DataOp | DeclBufferOp))


@dataclass
class FlattenParameterThroughAlias(RewritePattern):
    """Each accessed, non-flat buffer parameter of a `func.func` gets a flat alias declared
    over its handle at function entry (`MoveAccessToFlatAlias` then moves its accesses)."""

    written: frozenset[Operation]
    """The aliases of the input (`declarations_written`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not op.body.blocks:
            return
        entry: Block = op.body.blocks[0]
        for arg in entry.args:
            buffer_type = _needs_flattening(arg)
            if buffer_type is None or _flat_alias(arg, buffer_type, self.written) is not None:
                continue
            data = DataOp(arg)
            alias = DeclBufferOp(data.ptr, flattened_type(buffer_type))
            first = entry.first_op
            point = InsertPoint.before(first) if first else InsertPoint.at_end(entry)
            rewriter.insert([data, alias], point)


@dataclass
class FlattenDeclaredBufferThroughAlias(RewritePattern):
    """An accessed, non-flat `layout.decl_buffer` gets a flat alias over the same handle and
    offset (`MoveAccessToFlatAlias` then moves its accesses); an allocation whose extents
    were the buffer's shape gets the flat extents (it is the physical allocation)."""

    written: frozenset[Operation]
    """The aliases of the input (`declarations_written`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DeclBufferOp, rewriter: PatternRewriter) -> None:
        buffer_type = _needs_flattening(op.buffer)
        if buffer_type is None or _flat_alias(op.buffer, buffer_type, self.written) is not None:
            return
        flat_type = flattened_type(buffer_type)
        rewriter.insert(DeclBufferOp(op.ptr, flat_type, op.elem_offset.data), InsertPoint.after(op))
        allocation = op.ptr.owner
        if isinstance(allocation, AllocateOp) and allocation.get_extents() == (
            buffer_type.get_shape()
        ):
            rewriter.replace(
                allocation,
                AllocateOp(flat_type.get_shape(), allocation.ptr.type),  # type: ignore[arg-type]
            )


@dataclass
class MoveAccessToFlatAlias(RewritePattern):
    """`layout.load`/`layout.store` on a non-flat buffer that has a flat alias ->
    the same access on the alias, at the flattened, simplified indices."""

    written: frozenset[Operation]
    """The aliases of the input (`declarations_written`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LoadOp | StoreOp, rewriter: PatternRewriter) -> None:
        buffer_type = op.buffer.type
        if not isinstance(buffer_type, BufferType) or is_flat(buffer_type):
            return
        flat_type = flattened_type(buffer_type)
        alias = _flat_alias(op.buffer, buffer_type, self.written, flat_type)
        if alias is None:
            return
        shape = buffer_type.get_shape()
        analysis = IndexAnalysis()
        exprs = [analysis.expr_of(index) for index in op.indices]
        bounds = dict(analysis.bounds)
        for expr, extent in zip(exprs, shape, strict=True):
            if isinstance(expr, Dim):
                low, high = bounds.get(expr.name, (0, extent - 1))
                bounds[expr.name] = (max(low, 0), min(high, extent - 1))
        flat = flatten_exprs(exprs, shape, flattening_separators(buffer_type), bounds)
        emitter = RewritingEmitter(
            InsertPoint.before(op), analysis.leaves, bounds, rewriter=rewriter
        )
        indices = [emitter.emit(e) for e in flat]
        rewriter.replace(op, rebuild_access(op, alias, indices))


@dataclass(frozen=True)
class FlattenBuffersPass(PhyslayoutPass):
    """Flatten every accessed buffer to `len(axis_separators) + 1` physical axes."""

    name = "flatten-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        refuse_invalid_buffers(self.name, op)
        written = declarations_written(op)
        RootedWalker(
            GreedyRewritePatternApplier(
                [
                    FlattenParameterThroughAlias(written),
                    FlattenDeclaredBufferThroughAlias(written),
                    MoveAccessToFlatAlias(written),
                ],
                dce_enabled=False,
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        RootedWalker(GreedyApplierWithMemoizedDce([])).rewrite_module(op)
