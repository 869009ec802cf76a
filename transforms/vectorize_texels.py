"""vectorize-texels: turn a loop over the four lanes of a texel into `vector<4xT>` code.

Texture stores write whole texels (`write_imagef` sets all four channels), and whole-texel
loads are one `read_imagef`; this pass makes both visible in the IR. It rewrites an
`scf.for %l = 0 to 4 step 1` without `iter_args` (a *lane loop*) into ONE iteration of
vector code, inlined where the loop was (a one-dimensional `scf.parallel %l = 0 to 4 step 1`
without reductions is a lane loop too, under the same rules: they make every lane touch
only its own elements of each written buffer, so any order of the iterations, lock-step
included, gives the same result):

- a `layout.load` / `layout.store` whose innermost index is `base + %l` (as a quasi-affine
  expression: `indexing/bridges/arith`), all other indices free of `%l`, becomes a
  `vector<4xT>` access at `base` (lane 0). That covers the flat 2-D texture buffers of
  `flatten-buffers` (column `x * 4 + %l`) and N-d buffers before flattening (innermost
  index `%l`);
- a load from a buffer the loop does not write, at indices that depend on `%l` in any
  other way, becomes four scalar loads gathered with `vector.broadcast`/`vector.insert`;
- a load at indices free of `%l` stays a scalar load;
- elementwise float `arith`/`math` ops on lane-varying values become the same ops on
  `vector<4xT>`; lane-invariant operands are `vector.broadcast`; lane-invariant ops are
  kept as they are (computed once instead of four times: they are pure);
- nested `scf.for` loops with lane-invariant bounds are kept; their `iter_args` that
  carry lane-varying values become vectors (so a reduction inside a texel loop, e.g. the
  accumulation of a conv2d output texel, vectorizes);
- an `scf.if` directly in the lane loop body (a *masked if*: the padding test that
  `apply-layout` puts around the body of a re-iterated nest, `if (lane is padding) store
  pad else compute and store`) runs both branches for all lanes. Its condition is
  evaluated per lane: it is lane-invariant, or `arith.cmpi` of index expressions (whose
  only lane-varying leaf is `%l`) combined with `arith.andi/ori/xori`. Each storage the
  if stores to must be stored exactly once directly in each branch, as that branch's last
  access to it; the two stores become ONE store after the if whose lane k is
  `arith.select` of condition k between the two stored values (so a texel whose lanes are
  partly padding is one whole-texel write with the pad value in its padding lanes).
  A branch store whose indices are not `base + %l` is accepted when the lanes that take
  the branch are known (the condition is a constant for each lane) and the indices equal
  `base + %l` for each of them (e.g. the channel index `apply-layout` simplified to 0 in
  the branch only lane 0 takes, with one real channel per texel).
  Float results become per-lane selects likewise. A load in a branch whose indices are
  not proven in bounds (interval analysis over the known loop ranges, every lane) is
  guarded: each lane loads under `scf.if` only when it takes that branch (0 otherwise; a
  lane-invariant load: when some lane takes it); other branch ops must be safe to run for
  every lane (no integer division or remainder by a non-constant).

The innermost dimension of a multi-dimensional `scf.parallel` without reductions that runs
`0 to 4 step 1` is a lane loop too when, split off as a nested one-dimensional
`scf.parallel` (an equivalent nest), it obeys the rules and reads or writes some texture at
`4 * x + %l` (what `legalize-layout` emits for an elementwise op between a texture and a
global buffer): the split nest replaces it, vectorized, so each iteration reads one whole
texel instead of each lane reading its own. Nests without such a texture access keep that
dimension (it stays an OpenCL work-item dimension).

Output columns of a reduction kernel (a matmul's, `SplitContiguousLaneDimension`): the
top-level `scf.parallel` of a kernel holding a reduction (`scf.for` with `iter_args`),
whose innermost dimension runs `0 to W * B step 1` (`W` the `vector-width` option), is
rewritten into the other dimensions and one of `0 to B` around a lane loop of `W` lanes
whose body computes the old iteration `W * b + %l`, and that lane loop is vectorized by the
rules above with `vector<W x T>` values (texture accesses refused unless `W` is 4), when
every access inside the reduction that depends on the lane is a contiguous load (one at
least): each step then loads a block of B's row once and keeps one vector accumulator.
A split whose plan is refused (a transposed read in the reduction, a texture at `W` > 4,
...) is tried with `W / 2` lanes down to 4, and the loop is left unchanged after that; so
are extents that no such `W` divides. Exact for the same reason as a lane loop: the
iterations of the `scf.parallel` are independent and every lane computes its own output's
operations in their order.

Index arithmetic that depends on `%l` may only feed load/store indices and masked-if
conditions; the new indices are emitted from the quasi-affine expressions with `%l = 0`
(or `%l = k` for gathers and per-lane conditions).

Refused (the loop is left unchanged): other bounds or steps, `iter_args`, vector values
already in the body, any op with a lane-varying operand that is not listed above
(comparisons of data, selects, integer arithmetic on data, calls, ...), an `scf.if` that
is not a masked if as above (nested in a loop or another if, without an else branch, a
storage stored in one branch only, twice, inside a loop of a branch, or accessed after
its store in the branch, non-float results), a store whose indices are not `base + %l`
(in a masked branch: for the lanes that take it), and any buffer written in the loop (traced through
`layout.decl_buffer`/`layout.data` to its parameter or allocation) that is also accessed
through another buffer value, at other indices, or at indices that depend on values
defined inside the loop other than `%l`. With that rule each lane touches only its own
elements of every written buffer, so executing the four iterations in lock-step (op by op)
gives the same result as executing them one after the other. Like OpenCL kernel
arguments, distinct buffer parameters are assumed not to overlap.

Guarantees: the numpy evaluator gives identical results before and after (the vector ops
compute exactly the scalar ops lane by lane); a second run changes nothing (no lane loops
are left to match, and loops whose body already holds vectors are refused). The pass
works before or after `flatten-buffers`; the OpenCL target runs it after flattening.

Before vectorizing, a lane loop whose masked if is taken by lanes known only at run time
(5 or 6 channels: whole texels and one remainder texel per row) is versioned into a
whole-texel copy without the if and the masked loop (`remainder_texels`).

Structure: `lane_loop_plan` decides (`LaneLoopPlan`, read-only), `lane_vectorizer` emits
(`LaneVectorizer`), `remainder_texels` versions (`VersionRemainderTexels`); this module
holds the vectorizing patterns (`VectorizeLaneLoop` for `scf.for`,
`VectorizeParallelLaneLoop` for `scf.parallel`, `SplitTexelLaneDimension` for the innermost
dimension of a larger `scf.parallel`, `SplitContiguousLaneDimension` for a reduction
kernel's output columns) and the pass: one walk that versions, then
one that vectorizes, each over the loops present when it starts, innermost and last first,
every change through the walker's `PatternRewriter`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import TEXEL_LANES
from physlayout.dialects.layout import BufferType, LoadOp
from physlayout.dialects.scf_syntax import ParallelOp, ReduceOp
from physlayout.transforms.lane_loop_plan import LaneLoop, LaneLoopPlan
from physlayout.transforms.lane_vectorizer import LaneVectorizer
from physlayout.transforms.loop_nests import in_reduction
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.remainder_texels import VersionRemainderTexels
from physlayout.transforms.rooted_walker import RootedWalker


def _vectorize(loop: LaneLoop, rewriter: PatternRewriter) -> None:
    """Replace `loop` by its vector form when it is a lane loop that obeys the rules (the
    lane is 0 in the emitted code); otherwise change nothing."""
    plan = LaneLoopPlan.of(loop)
    if plan is not None:
        _emit(plan, rewriter)


def _emit(plan: LaneLoopPlan, rewriter: PatternRewriter) -> None:
    """Replace the planned lane loop by its vector form."""
    loop = plan.loop
    point = InsertPoint.before(loop)
    zero = arith.ConstantOp.from_int_and_width(0, IndexType())
    rewriter.insert(zero, point)
    vectorizer = LaneVectorizer(plan, rewriter)
    vectorizer.mapper[plan.lane] = zero.result
    vectorizer.block(loop.body.block, point)
    _erase_dead_range(zero, loop, rewriter)
    rewriter.erase(loop, safe_erase=False)


def _erase_dead_range(first: Operation, stop: Operation, rewriter: PatternRewriter) -> None:
    """Erase the unused pure ops among the ops emitted from `first` up to `stop` (the
    vectorizer clones lane-invariant index math that the re-emitted indices may not use)."""
    emitted: list[Operation] = []
    op: Operation | None = first
    while op is not None and op is not stop:
        emitted.extend(op.walk())
        op = op.next_op
    for candidate in reversed(emitted):
        if is_trivially_dead(candidate):
            rewriter.erase(candidate)


class VectorizeLaneLoop(RewritePattern):
    """`scf.for %l = 0 to 4 step 1` over the lanes of texels -> one iteration of vector code."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        _vectorize(op, rewriter)


