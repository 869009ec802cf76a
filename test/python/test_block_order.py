"""`block_order.precedes`: the order of two ops of one block, as their positions say, in
steps bounded by their distance (issue 28: no quadratic walks)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import test as test_dialect
from xdsl.ir import Block, Operation

from physlayout.transforms.block_order import precedes


def _block(length: int) -> tuple[Block, list[Operation]]:
    ops: list[Operation] = [test_dialect.TestOp() for _ in range(length)]
    return Block(ops), ops


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_precedes_is_the_order_of_positions(data: st.DataObject) -> None:
    length = data.draw(st.integers(1, 40))
    _, ops = _block(length)
    i = data.draw(st.integers(0, length - 1))
    j = data.draw(st.integers(0, length - 1))
    assert precedes(ops[i], ops[j]) == (i < j)
    assert precedes(ops[i], ops[j]) == (ops[i] is not ops[j] and ops[i].is_before_in_block(ops[j]))


def test_ops_of_different_blocks_are_refused() -> None:
    _, first = _block(3)
    _, second = _block(5)
    with pytest.raises(ValueError, match="not in one block"):
        precedes(first[1], second[2])
    lone = test_dialect.TestOp()  # in no block at all
    with pytest.raises(ValueError, match="not in one block"):
        precedes(first[0], lone)


class _Steps:
    """Counts the steps `precedes` takes (reads of `prev_op` / `next_op`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.count = 0
        counter = self
        original_prev = Operation.prev_op
        original_next = Operation.next_op

        def prev_op(op: Operation) -> Operation | None:
            counter.count += 1
            return original_prev.fget(op)  # type: ignore[union-attr]

        def next_op(op: Operation) -> Operation | None:
            counter.count += 1
            return original_next.fget(op)  # type: ignore[union-attr]

        monkeypatch.setattr(Operation, "prev_op", property(prev_op))
        monkeypatch.setattr(Operation, "next_op", property(next_op))


def test_steps_are_bounded_by_the_distance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neighbours at the start of a long block: a few steps, where xDSL's
    `is_before_in_block` walks from the later op to the end of the block."""
    _, ops = _block(5000)
    steps = _Steps(monkeypatch)
    assert not precedes(ops[1], ops[0])
    assert precedes(ops[0], ops[1])
    assert not precedes(ops[11], ops[1])
    assert steps.count <= 2 * (1 + 1 + 10) + 6
