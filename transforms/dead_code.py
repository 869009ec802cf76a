"""Greedy rewriting with a dead-code check that is linear in loop-nest depth.

xDSL's `GreedyRewritePatternApplier` erases trivially dead ops before trying its patterns; to
decide that a region op (an `scf.for`) is dead it collects the memory effects of its whole
body, again at every enclosing loop: quadratic in the nest depth (about 40 s for 1,000 levels).
`GreedyApplierWithMemoizedDce` makes the same decision (xDSL's `is_trivially_dead`, with the
same effects) but remembers the effects of each op until the IR next changes through the
rewriter, so one walk collects each body's effects once.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
)
from xdsl.traits import (
    EffectInstance,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    RecursiveMemoryEffect,
    SymbolOpInterface,
)

Effects = AbstractSet[EffectInstance] | None


def never_dead(kind: type[Operation]) -> bool:
    """Whether xDSL's dead-code check (`would_be_trivially_dead`, and so `is_trivially_dead`)
    refuses every op of class `kind`: terminators and symbols (traits belong to the class)."""
    return kind.has_trait(IsTerminator, value_if_unregistered=False) or kind.has_trait(
        SymbolOpInterface, value_if_unregistered=False
    )


class GreedyApplierWithMemoizedDce(GreedyRewritePatternApplier):
    """`GreedyRewritePatternApplier([...])` (dead-code elimination enabled, no folding) whose
    dead-op check memoizes memory effects between IR changes."""

    def __init__(self, patterns: Sequence[RewritePattern]):
        super().__init__(list(patterns), dce_enabled=False)
        self._effects: dict[Operation, Effects] = {}
        self._watched: PatternRewriter | None = None

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        self._watch(rewriter)
        if op.parent is not None and self._is_trivially_dead(op):
            rewriter.erase(op)
            return
        super().match_and_rewrite(op, rewriter)

    def _watch(self, rewriter: PatternRewriter) -> None:
        """Forget every memoized effect when the rewriter changes the IR (one handler per
        rewriter: a walk reuses its rewriter for every op, and a handler added per op would
        make every change cost as much as the ops already visited)."""
        if rewriter is self._watched:
            return
        self._watched = rewriter

        def forget(*_: Operation | Block | Sequence[SSAValue | None]) -> None:
            self._effects.clear()

        rewriter.operation_insertion_handler.append(forget)
        rewriter.operation_removal_handler.append(forget)
        rewriter.operation_modification_handler.append(forget)
        rewriter.operation_replacement_handler.append(forget)
        rewriter.block_creation_handler.append(forget)

    def _is_trivially_dead(self, op: Operation) -> bool:
        """xDSL's `is_trivially_dead`, with memoized effects."""
        if any(result.first_use is not None for result in op.results):
            return False
        if never_dead(type(op)):
            return False
        effects = self._effects_of(op)
        return effects is not None and all(
            e.kind == MemoryEffectKind.READ
            or (
                e.kind == MemoryEffectKind.ALLOC
                and isinstance(v := e.value, SSAValue)
                and op.is_ancestor(v.owner)
            )
            for e in effects
        )

    def _effects_of(self, op: Operation) -> Effects:
        """xDSL's `get_effects`, memoized: a recursive op's effects are its children's."""
        if op in self._effects:
            return self._effects[op]
        interfaces = op.get_traits_of_type(MemoryEffect)
        effects: set[EffectInstance] | None = set() if interfaces else None
        for interface in interfaces:
            if effects is None:
                break
            if type(interface).get_effects == RecursiveMemoryEffect.get_effects:
                own = self._nested_effects(op)
            else:
                own = interface.get_effects(op)
            if own is None:
                effects = None
            else:
                effects.update(own)
        self._effects[op] = effects
        return effects

    def _nested_effects(self, op: Operation) -> Effects:
        effects: set[EffectInstance] = set()
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    child_effects = self._effects_of(child)
                    if child_effects is None:
                        return None
                    effects.update(child_effects)
        return effects