class VectorizeParallelLaneLoop(RewritePattern):
    """A one-dimensional `scf.parallel %l = 0 to 4 step 1` without reductions over the lanes
    of texels -> one iteration of vector code."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter) -> None:
        _vectorize(op, rewriter)


@dataclass
class _LaneSplit:
    """`op` split at its innermost dimension (`_split_lane_dimension`): the constants the
    new nest uses (to insert before it) and the detached nest."""

    constants: list[Operation]
    outer: scf.ParallelOp

    @property
    def lane_loop(self) -> scf.ParallelOp:
        loop = self.outer.body.block.first_op
        assert isinstance(loop, scf.ParallelOp)
        return loop

    def erase(self) -> None:
        self.outer.erase()
        for constant in reversed(self.constants):
            constant.erase()


def _split_lane_dimension(op: scf.ParallelOp, lanes: int) -> _LaneSplit | None:
    """A new, detached loop nest equal to `op`, an `scf.parallel` without reductions whose
    innermost dimension is `0 to lanes * B step 1` (two or more dimensions when B = 1): the
    other dimensions, and one of `0 to B` when B > 1, around a one-dimensional
    `scf.parallel` over `0 to lanes` holding the body, the old index now `lanes * b + %l`
    (None for other loops)."""
    if op.initVals or op.res:
        return None
    terminator = op.body.block.last_op
    if not isinstance(terminator, scf.ReduceOp) or terminator.operands:
        return None
    lower, upper, step = (op.lowerBound[-1], op.upperBound[-1], op.step[-1])
    extent = const_evaluate_operand(upper)
    if const_evaluate_operand(lower) != 0 or const_evaluate_operand(step) != 1:
        return None
    if extent is None or extent < lanes or extent % lanes:
        return None
    blocks = extent // lanes
    if blocks == 1 and len(op.lowerBound) < 2:
        return None
    constants: list[Operation] = []
    lowers, uppers, steps = list(op.lowerBound[:-1]), list(op.upperBound[:-1]), list(op.step[:-1])
    width = upper
    if blocks > 1:
        lane_count = arith.ConstantOp.from_int_and_width(lanes, IndexType())
        count = arith.ConstantOp.from_int_and_width(blocks, IndexType())
        constants = [lane_count, count]
        width = lane_count.result
        lowers, uppers, steps = [*lowers, lower], [*uppers, count.result], [*steps, step]
    copy = op.clone()
    body = copy.body.block
    lane_block = Block(arg_types=[IndexType()])
    outer_block = Block(arg_types=[IndexType()] * len(lowers))
    lane = lane_block.args[0]
    column: SSAValue = lane
    if blocks > 1:
        first = arith.MuliOp(outer_block.args[-1], width)
        index = arith.AddiOp(first, lane)
        lane_block.add_ops([first, index])
        column = index.result
    for body_op in list(body.ops)[:-1]:
        body_op.detach()
        lane_block.add_op(body_op)
    lane_block.add_op(ReduceOp())
    for old, new in zip(body.args[:-1], outer_block.args, strict=False):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    # the innermost index: the lane itself, or the lane of block `outer_block.args[-1]`
    (lane if blocks == 1 else outer_block.args[-1]).name_hint = body.args[-1].name_hint
    body.args[-1].replace_all_uses_with(column)
    lane_loop = ParallelOp([lower], [width], [step], Region(lane_block))
    outer_block.add_ops([lane_loop, ReduceOp()])
    copy.erase()
    return _LaneSplit(constants, ParallelOp(lowers, uppers, steps, Region(outer_block)))


class SplitTexelLaneDimension(RewritePattern):
    """An `scf.parallel` whose innermost dimension runs over the four lanes of texels that it
    reads or writes whole (a contiguous access of a texture buffer at `4 * x + %l`) -> the
    other dimensions around that dimension as a lane loop, vectorized: one texel read or
    write per iteration instead of one per lane (`legalize-layout` emits such nests for an
    elementwise op between a texture and a global buffer of the same logical shape)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter) -> None:
        if not op.upperBound or const_evaluate_operand(op.upperBound[-1]) != TEXEL_LANES:
            return
        split = _split_lane_dimension(op, TEXEL_LANES)
        if split is None:
            return
        plan = LaneLoopPlan.of(split.lane_loop)
        if plan is None or not any(
            access.kind == "contiguous"
            and isinstance(access.op.buffer.type, BufferType)
            and access.op.buffer.type.get_scope().is_texture
            for access in plan.accesses.values()
        ):
            split.erase()
            return
        _replace_by_split(op, split, plan, rewriter)


