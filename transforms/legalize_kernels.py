"""Buffer-level kernels for graph-level ops (the building blocks of `legalize-layout`).

Each builder returns a `func.func` over `!layout.buffer` parameters (plus scalar parameters
for values a body uses from outside) whose body is a loop nest over an iteration space:

- `generic_kernel`: a `linalg.generic` (any quasi-affine indexing maps): an `scf.parallel`
  over its parallel loops and, inside, its reduction loops as `scf.for`s in their order,
  carrying one accumulator per output; inputs are loaded at their indexing maps, the body
  ops are cloned (`linalg.index` becomes the loop variable), the outputs are stored once per
  parallel point, after the reductions;
- `copy_kernel`: ``dst[i] = src[i + offset]`` over a box (`layout.copy`, `layout.crop`, and
  `layout.transform`, whose destination parameter carries the transform as a PENDING layout
  so `apply-layout` maps the stores and fills the padding);
- `pad_kernel`: the pad value everywhere, then the source at its offset (two loop nests);
- `constant_kernel`: the elements of a dense constant (a fill loop for a splat).

Texture outputs: when an output lives in a `global.texture*` scope and its innermost index
is a parallel loop of extent 4 (one texel), that loop becomes an inner `scf.for 0 to 4`
*lane loop* around the rest of the body, so `vectorize-texels` turns each texel into one
`vector<4xT>` store (image writes set all four channels). A `layout.transform` into a texture
is a `scf.for` nest: `apply-layout{rewrite-loops=true}` re-iterates it in physical order,
lanes innermost.

Kernels are new, detached IR built with an xDSL `Builder`; `legalize-layout` adds them to the
module.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ShapedType,
    TensorType,
    VectorType,
)
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import TEXEL_LANES
from physlayout.dialects.layout import BufferType, LoadOp, StoreOp, is_texture_scope
from physlayout.dialects.layout_graph import static_shape
from physlayout.dialects.scf_syntax import ParallelOp, ReduceOp
from physlayout.indexing.bridges.arith import ExprEmitter
from physlayout.indexing.expr_range import interval_of
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.transforms.equal_kernels import regions_key
from physlayout.transforms.flow_layout_rewrites import loop_extents, loop_names
from physlayout.transforms.relayout_stores import CroppedStore
from physlayout.transforms.value_bounds import ValueBounds

"""Lanes of a texel."""

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Kernel:
    """A kernel function under construction: parameters are added on demand, each bound to
    the host value the host function passes for it."""

    name: str
    block: Block = field(default_factory=Block)
    host_values: list[SSAValue] = field(default_factory=list[SSAValue])
    _params: dict[tuple[SSAValue, Attribute], BlockArgument] = field(
        default_factory=dict[tuple[SSAValue, Attribute], BlockArgument]
    )
    _constants: dict[Attribute, SSAValue] = field(default_factory=dict[Attribute, SSAValue])

    def param(self, host_value: SSAValue, name: str | None = None) -> BlockArgument:
        """The parameter bound to `host_value` (one per distinct host value)."""
        key = (host_value, host_value.type)
        arg = self._params.get(key)
        if arg is None:
            arg = self.block.insert_arg(host_value.type, len(self.block.args))
            arg.name_hint = name or host_value.name_hint
            self._params[key] = arg
            self.host_values.append(host_value)
        return arg

    @property
    def top(self) -> InsertPoint:
        """The end of the kernel's body block, where its statements are appended in order."""
        return InsertPoint.at_end(self.block)

    def constant(self, attr: Attribute) -> SSAValue:
        """A constant at the top of the kernel (one per value)."""
        value = self._constants.get(attr)
        if value is None:
            if not isinstance(attr, IntegerAttr | FloatAttr | DenseIntOrFPElementsAttr):
                raise PassFailedException(f"legalize-layout: cannot materialize constant {attr}")
            op = arith.ConstantOp(attr)
            first = self.block.first_op
            Builder(InsertPoint.before(first) if first else self.top).insert(op)
            value = op.result
            self._constants[attr] = value
        return value

    def index(self, value: int) -> SSAValue:
        """An `index` constant of `value` at the top of the kernel (one per value, as `constant`)."""
        return self.constant(_index_attr(value))

    def finish(self) -> func.FuncOp:
        """Close the body with `func.return` and build the kernel: a `func.func` named `name` whose
        parameters are those `param` added, in order, with no results (kernels write buffers).
        Call it once, after the last statement."""
        self.block.add_op(func.ReturnOp())
        types = [a.type for a in self.block.args]
        return func.FuncOp(self.name, FunctionType.from_lists(types, []), Region(self.block))


@lru_cache(maxsize=4096)
def _index_attr(value: int) -> IntegerAttr:
    """`IntegerAttr(value, IndexType())`, built once per value (an attribute is a value)."""
    return IntegerAttr(value, IndexType())


# Loop nests -------------------------------------------------------------------------------


