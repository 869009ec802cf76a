"""A pattern walker that offers each pattern only the ops it can match (issue 28: compile time).

xDSL's `PatternRewriteWalker` pushes every op of the region onto its worklist and offers each
to its pattern, again at every round of `apply_recursively`; a pass whose patterns rewrite
one kind of op (a `linalg.generic`, a `scf.for`) pays about 3-6 us for each of the thousands
of other ops of a model, once per walk, and the Adreno pipeline walks a model some sixty times.
MLIR's greedy driver indexes its patterns by their root op for the same reason.

`RootedWalker(pattern, ...)` takes the same arguments as `PatternRewriteWalker` and leaves
out of each population of its worklist the ops on which `pattern` provably does nothing
(`pattern_roots`):

- a pattern whose `match_and_rewrite` is decorated with xDSL's `op_type_rewrite_pattern`
  returns at once unless `isinstance(op, root)` for its annotated root types;
- xDSL's own `GreedyRewritePatternApplier` (exactly that class) without dead-code
  elimination or folding tries its patterns in turn and does nothing else, so it does nothing
  on an op that none of its patterns has as a root.

Any other pattern (a dead-code-eliminating applier may erase an op of any kind, a plain
`match_and_rewrite` may look at any op) is offered every op, in the order of xDSL's walk
(listed by the same traversal, which is also about a third cheaper than xDSL's nested
generators).

Why the rewrite is xDSL's, op for op: an op left out is one whose visit changes nothing (no
IR, no worklist entry, no `has_done_action`). The worklist keeps its other entries in the
same order, and later pushes of a left-out op (a new or modified op, an operand's owner)
happen as before; such an op is then visited, again doing nothing. So the sequence of
visits that do something, and with it every rewrite and the walker's answer, is the one of
`PatternRewriteWalker`.
"""

from __future__ import annotations

from types import UnionType
from typing import Union, get_args, get_origin

from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)

Roots = tuple[type[Operation], ...]


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


def pattern_roots(pattern: RewritePattern) -> Roots | None:
    """The op types outside of which `pattern` provably does nothing (see the module
    docstring), or None when that cannot be read off the pattern."""
    if type(pattern) is GreedyRewritePatternApplier:
        if pattern.dce_enabled or pattern.folding_enabled:
            return None
        roots: list[type[Operation]] = []
        for inner in pattern.rewrite_patterns:
            inner_roots = pattern_roots(inner)
            if inner_roots is None:
                return None
            roots += inner_roots
        return tuple(roots)
    return _decorated_roots(pattern)


def rooted_ops(region: Region, roots: Roots, reverse: bool, region_first: bool) -> list[Operation]:
    """The ops of `region.walk(reverse=reverse, region_first=region_first)` that are
    instances of `roots`, in that order."""
    found: list[Operation] = []
    is_root: dict[type[Operation], bool] = {}

    def visit_region(region: Region) -> None:
        blocks = reversed(region.blocks) if reverse else region.blocks
        for block in blocks:
            visit_block(block)

    def visit_block(block: Block) -> None:
        op = block.last_op if reverse else block.first_op
        while op is not None:
            kind = type(op)
            matches = is_root.get(kind)
            if matches is None:
                matches = is_root[kind] = issubclass(kind, roots)
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
    """`PatternRewriteWalker` that populates its worklist with the ops its pattern can match
    only (see the module docstring); the same rewrites, in the same order."""

    def _populate_worklist(self, op: Operation | Region | Block) -> None:
        if not isinstance(op, Region):
            super()._populate_worklist(op)
            return
        # Every op when the roots are unknown (the same list as xDSL's walk, built faster).
        roots = pattern_roots(self.pattern)
        if roots is None:
            roots = (Operation,)
        # xDSL walks in reverse since its worklist is a stack; so do we.
        for sub_op in rooted_ops(
            op, roots, reverse=not self.walk_reverse, region_first=not self.walk_regions_first
        ):
            self._worklist.push(sub_op)