def _replace_by_split(
    op: scf.ParallelOp, split: _LaneSplit, plan: LaneLoopPlan, rewriter: PatternRewriter
) -> None:
    """Replace `op` by its split nest and vectorize the nest's lane loop (`plan`)."""
    rewriter.replace(op, [*split.constants, split.outer], [])
    _emit(plan, rewriter)


@dataclass
class SplitContiguousLaneDimension(RewritePattern):
    """A kernel's `scf.parallel` whose innermost dimension `0 to lanes * B` indexes the
    innermost (contiguous) dimension of the plain buffers its reduction reads -> that
    dimension as `B` blocks of `lanes`, each block one work-item computing
    `vector<lanes x T>` (a matmul over its output columns: one vector load of `lanes`
    columns per reduction step, one vector accumulator per `lanes` outputs;
    `apply-schedules` then tiles the blocks in registers). Only where every access in the
    reduction that depends on the lane is a contiguous load (a transposed read would gather
    one scalar per lane and step); otherwise blocks of half as many lanes are tried, down
    to four (a texture in the kernel is read by texels of four), and the loop is left
    alone when none fits."""

    lanes: int = TEXEL_LANES

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), func.FuncOp) or not any(
            isinstance(inner, scf.ForOp) and inner.iter_args for inner in op.walk()
        ):
            return
        lanes = self.lanes
        while lanes >= TEXEL_LANES:
            split = _split_lane_dimension(op, lanes)
            plan = None if split is None else _column_plan(split.lane_loop, lanes)
            if split is not None and plan is not None:
                _replace_by_split(op, split, plan, rewriter)
                return
            if split is not None:
                split.erase()
            lanes //= 2  # narrower blocks: a texture's texels, or fewer columns


