"""`LaneLoopPlan`'s lane-varying values (followed through uses) are the least fixpoint of
the rules that `vectorize-texels` relies on, computed here by the obvious repeated walk of
the loop body (the oracle): on every loop of two models' IR as `vectorize-texels` receives
it (a transposed conv's guarded taps included) and on small loops where a value varies
only through a loop carry's yield, an if's yield, or not at all through a loop's bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.opencl import parse_module
from physlayout.transforms.lane_loop_plan import LaneLoopPlan
from physlayout.transforms.vectorize_texels import VectorizeTexelsPass
from physlayout.universe import make_context

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def _body_ops(op: Operation) -> list[Operation]:
    return [inner for region in op.regions for block in region.blocks for inner in block.walk()]


def _oracle(loop: scf.ForOp | scf.ParallelOp) -> set[SSAValue]:
    """Repeat a walk of the body until nothing changes: a for's body argument and result k
    vary with its init or yielded value k; an if's results with its condition or any value
    its blocks yield; any other op's results with any of its operands."""
    varying: set[SSAValue] = {loop.body.block.args[0]}
    while True:
        before = len(varying)
        for op in _body_ops(loop):
            if isinstance(op, scf.ForOp):
                yielded = op.body.block.last_op
                assert yielded is not None
                for k, init in enumerate(op.iter_args):
                    if init in varying or yielded.operands[k] in varying:
                        varying.update((op.body.block.args[k + 1], op.results[k]))
            elif isinstance(op, scf.IfOp):
                ends = [b.last_op for r in op.regions for b in r.blocks if b.last_op]
                if op.cond in varying or any(v in varying for e in ends for v in e.operands):
                    varying.update(op.results)
            elif any(operand in varying for operand in op.operands):
                varying.update(op.results)
        if len(varying) == before:
            return varying


def _varying(loop: scf.ForOp | scf.ParallelOp) -> set[SSAValue]:
    plan = LaneLoopPlan(loop, loop.body.block.args[0], IndexAnalysis())
    plan._find_varying()  # pyright: ignore[reportPrivateUsage]
    return plan.varying


def _loops(module: Operation) -> list[scf.ForOp | scf.ParallelOp]:
    return [
        op
        for op in module.walk()
        if isinstance(op, scf.ForOp | scf.ParallelOp) and op.body.block.args
    ]


@pytest.mark.parametrize("model", ["bottleneck", "autoencoder_transpose"])
def test_every_loop_of_a_model_varies_as_the_oracle_says(model: str) -> None:
    module = parse_module((MODELS / f"{model}.mlir").read_text())
    ctx = make_context()
    for one in PhyslayoutAdrenoPass().passes():
        if isinstance(one, VectorizeTexelsPass):
            break
        one.apply(ctx, module)
    loops = _loops(module)
    assert len(loops) > 40  # the test covers many loops (49 in the bottleneck)
    for loop in loops:
        assert _varying(loop) == _oracle(loop)


SMALL = """
func.func @f(%n: index, %x: f32, %b: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %l = %c0 to %c4 step %c1 {
    %lf = arith.index_cast %l : index to i32
    %v = arith.sitofp %lf : i32 to f32
    %carried = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
      %late = arith.addf %acc, %x : f32
      %next = arith.addf %late, %v : f32
      scf.yield %next : f32
    }
    %uniform = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) {
      %same = arith.addf %acc, %x : f32
      scf.yield %same : f32
    }
    %bounded = scf.for %i = %c0 to %l step %c1 iter_args(%acc = %x) -> (f32) {
      scf.yield %acc : f32
    }
    %picked = scf.if %b -> (f32) {
      scf.yield %x : f32
    } else {
      scf.yield %v : f32
    }
    %plain = scf.if %b -> (f32) {
      scf.yield %x : f32
    } else {
      scf.yield %uniform : f32
    }
    %sum = arith.addf %carried, %picked : f32
  }
  func.return
}
"""


def test_values_vary_through_yields_but_not_through_bounds() -> None:
    module = parse_module(SMALL)
    (lane_loop, *_) = _loops(module)
    varying = _varying(lane_loop)
    assert varying == _oracle(lane_loop)
    named = {v.name_hint for v in varying if v.name_hint}
    # %late varies only once %acc does, through the yield of %next (the carry)
    assert {"carried", "late", "next", "acc", "picked", "sum"} <= named
    assert not {"uniform", "same", "bounded", "plain"} & named
