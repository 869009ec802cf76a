"""legalize-layout: graph-level functions -> buffer-level kernels and a host function (the
Adreno RFC's legalization; Relax's LegalizeOps + `call_tir`).

What it rewrites: every `func.func` whose signature or body holds tensors. Named linalg ops
are first generalized to `linalg.generic` (their indexing maps, iterator types and body,
keeping their attributes; so `linalg.conv_2d_nchw_fchw` and `linalg.fill` take the generic
path). Then each op of the
body becomes a kernel `func.func` (see `legalize_kernels` for their loop nests) and a
`func.call` to it in the *host function*, which replaces the graph function (kernels equal
up to their names, `equal_kernels.kernel_key`, are one kernel called several times: a model
repeats its blocks):

- ``linalg.generic`` (any quasi-affine indexing maps, parallel and reduction loops, any
  body): a parallel nest over its parallel loops, reductions as inner `scf.for`s;
- ``layout.transform``: a copy over the source box into a destination parameter whose type
  carries the transform as a PENDING layout (``!layout.buffer<SRC x T, transform = M,
  pad_value = V, scope = S>``): `apply-layout` rewrites the stores and fills the padding;
  none when the producer of its source stores through that pending layout itself
  (`relayout_stores.direct_relayouts`: a bijection read alone, e.g. the NCHW result of a
  model's last convolution; also into the window of a crop alone reading it, guarded);
- ``tensor.insert_slice`` (static offsets, sizes and strides): the source copied into its
  window of the destination's storage (element ``i`` to ``offset + i * stride``: the strided
  insert of a transposed convolution spreads its input into zeros), updated in place when
  nothing else reads the destination;
- ``layout.check``: the same check on the buffer holding its flags, in the host function;
- ``layout.pad``, ``layout.crop``, ``layout.copy``: copies with offsets (a pad first fills
  the destination with its pad value);
- ``arith.constant`` of a dense tensor: a kernel that stores the constant (a fill loop for a
  splat, else one store per element or per texel);
- ``tensor.empty``: storage only (its contents are undefined);
- a generic, group or layout rewrite whose results nothing reads: no kernel (these ops
  only compute their tensors);
- scalar ops outside bodies are cloned into the host; a body's uses of outer values become
  kernel constants (for `arith.constant`) or scalar kernel parameters.

The host function (same name) follows the calling convention of `physlayout run`: its
parameters are the graph function's parameters, each tensor as a `!layout.buffer` of the
same shape and element type in `global` scope (a rank-0 tensor is a buffer of shape [1]),
followed by one OUT-parameter per tensor result, named ``result0``, ``result1``, ...; it
returns nothing. The value a result names is written straight into its out-parameter when
its producer writes global memory, else copied there at the end. Every other tensor gets
`layout.allocate` + `layout.decl_buffer` in the memory scope of its producer's
`layout.scope` attribute (a `layout.copy`'s `scope`; default `global`). The storage of a
transform's result is allocated in its transformed shape and declared twice: plainly (for
its readers) and with the pending layout over the source shape (for the copy kernel): the
two declarations are RFC DeclBuffer aliases that agree once `apply-layout` has applied the
pending layout, so evaluate the legalized module after `apply-layout`.

Outputs of a generic: the kernel loads an output's initial value only when the body reads it;
an init that is `tensor.empty` is never copied. Parallel points write distinct elements
(the output maps are proven injective on the parallel loops, isl); when they do not cover
the whole output, the init is first copied into the result, which is then updated in place.

Refused, with a diagnostic naming the op: dynamic or zero-sized tensors, ops other than the
above (e.g. calls), loops no operand dimension gives an extent to or that operands disagree
on, an access that may fall outside its operand (proven in bounds with isl), an output map
that uses a reduction loop or is not injective on the parallel loops, transforms of rank-0
tensors, non-tensor results. Guarantees: a second run changes nothing (the host and kernels
hold no tensors).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    DataOp,
    DeclBufferOp,
    IndexMapAttr,
    PtrType,
    is_texture_scope,
)
from physlayout.dialects.layout_check import CheckOp
from physlayout.dialects.layout_fused import FusedOp
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp, static_shape
from physlayout.dialects.layout_scopes import GLOBAL, CopyOp, producer_scope, scope_problem
from physlayout.dialects.linalg_generic import generalized
from physlayout.indexing import proofs
from physlayout.indexing.bridges import isl as bridge
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.naming import FreshNames
from physlayout.transforms import fusion_plan, relayout_stores
from physlayout.transforms.equal_kernels import kernel_key
from physlayout.transforms.flow_layout_rewrites import loop_extents, loop_names
from physlayout.transforms.fusion_plan import generic_maps, plan_group, splat_scalar, stage_loops
from physlayout.transforms.legalize_kernels import (
    Epilogue,
    FusedStage,
    GenericLoops,
    GenericOutput,
    GenericRequest,
    HostNumbers,
    Kernel,
    PaddedRead,
    StageInput,
    constant_kernel,
    copy_kernel,
    generic_kernel,
    generic_key,
    insert_kernel,
    pad_kernel,
    texel_lane_loop,
)
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.relayout_stores import direct_relayouts, preserves_row_major_order
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.value_bounds import ValueBounds


def fail(op: Operation, message: str) -> PassFailedException:
    """The diagnostic for an op this pass refuses: `legalize-layout: 'OP' MESSAGE`. Returned, not
    raised: `raise fail(op, ...)`."""
    return PassFailedException(f"legalize-layout: '{op.name}' {message}")


def is_graph_function(function: func.FuncOp) -> bool:
    """Whether `function` holds tensors (in its signature or its body)."""
    if not function.body.blocks:
        return False
    types = [*function.function_type.inputs.data, *function.function_type.outputs.data]
    if any(isinstance(t, TensorType) for t in types):
        return True
    return any(
        isinstance(v.type, TensorType)
        for op in function.walk()
        for v in (*op.results, *op.operands)
    )


def buffer_type(tensor_type: Attribute, scope: str, where: Operation) -> BufferType:
    """The plain buffer of a static tensor type (rank 0: shape [1])."""
    assert isinstance(tensor_type, TensorType)
    shape = tuple(tensor_type.get_shape())
    if any(e < 0 for e in shape):
        raise fail(where, f"has a dynamic tensor {tensor_type}; only static tensors legalize")
    if any(e == 0 for e in shape):
        raise fail(where, f"has an empty tensor {tensor_type}; buffers have positive extents")
    return _plain_buffer_type(shape or (1,), tensor_type.get_element_type(), scope)


@lru_cache(maxsize=4096)
def _plain_buffer_type(shape: tuple[int, ...], element: Attribute, scope: str) -> BufferType:
    """`BufferType(shape, element, scope=scope)`, built once per distinct (immutable)
    arguments: a model asks for the same few types thousands of times, and an attribute
    is a value (an equal one may be shared)."""
    return BufferType(shape, element, scope=scope)


@dataclass
class Storage:
    """Where a tensor lives in the host function."""

    buffer: SSAValue
    """Its plain buffer."""
    ptr: SSAValue | None
    """Its allocation (None for a parameter: use `layout.data`)."""
    scope: str


@dataclass
class HostBuilder:
    """Builds the kernels and the host function of one graph function."""

    graph: func.FuncOp
    names: FreshNames
    """The module's symbols and the kernels' names given so far."""
    block: Block = field(default_factory=Block)
    kernels: list[func.FuncOp] = field(default_factory=list[func.FuncOp])
    """The kernels the host calls, one per distinct `kernel_key` (equal kernels are one)."""
    by_key: dict[Hashable, func.FuncOp] = field(default_factory=dict[Hashable, func.FuncOp])
    copies: dict[Hashable, func.FuncOp] = field(default_factory=dict[Hashable, func.FuncOp])
    """The kernel called for each `copy_key` already met (a copy kernel is not built again)."""
    generics: dict[Hashable, tuple[func.FuncOp, list[int]]] = field(
        default_factory=dict[Hashable, tuple[func.FuncOp, list[int]]]
    )
    """The kernel called for each `generic_key` already met, and the host numbers of its
    parameters in order (a generic or fused kernel is not built again)."""
    storage: dict[SSAValue, Storage] = field(default_factory=dict[SSAValue, Storage])
    scalars: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    returned: list[SSAValue] = field(default_factory=list[SSAValue])
    outputs: list[BlockArgument] = field(default_factory=list[BlockArgument])
    claimed: set[int] = field(default_factory=set[int])
    cloned: list[Operation] = field(default_factory=list[Operation])
    """Scalar ops cloned into the host (the unused ones are dropped at the end)."""
    direct: dict[SSAValue, tensor.InsertSliceOp] = field(
        default_factory=dict[SSAValue, tensor.InsertSliceOp]
    )
    """Group results stored straight into the window of the insert that reads them
    (`direct_inserts`)."""
    relayouts: dict[SSAValue, TransformOp] = field(default_factory=dict[SSAValue, TransformOp])
    """Values stored straight through the layout of the transform reading them
    (`relayout_stores.direct_relayouts`): that transform launches nothing."""
    cropped: dict[SSAValue, CropOp] = field(default_factory=dict[SSAValue, CropOp])
    stored_through: set[Operation | Block] = field(default_factory=set[Operation | Block])
    """Crops alone reading such transforms; transforms and crops their producers stored."""
    views: set[SSAValue] = field(default_factory=set[SSAValue])
    """Values whose storage another value also declares (`_reshape_view`)."""
    bounds: ValueBounds = field(default_factory=ValueBounds)
    """What is proven of the values the graph computes (the clamps of gathers)."""

    # Entry --------------------------------------------------------------------------------

    def build(self) -> func.FuncOp:
        """The host function replacing `graph` (module docstring: calling convention, storage): its
        parameters, one kernel call per op of the body (kernels collected in `kernels`), the copies
        of results not written in place, and `func.return`. Host clones of scalar ops nobody uses
        are dropped. Raises `PassFailedException` for a graph of several blocks, non-tensor
        results, or any op `legalize` refuses."""
        entry = self.graph.body.blocks[0]
        terminator = entry.last_op
        if not isinstance(terminator, func.ReturnOp) or len(self.graph.body.blocks) != 1:
            raise fail(self.graph, "must be one block ending in func.return to legalize")
        for arg in entry.args:
            if isinstance(arg.type, TensorType):
                param = self._arg(buffer_type(arg.type, GLOBAL, self.graph), arg.name_hint)
                self.storage[arg] = Storage(param, None, GLOBAL)
            else:
                self.scalars[arg] = self._arg(arg.type, arg.name_hint)
        for j, value in enumerate(terminator.operands):
            if not isinstance(value.type, TensorType):
                raise fail(terminator, f"returns {value.type}; only tensor results legalize")
            self.returned.append(value)
            self.outputs.append(
                self._arg(buffer_type(value.type, GLOBAL, terminator), f"result{j}")
            )
        self.direct = direct_inserts(entry)
        self.relayouts = direct_relayouts(entry)
        self.cropped = relayout_stores.direct_cropped_relayouts(entry)
        for op in entry.ops:
            if op is terminator:
                break
            self.legalize(op)
        problem = scope_problem(terminator)
        if problem is not None:
            raise PassFailedException(f"legalize-layout: {problem}")
        for j, value in enumerate(self.returned):
            if j not in self.claimed:
                self._call_copy(terminator, self._input(value, terminator), self.outputs[j], value)
        for clone in reversed(self.cloned):
            if not any(result.uses for result in clone.results):
                clone.detach()
                clone.erase()
        self.block.add_op(func.ReturnOp())
        inputs = [a.type for a in self.block.args]
        host = func.FuncOp(
            self.graph.sym_name.data,
            FunctionType.from_lists(inputs, []),
            Region(self.block),
            self.graph.sym_visibility,
        )
        return host

    def _arg(self, type_: Attribute, name: str | None) -> BlockArgument:
        arg = self.block.insert_arg(type_, len(self.block.args))
        arg.name_hint = name
        return arg

    # Ops ----------------------------------------------------------------------------------

    def legalize(self, op: Operation) -> None:
        """Add the kernel and host call(s) for one op of the graph body (module docstring lists them
        per op); a scalar op is cloned into the host and `tensor.empty` only gets storage when
        read. Raises `PassFailedException` naming the op for anything else, or for scopes
        `annotate-texture-scope` left inconsistent."""
        problem = scope_problem(op)
        if problem is not None:
            raise PassFailedException(f"legalize-layout: {problem}")
        if op in self.stored_through or (
            isinstance(op, _PURE) and not any(r.uses for r in op.results)
        ):
            return  # nothing reads it, or its producer stored it (`relayout_stores`): no kernel
        match op:
            case GenericOp():
                self.generic(op)
            case FusedOp():
                self.fused(op)
            case TransformOp():
                self.transform(op)
            case PadOp():
                source = self._input(op.input, op)
                target = self._result(op.result, op)
                kernel, args = pad_kernel(
                    self._name(op, "pad"), source, target,
                    _shape(op.input), _shape(op.result), op.get_low(), op.pad_value,
                )  # fmt: skip
                self._call(kernel, args)
            case CropOp():
                source = self._input(op.input, op)
                target, window = self._target(op.result, op)
                self._call_copy_kernel(
                    self._name(op, "crop"), source, target, _shape(op.result), op.get_start(),
                    dst_offset=window,
                )  # fmt: skip
            case CopyOp():
                self._call_copy(
                    op, self._input(op.input, op), self._result(op.result, op), op.result
                )
            case tensor.InsertSliceOp():
                self.insert_slice(op)
            case CheckOp():
                self.block.add_op(CheckOp(self._input(op.flags, op), op.message.data))
            case EmptyOp():
                return
            case arith.ConstantOp() if isinstance(op.result.type, TensorType):
                self.constant(op)
            case _ if _is_scalar_op(op):
                clone = op.clone(value_mapper=dict(self.scalars))
                self.block.add_op(clone)
                self.cloned.append(clone)
                self.scalars.update(zip(op.results, clone.results, strict=True))
            case _:
                raise fail(
                    op,
                    "cannot be legalized (supported: linalg ops, layout.transform/"
                    "pad/crop/copy/check, tensor.empty, tensor.insert_slice, constants "
                    "and scalar ops)",
                )

    def constant(self, op: arith.ConstantOp) -> None:
        """Legalize a dense tensor `arith.constant`: a kernel that stores its elements into the
        result's storage (a fill loop for a splat). Raises `PassFailedException` for a tensor
        constant that is not dense."""
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr):
            raise fail(op, f"has an unsupported tensor constant {value}")
        type_ = op.result.type
        assert isinstance(type_, TensorType)
        buffer_type(type_, GLOBAL, op)
        target = self._result(op.result, op)
        from physlayout.semantics.graph_evaluator import dense_array  # numpy: when used

        array = dense_array(value, type_)
        kernel, args = constant_kernel(
            self._name(op, "constant"), target, array, type_.get_element_type()
        )
        self._call(kernel, args)

    def insert_slice(self, op: tensor.InsertSliceOp) -> None:
        """Legalize a `tensor.insert_slice` with static offsets, sizes and strides: the
        result is the destination's storage, updated in place when nothing else reads the
        destination (a `tensor.empty`, or a value with no other use in the same scope), else a
        copy of it; then a kernel writes the source into its window."""
        offsets = [int(v) for v in op.static_offsets.get_values()]
        sizes = [int(v) for v in op.static_sizes.get_values()]
        strides = [int(v) for v in op.static_strides.get_values()]
        if op.offsets or op.sizes or op.strides or any(s < 1 for s in strides):
            raise fail(op, "with dynamic offsets, sizes or strides cannot be legalized")
        source_shape = _shape(op.source)
        if prod(sizes) != prod(source_shape):
            raise fail(op, f"inserts {list(source_shape)} into a window of {sizes}")
        dest_shape = _shape(op.dest)
        if len(dest_shape) != len(sizes) or any(
            o < 0 or o + (n - 1) * k >= e
            for o, n, k, e in zip(offsets, sizes, strides, dest_shape, strict=True)
        ):
            raise fail(op, f"window {offsets} {sizes} {strides} leaves {list(dest_shape)}")
        dest = op.dest
        scope = producer_scope(op.result)
        in_place = (
            not isinstance(dest, BlockArgument)
            and dest not in self.views
            and dest.has_one_use()
            and dest in self.storage
            and self.storage[dest].scope == scope
            and not any(dest is r for r in self.returned)
        )
        if op.result in self.storage:
            pass  # the window's producer stored into it directly (`direct_inserts`)
        elif in_place:
            self.storage[op.result] = self.storage[dest]
        elif isinstance(dest.owner, EmptyOp):
            self._result(op.result, op)
        else:
            self._call_copy(op, self._input(dest, op), self._result(op.result, op), op.result)
        if self.direct.get(op.source) is op:
            return
        target = self.storage[op.result].buffer
        source = self._input(op.source, op)
        if len(source_shape) != len(sizes):
            raise fail(op, "that drops unit dimensions cannot be legalized")
        kernel, args = insert_kernel(
            self._name(op, "insert"), source, target, source_shape, offsets, strides
        )
        self._call(kernel, args)

    def transform(self, op: TransformOp) -> None:
        """Legalize a `layout.transform`: a copy kernel over the source box into a second declaration
        of the result's storage that carries the transform (and its pad value) as a pending layout,
        for `apply-layout` to apply; sequential when the storage is a texture. Refuses rank-0
        inputs."""
        shape = _shape(op.input)
        if not shape:
            raise fail(op, "of a rank-0 tensor cannot be legalized")
        if self.relayouts.get(op.input) is op and op.result in self.storage:
            return  # its producer stored it through the pending layout (`relayout_stores`)
        source = self._input(op.input, op)
        if self._reshape_view(op):
            return
        storage = self._storage_of_result(op.result, op)
        view = self._pending_view(op, storage)
        sequential = is_texture_scope(storage.scope)
        self._call_copy_kernel(
            self._name(op, "transform"), source, view, shape, sequential=sequential
        )

    def generic(self, op: GenericOp) -> None:
        """Legalize a `linalg.generic`: one kernel, a parallel nest over its parallel loops with its
        reductions as inner loops. An output is read only when the body reads it; when the parallel
        points do not cover the whole output (and its init is not `tensor.empty`), the init is
        copied into the result first. Texture outputs iterate their texel lanes innermost."""
        loops = self._loops(op)
        count = len(op.inputs)
        inputs = [self._input(v, op) if isinstance(v.type, ShapedType) else None for v in op.inputs]
        body = op.body.blocks[0]
        outputs: list[GenericOutput] = []
        parallel_points = prod(loops.extents[m] for m in loops.parallel)
        for k, (init, result) in enumerate(zip(op.outputs, op.res, strict=True)):
            covers = parallel_points == prod(_shape(result))
            target = self._relayout_target(result, covers) or self._result(result, op)
            reads = bool(body.args[count + k].uses)
            from_empty = isinstance(init.owner, EmptyOp)
            if covers or from_empty:
                source = self._input(init, op) if reads else None
                outputs.append(GenericOutput(source, target, cropped=self._crop_store(result)))
                continue
            self._call_copy(op, self._input(init, op), target, result)
            outputs.append(GenericOutput(target if reads else None, target))
        if any(_is_texture(o.result) for o in outputs):
            loops = replace(loops, lane=texel_lane_loop(op))
        self._call_generic(
            self._name(op, "generic"), GenericRequest(op, loops, inputs, outputs, bounds=self.bounds)
        )

    def fused(self, op: FusedOp) -> None:
        """Legalize a `layout.fused` group: ONE kernel, its root's nest (`generic`) whose
        stages run on the final accumulator before the one store of the group's result
        (`fusion_plan`). A fill or splat constant initializing the root is the accumulator's
        starting value. Raises `PassFailedException` for a region that is not a legal group."""
        plan = plan_group(op)
        if isinstance(plan, str):
            raise fail(op, plan)
        outer: dict[SSAValue, SSAValue] = dict(zip(op.block.args, op.inputs, strict=True))
        root = plan.root
        loops = self._loops(root)
        for stage in plan.stages:
            self._loops(stage)
        inputs: list[SSAValue | None] = []
        padded: dict[int, PaddedRead] = {}
        for k, value in enumerate(root.inputs):
            if not isinstance(value.type, ShapedType):
                inputs.append(None)
                continue
            if isinstance(value.owner, PadOp) and value.owner.parent_op() is op:
                pad = value.owner
                padded[k] = PaddedRead(
                    pad.get_low(), _shape(pad.input), _pad_scalar(pad.pad_value, _element(value))
                )
                value = pad.input
            inputs.append(self._input(outer.get(value, value), op))
        init = root.outputs[0]
        reads = bool(root.body.blocks[0].args[len(root.inputs)].uses)
        covers = prod(loops.extents[m] for m in loops.parallel) == prod(_shape(op.result))
        relayout = self._relayout_target(op.result, covers)
        target, offset = (relayout, ()) if relayout else self._target(op.result, op)
        start: Attribute | SSAValue | None = None
        source: SSAValue | None = None
        if isinstance(plan.start, FillOp):
            start = plan.start.inputs[0]
        elif isinstance(plan.start, arith.ConstantOp):
            start = splat_scalar(plan.start)
        elif reads and not isinstance(init.owner, EmptyOp):
            source = self._input(outer.get(init, init), op)
        if _is_texture(target):
            loops = replace(loops, lane=texel_lane_loop(root))
        root_out = loops.maps[-1]
        stages = tuple(self._stage(stage, root, root_out, outer, op) for stage in plan.stages)
        epilogue = Epilogue(root.res[0], stages, op.yielded())
        at = fusion_plan.result_exprs(op, root, root_out)  # at another rank than the root's
        output = GenericOutput(source, target, start, offset, self._crop_store(op.result), at)
        request = GenericRequest(root, loops, inputs, [output], epilogue, padded, self.bounds)
        self._call_generic(self._name(op, "fused"), request)

    def _pending_view(self, op: TransformOp, storage: Storage) -> SSAValue:
        """A second declaration of `storage` (the result of `op`) over the source shape,
        carrying `op`'s map (and pad value) as a pending layout for `apply-layout`."""
        pad = op.pad_value if op.pads() else None
        pending = BufferType(
            _shape(op.input), _element(op.input), [IndexMapAttr.from_map(op.map)],
            scope=storage.scope, pad_value=pad,
        )  # fmt: skip
        return self._declare(self._handle(storage), pending, op.result.name_hint)

    def _relayout_target(self, result: SSAValue, covers: bool) -> SSAValue | None:
        """The pending-layout view `result` is stored through (`relayout_stores`), when its
        producer's parallel points cover it (`covers`); else None (the transform copies)."""
        crop = self.cropped.get(result)
        if covers and crop is not None and crop.result not in self.direct:
            self.stored_through.update((crop.input.owner, crop))
            return self._result(crop.result, crop)  # through the crop too (`_crop_store`)
        transform = self.relayouts.get(result)
        if transform is None or not covers:
            self.relayouts.pop(result, None)
            return None
        return self._pending_view(transform, self._storage_of_result(transform.result, transform))

    def _crop_store(self, result: SSAValue) -> relayout_stores.CroppedStore | None:
        """How `result` is stored through its crop (`_relayout_target` chose to), or None."""
        crop = self.cropped.get(result)
        return relayout_stores.cropped_store(crop) if crop in self.stored_through else None

    def _reshape_view(self, op: TransformOp) -> bool:
        """A transform that keeps the row-major order of the elements (a reshape: torch-mlir's
        expand/collapse of global tensors) between two global buffers moves no data: its
        result is a second `layout.decl_buffer` over the input's storage (the DeclBuffer
        RFC's aliasing buffers), no kernel. Both values are then *views* of one storage,
        which no in-place insert may update (`insert_slice`). Returns whether it did so."""
        source = self.storage.get(op.input)
        if source is None or source.scope != GLOBAL or producer_scope(op.result) != GLOBAL:
            return False
        if op.pads() or not preserves_row_major_order(op.map, op.input_shape(), op.result_shape()):
            return False
        plain = buffer_type(op.result.type, GLOBAL, op)
        view = self._declare(self._handle(source), plain, op.result.name_hint)
        self.storage[op.result] = Storage(view, source.ptr, GLOBAL)
        self.views.update((op.input, op.result))
        return True

    def _target(self, result: SSAValue, op: Operation) -> tuple[SSAValue, tuple[int, ...]]:
        """Where `op` stores `result`, and at which offset: its own storage at the origin,
        or the window of the concat it is stored into directly (`direct_inserts`)."""
        insert = self.direct.get(result)
        if insert is None:
            return self._result(result, op), ()
        offset = tuple(int(v) for v in insert.static_offsets.get_values())
        return self._window_storage(insert).buffer, offset

    def _window_storage(self, insert: tensor.InsertSliceOp) -> Storage:
        """The storage of the chain of inserts through `insert` (`direct_inserts`): that of
        its last result (the function's result buffer when it is returned), shared by every
        link; made by the first producer of the chain that is legalized."""
        storage = self.storage.get(insert.result)
        if storage is not None:
            return storage
        chain = _insert_chain(insert)
        assert chain is not None, "direct_inserts proved the chain"
        storage = self._storage_of_result(chain[-1].result, chain[-1])
        for link in chain:
            self.storage[link.result] = storage
        return storage

    def _stage(
        self,
        stage: GenericOp,
        root: GenericOp,
        root_out: tuple[Expr, ...],
        outer: dict[SSAValue, SSAValue],
        op: FusedOp,
    ) -> FusedStage:
        maps = generic_maps(stage)
        assert maps is not None
        by_loop = stage_loops(stage, root, root_out)
        names = loop_names(len(stage.iterator_types.data))
        sources: list[StageInput] = []
        for value, imap in zip(stage.inputs, maps[: len(stage.inputs)], strict=True):
            if not isinstance(value.type, ShapedType):
                sources.append(StageInput())
            elif isinstance(value.owner, GenericOp) and value.owner.parent_op() is op:
                sources.append(StageInput(value=value))
            else:
                indices = tuple(e.substitute(by_loop) for e in imap.final_indices)
                buffer = self._input(outer.get(value, value), op)
                sources.append(StageInput(buffer=buffer, indices=indices))
        return FusedStage(stage, tuple(sources), tuple(by_loop[n] for n in names))

    # Generic analysis -------------------------------------------------------------------

    def _loops(self, op: GenericOp) -> GenericLoops:
        kinds = [str(t.data) for t in op.iterator_types.data]
        count = len(kinds)
        names = loop_names(count)
        try:
            maps = [IndexMap.from_affine_map(m.data, names) for m in op.indexing_maps.data]
        except ValueError as err:
            raise fail(op, f"has an indexing map that is not quasi-affine: {err}") from None
        shapes = [_shape(v) if isinstance(v.type, ShapedType) else () for v in op.operands]
        for value in op.operands:
            if isinstance(value.type, TensorType):
                buffer_type(value.type, GLOBAL, op)
        extents = loop_extents(maps, shapes, count)
        if extents is None:
            raise fail(op, "has a loop that indexes no operand dimension alone (no extent)")
        bounds = dict(zip(names, [(0, e - 1) for e in extents], strict=True))
        for k, (imap, shape) in enumerate(zip(maps, shapes, strict=True)):
            _check_access(op, k, imap, shape, extents, bounds)
        parallel = tuple(m for m, kind in enumerate(kinds) if kind == "parallel")
        reductions = tuple(m for m, kind in enumerate(kinds) if kind != "parallel")
        for k in range(len(op.inputs), len(maps)):
            _check_output(op, k, maps[k], parallel, extents)
        return GenericLoops(
            tuple(extents), parallel, reductions, tuple(m.final_indices for m in maps), None
        )

    def _external(self, value: SSAValue, kernel: Kernel) -> SSAValue:
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and not isinstance(value.type, ShapedType):
            return kernel.constant(owner.value)
        if isinstance(value.type, TensorType) and value in self.storage:
            return kernel.param(self.storage[value].buffer)  # the tensor a gather reads
        host = self.scalars.get(value)
        if host is None:
            where = owner if isinstance(owner, Operation) else self.graph
            raise fail(where, f"produces {value.type}, which a kernel body cannot use")
        return kernel.param(host)

    # Storage ------------------------------------------------------------------------------

    def _input(self, value: SSAValue, user: Operation) -> SSAValue:
        """The plain buffer holding the tensor `value` (a `tensor.empty` gets its storage
        the first time it is read)."""
        storage = self.storage.get(value)
        if storage is None and isinstance(value.owner, EmptyOp):
            storage = self._allocate(value, producer_scope(value), value.owner)
        if storage is None:
            raise fail(user, f"uses a value the pass could not legalize ({value.type})")
        return storage.buffer

    def _result(self, value: SSAValue, op: Operation) -> SSAValue:
        return self._storage_of_result(value, op).buffer

    def _storage_of_result(self, value: SSAValue, op: Operation) -> Storage:
        """Storage for a result: its out-parameter when it is returned and its producer
        writes global memory, else a new allocation in its producer's scope."""
        scope = producer_scope(value)
        if scope == GLOBAL:
            for j, returned in enumerate(self.returned):
                if returned is value and j not in self.claimed:
                    self.claimed.add(j)
                    storage = Storage(self.outputs[j], None, GLOBAL)
                    self.storage[value] = storage
                    return storage
        return self._allocate(value, scope, op)

    def _allocate(self, value: SSAValue, scope: str, op: Operation) -> Storage:
        plain = buffer_type(value.type, scope, op)
        allocation = AllocateOp(plain.get_shape(), PtrType(plain.element_type, scope))
        self.block.add_op(allocation)
        buffer = self._declare(allocation.ptr, plain, value.name_hint)
        storage = Storage(buffer, allocation.ptr, scope)
        self.storage[value] = storage
        return storage

    def _handle(self, storage: Storage) -> SSAValue:
        if storage.ptr is not None:
            return storage.ptr
        data = DataOp(storage.buffer)
        self.block.add_op(data)
        return data.ptr

    def _declare(self, ptr: SSAValue, type_: BufferType, name: str | None) -> SSAValue:
        decl = DeclBufferOp(ptr, type_)
        decl.buffer.name_hint = name
        self.block.add_op(decl)
        return decl.buffer

    # Calls ----------------------------------------------------------------------------------

    def _name(self, op: Operation, kind: str) -> str:
        return self._named(kind, op.results[0] if op.results else None)

    def _named(self, kind: str, value: SSAValue | None) -> str:
        """A fresh kernel name: the graph's, `kind` and `value`'s name when it has one."""
        hint = value.name_hint if value is not None else None
        base = f"{self.graph.sym_name.data}_{kind}"
        return self.names.fresh(f"{base}_{hint}" if hint and hint.isidentifier() else base)

    def _call(self, kernel: func.FuncOp, args: list[SSAValue]) -> func.FuncOp:
        """Call `kernel`, or the earlier kernel equal to it up to names (`kernel_key`);
        returns the kernel called."""
        key = kernel_key(kernel)
        kept = self.by_key.get(key)
        if kept is None:
            kept = self.by_key[key] = kernel
            self.kernels.append(kernel)
        else:
            kernel.erase()
        self.block.add_op(func.CallOp(kept.sym_name.data, args, []))
        return kept

    def _call_generic(self, name: str, request: GenericRequest) -> None:
        """Call `generic_kernel(name, request, ...)`: built only for a `generic_key` not met
        before; else the kernel built for that key is called again, with the host values
        numbered as its parameters were (the kernel built would be equal to it up to
        names, bound to those values)."""
        key, hosts = self._generic_key(request)
        kept = None if key is None else self.generics.get(key)
        if kept is not None:
            kernel, numbers = kept
            args = [hosts.hosts[n] for n in numbers]
            self.block.add_op(func.CallOp(kernel.sym_name.data, args, []))
            return
        kernel, args = generic_kernel(name, request, self._external)
        called = self._call(kernel, args)
        keyed = len(hosts.hosts)
        numbers = [hosts.number(a) for a in args]
        if key is not None and all(n < keyed for n in numbers):  # every parameter keyed
            self.generics[key] = (called, numbers)

    def _generic_key(self, request: GenericRequest) -> tuple[Hashable | None, HostNumbers]:
        """The `generic_key` of a `generic_kernel` request, and the host values it numbered
        (outer values keyed by `_outer_key`)."""
        hosts = HostNumbers()
        return generic_key(request, partial(self._outer_key, hosts=hosts), hosts), hosts

    def _outer_key(self, value: SSAValue, hosts: HostNumbers) -> Hashable | None:
        """What `_external` supplies for `value`, as a key: an `arith.constant`'s value, or
        the number of the host scalar passed for it (None where `_external` fails)."""
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and not isinstance(value.type, ShapedType):
            return ("constant", owner.value)
        if isinstance(value.type, TensorType) and value in self.storage:
            return ("buffer", hosts.number(self.storage[value].buffer))
        host = self.scalars.get(value)
        return None if host is None else ("host", hosts.number(host))

    def _call_copy_kernel(
        self,
        name: str,
        source: SSAValue,
        target: SSAValue,
        extents: Sequence[int],
        offset: Sequence[int] = (),
        sequential: bool = False,
        dst_offset: Sequence[int] = (),
    ) -> None:
        """Call `copy_kernel(name, source, target, ...)`: built only for a `copy_key` not met
        before; else the kernel called for that key is called again (the kernel built
        would be equal to it up to names)."""
        key = copy_key(source, target, extents, offset, sequential, dst_offset)
        kept = self.copies.get(key)
        if kept is not None:
            args = [source] if source is target else [source, target]
            self.block.add_op(func.CallOp(kept.sym_name.data, args, []))
            return
        kernel, args = copy_kernel(
            name, source, target, extents, offset, sequential=sequential, dst_offset=dst_offset
        )
        self.copies[key] = self._call(kernel, args)

    def _call_copy(
        self, op: Operation, source: SSAValue, target: SSAValue, value: SSAValue
    ) -> None:
        assert isinstance(target.type, BufferType)
        self._call_copy_kernel(
            self._named("copy", value), source, target, target.type.get_shape()
        )


