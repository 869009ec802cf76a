"""Dead-code checks that are linear in loop-nest depth.

xDSL's `GreedyRewritePatternApplier` erases trivially dead ops before trying its patterns; to
decide that a region op (an `scf.for`) is dead it collects the memory effects of its whole
body, again at every enclosing loop: quadratic in the nest depth (about 40 s for 1,000 levels).
`GreedyApplierWithMemoizedDce` makes the same decision (xDSL's `is_trivially_dead`, with the
same effects) but remembers the effects of each op until the IR next changes through the
rewriter, so one walk collects each body's effects once.

xDSL's `dce` pass (`DeadCodeElimination`) has the same cost, and pays it again at every
round of its liveness fixpoint: each round asks every op whether it would be dead
(`would_be_trivially_dead`: its traits, its nested effects). `MemoizedDeadCodeElimination`
(also named `dce`) runs the same liveness propagation and erases the same ops, but answers
that question once per op for the whole propagation, which changes no IR (`MemoizedLiveSet`);
the ops are erased after it, as xDSL does.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
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
    OpTrait,
    RecursiveMemoryEffect,
    SymbolOpInterface,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination, LiveSet

Effects = AbstractSet[EffectInstance] | None


def never_dead(kind: type[Operation]) -> bool:
    """Whether xDSL's dead-code check (`would_be_trivially_dead`, and so `is_trivially_dead`)
    refuses every op of class `kind`: terminators and symbols (traits belong to the class)."""
    return _class_facts(kind)[0]


_FACTS: dict[type[Operation], tuple[frozenset[OpTrait], bool, tuple[MemoryEffect, ...]]] = {}
"""Per op class: its traits when the facts were read, `never_dead`, its `MemoryEffect`s."""


def _class_facts(kind: type[Operation]) -> tuple[bool, tuple[MemoryEffect, ...]]:
    """`never_dead(kind)` and `kind.get_traits_of_type(MemoryEffect)`, read once per class
    (again if its trait set was replaced: xDSL's `OpTraits.add_trait`)."""
    traits = kind.traits.traits
    known = _FACTS.get(kind)
    if known is None or known[0] is not traits:
        refused = kind.has_trait(IsTerminator, value_if_unregistered=False) or kind.has_trait(
            SymbolOpInterface, value_if_unregistered=False
        )
        known = (traits, refused, tuple(kind.get_traits_of_type(MemoryEffect)))
        _FACTS[kind] = known
    return known[1], known[2]


class EffectsMemo:
    """xDSL's `get_effects` of ops, each computed once until `forget` (a recursive op's
    effects are its children's, so one walk collects each body's once). The owner calls
    `forget` whenever the IR may have changed."""

    def __init__(self) -> None:
        self._effects: dict[Operation, Effects] = {}

    def forget(self) -> None:
        """Drop every remembered answer (the IR changed)."""
        self._effects.clear()

    def result_only(self, op: Operation) -> bool:
        """xDSL's `result_only_effects(op)`: the effects of `op` are known and observable
        only through its results (reads, and allocations of values defined under `op`)."""
        effects = self.effects_of(op)
        return effects is not None and all(
            e.kind == MemoryEffectKind.READ
            or (
                e.kind == MemoryEffectKind.ALLOC
                and isinstance(v := e.value, SSAValue)
                and op.is_ancestor(v.owner)
            )
            for e in effects
        )

    def effects_of(self, op: Operation) -> Effects:
        """xDSL's `get_effects(op)`, memoized."""
        if op in self._effects:
            return self._effects[op]
        interfaces = _class_facts(type(op))[1]
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
                    child_effects = self.effects_of(child)
                    if child_effects is None:
                        return None
                    effects.update(child_effects)
        return effects


class GreedyApplierWithMemoizedDce(GreedyRewritePatternApplier):
    """`GreedyRewritePatternApplier([...])` (dead-code elimination enabled, no folding) whose
    dead-op check memoizes memory effects between IR changes."""

    def __init__(self, patterns: Sequence[RewritePattern]):
        super().__init__(list(patterns), dce_enabled=False)
        self._effects = EffectsMemo()
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
            self._effects.forget()

        rewriter.operation_insertion_handler.append(forget)
        rewriter.operation_removal_handler.append(forget)
        rewriter.operation_modification_handler.append(forget)
        rewriter.operation_replacement_handler.append(forget)
        rewriter.block_creation_handler.append(forget)

    def _is_trivially_dead(self, op: Operation) -> bool:
        """xDSL's `is_trivially_dead`, with memoized effects."""
        if any(result.first_use is not None for result in op.results):
            return False
        return not never_dead(type(op)) and self._effects.result_only(op)


@dataclass
class MemoizedLiveSet(LiveSet):
    """xDSL's `LiveSet` (the liveness of `dce`) whose question "would this op be dead if its
    results were unused" (`would_be_trivially_dead`) is answered once per op. Valid only
    while the IR does not change: build one per propagation, and erase after it."""

    _effects: EffectsMemo = field(default_factory=EffectsMemo)
    _removable: dict[Operation, bool] = field(default_factory=dict[Operation, bool])

    def would_be_dead(self, op: Operation) -> bool:
        """xDSL's `would_be_trivially_dead(op)`, remembered."""
        known = self._removable.get(op)
        if known is None:
            known = not never_dead(type(op)) and self._effects.result_only(op)
            self._removable[op] = known
        return known

    def propagate_op_liveness(self, op: Operation) -> None:
        """An op is live when it would not be dead without uses, or when a live op uses one
        of its results (its regions' ops first, as xDSL)."""
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        if not self.would_be_dead(op) or any(
            self.is_live(use.operation) for result in op.results for use in result.uses
        ):
            self.set_live(op)


class MemoizedDeadCodeElimination(DeadCodeElimination):
    """xDSL's `dce` (same name, same ops erased: xDSL's `region_dce` on the module body)
    with the liveness question answered once per op (`MemoizedLiveSet`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        live = MemoizedLiveSet()
        while live.changed:
            live.changed = False
            live.propagate_region_liveness(op.body)
        live.delete_dead(op.body, None)
