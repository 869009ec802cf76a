"""flatten-buffers: flatten buffers to their physical rank (RFC 0039 FlattenBuffer, with the
DeclBuffer flow of RFC DeclBuffer).

Every buffer that is loaded from or stored to and is not yet flat becomes rank
`len(axis_separators) + 1`: the axes of each separator group are merged row-major, the
group's extent is the product of its extents. Texture-scope buffers without separators
use their scope's default (`global.texture`: before the last two axes, `-nhwc`: 2,
`-weight`: 1), so they become 2-D images; other buffers without separators become 1-D.

How: next to each such buffer (a function parameter or a `layout.decl_buffer` result) the
pass declares a flattened alias over the same data handle (`layout.data` of a parameter,
or the declaration's own handle and offset) and moves every `layout.load`/`layout.store` to
the alias with flattened, simplified indices. Function parameters therefore keep their
logical type (callers are unchanged); an allocation whose extents were the buffer's shape
gets the flattened extents (it is the physical allocation). A flattened buffer carries the
separators `[1, .., k]`, and a buffer without accesses is left alone, so a second run
changes nothing.

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
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
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
from physlayout.indexing.bridges.arith import ExprEmitter, IndexAnalysis
from physlayout.indexing.quasi_affine import Dim
from physlayout.indexing.shapes import flatten_exprs
from physlayout.transforms.dead_code import GreedyApplierWithMemoizedDce
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
            f"flatten-buffers: {buffer_type} still has a pending transform; run "
            "apply-layout first"
        )
    error = check_axis_separators(flattening_separators(buffer_type), buffer_type.rank)
    if error is not None:
        raise PassFailedException(f"flatten-buffers: {buffer_type}: {error}")
    return buffer_type


def _move_accesses_to_alias(
    buffer: SSAValue, buffer_type: BufferType, alias: SSAValue, rewriter: PatternRewriter
) -> None:
    """Re-point every access of `buffer` to the flat `alias`, flattening its indices."""
    shape = buffer_type.get_shape()
    separators = flattening_separators(buffer_type)
    for access in _accesses(buffer):
        analysis = IndexAnalysis()
        exprs = [analysis.expr_of(index) for index in access.indices]
        bounds = dict(analysis.bounds)
        for expr, extent in zip(exprs, shape, strict=True):
            if isinstance(expr, Dim):
                low, high = bounds.get(expr.name, (0, extent - 1))
                bounds[expr.name] = (max(low, 0), min(high, extent - 1))
        flat = flatten_exprs(exprs, shape, separators, bounds)
        emitter = ExprEmitter(InsertPoint.before(access), analysis.leaves, bounds)
        indices = [emitter.emit(e) for e in flat]
        if isinstance(access, LoadOp):
            new: Operation = LoadOp(alias, indices, access.result.type)
        else:
            new = StoreOp(access.value, alias, indices)
        new.attributes.update(access.attributes)
        rewriter.replace(access, new)


@dataclass
class FlattenParameterThroughAlias(RewritePattern):
    """An accessed, non-flat buffer parameter gets a flat alias declared over its handle at
    function entry; its accesses move to the alias."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not op.body.blocks:
            return
        entry: Block = op.body.blocks[0]
        for arg in entry.args:
            buffer_type = _needs_flattening(arg)
            if buffer_type is None:
                continue
            data = DataOp(arg)
            alias = DeclBufferOp(data.ptr, flattened_type(buffer_type))
            first = entry.first_op
            point = InsertPoint.before(first) if first else InsertPoint.at_end(entry)
            rewriter.insert([data, alias], point)
            _move_accesses_to_alias(arg, buffer_type, alias.buffer, rewriter)


@dataclass
class FlattenDeclaredBufferThroughAlias(RewritePattern):
    """An accessed, non-flat `layout.decl_buffer` gets a flat alias over the same handle and
    offset; its accesses move to the alias and its allocation becomes physical."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DeclBufferOp, rewriter: PatternRewriter) -> None:
        buffer_type = _needs_flattening(op.buffer)
        if buffer_type is None:
            return
        flat_type = flattened_type(buffer_type)
        alias = DeclBufferOp(op.ptr, flat_type, op.elem_offset.data)
        rewriter.insert(alias, InsertPoint.after(op))
        _move_accesses_to_alias(op.buffer, buffer_type, alias.buffer, rewriter)
        allocation = op.ptr.owner
        if isinstance(allocation, AllocateOp) and allocation.get_extents() == (
            buffer_type.get_shape()
        ):
            rewriter.replace(
                allocation, AllocateOp(flat_type.get_shape(), allocation.ptr.type)  # type: ignore[arg-type]
            )


@dataclass(frozen=True)
class FlattenBuffersPass(ModulePass):
    """Flatten every accessed buffer to `len(axis_separators) + 1` physical axes."""

    name = "flatten-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        refuse_invalid_buffers(self.name, op)
        PatternRewriteWalker(
            GreedyApplierWithMemoizedDce(
                [FlattenParameterThroughAlias(), FlattenDeclaredBufferThroughAlias()]
            )
        ).rewrite_module(op)