def copy_key(
    source: SSAValue,
    target: SSAValue,
    extents: Sequence[int],
    offset: Sequence[int] = (),
    sequential: bool = False,
    dst_offset: Sequence[int] = (),
) -> Hashable:
    """What `copy_kernel` builds from, all of it: the two buffer types, whether the two
    host values are one (then the kernel has one parameter), the box, both offsets and
    `sequential`. Two copies with equal keys build kernels equal up to their names, so
    `kernel_key` would make them one kernel; deciding it before building saves the build
    (a model copies between the same few types hundreds of times)."""
    return (
        source.type,
        target.type,
        source is target,
        tuple(extents),
        tuple(offset),
        sequential,
        tuple(dst_offset),
    )


def direct_inserts(block: Block) -> dict[SSAValue, tensor.InsertSliceOp]:
    """The group results of `block` that can be stored straight into the window of the
    `tensor.insert_slice` reading them (destination passing: a concat's parts written by
    their producers, no insert kernel), by result. Proven per chain of inserts (each
    inserting into the previous one's result, the first into a `tensor.empty`): every link
    has one use (nothing else reads the buffer while its windows fill, so the order the
    windows are written in does not matter), the windows are pairwise disjoint (no write of
    one part is overwritten by another), unit strides and no rank change, one memory scope
    for the producer and the whole chain, and a texture's windows start at texel 0 (whole
    texels stored). The producer must be a `layout.fused` group or a `layout.crop` (a copy
    kernel: the other half of a split joining a concat) whose result only the insert reads."""
    direct: dict[SSAValue, tensor.InsertSliceOp] = {}
    for op in block.ops:
        if not isinstance(op, tensor.InsertSliceOp):
            continue
        source = op.source
        if not isinstance(source.owner, FusedOp | CropOp) or not source.has_one_use():
            continue
        chain = _insert_chain(op)
        if chain is None:
            continue
        scope = producer_scope(op.result)
        scopes = {producer_scope(source), *(producer_scope(link.result) for link in chain)}
        if scopes != {scope}:
            continue
        offsets = [int(v) for v in op.static_offsets.get_values()]
        if is_texture_scope(scope) and offsets and offsets[-1] != 0:
            continue
        direct[source] = op
    return direct