def _column_plan(lane_loop: scf.ParallelOp, lanes: int) -> LaneLoopPlan | None:
    """The plan of the lane loop of a split reduction kernel when its reduction reads the
    lane's columns contiguously (every lane-dependent access in it a contiguous load, one
    at least), else None."""
    plan = LaneLoopPlan.of(lane_loop, lanes)
    if plan is None:
        return None
    reduced = [
        access
        for access in plan.accesses.values()
        if access.kind != "invariant" and in_reduction(access.op, lane_loop)
    ]
    gathered = any(
        access.kind != "contiguous" or not isinstance(access.op, LoadOp) for access in reduced
    )
    return plan if reduced and not gathered else None


@dataclass(frozen=True)
class VectorizeTexelsPass(PhyslayoutPass):
    """Rewrite `scf.for %l = 0 to 4` loops over texel lanes into `vector<4xT>` code, and
    the output columns of kernels that reduce over plain buffers' rows into blocks of
    `vector-width` lanes.

    Options:
        vector-width (int, 4): the lanes of a block of output columns
            (`SplitContiguousLaneDimension`): the device's preferred float vector width
            (8 on an AVX2 CPU, whose registers hold eight floats; textures keep four). A
            power of two; below 4, output columns are not split.
    """

    name = "vectorize-texels"

    vector_width: int = TEXEL_LANES
    """Lanes of a block of output columns of a plain-buffer reduction kernel."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.vector_width < 1 or self.vector_width & (self.vector_width - 1):
            raise PassFailedException(
                f"vectorize-texels: option vector-width must be a power of two, got {self.vector_width}"
            )
        # Two walks, each over the loops that exist when it starts, innermost and last
        # first (a lane loop nested in another is vectorized first, which then leaves the
        # outer one alone); the loops a walk emits are not revisited by that walk.
        for patterns in (
            [VersionRemainderTexels()],
            [
                VectorizeLaneLoop(),
                VectorizeParallelLaneLoop(),
                SplitTexelLaneDimension(),
                SplitContiguousLaneDimension(self.vector_width),
            ],
        ):
            RootedWalker(
                GreedyRewritePatternApplier(list[RewritePattern](patterns), dce_enabled=False),
                walk_regions_first=True,
                walk_reverse=True,
                apply_recursively=False,
            ).rewrite_module(op)
