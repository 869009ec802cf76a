"""verify-buffers: validate buffer declarations and texture buffers (RFC DeclBuffer, "TIR
validation"; docs/semantics.md "Textures").

The pass rewrites nothing: it raises one `VerifyException` listing every problem (each
message starts with `verify-buffers:`; the offending ops are marked in the attached IR
dump), or leaves the module untouched. `verify_buffers(module)` does the same from Python
and `buffer_problems(module)` returns the problems as a list. Every pass of physlayout
leaves IR that passes it, and every pass or target that could hide an invalid buffer
(`apply-layout`, `flatten-buffers` and `lower-layout` erase dead declarations or lower
buffers away; so does the OpenCL target) refuses input that fails it
(`refuse_invalid_buffers`).

Declaration rules
-----------------
1. *No implicit buffer declaration.* Every `!layout.buffer` value is a function parameter
   (an argument of a function's entry block) or the result of `layout.decl_buffer`. A
   buffer carried by `scf.for` iteration arguments, returned by a call or an `scf.if`,
   produced by a cast or by any other op is an implicit declaration.
2. *No undefined buffer.* The data handle of every `layout.decl_buffer` is a function
   parameter, a `layout.allocate`, a `layout.data` of another buffer (the declaration is
   then an alias of that buffer) or the result of a `func.call`.
3. *Aliases fit.* With the storage roots of `buffer_aliases` (`layout.data` is the handle
   its buffer was declared over), each declaration must lie inside its root storage when
   both sizes are static: ``offset + size <= root size`` in bytes, where the offset is
   `elem_offset` times the handle's element size. The buffer's scalar element type equals
   its handle's and its root's (`vector<4xf32>` over `f32` is fine: the same scalars),
   and its scope is its root's.
4. *Scoped use.* A buffer is used only inside the region that declares it (the function
   body for a parameter, the region holding the `layout.decl_buffer` otherwise), and
   never before its declaration (in the same block: after it; in another block of the
   region: in a block the declaration's block dominates).

Texture rules (buffers in a `global.texture*` scope)
-----------------------------------------------------
The layout considered is the buffer's transformed layout: its shape and separators after
its pending transforms (the transform's `|`), else its own.

5. The element type is `f32` or `f16` (one channel), or `vector<4xf32>` / `vector<4xf16>`
   (one texel per element).
6. The buffer flattens to a 2-D image: rank >= 2 and at most one axis separator (none:
   the scope's default separator is used, as `flatten-buffers` does).
7. One texel per innermost step (channel elements only): a buffer of rank >= 3 (not yet
   flattened) has innermost extent 4, e.g. `[n, c4, h | w, 4]`; a rank-2 buffer (the
   image itself, `[rows, cols]`, cols = width * 4) has a multiple of 4 columns.
8. The image fits the limits: width (columns in texels) <= `max-image-width`, height
   (rows) <= `max-image-height` (default 16384 x 16384, Adreno's limit).
9. Loads read whole texels or lanes of one: a vector access of N lanes of channel
   elements must be proven to stay inside one texel (N <= 4 and
   ``innermost index mod 4 + N <= 4``).
10. Stores to a *flat* texture buffer (rank 2 with separators `[1]`, the form
    `flatten-buffers` produces and the OpenCL target writes with `write_imagef`) write
    whole texels: a `vector<4xf32>` whose innermost index is proven a multiple of 4. A
    scalar or partial store is a partial-texel write. This is a code-generation rule:
    buffer-level IR may write a texture element-wise until `vectorize-texels` has run, so
    the rule is checked only with `allow-partial-texel-writes=false` (the OpenCL target
    enforces it on what it emits).
   Proofs use the loop bounds and constant steps of the loops that compute the index.

Buffers with pending transforms are checked for rules 5-8 on their transformed layout;
their accesses (logical indices) are checked once `apply-layout` has run. A buffer with
pending transforms covers its transformed (physical) size, the storage it occupies; an
allocation whose extents are the logical shape of a transformed buffer declared over it
at offset 0 counts with that transformed size (`apply-layout` resizes it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import InitVar, dataclass, field

from xdsl.context import Context
from xdsl.dialects import affine, scf
from xdsl.dialects.builtin import (
    MemRefType,
    ModuleOp,
    UnrankedMemRefType,
    UnrealizedConversionCastOp,
    VectorType,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.buffer_layout import (
    TEXEL_LANES,
    flattened_type,
    flattening_separators,
    image_size,
    texel_lanes_per_element,
)
from physlayout.dialects.layout import (
    BufferType,
    DeclBufferOp,
    LoadOp,
    PtrType,
    StoreOp,
    is_texture_scope,
    scalar_type,
)
from physlayout.indexing.bridges.arith import IndexAnalysis, constant_bounds_of
from physlayout.indexing.expr_range import expr_range
from physlayout.indexing.extents import transformed_shape
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.indexing.simplify import simplify
from physlayout.transforms.buffer_aliases import (
    BufferAliases,
    buffer_byte_size,
    defining_block,
    describe_value,
    is_function_parameter,
)
from physlayout.transforms.diagnostics import require_options
from physlayout.transforms.pass_options import PhyslayoutPass

DEFAULT_MAX_IMAGE_WIDTH = 16384
DEFAULT_MAX_IMAGE_HEIGHT = 16384
PREFIX = "verify-buffers: "


@dataclass(frozen=True)
class BufferProblem:
    """One violated rule: the op to point at and the message."""

    op: Operation
    message: str


# Texture layouts ---------------------------------------------------------------------------


def transformed_layout(buffer_type: BufferType) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Shape and axis separators after the pending transforms (None when a transform does
    not apply to the shape; `apply-layout` reports that)."""
    transforms = buffer_type.get_transforms()
    if not transforms:
        return buffer_type.get_shape(), buffer_type.get_axis_separators()
    try:
        shape = transformed_shape([t.index_map for t in transforms], buffer_type.get_shape())
    except ValueError:
        return None
    return tuple(shape), transforms[-1].axis_separators