def _parallel(
    kernel: Kernel, extents: Sequence[int], names: Sequence[str], point: InsertPoint
) -> tuple[list[SSAValue], InsertPoint]:
    """One `scf.parallel` over `extents` at `point` (nothing when there are none)."""
    if not extents:
        return [], point
    body = Block(arg_types=[IndexType()] * len(extents))
    body.add_op(ReduceOp())
    for arg, name in zip(body.args, names, strict=True):
        arg.name_hint = name
    loop = ParallelOp(
        [kernel.index(0)] * len(extents),
        [kernel.index(e) for e in extents],
        [kernel.index(1)] * len(extents),
        Region(body),
    )
    Builder(point).insert(loop)
    return list(body.args), InsertPoint.before(body.ops.last)  # type: ignore[arg-type]


def _for(
    kernel: Kernel,
    extent: int,
    name: str,
    point: InsertPoint,
    inits: Sequence[SSAValue] = (),
) -> tuple[scf.ForOp, SSAValue, list[SSAValue], Block]:
    """An `scf.for 0 to extent` at `point` carrying `inits`; returns the loop, its variable,
    its carried block arguments and its body (without terminator)."""
    body = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    body.args[0].name_hint = name
    loop = scf.ForOp(
        kernel.index(0), kernel.index(extent), kernel.index(1), list(inits), Region(body)
    )
    Builder(point).insert(loop)
    return loop, body.args[0], list(body.args[1:]), body


def box_loops(
    kernel: Kernel,
    extents: Sequence[int],
    lane_loop: bool,
    point: InsertPoint | None = None,
    sequential: bool = False,
) -> tuple[list[SSAValue], InsertPoint]:
    """Loops over the box `extents`: one `scf.parallel` (or, `sequential`, a `scf.for`
    nest); with `lane_loop` the innermost axis (extent 4) is an inner `scf.for`."""
    point = point or kernel.top
    names = [f"i{k}" for k in range(len(extents))]
    outer = len(extents) - 1 if lane_loop else len(extents)
    if sequential:
        ivs: list[SSAValue] = []
        for extent, name in zip(extents, names, strict=True):
            _, iv, _, body = _for(kernel, extent, name, point)
            body.add_op(scf.YieldOp())
            ivs.append(iv)
            point = InsertPoint.before(body.ops.last)  # type: ignore[arg-type]
        return ivs, point
    ivs, point = _parallel(kernel, extents[:outer], names[:outer], point)
    if lane_loop:
        _, lane, _, body = _for(kernel, extents[-1], names[-1], point)
        body.add_op(scf.YieldOp())
        ivs.append(lane)
        point = InsertPoint.before(body.ops.last)  # type: ignore[arg-type]
    return ivs, point


def wants_lane_loop(buffer_type: Attribute, shape: Sequence[int]) -> bool:
    """Whether stores into `buffer_type` over `shape` should iterate texel lanes in an
    inner `scf.for` (a texture whose innermost extent is one texel)."""
    return (
        isinstance(buffer_type, BufferType)
        and is_texture_scope(buffer_type.get_scope())
        and len(shape) >= 2
        and shape[-1] == TEXEL_LANES
    )


def _insert(op: Operation, point: InsertPoint) -> Operation:
    Builder(point).insert(op)
    return op


def _indices(kernel: Kernel, exprs: Sequence[Expr], emitter: ExprEmitter) -> list[SSAValue]:
    return [emitter.emit(e) for e in exprs] or [kernel.index(0)]


# Copies -----------------------------------------------------------------------------------


def copy_kernel(
    name: str,
    src: SSAValue,
    dst: SSAValue,
    extents: Sequence[int],
    offset: Sequence[int] = (),
    sequential: bool = False,
    dst_offset: Sequence[int] = (),
) -> tuple[func.FuncOp, list[SSAValue]]:
    """``dst[i + dst_offset] = src[i + offset]`` for every ``i`` of the box `extents` (the
    host buffers `src` and `dst`; `dst` may carry a pending transform; `dst_offset`: a crop
    stored straight into the window of a concat, whole texels of a texture). Returns the
    kernel and the host values to call it with."""
    kernel = Kernel(name)
    source, target = kernel.param(src, "src"), kernel.param(dst, "dst")
    lane = not sequential and wants_lane_loop(dst.type, extents)
    ivs, point = box_loops(kernel, extents, lane, sequential=sequential)
    names = [f"i{k}" for k in range(len(ivs))]
    emitter = ExprEmitter(point, dict(zip(names, ivs, strict=True)), _box(names, extents))
    value = _insert(LoadOp(source, _indices(kernel, _shifted(names, offset), emitter)), point)
    value = value.results[0]
    _insert(StoreOp(value, target, _indices(kernel, _shifted(names, dst_offset), emitter)), point)
    return kernel.finish(), kernel.host_values


def pad_kernel(
    name: str,
    src: SSAValue,
    dst: SSAValue,
    src_extents: Sequence[int],
    dst_extents: Sequence[int],
    low: Sequence[int],
    pad_value: Attribute,
) -> tuple[func.FuncOp, list[SSAValue]]:
    """``dst`` = `pad_value` everywhere, then ``dst[i + low] = src[i]`` (two loop nests,
    run in order)."""
    kernel = Kernel(name)
    source, target = kernel.param(src, "src"), kernel.param(dst, "dst")
    _fill(kernel, target, dst_extents, kernel.constant(pad_value))
    _place(kernel, source, target, src_extents, low)
    return kernel.finish(), kernel.host_values


