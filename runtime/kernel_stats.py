"""What each kernel of a lowered module does, counted from its IR: the numbers a profile
divides by device time.

`kernel_stats(lowered, kernels)` gives, per kernel function (the lowered module's functions
that `-t opencl` made kernels of):

- `multiplies`: the floating-point multiplies one launch of the function executes
  (`arith.mulf` and `math.fma`, each lane of a vector one), every op weighted by the trip
  counts of the loops around it (`scf.for`, every dimension of `scf.parallel`,
  `affine.for`/`affine.parallel` with constant bounds). In a convolution or matmul each is
  one multiply-add of the source (MAC); epilogues (a batch-norm scale) add theirs. An op
  under `scf.if`s counts the iterations whose conditions take its branch, when every
  condition is computed by `arith` ops from the indices of `scf.for`/`scf.parallel` loops
  around it and constants (a transposed conv's tap guard): those loops' index ranges are
  enumerated (numpy, at most `ENUMERATED` points), the others multiply; any other
  condition counts as always taken (an upper bound). None when some loop around a
  multiply has bounds that are not constants.
- `sources`: where its ops came from in the source file, as `FILE:LINES` (the lines of the
  source ops whose clones the kernel holds, from their `loc(...)`; runs of nearby lines
  merged), empty when the source had no locations.

The numbers are stored with an artifact (`kernels.json`, `runtime/deploy.py`) so that a
profile of a loaded or cached artifact has them too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from math import prod

from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import FileLineColLoc, IntegerAttr, ModuleOp, VectorType
from xdsl.ir import Operation, SSAValue


@dataclass(frozen=True)
class KernelStats:
    """Per kernel function: see the module docstring."""

    multiplies: int | None
    sources: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """The entry of `kernels.json`."""
        return {"multiplies": self.multiplies, "sources": list(self.sources)}

    @staticmethod
    def from_json(data: object) -> KernelStats:
        """An entry of `kernels.json` (a ValueError when it is not one)."""
        if not isinstance(data, dict):
            raise ValueError("a kernel's entry must be an object")
        multiplies = data.get("multiplies")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        sources = data.get("sources", [])  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not (multiplies is None or isinstance(multiplies, int)) or not isinstance(sources, list):
            raise ValueError("multiplies must be an integer or null, sources a list")
        return KernelStats(multiplies, tuple(str(s) for s in sources))  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


def kernel_stats(lowered: ModuleOp, kernels: Iterable[str]) -> dict[str, KernelStats]:
    """The stats of each function named in `kernels` of the lowered module."""
    names = set(kernels)
    stats: dict[str, KernelStats] = {}
    for op in lowered.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data in names:
            stats[op.sym_name.data] = KernelStats(_multiplies(op), _sources(op))
    return stats


ENUMERATED = 1 << 22
"""The most loop points `_guarded_trips` enumerates to count a guarded op exactly."""


def _multiplies(function: func.FuncOp) -> int | None:
    total = 0
    for op in function.walk():
        if not isinstance(op, arith.MulfOp) and op.name != "math.fma":
            continue
        trips = _trips_around(op, function)
        if trips is None:
            return None
        trips = _guarded_trips(op, function, trips)
        result = op.results[0].type
        lanes = prod(result.get_shape()) if isinstance(result, VectorType) else 1
        total += trips * lanes
    return total


def _trips_around(op: Operation, function: func.FuncOp) -> int | None:
    """The product of the trip counts of the loops around `op` inside `function`."""
    trips = 1
    parent = op.parent_op()
    while parent is not None and parent is not function:
        count = _trip_count(parent)
        if count is None:
            return None
        trips *= count
        parent = parent.parent_op()
    return trips


def _guarded_trips(op: Operation, function: func.FuncOp, trips: int) -> int:
    """How often `op` runs, its loops' `trips` counted only where the `scf.if`s around it
    take its branch (module docstring); `trips` when a condition is not known."""
    guards: list[tuple[SSAValue, bool]] = []
    ranges: dict[SSAValue, range] = {}
    child, parent = op, op.parent_op()
    while parent is not None and parent is not function:
        if isinstance(parent, scf.IfOp):
            guards.append((parent.cond, child.parent_region() is parent.true_region))
        elif isinstance(parent, scf.ForOp | scf.ParallelOp):
            ivs = [parent.body.block.args[0]] if isinstance(parent, scf.ForOp) else parent.body.block.args
            bounds = (
                [(parent.lb, parent.ub, parent.step)]
                if isinstance(parent, scf.ForOp)
                else zip(parent.lowerBound, parent.upperBound, parent.step, strict=True)
            )
            for iv, (lb, ub, step) in zip(ivs, bounds, strict=True):
                values = [_constant(v) for v in (lb, ub, step)]
                if None not in values:
                    low, high, stride = (v for v in values if v is not None)
                    ranges[iv] = range(low, high, stride)
        child, parent = parent, parent.parent_op()
    if not guards:
        return trips
    read: list[SSAValue] = []
    if not all(_index_math(cond, ranges, read) for cond, _ in guards):
        return trips
    axes = list(dict.fromkeys(read))
    points = prod(len(ranges[iv]) for iv in axes)
    if points > ENUMERATED or points == 0:
        return trips if points else 0
    import numpy as np

    from physlayout.semantics.evaluator_arith import evaluate_value_op

    env: dict[SSAValue, object] = {}
    for k, iv in enumerate(axes):
        shape = [1] * len(axes)
        shape[k] = len(ranges[iv])
        env[iv] = np.asarray(ranges[iv], dtype=np.int64).reshape(shape)

    def value(v: SSAValue) -> object:
        if v not in env:
            owner = v.owner
            assert isinstance(owner, Operation)
            env[v] = evaluate_value_op(owner, [value(o) for o in owner.operands])  # pyright: ignore[reportArgumentType]
        return env[v]

    taken = np.ones([len(ranges[iv]) for iv in axes], dtype=np.bool_)
    for cond, then in guards:
        holds = np.broadcast_to(np.asarray(value(cond), dtype=np.bool_), taken.shape)
        taken &= holds if then else ~holds
    return trips // points * int(np.count_nonzero(taken))


def _index_math(value: SSAValue, ranges: dict[SSAValue, range], read: list[SSAValue]) -> bool:
    """Whether `value` is computed by `arith` ops from the loop indices in `ranges` and
    constants (those it reads appended to `read`)."""
    if value in ranges:
        read.append(value)
        return True
    owner = value.owner
    if not isinstance(owner, Operation) or not owner.name.startswith("arith.") or owner.regions:
        return False
    if isinstance(owner, arith.ConstantOp):
        return isinstance(owner.value, IntegerAttr)
    return all(_index_math(o, ranges, read) for o in owner.operands)


def _trip_count(loop: Operation) -> int | None:
    """How often `loop`'s body runs per run of the loop (1 for an op that is no loop)."""
    if isinstance(loop, scf.ForOp):
        return _count(loop.lb, loop.ub, loop.step)
    if isinstance(loop, scf.ParallelOp):
        counts = [
            _count(lb, ub, step)
            for lb, ub, step in zip(loop.lowerBound, loop.upperBound, loop.step, strict=True)
        ]
        return None if None in counts else prod(c for c in counts if c is not None)
    if isinstance(loop, affine.ForOp):
        if loop.lowerBoundOperands or loop.upperBoundOperands:
            return None
        lower = loop.lowerBoundMap.data.eval([], [])
        upper = loop.upperBoundMap.data.eval([], [])
        if len(lower) != 1 or len(upper) != 1:
            return None
        step = loop.step.value.data
        return max(0, -(-(upper[0] - lower[0]) // step))
    if isinstance(loop, affine.ParallelOp):
        return None
    if loop.name.startswith(("scf.while", "affine.")):
        return None
    return 1


def _count(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int | None:
    values = [_constant(v) for v in (lb, ub, step)]
    if None in values:
        return None
    low, high, stride = (v for v in values if v is not None)
    if stride <= 0:
        return None
    return max(0, -(-(high - low) // stride))


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _sources(function: func.FuncOp) -> tuple[str, ...]:
    lines: dict[str, set[int]] = {}
    for op in function.walk():
        location = op.location
        if isinstance(location, FileLineColLoc):
            name = os.path.basename(location.filename.data)
            lines.setdefault(name, set()).add(location.line.data)
    return tuple(f"{name}:{_runs(sorted(found))}" for name, found in sorted(lines.items()))


def _runs(lines: list[int], gap: int = 4) -> str:
    """`15-21,26` for lines [15, 16, 21, 26]: lines at most `gap` apart share a run."""
    runs: list[list[int]] = []
    for line in lines:
        if runs and line - runs[-1][1] <= gap:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