def _insert_chain(op: tensor.InsertSliceOp) -> list[tensor.InsertSliceOp] | None:
    """Every insert of the chain through `op` (module docstring of `direct_inserts`), or
    None when the chain does not qualify."""
    chain = [op]
    while isinstance(chain[0].dest.owner, tensor.InsertSliceOp):
        if not chain[0].dest.has_one_use():
            return None
        chain.insert(0, chain[0].dest.owner)
    if not isinstance(chain[0].dest.owner, EmptyOp) or not chain[0].dest.has_one_use():
        return None
    last = chain[-1]
    while last.result.has_one_use():
        (use,) = last.result.uses
        if not isinstance(use.operation, tensor.InsertSliceOp) or use.index != 1:
            break
        last = use.operation
        chain.append(last)
    boxes: list[list[tuple[int, int]]] = []
    for link in chain:
        if link.offsets or link.sizes or link.strides:
            return None
        if any(int(s) != 1 for s in link.static_strides.get_values()):
            return None
        sizes = [int(v) for v in link.static_sizes.get_values()]
        if list(sizes) != list(_shape(link.source)):
            return None
        offsets = [int(v) for v in link.static_offsets.get_values()]
        boxes.append([(o, o + s) for o, s in zip(offsets, sizes, strict=True)])
    for k, box in enumerate(boxes):
        for other in boxes[k + 1 :]:
            if all(
                lo < other_hi and other_lo < hi
                for (lo, hi), (other_lo, other_hi) in zip(box, other, strict=True)
            ):
                return None
    return chain