def insert_kernel(
    name: str,
    src: SSAValue,
    dst: SSAValue,
    src_extents: Sequence[int],
    offset: Sequence[int],
    strides: Sequence[int] = (),
) -> tuple[func.FuncOp, list[SSAValue]]:
    """``dst[i * strides + offset] = src[i]`` for every ``i`` of the box `src_extents` (the
    rest of `dst` is left as it is): `tensor.insert_slice` (strides default to 1)."""
    kernel = Kernel(name)
    source, target = kernel.param(src, "src"), kernel.param(dst, "dst")
    _place(kernel, source, target, src_extents, offset, strides)
    return kernel.finish(), kernel.host_values


def _place(
    kernel: Kernel,
    source: SSAValue,
    target: SSAValue,
    src_extents: Sequence[int],
    low: Sequence[int],
    strides: Sequence[int] = (),
) -> None:
    """The loop nest ``target[i * strides + low] = source[i]`` over the box `src_extents`
    (strides default to 1; a texel lane loop only for unit innermost stride)."""
    aligned = not low or low[-1] % TEXEL_LANES == 0
    unit = not strides or strides[-1] == 1
    lane = aligned and unit and wants_lane_loop(target.type, src_extents)
    ivs, point = box_loops(kernel, src_extents, lane)
    names = [f"i{k}" for k in range(len(ivs))]
    emitter = ExprEmitter(point, dict(zip(names, ivs, strict=True)), _box(names, src_extents))
    value = _insert(LoadOp(source, _indices(kernel, [Dim(n) for n in names], emitter)), point)
    spread = [Dim(n) * k if k != 1 else Dim(n) for n, k in zip(names, strides or [1] * len(names), strict=True)]
    _insert(
        StoreOp(value.results[0], target, _indices(kernel, _moved(spread, low), emitter)), point
    )


def _shifted(names: Sequence[str], offset: Sequence[int]) -> list[Expr]:
    """``name + offset`` per axis (the bare name where the offset is 0)."""
    return _moved([Dim(n) for n in names], offset)


def _moved(exprs: Sequence[Expr], offset: Sequence[int]) -> list[Expr]:
    """``expr + offset`` per axis (the expression itself where the offset is 0)."""
    offsets = list(offset) or [0] * len(exprs)
    return [e + k if k else e for e, k in zip(exprs, offsets, strict=True)]


def _fill(kernel: Kernel, target: SSAValue, extents: Sequence[int], value: SSAValue) -> None:
    ivs, point = box_loops(kernel, extents, wants_lane_loop(target.type, extents))
    _insert(StoreOp(value, target, ivs or [kernel.index(0)]), point)


def _box(names: Sequence[str], extents: Sequence[int]) -> dict[str, tuple[int, int]]:
    return {n: (0, e - 1) for n, e in zip(names, extents, strict=True)}


# Constants --------------------------------------------------------------------------------


def constant_kernel(
    name: str, dst: SSAValue, values: np.ndarray, element: Attribute
) -> tuple[func.FuncOp, list[SSAValue]]:
    """Store the array `values` (of the buffer's shape, elements of type `element`) into
    `dst`: a fill loop when all elements are equal, else one store per element (one
    `vector<4xT>` store per texel when the innermost extent is 4)."""
    import numpy as np

    kernel = Kernel(name)
    target = kernel.param(dst, "dst")
    flat = values.reshape(-1)
    extents = list(values.shape) or [1]
    if flat.size and bool(np.all(flat == flat[0])) and not _has_nan(flat):
        _fill(kernel, target, extents, kernel.constant(scalar_attr(flat[0], element)))
        return kernel.finish(), kernel.host_values
    per_texel = extents[-1] == TEXEL_LANES and len(extents) >= 2
    lanes = TEXEL_LANES if per_texel else 1
    rows = flat.reshape(-1, lanes)
    for position, row in enumerate(rows):
        index = np.unravel_index(position * lanes, extents)
        indices = [kernel.index(int(i)) for i in index]
        if per_texel:
            vector_type = VectorType(element, [TEXEL_LANES])
            attr = DenseIntOrFPElementsAttr.from_list(vector_type, [v.item() for v in row])  # pyright: ignore[reportCallIssue, reportArgumentType]
            stored = _insert(arith.ConstantOp(attr, vector_type), kernel.top).results[0]
        else:
            stored = kernel.constant(scalar_attr(row[0], element))
        _insert(StoreOp(stored, target, indices), kernel.top)
    return kernel.finish(), kernel.host_values


def _has_nan(flat: np.ndarray) -> bool:
    import numpy as np

    return bool(np.issubdtype(flat.dtype, np.floating) and np.isnan(flat).any())


def scalar_attr(value: np.generic, element: Attribute) -> Attribute:
    """The scalar attribute of type `element` holding the numpy scalar `value`."""
    import numpy as np

    if isinstance(value, np.floating):
        return FloatAttr(float(value), element)  # type: ignore[arg-type]
    return IntegerAttr(int(value), element)  # type: ignore[arg-type]


