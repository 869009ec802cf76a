"""A pattern walker that offers each pattern only the ops it can act on (issue 28: compile time).

xDSL's `PatternRewriteWalker` pushes every op of the region onto its worklist and offers each
to its pattern, again at every round of `apply_recursively`; a pass whose patterns rewrite
one kind of op (a `linalg.generic`, a `scf.for`) pays about 3-6 us for each of the thousands
of other ops of a model, once per walk, and the Adreno pipeline walks a model some sixty times.
MLIR's greedy driver indexes its patterns by their root op for the same reason.

`RootedWalker(pattern, ...)` takes the same arguments as `PatternRewriteWalker` and leaves
out of each population of its worklist the ops on which `pattern` provably does nothing
(`offered_ops`):

- a pattern whose `match_and_rewrite` is decorated with xDSL's `op_type_rewrite_pattern`
  returns at once unless `isinstance(op, root)` for its annotated root types;
- xDSL's own `GreedyRewritePatternApplier` (exactly that class) without folding tries its
  patterns in turn, after erasing the op if it is trivially dead when dead-code elimination
  is on; so it does nothing on an op that none of its patterns has as a root and, with
  dead-code elimination, that can never be trivially dead: xDSL's check refuses every
  terminator and every symbol, and traits belong to the op's class;
- `GreedyApplierWithMemoizedDce` makes the same decisions (memoizing only effects).

Any other pattern (a folding applier, a plain `match_and_rewrite` that may look at any op)
is offered every op, in the order of xDSL's walk (listed by the same traversal, which is
also about a third cheaper than xDSL's nested generators).

Why the rewrite is xDSL's, op for op: an op left out is one whose visit changes nothing (no
IR, no worklist entry, no `has_done_action`), whenever it would happen. The worklist keeps
its other entries in the same order, and later pushes of a left-out op (a new or modified
op, an operand's owner) happen as before; such an op is then visited, again doing nothing.
So the sequence of visits that do something, and with it every rewrite and the walker's
answer, is the one of `PatternRewriteWalker`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import UnionType
from typing import Union, get_args, get_origin

from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)

from physlayout.transforms.dead_code import GreedyApplierWithMemoizedDce, never_dead

Roots = tuple[type[Operation], ...]


@dataclass(frozen=True)
class Offered:
    """The op classes a pattern may act on: instances of `roots`, and, when the pattern
    erases trivially dead ops (`dead_ops`), every class whose ops can be trivially dead."""

    roots: Roots
    dead_ops: bool = False

    def __call__(self, kind: type[Operation]) -> bool:
        if issubclass(kind, self.roots):
            return True
        return self.dead_ops and not never_dead(kind)


def _decorated_roots(pattern: RewritePattern) -> Roots | None:
    """The root types of a `match_and_rewrite` decorated with `op_type_rewrite_pattern` (read
    from the decorator's closure: xDSL keeps no other record of them), or None."""
    method = type(pattern).match_and_rewrite
    code = getattr(method, "__code__", None)
    closure = getattr(method, "__closure__", None)
    if (
        code is None
        or closure is None
        or getattr(method, "__qualname__", "") != "op_type_rewrite_pattern.<locals>.impl"
        or "expected_type" not in code.co_freevars
    ):
        return None
    expected: object = closure[code.co_freevars.index("expected_type")].cell_contents
    members: tuple[object, ...] = (
        get_args(expected) if get_origin(expected) in (Union, UnionType) else (expected,)
    )
    roots = tuple(root for root in members if isinstance(root, type) and issubclass(root, Operation))
    return roots if len(roots) == len(members) else None


def _roots_of_all(patterns: list[RewritePattern]) -> Roots | None:
    """The roots of every pattern of an applier, or None when one has none."""
    roots: list[type[Operation]] = []
    for inner in patterns:
        offered = offered_ops(inner)
        if offered is None or offered.dead_ops:
            return None
        roots += offered.roots
    return tuple(roots)


def offered_ops(pattern: RewritePattern) -> Offered | None:
    """The op classes outside of which `pattern` provably does nothing (see the module
    docstring), or None when that cannot be read off the pattern."""
    if type(pattern) is GreedyRewritePatternApplier:
        if pattern.folding_enabled:
            return None
        roots = _roots_of_all(pattern.rewrite_patterns)
        return None if roots is None else Offered(roots, pattern.dce_enabled)
    if type(pattern) is GreedyApplierWithMemoizedDce:
        roots = _roots_of_all(pattern.rewrite_patterns)
        return None if roots is None else Offered(roots, dead_ops=True)
    roots = _decorated_roots(pattern)
    return None if roots is None else Offered(roots)


def rooted_ops(
    region: Region, offered: Offered, reverse: bool, region_first: bool
) -> list[Operation]:
    """The ops of `region.walk(reverse=reverse, region_first=region_first)` whose class is
    `offered`, in that order."""
    found: list[Operation] = []
    is_offered: dict[type[Operation], bool] = {}

    def visit_region(region: Region) -> None:
        blocks = reversed(region.blocks) if reverse else region.blocks
        for block in blocks:
            visit_block(block)

    def visit_block(block: Block) -> None:
        op = block.last_op if reverse else block.first_op
        while op is not None:
            kind = type(op)
            matches = is_offered.get(kind)
            if matches is None:
                matches = is_offered[kind] = offered(kind)
            if matches and not region_first:
                found.append(op)
            if op.regions:
                for nested in reversed(op.regions) if reverse else op.regions:
                    visit_region(nested)
            if matches and region_first:
                found.append(op)
            op = op.prev_op if reverse else op.next_op

    visit_region(region)
    return found


class RootedWalker(PatternRewriteWalker):
    """`PatternRewriteWalker` that populates its worklist with the ops its pattern can act
    on only (see the module docstring); the same rewrites, in the same order."""

    def _populate_worklist(self, op: Operation | Region | Block) -> None:
        if not isinstance(op, Region):
            super()._populate_worklist(op)
            return
        # Every op when the roots are unknown (the same list as xDSL's walk, built faster).
        offered = offered_ops(self.pattern) or Offered((Operation,))
        # xDSL walks in reverse since its worklist is a stack; so do we.
        for sub_op in rooted_ops(
            op, offered, reverse=not self.walk_reverse, region_first=not self.walk_regions_first
        ):
            self._worklist.push(sub_op)
