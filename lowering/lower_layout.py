"""lower-layout: buffer-level IR -> upstream `memref` + `affine` (+ `arith`, `scf`, `vector`).

The output contains no `layout` op or type; `mlir-opt` parses and verifies it (custom and
generic form) and, lowered to LLVM, `mlir-runner` runs it (see `runtime/mlir_runner.py`).

It lowers and nothing else: buffers must already be physical, i.e. have no pending
transform and be accessed at their physical rank; the `physlayout-memref` pipeline
(`lowering/pipelines.py`: apply-layout, flatten-buffers, lower-layout) gets them there.
Graph-level layout rewrites (`layout.transform`/`pad`/`crop` on tensors) are lowered to
upstream `linalg`/`tensor` ops as `lower-layout-rewrites` does.

What it rewrites:

- `!layout.buffer<S x T, ...>` -> `memref<S x T>` everywhere (function signatures, calls,
  block arguments), vector element types kept. Function parameters keep their
  (transformed, unflattened) shape; the flat alias `flatten-buffers` declares in the body
  becomes a view. Separators only shape that view, and every scope (texture scopes
  included) is the default memory space: the CPU target has no image memory.
- `layout.allocate [E] : !layout.ptr<T, scope>` -> `memref.alloc() : memref<E x T>`
  (`memref.alloca` for `scope = "local"`), with a `memref.dealloc` before the end of its
  block when no buffer over it leaves the block. When a buffer of another element type is
  declared over it (`vector<4xf32>` over `f32` storage, or the converse), the storage is
  allocated with the scalar type.
- `layout.data` / `layout.decl_buffer %ptr offset k` -> a view of the storage memref (the
  function argument or the allocation): the storage itself, `memref.collapse_shape`,
  `memref.expand_shape` or `memref.reinterpret_cast` (see `lower_layout_views`). A buffer of
  `vector<N x T>` elements over `T` storage becomes a view of `T` with its innermost extent
  times N, accessed with vector loads and stores.
- A buffer parameter that some call may bind to a buffer declared at an element offset
  (`transforms.buffer_aliases.parameters_at_offsets`, transitively through calls) gets the
  type `memref<S x T, strided<[row-major], offset: ?>>`, and each call passes its view
  through `memref.cast` (a view at a static offset, or of offset 0, casts to it); views
  declared inside such a function are built relative to the parameter's own offset.
- `layout.load` / `layout.store` -> `affine.load` / `affine.store` (`affine.vector_load` /
  `affine.vector_store` for vector values over scalar storage) with a dimension-only affine
  map when every index is a quasi-affine expression of affine loop variables and
  function-level values; otherwise `memref.load` / `memref.store` (`vector.load` /
  `vector.store`) on the `arith` index values. Index math left dead is erased. With
  `affine-loops=true` (the default) `scf.for` / `scf.parallel` loops around accesses are
  first raised to `affine.for` / `affine.parallel` (`lower_layout_loops`).
- `builtin.unrealized_conversion_cast` between a `!layout.buffer` and the memref it lowers
  to (how buffer-level code hands a buffer to memref code, or memref code hands a physical
  memref to a buffer-level kernel) folds away; a cast of a buffer to `memref<*xT>` (to
  call `printMemrefF32`) becomes `memref.cast`.

Refused, with a diagnostic naming the value or op: input that `verify-buffers` rejects
(checked first: the lowered module has no buffers left to verify); a pending transform, or
a buffer accessed before it is at its physical rank (run `physlayout-memref`); `!layout.ptr` values that are not the handle of an allocation or of
a buffer (e.g. a `!layout.ptr` function argument); a declared buffer that does not fit in
its storage; element-type changes other than `vector<N x T>` over `T` storage (upstream
memref has no element-type cast, so e.g. an `f32` view of a `vector<4xf32>` function
argument cannot be expressed); a vector view of scalar storage handed to anything but a
buffer access, and a view at a non-zero offset handed to anything but an access or a
call (their memref types differ from the declared buffer's); a buffer/memref cast whose two sides lower to different memref types; and any
`layout` op (e.g. graph-level rewrites) left over.

Guarantees: the result has no `layout` op or type and computes what the input computes
(tests compare both with the numpy evaluator and with `mlir-runner`); a module without
`layout` ops is left unchanged, so a second run changes nothing. Known limit: a `local`
allocation inside a loop becomes a `memref.alloca` in the loop body, whose stack space LLVM
releases only on return.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import NoReturn

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    MemRefType,
    ModuleOp,
    UnitAttr,
    UnrankedMemRefType,
    UnrealizedConversionCastOp,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue, Use
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator, SymbolTable
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import flattened_type
from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    DataOp,
    DeclBufferOp,
    LoadOp,
    PtrType,
    StoreOp,
    scalar_type,
)
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp
from physlayout.lowering.lower_layout_access import (
    LowerLoadToAffineOrMemRef,
    LowerStoreToAffineOrMemRef,
)
from physlayout.lowering.lower_layout_loops import (
    RaiseScfForToAffineFor,
    RaiseScfParallelToAffineParallel,
)
from physlayout.lowering.lower_layout_rewrites import lower_layout_rewrites
from physlayout.lowering.lower_layout_views import (
    LoweringState,
    TypeOffsetParametersWithDynamicOffsets,
    View,
    build_view,
)
from physlayout.transforms.buffer_aliases import parameters_at_offsets
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.verify_buffers import refuse_invalid_buffers

PREPARE = "physlayout-memref (or apply-layout,flatten-buffers)"
"""What a module needs before `lower-layout` (named in its refusals)."""

BRIDGE = "layout.bridge"
"""Internal marker on a `builtin.unrealized_conversion_cast` between a buffer and a memref."""


def _fail(message: str) -> PassFailedException:
    return PassFailedException(f"lower-layout: {message}")


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a buffer"


# Preparation ------------------------------------------------------------------------------


def _pending_transform(op: Operation) -> SSAValue | None:
    """A result or block argument of `op` whose buffer type still has a pending transform
    (function declarations keep theirs: `apply-layout` leaves them as written)."""
    values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
    for value in values:
        if isinstance(value.type, BufferType) and value.type.get_transforms():
            return value
    return None


def _refuse(op: Operation, module: ModuleOp, message: str) -> NoReturn:
    """Raise `message` as this pass's diagnostic, pointing at `op` in the printed module."""
    diagnostic = Diagnostic()
    diagnostic.add_message(op, message)
    diagnostic.raise_exception(module, _fail(message))


