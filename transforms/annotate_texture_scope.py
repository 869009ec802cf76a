"""annotate-texture-scope{max-image-width=16384 max-image-height=16384 weights-in-global=false}:
choose the memory scope of every tensor by consumer priority (the Adreno RFC's
AnnotateCustomScope: CollectConsumerScopeInfo, CollectProducerScopeInfo).

Demands. Each use of a tensor demands a scope:

- a `func.return` demands ``global`` (function results are plain buffers);
- the filter (input #1) of a layout-critical op (a `layout.frozen` generic or a named
  convolution) demands ``global.texture-weight``, or ``global`` with
  ``weights-in-global=true`` (the RFC's mixed case: weights from DDR, activations through
  the texture path);
- any other use demands ``global.texture``;

but only a *texture-eligible* tensor can be demanded in a texture scope (else ``global``):
static, element type f32 or f16 (HALF_FLOAT images, core OpenCL: no extension needed),
rank >= 2, innermost extent 4
(one RGBA texel), and its 2-D image in that scope (docs/semantics.md "Textures": the scope's
default separator; width = columns / 4 texels, height = rows) within ``max-image-width`` x
``max-image-height``. A tensor over the limits stays in
``global`` (with ``remarks=true``, a ``remark:`` on stderr says why).

Decision. A tensor's producer gets the scope most of its uses demand (ties: a texture
scope before global, the RFC's default; then the first use in program order); the other
uses will need copies (`realize-scopes`). A producer that
cannot write whole texels keeps ``global`` (and says why under ``remarks``), and its uses then demand
``global``: a `linalg.generic` whose outputs' innermost axes are not all indexed by one
parallel loop of extent 4, or whose body computes a point-dependent value with an op that
`vectorize-texels` does not run lane by lane (the same rule, so the target never meets a
partial texel store), a `layout.transform` that pads (its padding splits texels: the
per-lane choice is not vectorized yet), a `layout.pad` of the innermost axis. Uses of
function arguments (global buffers) demand ``global`` likewise: a copy into a texture
would cost a kernel of its own. A `layout.copy` keeps the scope it names. A tensor
without uses is ``global``.

Annotations: ``layout.scope = "..."`` on every op with a tensor result (see
`dialects/layout_scopes.py`) and ``layout.operand_scopes = [...]`` (one demand per operand,
``""`` for non-tensors, for `tensor.empty` results, whose undefined contents need no
copies, and for the operand of a `layout.copy`, which reads any scope) on every op with a tensor operand, `func.return` included. `tensor.empty` itself
is not annotated: it has no storage unless something reads it, and then it is global.
Function arguments are ``global``. The pass only writes attributes; a second run writes
the same ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import Float16Type, Float32Type, ModuleOp, TensorType
from xdsl.dialects.linalg.abstract_ops import ConvOperation, NamedOperation
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.dialects.tensor import EmptyOp, ExtractOp
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from physlayout.dialects.buffer_layout import TEXEL_LANES, ImageLimits
from physlayout.dialects.buffer_layout import image_size as buffer_image_size
from physlayout.dialects.layout import BufferType, MemoryScope
from physlayout.dialects.layout_graph import PadOp, TransformOp, static_shape
from physlayout.dialects.layout_scopes import (
    GLOBAL,
    OPERAND_SCOPES_ATTR,
    CopyOp,
    demands_attr,
    set_scope,
)
from physlayout.dialects.linalg_generic import generic_form
from physlayout.transforms.diagnostics import emit_remark, require_options
from physlayout.transforms.flow_layout_rewrites import FROZEN
from physlayout.transforms.lane_loop_plan import (
    INDEX_OPS,
    is_lane_wise_compare,
    is_lane_wise_float_op,
    is_lane_wise_select,
    is_uniform_op,
)
from physlayout.transforms.legalize_kernels import texel_lane_loop
from physlayout.transforms.pass_options import PhyslayoutPass

TEXTURE: str = MemoryScope.TEXTURE
TEXTURE_WEIGHT: str = MemoryScope.TEXTURE_WEIGHT


def image_size(value: SSAValue, scope: str) -> tuple[int, int] | None:
    """(width in texels, height) of `value`'s 2-D image in `scope`, or None when the
    tensor cannot be a texture (element type, rank, innermost extent)."""
    type_ = value.type
    shape = static_shape(value)
    if not isinstance(type_, TensorType) or shape is None or len(shape) < 2:
        return None
    if (
        not isinstance(type_.get_element_type(), Float32Type | Float16Type)
        or shape[-1] != TEXEL_LANES
    ):
        return None
    return _image_size(shape, type_.get_element_type(), scope)


@lru_cache(maxsize=4096)
def _image_size(shape: tuple[int, ...], element: Attribute, scope: str) -> tuple[int, int]:
    """The image of a buffer of `shape` and `element` in `scope` (a pure function of the
    three: a model asks it for the same few shapes thousands of times, and building the
    buffer type to ask is most of the cost)."""
    return buffer_image_size(BufferType(shape, element, scope=scope))


def writes_texels(op: Operation) -> str | None:
    """Why `op` cannot write its result as whole texels, or None when it can."""
    match op:
        case GenericOp():
            if texel_lane_loop(op) is None:
                return "its outputs' innermost axes are not one parallel loop of extent 4"
            return unvectorizable_body_op(op)
        case NamedOperation():
            generic = generic_form(op)
            try:
                return writes_texels(generic)
            finally:
                generic.erase()
        case TransformOp() if op.pads():
            return "its transform pads, splitting texels (not vectorized yet)"
        case PadOp() if op.get_low()[-1] or op.get_high()[-1]:
            return "it pads the innermost (texel) axis"
        case _:
            return None
    return None


def unvectorizable_body_op(op: GenericOp, lane: int | None = None) -> str | None:
    """Why vectorize-texels could not compute the body of `op` on whole texels, or None: every
    op that depends on the loop point (on a block argument, transitively) must be a float op
    it computes lane by lane (`lane_loop_plan.is_lane_wise_float_op`; a float compare that
    only picks floats, and its selects, lane by lane too), and every other op one it computes
    once for all lanes (`is_uniform_op`; a `linalg.index` of a loop other than the texel lane
    loop) -- the lane plan's own rules; an `scf.if` on such a uniform condition (a transposed
    conv's tap guard) with branches of the same ops.

    With `lane` given (the loop of `op` run as the texel lane loop; a group's stage), a
    gather's body qualifies too (an upsample fused into a texture group): `linalg.index` of
    `lane` and index arithmetic on it (`lane_loop_plan.INDEX_OPS`) may only feed gather
    indices, and a gather (`tensor.extract`) at lane-varying indices is four scalar loads, at
    uniform ones one. Without it the lane loop is `texel_lane_loop(op)` and no gather
    qualifies."""
    lane_loop = lane if lane is not None else texel_lane_loop(op)
    scan = _BodyScan(lane_loop, lane is not None, _lane_varying_args(op, lane_loop))
    block = op.body.block
    problem = scan.block(block)
    if problem is not None:
        return problem
    yielded = block.last_op.operands if block.last_op is not None else ()
    if any(v in scan.lane_indices for v in yielded):
        return "its body yields the texel lane's index, which vectorize-texels cannot store"
    return None


def _lane_varying_args(op: GenericOp, lane: int | None) -> set[SSAValue]:
    """The block arguments of `op` that may differ between the lanes: the outputs' and
    those of the inputs read at a map that uses the lane loop `lane` (all of them without
    a lane loop). An input read without it (a gather's row index, read at the row) is the
    same element for the four lanes."""
    args = op.body.block.args
    if lane is None:
        return set(args)
    maps = op.indexing_maps.data
    return {
        arg for k, arg in enumerate(args)
        if k >= len(op.inputs) or any(lane in r.used_dims() for r in maps[k].data.results)
    }  # fmt: skip


@dataclass
class _BodyScan:
    """The walk of `unvectorizable_body_op`: which values vary over the lanes (`varying`)
    and which are the lane's index or index arithmetic on it (`lane_indices`)."""

    lane: int | None
    gathers: bool
    varying: set[SSAValue]
    lane_indices: set[SSAValue] = field(default_factory=set[SSAValue])

    def block(self, block: Block) -> str | None:
        """Why the ops of `block` (its terminator aside) cannot run on texels, or None."""
        for body_op in block.ops:
            if body_op is block.last_op:
                continue
            problem = self.op(body_op)
            if problem is not None:
                return problem
        return None

    def op(self, body_op: Operation) -> str | None:
        """Why `body_op` cannot run on texels, or None (updating `varying` and
        `lane_indices` with its results)."""
        problem = f"its body computes '{body_op.name}', which vectorize-texels cannot run on texels"
        if isinstance(body_op, IndexOp):
            if body_op.dim.value.data != self.lane:
                return None
            if not self.gathers:
                return problem
            self.lane_indices.add(body_op.result)
            return None
        if self.gathers and isinstance(body_op, ExtractOp):
            if body_op.tensor in self.varying or body_op.tensor in self.lane_indices:
                return "its body gathers from a value it computes"
            if any(v in self.lane_indices or v in self.varying for v in body_op.indices):
                self.varying.update(body_op.results)
            return None
        if any(v in self.lane_indices for v in body_op.operands):
            if body_op.name not in INDEX_OPS or any(v in self.varying for v in body_op.operands):
                return (
                    f"its body computes '{body_op.name}' on the texel lane's index, which "
                    "vectorize-texels runs only in access indices"
                )
            self.lane_indices.update(body_op.results)
            return None
        if isinstance(body_op, scf.IfOp) and body_op.cond not in self.varying:
            return self.uniform_if(body_op)
        if not any(v in self.varying for v in body_op.operands):
            return None if is_uniform_op(body_op) else problem
        if is_lane_wise_compare(body_op) or is_lane_wise_select(body_op):
            self.varying.update(body_op.results)
            return None
        if not is_lane_wise_float_op(body_op):
            return problem
        self.varying.update(body_op.results)
        return None

    def uniform_if(self, op: scf.IfOp) -> str | None:
        """An `scf.if` whose condition is the same for the four lanes: both branches must run
        on texels; its results vary when a branch yields a varying value."""
        for region in op.regions:
            for inner in region.blocks:
                problem = self.block(inner)
                if problem is not None:
                    return problem
                if inner.last_op is not None and any(v in self.varying for v in inner.last_op.operands):
                    self.varying.update(op.results)
        return None


@dataclass
class ScopeAnnotator:
    """The scope decisions of one pass run (module docstring: demands, then decisions), with the
    pass's image limits and `weights-in-global` choice."""

    limits: ImageLimits
    weights_in_global: bool
    remarks: bool = False

    def remark(self, message: str) -> None:
        """With `remarks`, print `remark: annotate-texture-scope: MESSAGE` on stderr
        (`emit_remark`, without a location: why a tensor stays in `global`); the IR is the same
        with or without remarks."""
        if self.remarks:
            emit_remark(AnnotateTextureScopePass.name, None, message)

    def annotate(self, function: func.FuncOp) -> None:
        """Annotate `function`: `layout.scope` on every op with a tensor result (`tensor.empty`
        excepted) and `layout.operand_scopes` on every op with a tensor operand, `func.return`
        included. Only attributes change; running it again writes the same ones."""
        scopes: dict[SSAValue, str] = {}
        # Only attributes change here, so each block's op order is computed once (it was
        # computed again for every tensor: quadratic in the ops of a function).
        orders: dict[Block, dict[Operation, int]] = {}
        for op in function.walk():
            if op is function:
                continue
            for result in op.results:
                if isinstance(result.type, TensorType) and not isinstance(op, EmptyOp):
                    block = op.parent_block()
                    order = None
                    if block is not None:
                        order = orders.get(block)
                        if order is None:
                            order = orders[block] = block_order(result)
                    scopes[result] = self.decide(result, order)
                    set_scope(op, scopes[result])
        for op in function.walk():
            if op is function or not any(isinstance(v.type, TensorType) for v in op.operands):
                continue
            demands = [
                self.effective_demand(op, k, scopes)
                if _has_contents(v) and not isinstance(op, CopyOp)
                else ""
                for k, v in enumerate(op.operands)
            ]
            op.attributes[OPERAND_SCOPES_ATTR] = demands_attr(demands)

    def requested(self, user: Operation, index: int) -> str:
        """The scope the use `index` of `user` asks for, before eligibility."""
        if isinstance(user, func.ReturnOp):
            return GLOBAL
        if index == 1 and (
            (isinstance(user, GenericOp) and FROZEN in user.attributes)
            or isinstance(user, ConvOperation)
        ):
            return GLOBAL if self.weights_in_global else TEXTURE_WEIGHT
        return TEXTURE

    def demand(self, user: Operation, index: int) -> str:
        """The scope the use `index` of `user` demands (module docstring)."""
        scope = self.requested(user, index)
        if scope == GLOBAL or self.fits(user.operands[index], scope) is not None:
            return GLOBAL
        return scope

    def fits(self, value: SSAValue, scope: str) -> str | None:
        """Why `value` cannot live in the texture `scope`, or None when it can."""
        size = image_size(value, scope)
        if size is None:
            return "not texture-eligible"
        width, height = size
        if width > self.limits.max_width or height > self.limits.max_height:
            return (
                f"its {scope} image is {width} x {height} texels, over the limit "
                f"{self.limits.max_width} x {self.limits.max_height}"
            )
        return None

    def decide(self, value: OpResult, order: dict[Operation, int] | None = None) -> str:
        """The producer scope of `value` (module docstring; `order`: `block_order(value)`)."""
        op = value.op
        if isinstance(op, CopyOp):
            return op.scope.data
        uses = ordered_uses(value, order)
        for scope in dict.fromkeys(self.requested(u, k) for u, k in uses):
            reason = self.fits(value, scope) if scope != GLOBAL else None
            if reason is not None and image_size(value, scope) is not None:
                self.remark(f"{_name(value)} ({value.type}) stays in global: {reason}")
        demands = [self.demand(u, k) for u, k in uses]
        if not demands:
            return GLOBAL
        counts = Counter(demands)
        best = max(counts.values())
        tied = [d for d in demands if counts[d] == best]
        scope = next((d for d in tied if d != GLOBAL), GLOBAL)
        if scope == GLOBAL:
            return GLOBAL
        reason = writes_texels(op)
        if reason is not None:
            self.remark(
                f"{_name(value)} ({value.type}) stays in global: {op.name} cannot write "
                f"whole texels: {reason}"
            )
            return GLOBAL
        return scope

    def effective_demand(self, user: Operation, index: int, scopes: dict[SSAValue, str]) -> str:
        """A use's demand, except that a function argument, or a tensor whose producer
        cannot write texels, is read where it is, in global (no copy is worth making)."""
        value = user.operands[index]
        demand = self.demand(user, index)
        if demand == GLOBAL or not isinstance(value, OpResult):
            return GLOBAL
        if scopes.get(value) == GLOBAL and writes_texels(value.op) is not None:
            return GLOBAL
        return demand


def _has_contents(value: SSAValue) -> bool:
    """A tensor with defined contents (not `tensor.empty`, which needs no copies)."""
    return isinstance(value.type, TensorType) and not isinstance(value.owner, EmptyOp)


def ordered_uses(
    value: SSAValue, order: dict[Operation, int] | None = None
) -> list[tuple[Operation, int]]:
    """The uses of `value` as (user, operand index), in program order (`order`: the
    positions of the ops of `value`'s block, `block_order`, when the caller has them)."""
    if order is None:
        order = block_order(value)
    uses = [(use.operation, use.index) for use in value.uses]
    return sorted(uses, key=lambda u: (order.get(u[0], len(order)), u[1]))


def block_order(value: SSAValue) -> dict[Operation, int]:
    """The position of each op of the block that defines `value`."""
    block = _block_of(value)
    return {op: k for k, op in enumerate(block.ops)} if block is not None else {}


def _block_of(value: SSAValue) -> Block | None:
    owner = value.owner
    return owner if not isinstance(owner, Operation) else owner.parent_block()


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a tensor"


@dataclass(frozen=True)
class AnnotateTextureScopePass(PhyslayoutPass):
    """Choose each tensor's memory scope by consumer demand (module docstring).

    Options:
        max-image-width (int, 16384): widest 2-D image (texels) a texture tensor may need.
        max-image-height (int, 16384): tallest 2-D image (rows) a texture tensor may need.
        weights-in-global (bool, false): keep conv filters in `global` instead of
            `global.texture-weight`.
        remarks (bool, false): say on stderr why a tensor that could be a texture stays in
            `global`.
    """

    name = "annotate-texture-scope"

    max_image_width: int = 16384
    """Widest 2-D image (texels) a texture tensor may need."""
    max_image_height: int = 16384
    """Tallest 2-D image (rows) a texture tensor may need."""
    weights_in_global: bool = False
    """Keep conv filters in `global` instead of `global.texture-weight`."""
    remarks: bool = False
    """Say on stderr why a tensor that could be a texture stays in `global`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_options(
            self.name, max_image_width=self.max_image_width, max_image_height=self.max_image_height
        )
        annotator = ScopeAnnotator(
            ImageLimits(self.max_image_width, self.max_image_height),
            self.weights_in_global,
            self.remarks,
        )
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                annotator.annotate(function)
