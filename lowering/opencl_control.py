"""Control flow of `-t opencl` below the NDRange: `scf.for`/`affine.for` (with `iter_args`
as C variables), sequential `scf.parallel`/`affine.parallel`, `scf.if` and the yields.

Lane loops. A sequential loop `for c = lo; c < hi; c += 1` (constant bounds, `lo` and the
trip count multiples of 4) whose body reads one lane `c mod 4` of a texture texel (e.g. the
input channel of an NCHW4c convolution) is written as a loop over texel blocks `cb` whose
body holds the original body four times, `c = 4 * cb + k` for k = 0..3, and every loop
with constant bounds nested in it is fully unrolled too (at most `UNROLL_LIMIT` copies of
the innermost body in all). The copies run in the original order (same operations, same
order: the result is bit-identical); what changes is that each copy's texel coordinates are
the same expressions, so the texel read by the first copy is kept in a `float4` and the
other three copies use its lanes: one `read_imagef` per input texel instead of four.

Lane-invariant values. The pure ops of a lane loop's body that do not depend on the lane
(`lane_invariant_ops`: the clamped and guarded coordinates of a padded convolution's taps,
their bound checks) compute the same values in all four copies. The first copy declares
them; the other three use its C variables (per iteration of the loops unrolled inside the
lane loop) instead of writing them again. So their texel coordinates are the same C text
and the texel is read once (without this, coordinates computed by ops had fresh names in
each copy and every copy read the texel again), and the kernel's C is that much smaller.
The values are the same, so the results are bit-identical.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import affine, scf
from xdsl.ir import Block, Operation, SSAValue

from physlayout.dialects.buffer_layout import TEXEL_LANES
from physlayout.dialects.layout import LoadOp
from physlayout.indexing.quasi_affine import Add, Const, Dim, Expr, Mul
from physlayout.lowering.opencl_kernels import KernelWriter, Rebound, c_words, fail
from physlayout.lowering.opencl_parallel import BandDim, for_range, is_pure_op, loop_dims

UNROLL_LIMIT = 128
"""The most copies of a loop body a lane loop is unrolled into (lanes x inner trips)."""


def _copies(block: Block) -> int | None:
    """How many times the innermost body of `block` runs when every loop in it is fully
    unrolled (None when some loop has no constant bounds)."""
    most = 1
    for op in block.ops:
        for region in op.regions:
            if not isinstance(op, scf.ForOp | affine.ForOp):
                inner = [_copies(b) for b in region.blocks]
                if any(c is None for c in inner):
                    return None
                most = max([most, *(c for c in inner if c is not None)])
                continue
            dim = for_range(op)
            inner_copies = _copies(op.body.block)
            if dim is None or inner_copies is None:
                return None
            most = max(most, dim.trip_count * inner_copies)
    return most


def lane_invariant_ops(body: Block) -> set[Operation]:
    """The pure ops of a lane loop's `body` whose values do not depend on its induction
    variable: none of their operands is a block argument (the lane, carried values, the
    variables of loops that are not unrolled) or a result of an op that is not one of them.
    The induction variables of the `for` loops inside, unrolled with the lane loop, do not
    make an op lane-dependent: each unrolled copy is keyed by their values."""
    varying: set[SSAValue] = set(body.args)
    invariant: set[Operation] = set()
    for op in body.walk():
        for region in op.regions:
            for block in region.blocks:
                unrolled = isinstance(op, scf.ForOp | affine.ForOp)
                varying.update(block.args[1:] if unrolled else block.args)
        if is_pure_op(op) and len(op.results) == 1 and not any(v in varying for v in op.operands):
            invariant.add(op)
        else:
            varying.update(op.results)
    return invariant


class ControlFlowWriter(KernelWriter):
    """Writes loops and conditionals as C statements inside one work-item."""

    def carry(self, op: Operation, inits: Sequence[SSAValue], args: Sequence[SSAValue]) -> list[str]:
        """Declare one C variable per carried value: loop block arg and result share it."""
        names: list[str] = []
        for init, arg, result in zip(inits, args, op.results, strict=True):
            name = self.name_of(result)
            self.c_names[arg] = name
            names.append(name)
            self.line(f"{self.c_type(result.type, self.at(op))} {name} = {self.expr(init)};")
        return names

    # Unrolling ------------------------------------------------------------------------------

    def is_lane_loop(self, op: scf.ForOp | affine.ForOp, dim: BandDim | None) -> bool:
        """`op` steps through the lanes of a texel that its body reads one at a time."""
        if dim is None or dim.step != 1 or dim.lower % TEXEL_LANES or dim.trip_count % TEXEL_LANES:
            return False
        if dim.trip_count == 0:
            return False
        copies = _copies(op.body.block)
        if copies is None or copies * TEXEL_LANES > UNROLL_LIMIT:
            return False
        iv = self.analysis.expr_of(dim.iv)
        for load in op.body.block.walk():
            if not isinstance(load, LoadOp) or load not in self.emitted:
                continue
            lane = self.texture_lane(load)
            if lane is not None and isinstance(iv, Dim) and iv.name in lane.dims():
                return True
        return False

    def emit_copy(self, body: Block, value: Expr, text: str) -> None:
        """Emit `body` once with its induction variable replaced by `value` (C: `text`);
        values defined in the body get fresh C names in each copy."""
        defined = self.defined_in.get(body)
        if defined is None:
            defined = self.defined_in[body] = [
                defined_value
                for op in body.ops
                for inner in op.walk()
                for defined_value in (
                    *inner.results,
                    *(a for region in inner.regions for block in region.blocks for a in block.args),
                )
            ]
        for defined_value in defined:
            self.c_names.pop(defined_value, None)
        iv = body.args[0]
        leaf = self.analysis.expr_of(iv)
        assert isinstance(leaf, Dim)
        self.substitution[leaf.name] = value
        self.lane_copy_values = None
        self.c_names[iv] = text
        self.emit_block(body)
        del self.substitution[leaf.name]
        self.lane_copy_values = None

    def emit_unrolled(
        self, op: scf.ForOp | affine.ForOp, dim: BandDim, inits: Sequence[SSAValue]
    ) -> None:
        """A loop inside a lane loop: its body once per iteration, in order. Its carried
        values are renamed, not copied: each copy reads the C values the previous copy
        yielded (the first, the inits), and the loop's results are the last copy's (no C
        variable, no assignment: a 3x3 window over 16 accumulators wrote 1,900 copies)."""
        args = op.body.block.args[1:]
        values = [self.expr(v) for v in inits]
        for value in range(dim.lower, dim.upper, dim.step):
            for arg, text in zip(args, values, strict=True):
                self.c_names[arg] = text
            rebound = Rebound()
            self.carried.append(rebound)
            self.emit_copy(op.body.block, Const(value), str(value))
            self.carried.pop()
            values = rebound.values
        for result, text in zip(op.results, values, strict=True):
            self.c_names[result] = text

    def emit_lane_loop(self, op: scf.ForOp | affine.ForOp, dim: BandDim, names: list[str]) -> None:
        """A lane loop: a C loop over texel blocks, its body four times per block."""
        block = self.names.fresh(f"{self.name_of(dim.iv, 'i')}_texel", "b")
        leaf = f"texel_block{len(self.unrolled_leaves)}"
        first, end = dim.lower // TEXEL_LANES, dim.upper // TEXEL_LANES
        self.unrolled_leaves[leaf] = block
        self.analysis.bounds[leaf] = (first, end - 1)
        self.open(f"for (int {block} = {first}; {block} < {end}; {block} += 1)")
        self.unrolling += 1
        self.carried.append(names)
        iv = self.analysis.expr_of(dim.iv)
        assert isinstance(iv, Dim)
        self.lane_leaf, self.lane_invariant = iv.name, lane_invariant_ops(op.body.block)
        for lane in range(TEXEL_LANES):
            value = Add(Mul(Dim(leaf), Const(TEXEL_LANES)), Const(lane))
            self.emit_copy(op.body.block, value, f"({block} * {TEXEL_LANES} + {lane})")
        self.lane_leaf, self.lane_invariant = "", set()
        self.lane_values.clear()
        self.carried.pop()
        self.unrolling -= 1
        self.close()

    def emit_special(self, op: scf.ForOp | affine.ForOp, inits: Sequence[SSAValue]) -> bool:
        """Write `op` unrolled (inside a lane loop) or as a lane loop; False when it is
        neither (it is then written as a C loop)."""
        dim = for_range(op)
        if dim is None:
            return False
        if self.unrolling > 0:
            self.emit_unrolled(op, dim, inits)
            return True
        if not self.is_lane_loop(op, dim):
            return False
        self.emit_lane_loop(op, dim, self.carry(op, inits, list(op.body.block.args[1:])))
        return True

    # Loops ----------------------------------------------------------------------------------

    def emit_scf_for(self, op: scf.ForOp) -> None:
        """Write an `scf.for` as `for (int i = lb; i < ub; i += step)`, its `iter_args` as C
        variables declared before the loop and assigned by its yield; a lane loop, or any loop
        inside one, is unrolled instead (`emit_special`)."""
        if self.emit_special(op, list(op.iter_args)):
            return
        body = op.body.block
        names = self.carry(op, list(op.iter_args), list(body.args[1:]))
        iv = self.name_of(body.args[0], "i")
        lb, ub, step = self.expr(op.lb), self.expr(op.ub), self.expr(op.step)
        self.open(f"for (int {iv} = {lb}; {iv} < {ub}; {iv} += {step})")
        self.carried.append(names)
        self.emit_block(body)
        self.carried.pop()
        self.close()

    def emit_affine_for(self, op: affine.ForOp) -> None:
        """Write an `affine.for` as a C loop from the `max` of its lower bound map's results to the
        `min` of its upper bound map's results, with its constant step and `iter_args` as C
        variables; lane loops and loops inside them are unrolled (`emit_special`)."""
        if self.emit_special(op, list(op.inits)):
            return
        body = op.body.block
        names = self.carry(op, list(op.inits), list(body.args[1:]))
        iv = self.name_of(body.args[0], "i")
        lower_ops = list(op.lowerBoundOperands)
        upper_ops = list(op.upperBoundOperands)
        lower_map, upper_map = op.lowerBoundMap.data, op.upperBoundMap.data
        lowers = [self.affine_expr(e, lower_ops, lower_map.num_dims, op) for e in lower_map.results]
        uppers = [self.affine_expr(e, upper_ops, upper_map.num_dims, op) for e in upper_map.results]
        lb, ub = lowers[0], uppers[0]
        for other in lowers[1:]:
            lb = f"max({lb}, {other})"
        for other in uppers[1:]:
            ub = f"min({ub}, {other})"
        step = op.step.value.data
        self.open(f"for (int {iv} = {lb}; {iv} < {ub}; {iv} += {step})")
        self.carried.append(names)
        self.emit_block(body)
        self.carried.pop()
        self.close()

    def emit_parallel(self, op: scf.ParallelOp | affine.ParallelOp) -> None:
        """Write an `scf.parallel`/`affine.parallel` that runs inside one work-item as sequential C
        loops, outermost dimension first. Raises a located `DiagnosticException` when a bound is
        not constant or the loop reduces."""
        dims = loop_dims(op)
        if dims is None:
            raise fail(
                self.at(op),
                "parallel loops need constant bounds and no reductions in the OpenCL target",
            )
        for dim in dims:
            name = self.name_of(dim.iv, "i")
            self.open(f"for (int {name} = {dim.lower}; {name} < {dim.upper}; {name} += {dim.step})")
        self.carried.append([])
        body = op.regions[0].blocks[0]
        for inner in body.ops:
            if inner is body.last_op:
                continue
            self.emit(inner)
        self.carried.pop()
        for _ in dims:
            self.close()

    def emit_if(self, op: scf.IfOp) -> None:
        """Write an `scf.if` as `if (cond) { ... } else { ... }`, its results as C variables
        declared (uninitialized) before it and assigned by each branch's yield. The `else` branch
        is omitted when it is empty and yields nothing."""
        names: list[str] = []
        for result in op.results:
            name = self.name_of(result)
            names.append(name)
            self.line(f"{self.c_type(result.type, self.at(op))} {name};")
        self.open(f"if ({self.expr(op.cond)})")
        self.carried.append(names)
        self.emit_block(op.true_region.blocks[0])
        if op.false_region.blocks and (
            len(op.false_region.blocks[0].ops) > 1 or names
        ):
            self.depth -= 1
            self.forget_scope(self.depth + 1)
            self.line("} else {")
            self.depth += 1
            self.emit_block(op.false_region.blocks[0])
        self.carried.pop()
        self.close()

    def emit_yield(self, op: Operation) -> None:
        """Assign the yielded values to the C variables of the enclosing loop's or `if`'s results
        (none at the top level); in an unrolled copy, name the next copy's values instead
        (`Rebound`). When a yielded value reads one of the variables being assigned (a swap),
        the values go through temporaries first, so every old value is read before any is
        written; otherwise they are assigned directly. A variable yielded unchanged is not
        assigned."""
        target = self.carried[-1] if self.carried else []
        values = [self.expr(v) for v in op.operands]
        if isinstance(target, Rebound):
            target.values = values
            return
        names = target
        moves = [
            (n, v, operand)
            for n, v, operand in zip(names, values, op.operands, strict=True)
            if n != v
        ]
        assigned = {n for n, _, _ in moves}
        self.forget_reading(assigned)
        if len(moves) <= 1 or all(assigned.isdisjoint(c_words(v)) for _, v, _ in moves):
            for name, value, _ in moves:
                self.line(f"{name} = {value};")
            return
        temps: list[str] = []
        for _, value, operand in moves:
            temp = self.names.fresh(None, "t")
            temps.append(temp)
            self.line(f"{self.c_type(operand.type, self.at(op))} {temp} = {value};")
        for (name, _, _), temp in zip(moves, temps, strict=True):
            self.line(f"{name} = {temp};")