def refuse_unprepared_buffers(module: ModuleOp) -> None:
    """`lower-layout` lowers only: refuse a module with a pending transform, or a buffer
    accessed before it is flat (at its physical rank), naming the value and pointing at the
    op. `physlayout-memref` (apply-layout, flatten-buffers, lower-layout) prepares them."""
    ops = list(module.walk())
    for op in ops:
        pending = _pending_transform(op)
        if pending is None:
            continue
        where = f"@{op.sym_name.data}" if isinstance(op, func.FuncOp) else f"'{op.name}'"
        _refuse(
            op,
            module,
            f"{_name(pending)} of type {pending.type} in {where} has a pending transform; "
            f"run {PREPARE} first",
        )
    for op in ops:
        if not isinstance(op, LoadOp | StoreOp) or not isinstance(op.buffer.type, BufferType):
            continue
        physical = flattened_type(op.buffer.type).get_shape()
        if physical != op.buffer.type.get_shape():
            _refuse(
                op,
                module,
                f"'{op.name}' accesses {_name(op.buffer)} of type {op.buffer.type}, which is "
                f"not flat (physical shape {list(physical)}); run {PREPARE} first "
                "(flatten-buffers flattens function parameters and layout.decl_buffer results)",
            )


def _mark_bridges(module: ModuleOp) -> None:
    for op in module.walk():
        if not isinstance(op, UnrealizedConversionCastOp) or len(op.operands) != 1:
            continue
        types = (op.operands[0].type, *op.result_types)
        if len(types) == 2 and any(isinstance(t, BufferType) for t in types):
            op.attributes[BRIDGE] = UnitAttr()


# Element types ---------------------------------------------------------------------------


def _scalars(element_type: Attribute) -> int:
    if isinstance(element_type, VectorType):
        return prod(element_type.get_shape())
    return 1


def _vector_lanes_over(element_type: Attribute, storage_element: Attribute) -> int | None:
    """N when `element_type` is `vector<N x storage_element>` (a 1-D vector of the scalar
    storage type), else None."""
    if (
        isinstance(element_type, VectorType)
        and not isinstance(storage_element, VectorType)
        and element_type.get_num_dims() == 1
        and element_type.get_element_type() == storage_element
    ):
        return element_type.get_shape()[0]
    return None


# Types ------------------------------------------------------------------------------------


class BufferTypeToMemRef(TypeConversionPattern):
    """`!layout.buffer<S x T, ...>` -> `memref<S x T>` in every type."""

    def __init__(self) -> None:
        self.recursive = True

    @attr_type_rewrite_pattern
    def convert_type(self, typ: BufferType) -> MemRefType:
        return MemRefType(typ.element_type, typ.get_shape())


