"""The order of two ops of one block, in steps bounded by their distance (issue 28: no
quadratic walks).

xDSL's `Operation.is_before_in_block(other)` walks forward from the op until it meets
`other` or the end of the block, so when the op comes after `other` it walks to the end
(and `Block.get_operation_index` walks from the start). A pass that asks it for every pair
of uses in a function's body, as the graph passes do in a model's one `@main` block, does
work quadratic in the length of the block. `precedes` walks out from the second op in both
directions at once and stops at the first op: 2 * distance + 1 steps at most, the same
answer.
"""

from __future__ import annotations

from xdsl.ir import Operation


def precedes(first: Operation, second: Operation) -> bool:
    """Whether `first` comes before `second` in their block (False when they are the same
    op). Raises ValueError when `first` is not in `second`'s block."""
    if first is second:
        return False
    before = second.prev_op
    after = second.next_op
    while before is not None or after is not None:
        if before is first:
            return True
        if after is first:
            return False
        if before is not None:
            before = before.prev_op
        if after is not None:
            after = after.next_op
    raise ValueError("the two ops are not in one block")