# linalg.generic ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GenericOutput:
    """Where output `k` of a generic is read (`init`, or None when its initial value is
    not needed) and written (`result`), as host buffers (the same one when updated in
    place). `start`, when given, is the accumulator's starting value instead of a load of
    `init`: a scalar attribute, or a host scalar value (a fill absorbed by a group)."""

    init: SSAValue | None
    result: SSAValue
    start: Attribute | SSAValue | None = None
    offset: tuple[int, ...] = ()
    """Added to every stored index (a window of `result`, e.g. a concat's part); `init`,
    a separate buffer, is read at the unshifted index."""
    cropped: CroppedStore | None = None
    """Store through a transform and a crop into `result`, the crop's storage (a guarded
    store, `relayout_stores.CroppedStore`); `init` is read at the unmoved index."""
    at: tuple[Expr, ...] = ()
    """The stored element over the loops, when not the output map's (a group whose result
    has another rank than its root's: `fusion_plan.result_exprs`); `init` is read at the
    output map's."""


@dataclass(frozen=True)
class PaddedRead:
    """How a root input that a group's absorbed `layout.pad` produced is read: element ``i``
    of the padded tensor is ``source[i - low]`` where that index lies in `extents`, else
    `pad_value`. The kernel loads the source at the index clamped into `extents` (always
    in bounds, also for textures) and selects the pad value outside; the padded tensor is
    never stored."""

    low: tuple[int, ...]
    extents: tuple[int, ...]
    pad_value: Attribute


@dataclass(frozen=True)
class StageInput:
    """Where an input of an epilogue stage comes from: a `value` the group computed
    earlier, a host `buffer` loaded at `indices` (over the root's loops), or (neither) a
    scalar from outside."""

    value: SSAValue | None = None
    buffer: SSAValue | None = None
    indices: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class FusedStage:
    """An elementwise generic of a group, run on the root's final value (`fusion_plan`)."""

    op: GenericOp
    inputs: tuple[StageInput, ...]
    loops: tuple[Expr, ...]
    """Each loop of the stage as an expression of the root's loops (for `linalg.index`)."""


@dataclass(frozen=True)
class Epilogue:
    """The stages of a group after its root (`root` is the root's result in the group's
    region; `result` the value the group yields)."""

    root: SSAValue
    stages: tuple[FusedStage, ...]
    result: SSAValue

    def emit(
        self,
        kernel: Kernel,
        point: InsertPoint,
        emitter: ExprEmitter,
        final: SSAValue,
        external: External,
        bounds: ValueBounds,
    ) -> SSAValue:
        """Emit the stages at `point` on the root's `final` value; returns the value to
        store."""
        env: dict[SSAValue, SSAValue] = {self.root: final}
        for stage in self.stages:
            values: list[SSAValue] = []
            for source, operand in zip(stage.inputs, stage.op.inputs, strict=True):
                if source.value is not None:
                    values.append(env[source.value])
                elif source.buffer is not None:
                    param = kernel.param(source.buffer)
                    load = LoadOp(param, _indices(kernel, source.indices, emitter))
                    values.append(_insert(load, point).results[0])
                else:
                    values.append(external(operand, kernel))
            body = stage.op.body.blocks[0]
            placeholder = kernel.constant(_zero(body.args[len(values)].type))
            ivs: dict[int, SSAValue] = {}
            if any(isinstance(inner, IndexOp) for inner in body.ops):
                ivs = {m: emitter.emit(e) for m, e in enumerate(stage.loops)}
            yielded = _clone_body(
                stage.op, [*values, placeholder], ivs, point, kernel, external, bounds
            )
            env[stage.op.res[0]] = yielded[0]
        return env[self.result]


@dataclass(frozen=True)
class GenericLoops:
    """The analysed iteration space of a generic."""

    extents: tuple[int, ...]
    parallel: tuple[int, ...]
    reductions: tuple[int, ...]
    maps: tuple[tuple[Expr, ...], ...]
    """Each operand's indexing map, over the loop names ``d0, d1, ...``."""
    lane: int | None
    """The parallel loop iterated as a texel lane loop (innermost), if any."""


def texel_lane_loop(op: GenericOp) -> int | None:
    """The parallel loop of extent 4 that indexes the innermost axis (extent 4) of every
    output of `op` alone, or None: iterated as an inner lane loop it lets each texel of a
    texture output be written whole."""
    kinds = [str(t.data) for t in op.iterator_types.data]
    names = loop_names(len(kinds))
    try:
        maps = [IndexMap.from_affine_map(m.data, names) for m in op.indexing_maps.data]
    except ValueError:
        return None
    shapes: list[tuple[int, ...]] = [static_shape(v) or () for v in op.operands]
    extents = loop_extents(maps, shapes, len(kinds))
    lanes: set[str] = set()
    for imap, shape in zip(maps[len(op.inputs) :], shapes[len(op.inputs) :], strict=True):
        last = imap.final_indices[-1] if imap.final_indices else None
        if not isinstance(last, Dim) or not shape or shape[-1] != TEXEL_LANES:
            return None
        lanes.add(last.name)
    if len(lanes) != 1 or extents is None:
        return None
    lane = names.index(lanes.pop())
    return lane if kinds[lane] == "parallel" and extents[lane] == TEXEL_LANES else None