# Storage ----------------------------------------------------------------------------------


_ALIAS_USERS = (DeclBufferOp, DataOp, UnrealizedConversionCastOp, memref.CastOp)


def _escapes(ptr: SSAValue) -> bool:
    """True when a buffer over `ptr` may outlive the block of its allocation (it reaches a
    terminator, or an op other than accesses, aliases and calls without results)."""
    work = [ptr]
    seen: set[SSAValue] = set()
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            user = use.operation
            if isinstance(user, func.CallOp) and not user.results:
                continue
            if isinstance(user, StoreOp) and use.index == 0:
                return True
            if isinstance(user, LoadOp | StoreOp):
                continue
            if not isinstance(user, _ALIAS_USERS):
                return True
            work.extend(user.results)
    return False


def _declarations_over(ptr: SSAValue) -> list[DeclBufferOp]:
    """Every `layout.decl_buffer` over `ptr`, directly or through the `layout.data` of a
    buffer declared over it."""
    found: list[DeclBufferOp] = []
    work = [ptr]
    while work:
        handle = work.pop()
        for use in handle.uses:
            decl = use.operation
            if not isinstance(decl, DeclBufferOp) or decl in found:
                continue
            found.append(decl)
            work.extend(u.operation.ptr for u in decl.buffer.uses if isinstance(u.operation, DataOp))
    return found


def _insert_dealloc(allocation: AllocateOp, storage: SSAValue, rewriter: PatternRewriter) -> None:
    block = allocation.parent_block()
    if block is None or block.parent is None or len(block.parent.blocks) != 1:
        return
    terminator = block.last_op
    if terminator is None or not terminator.has_trait(IsTerminator) or terminator.successors:
        return
    if _escapes(allocation.ptr):
        return
    rewriter.insert(memref.DeallocOp.get(storage), InsertPoint.before(terminator))


@dataclass
class LowerAllocateToAlloc(RewritePattern):
    """`layout.allocate` -> `memref.alloc` (`memref.alloca` for local scope) of its extents;
    the storage is scalar when buffers of another element type are declared over it."""

    state: LoweringState

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AllocateOp, rewriter: PatternRewriter) -> None:
        if op.ptr in self.state.storage:
            return
        ptr_type = op.ptr.type
        assert isinstance(ptr_type, PtrType)
        element = ptr_type.element_type
        extents = list(op.get_extents())
        declared = [decl.buffer.type for decl in _declarations_over(op.ptr)]
        if any(isinstance(t, MemRefType) and t.get_element_type() != element for t in declared):
            scalar = scalar_type(element)
            if isinstance(element, VectorType) and _vector_lanes_over(element, scalar) is None:
                raise _fail(
                    f"cannot allocate {ptr_type} storage viewed with other element types: "
                    "only 1-D vector elements can share scalar storage"
                )
            extents[-1] *= _scalars(element)
            element = scalar
        if ptr_type.get_scope() == "local":
            alloc: Operation = memref.AllocaOp.get(element, shape=extents)
        else:
            alloc = memref.AllocOp.get(element, shape=extents)
        rewriter.insert(alloc, InsertPoint.before(op))
        storage = alloc.results[0]
        self.state.storage[op.ptr] = storage
        if ptr_type.get_scope() != "local":
            _insert_dealloc(op, storage, rewriter)


@dataclass
class RecordDataHandleStorage(RewritePattern):
    """`layout.data %buf`: its handle is the storage memref under `%buf` (the argument or
    allocation `%buf` views)."""

    state: LoweringState

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DataOp, rewriter: PatternRewriter) -> None:
        if op.ptr in self.state.storage:
            return
        self.state.storage[op.ptr] = self.state.root_of(op.buffer)