def _pad_scalar(value: Attribute, element: Attribute) -> Attribute:
    """A pad value as a scalar of the padded tensor's `element` type."""
    if isinstance(value, FloatAttr) and isinstance(element, AnyFloat):
        return FloatAttr(value.value.data, element)
    if isinstance(value, IntegerAttr) and isinstance(element, IntegerType | IndexType):
        return IntegerAttr(value.value.data, element)
    return value


_PURE = (GenericOp, FusedOp, TransformOp, PadOp, CropOp, CopyOp)
"""Graph ops that only compute their tensor results (no kernel when nothing reads them)."""


def _is_texture(buffer: SSAValue) -> bool:
    return isinstance(buffer.type, BufferType) and is_texture_scope(buffer.type.get_scope())


def _is_scalar_op(op: Operation) -> bool:
    values = [*op.operands, *op.results]
    return not op.regions and all(not isinstance(v.type, ShapedType) for v in values)


def _shape(value: SSAValue) -> tuple[int, ...]:
    shape = static_shape(value)
    assert shape is not None
    return shape


def _element(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.get_element_type()


def _check_access(
    op: GenericOp,
    k: int,
    imap: IndexMap,
    shape: tuple[int, ...],
    extents: list[int],
    bounds: dict[str, tuple[int, int]],
) -> None:
    """Refuse an operand whose bare loop dimensions disagree with the loop extents, or
    whose accesses may leave the operand (decided exactly with isl)."""
    for dim, expr in enumerate(imap.final_indices):
        if isinstance(expr, Dim) and bounds[expr.name][1] + 1 != shape[dim]:
            raise fail(
                op,
                f"operand #{k} has extent {shape[dim]} on dimension {dim}, but loop "
                f"{expr.name} runs over {bounds[expr.name][1] + 1}",
            )
    if not shape:
        return
    try:
        with bridge.isl_errors("proving the accesses of a linalg.generic in bounds"):
            inside = proofs.image_within(imap, tuple(extents), shape)
    except ValueError as err:
        raise fail(op, str(err)) from None
    if not inside:
        raise fail(op, f"operand #{k} may be accessed outside its shape {list(shape)} by {imap}")


def _check_output(
    op: GenericOp, k: int, imap: IndexMap, parallel: tuple[int, ...], extents: list[int]
) -> None:
    """Refuse an output map that uses a reduction loop or sends two parallel points to the
    same element."""
    names = [f"d{m}" for m in parallel]
    for expr in imap.final_indices:
        extra = sorted(expr.dims() - set(names))
        if extra:
            raise fail(op, f"output #{k - len(op.inputs)} is indexed by reduction loop {extra[0]}")
    restricted = IndexMap(tuple(names), imap.final_indices)
    if not restricted.is_injective([extents[m] for m in parallel]):
        raise fail(
            op,
            f"output #{k - len(op.inputs)} map {imap} writes one element from several "
            "parallel iterations",
        )


class GeneralizeNamedLinalgOp(RewritePattern):
    """A named linalg op (conv, fill, ...) -> its `linalg.generic` form, keeping its
    discardable attributes (e.g. `layout.scope`). A `linalg.fill` in a `layout.fused` group
    stays: it is the starting value of the group's accumulator."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NamedOperation, rewriter: PatternRewriter) -> None:
        if isinstance(op, FillOp) and isinstance(op.parent_op(), FusedOp):
            return
        rewriter.replace(op, generalized(op))


class LegalizeGraphFunction(RewritePattern):
    """A graph-level `func.func` -> kernels + a host function."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not is_graph_function(op):
            return
        module = op.parent_op()
        taken = (
            f.sym_name.data for f in (module.walk() if module else []) if isinstance(f, func.FuncOp)
        )
        builder = HostBuilder(op, FreshNames(taken))
        host = builder.build()
        rewriter.replace(op, [*builder.kernels, host])


@dataclass(frozen=True)
class LegalizeLayoutPass(PhyslayoutPass):
    """Graph-level functions -> kernels + host functions (module docstring)."""

    name = "legalize-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        RootedWalker(GeneralizeNamedLinalgOp(), apply_recursively=False).rewrite_module(op)
        RootedWalker(LegalizeGraphFunction(), apply_recursively=False).rewrite_module(op)