External = Callable[[SSAValue, Kernel], SSAValue]
"""Supplies, inside a kernel, a value the body uses from outside the generic."""


@dataclass(frozen=True)
class GenericRequest:
    """What `generic_kernel` builds a kernel from (and `generic_key` keys): the generic `op`
    (a group's root) over its analysed iteration space `loops`; `inputs[k]` the host buffer
    of tensor input `k` (None for a scalar input, supplied by the `External`); `outputs`
    where each output is read and written. With an `epilogue` (a group, `op` its root with
    one output) the stages run on the final accumulator and their result is what the
    kernel stores. `padded[k]`: input `k` is the source of a pad read through its padding
    (`PaddedRead`)."""

    op: GenericOp
    loops: GenericLoops
    inputs: Sequence[SSAValue | None]
    outputs: Sequence[GenericOutput]
    epilogue: Epilogue | None = None
    padded: Mapping[int, PaddedRead] = field(default_factory=dict[int, PaddedRead])
    bounds: ValueBounds = field(default_factory=ValueBounds, compare=False)
    """What is known of the values the bodies compute (the gathers' clamps, `gather_clamps`);
    one per host function, shared by its requests."""


def generic_kernel(
    name: str, request: GenericRequest, external: External
) -> tuple[func.FuncOp, list[SSAValue]]:
    """The kernel of `request.op` (see the module docstring), its values from outside the
    generic supplied by `external`; returns it and the host values bound to its
    parameters, in order."""
    op, loops, outputs = request.op, request.loops, request.outputs
    kernel = Kernel(name)
    input_params = [
        None if buffer is None else kernel.param(buffer) for buffer in request.inputs
    ]
    inits = [None if o.init is None else kernel.param(o.init) for o in outputs]
    results = [kernel.param(o.result) for o in outputs]
    names = [f"d{m}" for m in range(len(loops.extents))]
    bounds = _box(names, loops.extents)
    ivs: dict[int, SSAValue] = {}
    outer = [m for m in loops.parallel if m != loops.lane]
    outer_ivs, point = _parallel(
        kernel, [loops.extents[m] for m in outer], [names[m] for m in outer], kernel.top
    )
    ivs.update(zip(outer, outer_ivs, strict=True))
    if loops.lane is not None:
        _, lane, _, body = _for(kernel, loops.extents[loops.lane], names[loops.lane], point)
        body.add_op(scf.YieldOp())
        ivs[loops.lane] = lane
        point = InsertPoint.before(body.ops.last)  # type: ignore[arg-type]
    emitter = ExprEmitter(point, {names[m]: v for m, v in ivs.items()}, bounds)
    count = len(op.inputs)
    stores: list[tuple[BlockArgument, list[SSAValue]]] = []
    accumulators: list[SSAValue] = []
    for k, (init, result) in enumerate(zip(inits, results, strict=True)):
        exprs = loops.maps[count + k]
        indices = _indices(kernel, exprs, emitter)
        stored = outputs[k].at or exprs
        if outputs[k].offset:
            if outputs[k].init is outputs[k].result:
                raise PassFailedException(
                    "legalize-layout: an output updated in place has no window"
                )
            stores.append((result, _indices(kernel, _moved(stored, outputs[k].offset), emitter)))
        else:
            stores.append((result, _indices(kernel, stored, emitter) if outputs[k].at else indices))
        start = outputs[k].start
        if isinstance(start, SSAValue):
            accumulators.append(external(start, kernel))
        elif start is not None:
            accumulators.append(kernel.constant(start))
        elif init is None:
            element = op.body.blocks[0].args[count + k].type
            accumulators.append(kernel.constant(_zero(element)))
        else:
            accumulators.append(_insert(LoadOp(init, indices), point).results[0])
    final = _reduction_nest(
        kernel, op, loops, names, bounds, ivs, point, input_params, accumulators, external,
        request,
    )  # fmt: skip
    if request.epilogue is not None:
        final = [request.epilogue.emit(kernel, point, emitter, final[0], external, request.bounds)]
    for k, ((target, indices), value) in enumerate(zip(stores, final, strict=True)):
        cropped = outputs[k].cropped
        if cropped is not None:
            cropped.store(value, target, outputs[k].at or loops.maps[count + k], emitter)
            continue
        _insert(StoreOp(value, target, indices), point)
    return kernel.finish(), kernel.host_values


OuterKey = Callable[[SSAValue], Hashable | None]
"""What an `External` supplies for a value, as a key over host values numbered by a
`HostNumbers` (None when it would fail): see `HostBuilder._outer_key`."""


@dataclass
class HostNumbers:
    """Numbers host values in order of first mention (`generic_key`): `hosts[n]` is the
    value numbered n."""

    hosts: list[SSAValue] = field(default_factory=list[SSAValue])
    _numbers: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])

    def number(self, value: SSAValue) -> int:
        """The number of `value` (the next one when it is first mentioned)."""
        found = self._numbers.get(value)
        if found is None:
            found = self._numbers[value] = len(self.hosts)
            self.hosts.append(value)
        return found