@dataclass
class LowerDeclBufferToView(RewritePattern):
    """`layout.decl_buffer %ptr offset k` -> a memref view of the handle's storage."""

    state: LoweringState

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DeclBufferOp, rewriter: PatternRewriter) -> None:
        if op.buffer in self.state.views:
            return
        storage = self.state.storage.get(op.ptr)
        ptr_type = op.ptr.type
        buffer_type = op.buffer.type
        if storage is None:
            raise _fail(
                f"the data handle of {_name(op.buffer)} has no storage: declare buffers over "
                "a layout.allocate or the layout.data of a buffer, not over a !layout.ptr "
                "argument"
            )
        storage_type = storage.type
        assert isinstance(ptr_type, PtrType) and isinstance(buffer_type, MemRefType)
        assert isinstance(storage_type, MemRefType)
        view = self._view(op, storage, storage_type, ptr_type, buffer_type, rewriter)
        self._forward_other_uses(op, view, buffer_type)
        self.state.views[op.buffer] = view
        self.state.roots[view.memref] = storage

    def _view(
        self,
        op: DeclBufferOp,
        storage: SSAValue,
        storage_type: MemRefType,
        ptr_type: PtrType,
        buffer_type: MemRefType,
        rewriter: PatternRewriter,
    ) -> View:
        element = buffer_type.get_element_type()
        storage_element = storage_type.get_element_type()
        shape = list(buffer_type.get_shape())
        lanes = 1
        if element != storage_element:
            vector_lanes = _vector_lanes_over(element, storage_element)
            if vector_lanes is None:
                raise _fail(
                    f"cannot view storage of {storage_element} as {_name(op.buffer)} of "
                    f"{element}: upstream memref has no element-type cast (declare the "
                    f"storage with the scalar type)"
                )
            lanes = vector_lanes
            shape[-1] *= lanes
        # The storage is the handle's element type or its scalar type (see
        # LowerAllocateToAlloc), so the offset is a whole number of storage elements.
        offset_scalars = op.elem_offset.data * _scalars(ptr_type.element_type)
        offset = offset_scalars // _scalars(storage_element)
        available = prod(storage_type.get_shape())
        if offset + prod(shape) > available:
            raise _fail(
                f"{_name(op.buffer)} ({prod(shape)} elements of {storage_element} at offset "
                f"{offset}) does not fit in its storage {storage_type}"
            )
        ops, value = build_view(storage, shape, offset)
        rewriter.insert(ops, InsertPoint.before(op))
        return View(value, lanes)

    def _forward_other_uses(self, op: DeclBufferOp, view: View, buffer_type: MemRefType) -> None:
        """Hand the view to users other than accesses and handles (calls, casts, ...): they
        need the buffer's own memref type, except casts to an unranked memref (any view
        with the buffer's element type casts to one) and calls (a view at an offset is cast
        to the callee's parameter of dynamic offset: `CastCallArgumentsToParameterTypes`)."""

        def other(use: Use) -> bool:
            return not isinstance(use.operation, LoadOp | StoreOp | DataOp)

        def needs_own_type(user: Operation) -> bool:
            if view.lanes != 1:
                return True
            if isinstance(user, func.CallOp):
                return not _same_data(view.memref.type, buffer_type)
            return not _is_unranked_bridge(user)

        strict = [use.operation for use in op.buffer.uses if other(use)]
        strict = [user for user in strict if needs_own_type(user)]
        if strict and (view.lanes != 1 or view.memref.type != buffer_type):
            allowed = (
                "layout.load/layout.store may use a buffer declared with another element "
                "type than its storage"
                if view.lanes != 1
                else "layout.load/layout.store and calls may use a buffer declared at an "
                "offset"
            )
            raise _fail(
                f"{_name(op.buffer)} lowers to a view of type {view.memref.type}, not "
                f"{buffer_type}, so it cannot be passed to '{strict[0].name}'; only {allowed}"
            )
        op.buffer.replace_uses_with_if(view.memref, other)


def _same_data(view_type: Attribute, buffer_type: MemRefType) -> bool:
    """Whether a view differs from the buffer's memref type only in its layout offset (it
    casts to a parameter of dynamic offset: see `CastCallArgumentsToParameterTypes`)."""
    return (
        isinstance(view_type, MemRefType)
        and view_type.get_shape() == buffer_type.get_shape()
        and view_type.get_element_type() == buffer_type.get_element_type()
    )


def _is_unranked_bridge(op: Operation) -> bool:
    return (
        isinstance(op, UnrealizedConversionCastOp)
        and BRIDGE in op.attributes
        and isinstance(op.results[0].type, UnrankedMemRefType)
    )


# Parameters at an offset --------------------------------------------------------------------