def is_flat_texture(buffer_type: BufferType) -> bool:
    """A texture buffer in image form after `flatten-buffers`: rank 2, separators [1]."""
    return (
        is_texture_scope(buffer_type.get_scope())
        and not buffer_type.get_transforms()
        and buffer_type.rank == 2
        and buffer_type.get_axis_separators() == (1,)
    )


def texture_problem(buffer_type: BufferType, max_width: int, max_height: int) -> str | None:
    """Why a texture buffer of `buffer_type` breaks rules 5-8, phrased to follow
    "texture buffer %name" (None when it does not)."""
    lanes = texel_lanes_per_element(buffer_type.element_type)
    if lanes is None:
        return (
            f"has element type {buffer_type.element_type}; textures hold f32 or f16 "
            "channels (or vector<4xf32> / vector<4xf16> texels)"
        )
    layout = transformed_layout(buffer_type)
    if layout is None:
        return None
    shape, separators = layout
    if len(shape) < 2:
        return f"has rank {len(shape)}; a 2-D image needs rank >= 2"
    if len(separators) > 1:
        return (
            f"has {len(separators)} axis separators {list(separators)}; a 2-D image allows "
            "at most one"
        )
    image = buffer_type.with_layout(shape, separators)
    if len(flattening_separators(image)) != 1:
        return f"of shape {list(shape)} cannot flatten to a 2-D image"
    cols = flattened_type(image).get_shape()[1]
    if lanes == 1 and len(shape) > 2 and shape[-1] != TEXEL_LANES:
        return (
            f"has innermost extent {shape[-1]}; the innermost axis of a texture holds one "
            f"RGBA texel (extent {TEXEL_LANES})"
        )
    if lanes == 1 and cols % TEXEL_LANES != 0:
        return (
            f"has {cols} columns, not a whole number of RGBA texels (a multiple of {TEXEL_LANES})"
        )
    width, rows = image_size(image)
    if width > max_width or rows > max_height:
        return (
            f"needs a {width} x {rows} image (width x height in texels), beyond the image "
            f"limit {max_width} x {max_height}"
        )
    return None