def generic_key(request: GenericRequest, outer: OuterKey, hosts: HostNumbers) -> Hashable | None:
    """Everything `generic_kernel(name, request, external)` builds from, with the host values it binds to parameters numbered by `hosts`
    (which of them are one value, and their types) and `outer(v)` standing for what
    `external(v, ...)` supplies; None when `outer` cannot key a value (build the kernel,
    which then reports it). Two calls with equal keys build kernels equal up to their names
    whose parameters are bound to the host values of equal numbers (the build reads the
    host values only through their identity and types). The fields, each read by the
    build: the iteration space (`loops`: extents, loop kinds, every operand's map, the lane
    loop); the body of `op` (`regions_key`: its ops, block argument types, outer values);
    per input, its buffer and padded read, or (a scalar) what `external` supplies; per
    output, its init buffer (or none), result buffer, starting value and window offset;
    the epilogue's stages (bodies, where each input comes from, `linalg.index` loops) and
    which value it returns; the types of the numbered host values; the clamps of the
    gathers (`_gathers_key`)."""
    op, padded, epilogue = request.op, request.padded, request.epilogue
    body = regions_key(op, _inside(op, outer))
    if body is None:
        return None
    input_keys: list[Hashable] = []
    for k, buffer in enumerate(request.inputs):
        operand = op.inputs[k]
        number = None if buffer is None else hosts.number(buffer)
        if buffer is None or not isinstance(operand.type, ShapedType):
            supplied = outer(operand)
            if supplied is None:
                return None
            input_keys.append(("outer", number, supplied))
        else:
            input_keys.append(("buffer", number, padded.get(k)))
    output_keys: list[Hashable] = []
    for output in request.outputs:
        start: Hashable = output.start
        if isinstance(output.start, SSAValue):
            start = outer(output.start)
            if start is None:
                return None
            start = ("outer", start)
        init = None if output.init is None else hosts.number(output.init)
        output_keys.append(
            (init, hosts.number(output.result), start, output.offset, output.cropped, output.at)
        )
    epilogue_key = None if epilogue is None else _epilogue_key(epilogue, outer, hosts)
    if epilogue is not None and epilogue_key is None:
        return None
    return (
        request.loops,
        body,
        tuple(input_keys),
        tuple(output_keys),
        epilogue_key,
        tuple(v.type for v in hosts.hosts),
        _gathers_key(request),
    )


def _gathers_key(request: GenericRequest) -> Hashable:
    """The clamps of every gather the kernel loads (`gather_clamps`) and which 64-bit index
    casts it narrows (`_narrowable_index_cast`): they depend on what is proven of the
    values, which the other fields of the key do not show."""
    stages = () if request.epilogue is None else request.epilogue.stages
    keys: list[Hashable] = []
    for generic in [request.op, *(stage.op for stage in stages)]:
        for inner in generic.body.walk():
            if isinstance(inner, tensor.ExtractOp) and _defined_outside(inner.tensor, generic):
                keys.append(gather_clamps(inner, request.bounds))
            elif isinstance(inner, arith.IndexCastOp):
                keys.append(_narrowable_index_cast(inner, request.bounds))
    return tuple(keys)


def _epilogue_key(epilogue: Epilogue, outer: OuterKey, hosts: HostNumbers) -> Hashable | None:
    """The part of `generic_key` that `Epilogue.emit` builds from (None: unkeyable)."""
    env: dict[SSAValue, int] = {epilogue.root: 0}
    stages: list[Hashable] = []
    for stage in epilogue.stages:
        sources: list[Hashable] = []
        for source, operand in zip(stage.inputs, stage.op.inputs, strict=True):
            if source.value is not None:
                if source.value not in env:
                    return None
                sources.append(("value", env[source.value]))
            elif source.buffer is not None:
                sources.append(("buffer", hosts.number(source.buffer), source.indices))
            else:
                supplied = outer(operand)
                if supplied is None:
                    return None
                sources.append(("outer", supplied))
        body = regions_key(stage.op, _inside(stage.op, outer))
        if body is None:
            return None
        stages.append((tuple(sources), body, stage.loops))
        env[stage.op.res[0]] = len(env)
    if epilogue.result not in env:
        return None
    return (tuple(stages), env[epilogue.result])


def _inside(op: Operation, outer: OuterKey) -> OuterKey:
    """`outer` for the values a clone of `op`'s body maps through `external` (`_clone_body`:
    those defined outside `op`); None for any other value the body uses before defining."""
    return lambda value: outer(value) if _defined_outside(value, op) else None


def _zero(element: Attribute) -> Attribute:
    """A placeholder initial accumulator (never observed: reductions run at least once)."""
    if isinstance(element, AnyFloat):
        return FloatAttr(0.0, element)
    return IntegerAttr(0, element)  # type: ignore[arg-type]