@dataclass
class CastCallArgumentsToParameterTypes(RewritePattern):
    """A call argument that is a view at an offset (or of static offset 0) passed to a
    parameter of dynamic offset is `memref.cast` to the parameter's type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if not isinstance(callee, func.FuncOp):
            return
        arguments = list(op.arguments)
        changed = False
        for index, param_type in enumerate(callee.function_type.inputs.data):
            argument = arguments[index]
            if argument.type == param_type:
                continue
            if not isinstance(param_type, MemRefType) or not _same_data(argument.type, param_type):
                raise _fail(
                    f"cannot pass {_name(argument)} of type {argument.type} to parameter "
                    f"#{index} of @{callee.sym_name.data} of type {param_type}"
                )
            cast = memref.CastOp.get(argument, param_type)
            rewriter.insert(cast, InsertPoint.before(op))
            arguments[index] = cast.dest
            changed = True
        if changed:
            op.operands = [*arguments, *op.operands[len(arguments) :]]
            rewriter.notify_op_modified(op)


# Bridges ----------------------------------------------------------------------------------


@dataclass
class FoldBufferMemRefCast(RewritePattern):
    """A cast between a buffer and a memref of the buffer's lowered type folds away; a cast
    of a buffer to an unranked memref of its element type becomes `memref.cast`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter):
        if BRIDGE not in op.attributes:
            return
        source, result = op.operands[0], op.results[0]
        if source.type == result.type:
            rewriter.replace(op, [], [source])
            return
        source_type, result_type = source.type, result.type
        if (
            isinstance(source_type, MemRefType)
            and isinstance(result_type, UnrankedMemRefType)
            and source_type.get_element_type() == result_type.element_type
        ):
            rewriter.replace(op, memref.CastOp.get(source, result_type))
            return
        raise _fail(
            f"cannot cast {_name(source)} to {result.type}: the buffer lowers to {source.type}"
        )


# Clean-up and checks ----------------------------------------------------------------------


class EraseDeadHandles(RewritePattern):
    """Erase a (now unused) data handle or declaration: `layout.allocate`, `layout.data`,
    `layout.decl_buffer`. Run in a reverse walk, so that the handles using one are erased
    before it; any other use left is refused (that op could not be lowered)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: DeclBufferOp | DataOp | AllocateOp, rewriter: PatternRewriter
    ) -> None:
        for result in op.results:
            for use in result.uses:
                if isinstance(use.operation, DeclBufferOp | DataOp | AllocateOp):
                    continue
                raise _fail(
                    f"cannot lower '{use.operation.name}': it uses {_name(result)} of type "
                    f"{result.type}"
                )
        rewriter.erase(op, safe_erase=False)


def check_no_layout_left(module: ModuleOp) -> None:
    """Raise a diagnostic naming the first `layout` op or type left in `module`."""
    for op in module.walk():
        if op.dialect_name() == "layout":
            raise _fail(f"cannot lower '{op.name}' (only buffer-level ops are lowered)")
        types = [*op.result_types, *op.operand_types]
        for region in op.regions:
            for block in region.blocks:
                types.extend(block.arg_types)
        for value_type in types:
            if isinstance(value_type, BufferType | PtrType):
                raise _fail(f"cannot lower '{op.name}': it still uses {value_type}")


# The pass ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LowerLayoutPass(PhyslayoutPass):
    """Lower buffer-level IR to upstream memref/affine IR.

    Options:
        affine-loops (bool, true): raise `scf.for`/`scf.parallel` around buffer accesses to
            `affine` loops first (false keeps them, accesses become `memref.load`/`store`).
    """

    name = "lower-layout"

    affine_loops: bool = True
    """Raise `scf.for`/`scf.parallel` around buffer accesses to `affine` loops first."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        refuse_invalid_buffers(self.name, op)
        if any(isinstance(o, TransformOp | PadOp | CropOp) for o in op.walk()):
            lower_layout_rewrites(op)
        refuse_unprepared_buffers(op)
        offsets = parameters_at_offsets(op)
        if self.affine_loops:
            RootedWalker(
                GreedyRewritePatternApplier(
                    [RaiseScfForToAffineFor(), RaiseScfParallelToAffineParallel()]
                )
            ).rewrite_module(op)
        _mark_bridges(op)
        RootedWalker(BufferTypeToMemRef()).rewrite_module(op)
        if offsets:
            RootedWalker(
                TypeOffsetParametersWithDynamicOffsets(offsets), apply_recursively=False
            ).rewrite_module(op)
        state = LoweringState()
        RootedWalker(
            GreedyRewritePatternApplier(
                [
                    LowerAllocateToAlloc(state),
                    RecordDataHandleStorage(state),
                    LowerDeclBufferToView(state),
                    LowerLoadToAffineOrMemRef(state),
                    LowerStoreToAffineOrMemRef(state),
                    FoldBufferMemRefCast(),
                ]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        RootedWalker(
            CastCallArgumentsToParameterTypes(), apply_recursively=False
        ).rewrite_module(op)
        RootedWalker(
            EraseDeadHandles(), apply_recursively=False, walk_reverse=True
        ).rewrite_module(op)
        check_no_layout_left(op)