# Texel alignment of accesses ---------------------------------------------------------------


def loop_start_and_step(value: SSAValue) -> tuple[int, int] | None:
    """`(lower bound, step)` of a loop induction variable with constant ones, else None."""
    if not isinstance(value, BlockArgument):
        return None
    loop = value.block.parent_op()
    lower: int | None = None
    step: int | None = None
    if isinstance(loop, scf.ForOp) and value.index == 0:
        lower, step = const_evaluate_operand(loop.lb), const_evaluate_operand(loop.step)
    elif isinstance(loop, scf.ParallelOp) and value.index < len(loop.step):
        lower = const_evaluate_operand(loop.lowerBound[value.index])
        step = const_evaluate_operand(loop.step[value.index])
    elif isinstance(loop, affine.ForOp) and value.index == 0:
        results = loop.lowerBoundMap.data.results
        bounds = constant_bounds_of(value)
        step = loop.step.value.data
        lower = bounds[0] if bounds is not None and len(results) == 1 else None
    if lower is None or step is None or step <= 0:
        return None
    return lower, step


def lane_range(index: SSAValue) -> tuple[int, int]:
    """A proven inclusive range of ``index mod 4`` (the lane inside a texel)."""
    analysis = IndexAnalysis()
    expr: Expr = analysis.expr_of(index)
    bounds = dict(analysis.bounds)
    strided: dict[str, Expr] = {}
    for name, leaf in analysis.leaves.items():
        start_step = loop_start_and_step(leaf)
        known = bounds.get(name)
        if start_step is None or start_step[1] == 1 or known is None:
            continue
        start, step = start_step
        trip = f"{name}_trip"
        strided[name] = Const(start) + Dim(trip) * step
        bounds[trip] = (0, (known[1] - start) // step)
    if strided:
        expr = expr.substitute(strided)
    try:
        lane = simplify(expr % TEXEL_LANES, bounds)
        if not lane.dims() <= bounds.keys():
            return 0, TEXEL_LANES - 1
        low, high = expr_range(lane, bounds)
    except ValueError:
        return 0, TEXEL_LANES - 1
    return max(low, 0), min(high, TEXEL_LANES - 1)


def access_problem(
    op: LoadOp | StoreOp,
    allow_partial_texel_writes: bool = True,
    lanes_of: Callable[[SSAValue], tuple[int, int]] = lane_range,
) -> str | None:
    """Why an access to a texture buffer breaks rule 9 or 10 (None when it does not).
    `lanes_of` computes `lane_range` (pass a memoized one to share work between accesses)."""
    buffer_type = op.buffer.type
    assert isinstance(buffer_type, BufferType)
    if (
        not is_texture_scope(buffer_type.get_scope())
        or buffer_type.get_transforms()
        or texel_lanes_per_element(buffer_type.element_type) != 1
        or not op.indices
    ):
        return None
    value_type = op.result.type if isinstance(op, LoadOp) else op.value.type
    lanes = value_type.get_shape()[0] if isinstance(value_type, VectorType) else 1
    whole_texels = (
        isinstance(op, StoreOp) and is_flat_texture(buffer_type) and not allow_partial_texel_writes
    )
    if whole_texels and lanes <= TEXEL_LANES:
        if lanes < TEXEL_LANES:
            return (
                f"store of {lanes} lane{'s' if lanes > 1 else ''} to flat texture buffer "
                f"{describe_value(op.buffer)} is a partial-texel write; image writes set "
                "whole RGBA texels "
                f"(store a vector<{TEXEL_LANES}x{buffer_type.element_type}> at a multiple of "
                f"{TEXEL_LANES})"
            )
        low, high = lanes_of(op.indices[-1])
        if (low, high) != (0, 0):
            return (
                f"store to flat texture buffer {describe_value(op.buffer)} is not proven to "
                "start at a texel "
                f"boundary (its column index mod {TEXEL_LANES} lies in [{low}, {high}])"
            )
        return None
    if lanes == 1:
        return None
    low, high = lanes_of(op.indices[-1])
    if high + lanes <= TEXEL_LANES:
        return None
    return (
        f"{value_type} {'load from' if isinstance(op, LoadOp) else 'store to'} texture "
        f"buffer {describe_value(op.buffer)} may cross a texel boundary (its innermost "
        f"index mod {TEXEL_LANES} "
        f"lies in [{low}, {high}])"
    )


# Scoped use ----------------------------------------------------------------------------------


@dataclass
class Dominance:
    """Block order and block dominance, computed on demand per block and region.

    Not `xdsl.irdl.dominance.DominanceInfo`: it intersects the dominators of unreachable
    predecessors too, so it would reject a declaration in the entry block used in a block
    that an unreachable block also branches to (`@cfg_unreachable_predecessor` in
    test/transforms/verify-buffers.mlir). Here unreachable blocks start with every block
    as a dominator, as in the classic iterative algorithm.
    """

    _positions: dict[Block, dict[Operation, int]] = field(
        default_factory=dict[Block, dict[Operation, int]]
    )
    _dominators: dict[Region, dict[Block, set[Block]]] = field(
        default_factory=dict[Region, dict[Block, set[Block]]]
    )

    def position(self, op: Operation) -> int:
        """The position of `op` among the ops of its block (0 for the first); orders two ops of one
        block. `op` must be in a block."""
        block = op.parent_block()
        assert block is not None
        positions = self._positions.get(block)
        if positions is None:
            positions = {o: i for i, o in enumerate(block.ops)}
            self._positions[block] = positions
        return positions[op]

    def block_dominates(self, a: Block, b: Block) -> bool:
        """Whether every path from the region's entry to `b` passes through `a`."""
        region = a.parent
        assert region is not None
        dominators = self._dominators.get(region)
        if dominators is None:
            dominators = _dominator_sets(region)
            self._dominators[region] = dominators
        return a in dominators.get(b, {b})


def _dominator_sets(region: Region) -> dict[Block, set[Block]]:
    blocks = list(region.blocks)
    predecessors: dict[Block, list[Block]] = {b: [] for b in blocks}
    for block in blocks:
        last = block.last_op
        for successor in last.successors if last is not None else ():
            predecessors.setdefault(successor, []).append(block)
    everything = set(blocks)
    dominators = {b: set(everything) for b in blocks}
    dominators[blocks[0]] = {blocks[0]}
    changed = True
    while changed:
        changed = False
        for block in blocks[1:]:
            preds = [dominators[p] for p in predecessors[block] if p in dominators]
            new = set.intersection(*preds) if preds else set(everything)
            new = new | {block}
            if new != dominators[block]:
                dominators[block] = new
                changed = True
    return dominators


def use_problem(buffer: SSAValue, user: Operation, dominance: Dominance) -> str | None:
    """Why `user` may not use `buffer` (rule 4), or None."""
    block = defining_block(buffer)
    region = None if block is None else block.parent
    anchor: Operation | None = user
    while anchor is not None:
        anchor_block = anchor.parent_block()
        if anchor_block is None:
            anchor = None
            break
        if anchor_block.parent is region:
            break
        anchor = anchor.parent_op()
    if anchor is None or block is None:
        return (
            f"buffer {describe_value(buffer)} is used outside the region that declares it "
            f"(by '{user.name}')"
        )
    anchor_block = anchor.parent_block()
    assert anchor_block is not None
    definer = buffer.owner
    if anchor_block is block:
        if isinstance(definer, Block):
            return None
        if definer is not anchor and dominance.position(definer) < dominance.position(anchor):
            return None
    elif dominance.block_dominates(block, anchor_block):
        return None
    return f"buffer {describe_value(buffer)} is used before its declaration (by '{user.name}')"


# The verifier ---------------------------------------------------------------------------------


def is_memref_bridge(buffer: SSAValue) -> bool:
    """Whether `buffer` is a `builtin.unrealized_conversion_cast` of one memref (the bridge by
    which memref code hands its storage to buffer-level code; `lower-layout` folds it)."""
    owner = buffer.owner
    return (
        isinstance(owner, UnrealizedConversionCastOp)
        and len(owner.inputs) == 1
        and isinstance(owner.inputs[0].type, MemRefType | UnrankedMemRefType)
    )


def _implicit_problem(buffer: SSAValue, allow_memref_bridges: bool = False) -> str | None:
    """Why `buffer` is not explicitly declared (rule 1), or None."""
    if is_function_parameter(buffer) or isinstance(buffer.owner, DeclBufferOp):
        return None
    if allow_memref_bridges and is_memref_bridge(buffer):
        return None
    name = describe_value(buffer)
    if isinstance(buffer, BlockArgument):
        parent = buffer.block.parent_op()
        where = f"an argument of a block of '{parent.name}'" if parent else "a block argument"
    else:
        assert isinstance(buffer.owner, Operation)
        where = f"a result of '{buffer.owner.name}'"
    return (
        f"buffer {name} is implicitly declared as {where}; a buffer must be a function "
        "parameter or the result of layout.decl_buffer"
    )


def _handle_origin(handle: SSAValue) -> str:
    if isinstance(handle, BlockArgument):
        parent = handle.block.parent_op()
        return f"an argument of a block of '{parent.name}'" if parent else "a block argument"
    assert isinstance(handle.owner, Operation)
    return f"'{handle.owner.name}'"


@dataclass
class BufferVerifier:
    """Collects the problems of the buffers under `root` (see the module docstring)."""

    root: Operation
    max_image_width: int = DEFAULT_MAX_IMAGE_WIDTH
    max_image_height: int = DEFAULT_MAX_IMAGE_HEIGHT
    allow_partial_texel_writes: bool = True
    allow_memref_bridges: bool = False
    """Accept (rule 1) a buffer cast from a memref (see `is_memref_bridge`)."""
    problems: list[BufferProblem] = field(default_factory=list[BufferProblem])
    known_aliases: InitVar[BufferAliases | None] = None
    """The `BufferAliases` of `root` when the caller has built them on this IR (built
    here otherwise)."""
    aliases: BufferAliases = field(init=False)
    dominance: Dominance = field(default_factory=Dominance, init=False)
    _lanes: dict[SSAValue, tuple[int, int]] = field(
        default_factory=dict[SSAValue, tuple[int, int]], init=False
    )
    _textures: dict[BufferType, str | None] = field(
        default_factory=dict[BufferType, str | None], init=False
    )

    def __post_init__(self, known_aliases: BufferAliases | None) -> None:
        self.aliases = BufferAliases(self.root) if known_aliases is None else known_aliases

    def run(self) -> list[BufferProblem]:
        """Check every buffer-typed value (block arguments and results), every `layout.decl_buffer`
        and every `layout.load`/`layout.store` under `root`, in walk order; the problems found,
        each naming its op (empty when the IR is valid). Call it once per verifier."""
        for op in self.root.walk():
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        self._check_buffer(arg, op)
            for result in op.results:
                self._check_buffer(result, op)
            if isinstance(op, DeclBufferOp):
                self._check_declaration(op)
            if isinstance(op, LoadOp | StoreOp):
                self._report(
                    op, access_problem(op, self.allow_partial_texel_writes, self._lane_range)
                )
        return self.problems

    def _lane_range(self, index: SSAValue) -> tuple[int, int]:
        known = self._lanes.get(index)
        if known is None:
            known = lane_range(index)
            self._lanes[index] = known
        return known

    def _report(self, op: Operation, message: str | None) -> None:
        if message is not None:
            self.problems.append(BufferProblem(op, PREFIX + message))

    def _check_buffer(self, buffer: SSAValue, where: Operation) -> None:
        buffer_type = buffer.type
        if not isinstance(buffer_type, BufferType):
            return
        self._report(where, _implicit_problem(buffer, self.allow_memref_bridges))
        for use in buffer.uses:
            self._report(use.operation, use_problem(buffer, use.operation, self.dominance))
        if not is_texture_scope(buffer_type.get_scope()):
            return
        if buffer_type not in self._textures:
            self._textures[buffer_type] = texture_problem(
                buffer_type, self.max_image_width, self.max_image_height
            )
        problem = self._textures[buffer_type]
        if problem is not None:
            self._report(where, f"texture buffer {describe_value(buffer)} {problem}")

    def _check_declaration(self, op: DeclBufferOp) -> None:
        storage = self.aliases.handle_storage(op.ptr)
        if storage is None:
            self._report(
                op,
                f"decl_buffer's data handle {describe_value(op.ptr)} is not defined by a "
                "parameter, layout.allocate, layout.data or a call (it comes from "
                f"{_handle_origin(op.ptr)})",
            )
            return
        buffer_type, ptr_type = op.buffer.type, op.ptr.type
        assert isinstance(buffer_type, BufferType) and isinstance(ptr_type, PtrType)
        element = scalar_type(buffer_type.element_type)
        for other, whose in (
            (ptr_type.element_type, None),
            (storage.element_type, storage),
        ):
            if scalar_type(other) != element:
                # the storage is described only here: describing prints an unnamed one's type
                what = (
                    "its data handle's" if whose is None else f"its storage's ({whose.describe()})"
                )
                self._report(
                    op,
                    f"buffer {describe_value(op.buffer)} has element type "
                    f"{buffer_type.element_type}, which is not "
                    f"compatible with {what} element type {other}",
                )
                return
        if storage.scope != buffer_type.get_scope():
            self._report(
                op,
                f"buffer {describe_value(op.buffer)} has scope '{buffer_type.get_scope()}' "
                "but its storage "
                f"({storage.describe()}) has scope '{storage.scope}'",
            )
            return
        view = self.aliases.view_of(op.buffer)
        size = buffer_byte_size(buffer_type)
        if view is None or view.byte_offset is None or size is None:
            return
        if storage.byte_size is not None and view.byte_offset + size > storage.byte_size:
            self._report(
                op,
                f"buffer {describe_value(op.buffer)} of {size} bytes at byte offset "
                f"{view.byte_offset} does not "
                f"fit in its storage ({storage.describe()}) of {storage.byte_size} bytes",
            )


def buffer_problems(
    root: Operation,
    max_image_width: int = DEFAULT_MAX_IMAGE_WIDTH,
    max_image_height: int = DEFAULT_MAX_IMAGE_HEIGHT,
    allow_partial_texel_writes: bool = True,
) -> list[BufferProblem]:
    """Every violated rule under `root`, in IR order."""
    return BufferVerifier(root, max_image_width, max_image_height, allow_partial_texel_writes).run()


def verify_buffers(
    root: Operation,
    max_image_width: int = DEFAULT_MAX_IMAGE_WIDTH,
    max_image_height: int = DEFAULT_MAX_IMAGE_HEIGHT,
    allow_partial_texel_writes: bool = True,
) -> None:
    """Raise a `VerifyException` listing every violated rule under `root` (one message per
    line, the ops marked in the attached IR dump); return when there is none."""
    problems = buffer_problems(root, max_image_width, max_image_height, allow_partial_texel_writes)
    _raise_problems(root, problems, [])


NO_IMAGE_LIMIT = 2**31 - 1
"""The image limit of `refuse_invalid_buffers` when the caller knows no device."""


def refuse_invalid_buffers(
    pass_name: str,
    root: Operation,
    max_image_width: int = NO_IMAGE_LIMIT,
    max_image_height: int = NO_IMAGE_LIMIT,
    aliases: BufferAliases | None = None,
) -> None:
    """Refuse input that `verify-buffers` rejects, before pass `pass_name` rewrites it.

    Every pass that could hide an invalid buffer (by erasing a dead declaration, or by
    lowering buffers away) calls this first, so a module that `-p verify-buffers` rejects is
    not accepted by `-p PASS,verify-buffers` either. The rules are those of
    `verify-buffers` with its defaults (partial-texel writes allowed), except that a buffer
    cast from a memref (`is_memref_bridge`: the bridge `lower-layout` lowers to that
    memref) counts as declared, and that the image limits are the caller's: a pass that
    knows no device (apply-layout, flatten-buffers, ...) checks none, since an image fits
    or not only on a device (`-t opencl` checks its device's; `verify-buffers` its options'),
    and these passes never change an image's size. `aliases`: the `BufferAliases` of
    `root` on this IR, when the caller builds them anyway (they are then built once).

    Raises:
        VerifyException: a first line ``PASS: the input has invalid buffers (see
            verify-buffers)``, then one line per problem as `verify-buffers` reports it.
    """
    verifier = BufferVerifier(
        root, max_image_width, max_image_height, allow_memref_bridges=True, known_aliases=aliases
    )
    problems = verifier.run()
    _raise_problems(root, problems, [f"{pass_name}: the input has invalid buffers (see verify-buffers)"])


class InvalidBuffersError(VerifyException):
    """The `VerifyException` of `verify_buffers` and `refuse_invalid_buffers`: its text is
    the header (if any) and one line per problem; `problems` keeps the ops, so a driver can
    report each problem at its op's source line."""

    header: tuple[str, ...]
    problems: tuple[BufferProblem, ...]

    def __init__(self, header: Sequence[str], problems: Sequence[BufferProblem]):
        super().__init__("\n".join([*header, *(p.message for p in problems)]))
        self.header = tuple(header)
        self.problems = tuple(problems)


def _raise_problems(root: Operation, problems: list[BufferProblem], header: list[str]) -> None:
    if not problems:
        return
    diagnostic = Diagnostic()
    for problem in problems:
        diagnostic.add_message(problem.op, problem.message)
    diagnostic.raise_exception(root, InvalidBuffersError(header, problems))


@dataclass(frozen=True)
class VerifyBuffersPass(PhyslayoutPass):
    """Check the DeclBuffer and texture rules; the IR is never changed.

    Options:
        max-image-width (int, 16384): largest image width (texels) a texture buffer may need.
        max-image-height (int, 16384): largest image height (rows) a texture buffer may need.
        allow-partial-texel-writes (bool, true): skip rule 10, accepting element-wise stores
            to flat texture buffers (between `flatten-buffers` and `vectorize-texels`).
    """

    name = "verify-buffers"

    max_image_width: int = DEFAULT_MAX_IMAGE_WIDTH
    """Largest image width (texels) a texture buffer may need."""

    max_image_height: int = DEFAULT_MAX_IMAGE_HEIGHT
    """Largest image height (rows) a texture buffer may need."""

    allow_partial_texel_writes: bool = True
    """Skip rule 10: accept element-wise stores to flat texture buffers (e.g. between
    `flatten-buffers` and `vectorize-texels`, or for targets that treat textures as plain
    memory)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_options(
            self.name, max_image_width=self.max_image_width, max_image_height=self.max_image_height
        )
        verify_buffers(
            op, self.max_image_width, self.max_image_height, self.allow_partial_texel_writes
        )