def _reduction_nest(
    kernel: Kernel,
    op: GenericOp,
    loops: GenericLoops,
    names: Sequence[str],
    bounds: dict[str, tuple[int, int]],
    ivs: dict[int, SSAValue],
    point: InsertPoint,
    inputs: Sequence[BlockArgument | None],
    accumulators: Sequence[SSAValue],
    external: External,
    request: GenericRequest,
) -> list[SSAValue]:
    """Emit the reduction loops (carrying the accumulators) around the loads and the body;
    returns the final value of each output."""
    carried = list(accumulators)
    loops_made: list[tuple[scf.ForOp, Block]] = []
    for m in loops.reductions:
        loop, iv, args, body = _for(kernel, loops.extents[m], names[m], point, carried)
        ivs[m] = iv
        carried = args
        loops_made.append((loop, body))
        point = InsertPoint.at_end(body)
    emitter = ExprEmitter(point, {names[m]: v for m, v in ivs.items()}, bounds)
    values: list[SSAValue] = []
    for k, param in enumerate(inputs):
        operand = op.inputs[k]
        if param is None or not isinstance(operand.type, ShapedType):
            values.append(external(operand, kernel))
            continue
        read = request.padded.get(k)
        if read is not None:
            values.append(_padded_load(kernel, param, loops.maps[k], read, emitter, bounds, point))
            continue
        indices = _indices(kernel, loops.maps[k], emitter)
        values.append(_insert(LoadOp(param, indices), point).results[0])
    yielded = _clone_body(op, [*values, *carried], ivs, point, kernel, external, request.bounds)
    for loop, body in reversed(loops_made):
        body.add_op(scf.YieldOp(*yielded))
        yielded = list[SSAValue](loop.results)
    return yielded


def _padded_load(
    kernel: Kernel,
    source: SSAValue,
    exprs: Sequence[Expr],
    read: PaddedRead,
    emitter: ExprEmitter,
    bounds: Mapping[str, tuple[int, int]],
    point: InsertPoint,
) -> SSAValue:
    """The element at `exprs` of the padded tensor (`PaddedRead`): a load of `source` at
    the clamped shifted index, then a select of the pad value where any axis is outside
    (only the bounds the loop ranges do not already prove are checked)."""
    indices: list[SSAValue] = []
    inside: list[SSAValue] = []
    for expr, low, extent in zip(exprs, read.low, read.extents, strict=True):
        shifted = expr + (-low) if low else expr
        index = emitter.emit(shifted)
        clamped = index
        lo, hi = interval_of(shifted, bounds)
        if lo is None or lo < 0:
            inside.append(_insert(arith.CmpiOp(index, kernel.index(0), "sge"), point).results[0])
            clamped = _insert(arith.MaxSIOp(clamped, kernel.index(0)), point).results[0]
        if hi is None or hi > extent - 1:
            inside.append(
                _insert(arith.CmpiOp(index, kernel.index(extent), "slt"), point).results[0]
            )
            clamped = _insert(arith.MinSIOp(clamped, kernel.index(extent - 1)), point).results[0]
        indices.append(clamped)
    value = _insert(LoadOp(source, indices or [kernel.index(0)]), point).results[0]
    if not inside:
        return value
    condition = inside[0]
    for other in inside[1:]:
        condition = _insert(arith.AndIOp(condition, other), point).results[0]
    pad = kernel.constant(read.pad_value)
    return _insert(arith.SelectOp(condition, value, pad), point).results[0]


def _clone_body(
    op: GenericOp,
    args: Sequence[SSAValue],
    ivs: dict[int, SSAValue],
    point: InsertPoint,
    kernel: Kernel,
    external: External,
    bounds: ValueBounds,
) -> list[SSAValue]:
    """Clone the generic's body at `point` with its block arguments bound to `args`;
    returns the yielded values. A `tensor.extract` from a tensor defined outside (a
    gather) becomes a load of that tensor's buffer (`_gather_load`)."""
    block = op.body.blocks[0]
    mapper: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
    for inner in block.walk():
        for operand in inner.operands:
            if operand not in mapper and _defined_outside(operand, op):
                mapper[operand] = external(operand, kernel)
    for body_op in block.ops:
        if isinstance(body_op, LinalgYieldOp):
            return [mapper[v] for v in body_op.operands]
        if isinstance(body_op, IndexOp):
            mapper[body_op.result] = ivs[body_op.dim.value.data]
            continue
        if isinstance(body_op, tensor.ExtractOp) and _defined_outside(body_op.tensor, op):
            mapper[body_op.result] = _gather_load(kernel, body_op, mapper, bounds, point)
            continue
        if _wide_gather_index(body_op, op) is not None:
            continue  # `_gather_index` reads its operand
        if _narrowable_index_cast(body_op, bounds):
            assert isinstance(body_op, arith.IndexCastOp)
            narrow = _insert(arith.TruncIOp(mapper[body_op.input], IntegerType(32)), point)
            cast = _insert(arith.IndexCastOp(narrow.results[0], IndexType()), point)
            mapper[body_op.result] = cast.results[0]
            continue
        if any(isinstance(v.type, TensorType) for v in (*body_op.operands, *body_op.results)):
            raise PassFailedException(
                f"legalize-layout: '{body_op.name}' in the body of a linalg.generic uses a "
                "tensor made in the body; a kernel reads only tensors defined outside it"
            )
        _insert(body_op.clone(value_mapper=mapper), point)
    raise ValueError("linalg.generic body has no linalg.yield")


def gather_clamps(extract: tensor.ExtractOp, bounds: ValueBounds) -> tuple[tuple[bool, bool], ...]:
    """Per index of a gather (`tensor.extract` in a generic body), whether the kernel clamps
    it from below (to 0) and from above (to the extent - 1): exactly where `bounds` does not
    prove it inside the tensor. An index outside is undefined behaviour in the source
    (`tensor.extract`), so the clamp changes no defined result; it keeps every load of the
    kernel inside its buffer (or texture)."""
    shape = static_shape(extract.tensor) or ()
    clamps: list[tuple[bool, bool]] = []
    for index, extent in zip(extract.indices, shape, strict=True):
        found = bounds.of(index)
        low = found is None or found[0] < 0
        high = found is None or found[1] > extent - 1
        clamps.append((low, high))
    return tuple(clamps)


def _gather_load(
    kernel: Kernel,
    extract: tensor.ExtractOp,
    mapper: Mapping[SSAValue, SSAValue],
    bounds: ValueBounds,
    point: InsertPoint,
) -> SSAValue:
    """A gather as a load of the tensor's buffer at the extract's indices, each clamped into
    the tensor where it is not proven inside (`gather_clamps`); a rank-0 tensor (a buffer
    of shape [1]) is loaded at 0."""
    buffer = mapper[extract.tensor]
    if not isinstance(buffer.type, BufferType):
        raise PassFailedException(
            f"legalize-layout: 'tensor.extract' reads {extract.tensor.type}, which has no buffer"
        )
    shape = static_shape(extract.tensor) or ()
    indices = [
        _gather_index(kernel, index, mapper, clamps, extent, point)
        for clamps, index, extent in zip(
            gather_clamps(extract, bounds), extract.indices, shape, strict=True
        )
    ]
    return _insert(LoadOp(buffer, indices or [kernel.index(0)]), point).results[0]


def _gather_index(
    kernel: Kernel,
    index: SSAValue,
    mapper: Mapping[SSAValue, SSAValue],
    clamps: tuple[bool, bool],
    extent: int,
    point: InsertPoint,
) -> SSAValue:
    """The kernel's `index` value of one index of a gather, clamped into ``[0, extent)``
    where `clamps` says. An ``index_cast`` of a 64-bit integer (torch's index tensors) is
    clamped in its 64-bit type, then truncated to i32 and cast: exact, since the value is
    then inside ``[0, extent)`` (kernels compute `index` in 32 bits)."""
    low, high = clamps
    wide = index.owner if isinstance(index.owner, arith.IndexCastOp) else None
    if wide is None or _wide_gather_index(wide, None) is None:
        value = mapper[index]
        if low:
            value = _insert(arith.MaxSIOp(value, kernel.index(0)), point).results[0]
        if high:
            value = _insert(arith.MinSIOp(value, kernel.index(extent - 1)), point).results[0]
        return value
    source = wide.input
    value = mapper[source]
    if low:
        zero = kernel.constant(IntegerAttr(0, source.type))  # type: ignore[arg-type]
        value = _insert(arith.MaxSIOp(value, zero), point).results[0]
    if high:
        top = kernel.constant(IntegerAttr(extent - 1, source.type))  # type: ignore[arg-type]
        value = _insert(arith.MinSIOp(value, top), point).results[0]
    narrow = _insert(arith.TruncIOp(value, IntegerType(32)), point).results[0]
    return _insert(arith.IndexCastOp(narrow, IndexType()), point).results[0]


def _narrowable_index_cast(op: Operation, bounds: ValueBounds) -> bool:
    """Whether `op` is an ``index_cast`` of an integer wider than 32 bits to `index` whose
    value is proven to fit in i32: the kernel truncates to i32 first (exact), since kernels
    compute `index` in 32 bits."""
    if not isinstance(op, arith.IndexCastOp) or not isinstance(op.result.type, IndexType):
        return False
    source = op.input.type
    if not isinstance(source, IntegerType) or source.width.data <= 32:
        return False
    found = bounds.of(op.result)
    return found is not None and found[0] >= -(2**31) and found[1] < 2**31


def _wide_gather_index(op: Operation, generic: GenericOp | None) -> arith.IndexCastOp | None:
    """`op` when it is an ``index_cast`` of an integer wider than 32 bits to `index` whose
    every use is an index of a gather (of a tensor defined outside `generic`, when given):
    `_gather_index` reads its operand instead of it."""
    if not isinstance(op, arith.IndexCastOp) or not isinstance(op.result.type, IndexType):
        return None
    source = op.input.type
    if not isinstance(source, IntegerType) or source.width.data <= 32 or not op.result.uses:
        return None
    for use in op.result.uses:
        user = use.operation
        if not isinstance(user, tensor.ExtractOp) or use.index == 0:
            return None
        if generic is not None and not _defined_outside(user.tensor, generic):
            return None
    return op


def _defined_outside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    parent = owner.parent_op() if isinstance(owner, Block) else owner
    return parent is None or not op.is_ancestor(parent)
