"""`RootedWalker` rewrites exactly as xDSL's `PatternRewriteWalker` (issue 28).

- `offered_ops` reads the roots of `op_type_rewrite_pattern` methods (a union too) and of
  xDSL's greedy applier without folding (with dead-code elimination: every class but
  terminators and symbols too) and of our memoized-DCE applier, and answers None for every
  pattern that may act on any op;
- `rooted_ops` is xDSL's walk, in all four orders, with the non-roots left out (hypothesis,
  on every lit input and example; with `Operation` as a root, the whole walk);
- every registered pass, on every lit input and example it accepts, and the Adreno pipeline on
  the bottleneck model, print the same IR (or raise the same diagnostic) with the walker's
  filter as with xDSL's own population; on the model the filter leaves out most visits;
- random rewrites (hypothesis) that number the ops they visit, erase unused ops and insert
  ops, alone or in appliers with and without dead-code elimination, with every walker
  option, leave the same IR and the same answer under both walkers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_no_crash import CHUNKS
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.worklist import Worklist

from physlayout.transforms.dead_code import GreedyApplierWithMemoizedDce
from physlayout.transforms.rooted_walker import Offered, RootedWalker, offered_ops, rooted_ops
from physlayout.universe import PASSES, make_context

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


@contextmanager
def xdsl_population() -> Iterator[None]:
    """Within the block, `RootedWalker` populates its worklist as xDSL's walker does."""
    own = RootedWalker.__dict__["_populate_worklist"]
    RootedWalker._populate_worklist = PatternRewriteWalker._populate_worklist  # pyright: ignore[reportAttributeAccessIssue]
    try:
        yield
    finally:
        RootedWalker._populate_worklist = own  # pyright: ignore[reportAttributeAccessIssue]


class OnAdd(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter) -> None:
        pass


class OnAddOrMul(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp | arith.MulfOp, rewriter: PatternRewriter) -> None:
        pass


class OnAnything(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        pass


class OnAnythingAfterAll(OnAdd):
    """A subclass whose own method is not decorated: it sees every op."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        pass


def test_roots_are_read_off_decorated_methods_and_appliers() -> None:
    assert offered_ops(OnAdd()) == Offered((arith.AddfOp,))
    assert offered_ops(OnAddOrMul()) == Offered((arith.AddfOp, arith.MulfOp))
    plain = GreedyRewritePatternApplier([OnAdd(), OnAddOrMul()], dce_enabled=False)
    assert offered_ops(plain) == Offered((arith.AddfOp, arith.AddfOp, arith.MulfOp))
    nested = GreedyRewritePatternApplier([plain], dce_enabled=False)
    assert offered_ops(nested) == Offered((arith.AddfOp, arith.AddfOp, arith.MulfOp))
    assert offered_ops(GreedyRewritePatternApplier([OnAdd()])) == Offered((arith.AddfOp,), True)
    assert offered_ops(GreedyApplierWithMemoizedDce([OnAdd()])) == Offered((arith.AddfOp,), True)


def test_dead_code_appliers_are_offered_every_op_that_can_be_dead() -> None:
    offered = Offered((arith.AddfOp,), dead_ops=True)
    assert offered(arith.AddfOp)
    assert offered(arith.MulfOp) and offered(arith.ConstantOp) and offered(scf.ForOp)
    assert not offered(func.ReturnOp) and not offered(scf.YieldOp)  # terminators
    assert not offered(func.FuncOp)  # a symbol
    assert Offered((func.ReturnOp,), dead_ops=True)(func.ReturnOp)  # unless a root
    assert not Offered((arith.AddfOp,))(arith.MulfOp)


def test_roots_are_refused_for_patterns_that_may_act_on_any_op() -> None:
    assert offered_ops(OnAnything()) is None
    assert offered_ops(OnAnythingAfterAll()) is None
    folding = GreedyRewritePatternApplier(
        [OnAdd()], ctx=Context(), folding_enabled=True, dce_enabled=False
    )
    assert offered_ops(folding) is None
    assert offered_ops(GreedyRewritePatternApplier([OnAdd(), OnAnything()], dce_enabled=False)) is None
    assert offered_ops(GreedyApplierWithMemoizedDce([OnAnything()])) is None
    # An applier inside a dead-code-eliminating one: not read (conservatively).
    assert offered_ops(GreedyRewritePatternApplier([GreedyRewritePatternApplier([OnAdd()])])) is None

    class Retype(TypeConversionPattern):
        def convert_type(self, typ):  # pyright: ignore[reportMissingParameterType, reportIncompatibleMethodOverride]
            return None

    assert offered_ops(Retype()) is None


@cache
def parsed_chunks() -> list[tuple[str, ModuleOp]]:
    """The lit inputs and examples that parse, with their modules."""
    parsed: list[tuple[str, ModuleOp]] = []
    for _, text in CHUNKS:
        try:
            parsed.append((text, Parser(make_context(allow_unregistered=True), text).parse_module()))
        except (ParseError, DiagnosticException):
            continue
    return parsed



@settings(max_examples=150, deadline=None)
@given(st.data(), st.booleans(), st.booleans(), st.booleans())
def test_rooted_ops_is_the_filtered_xdsl_walk(
    data: st.DataObject, reverse: bool, region_first: bool, dead_ops: bool
) -> None:
    module = data.draw(st.sampled_from(parsed_chunks()))[1]
    kinds = sorted({type(op) for op in module.walk()}, key=lambda kind: kind.__name__)
    # Base classes too: a root matches its subclasses, as `isinstance` does.
    candidates: list[type[Operation]] = [*kinds, Operation, IRDLOperation, func.FuncOp]
    offered = Offered(tuple(data.draw(st.lists(st.sampled_from(candidates), max_size=4))), dead_ops)
    expected = [
        op for op in module.body.walk(reverse=reverse, region_first=region_first) if offered(type(op))
    ]
    assert rooted_ops(module.body, offered, reverse, region_first) == expected


class _Pipeline:
    """`raise-layout-rewrites` then `physlayout-adreno`, as a pass-like object."""

    def apply(self, ctx: Context, module: ModuleOp) -> None:
        from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
        from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass

        RaiseLayoutRewritesPass().apply(ctx, module)
        PhyslayoutAdrenoPass().apply(ctx, module)


def _outcome(make: Callable[[], Any], source: str | ModuleOp, ctx: Context | None = None) -> str:
    """The printed IR after `make().apply` on `source` (parsed, or a copy of it), or the
    diagnostic it raised."""
    ctx = ctx or make_context(allow_unregistered=True)
    module = Parser(ctx, source).parse_module() if isinstance(source, str) else source.clone()
    try:
        make().apply(ctx, module)
    except DiagnosticException as error:
        return f"error: {error}"
    return str(module)


@cache
def verified_chunks() -> list[tuple[str, ModuleOp]]:
    """The lit inputs and examples that parse and verify, with their modules (cloned, never
    changed, by the tests)."""
    parsed = dict(parsed_chunks())
    found: list[tuple[str, ModuleOp]] = []
    for where, text in CHUNKS:
        if text not in parsed:
            continue
        try:
            parsed[text].verify()
        except DiagnosticException:
            continue
        found.append((where, parsed[text]))
    return found


@pytest.mark.parametrize("name", sorted(name for name in PASSES if not name.startswith("physlayout-")))
def test_every_pass_rewrites_as_with_xdsl_population(name: str) -> None:
    """Each pass on its own (the declared pipelines only chain them: the model test runs the
    Adreno one, on the states only a pipeline makes)."""
    module_name, class_name = PASSES[name]
    pass_class = getattr(import_module(f"physlayout.{module_name}"), class_name)
    ctx = make_context(allow_unregistered=True)
    for where, module in verified_chunks():
        rooted = _outcome(pass_class, module, ctx)
        with xdsl_population():
            stock = _outcome(pass_class, module, ctx)
        assert rooted == stock, f"{name} differs on {where}"


def test_the_adreno_pipeline_on_a_model_rewrites_as_with_xdsl_population(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (MODELS / "bottleneck.mlir").read_text()
    visits = [0]
    pop = Worklist.pop

    def counting_pop(self: Worklist) -> Operation:
        visits[0] += 1
        return pop(self)

    monkeypatch.setattr(Worklist, "pop", counting_pop)
    rooted = _outcome(_Pipeline, text)
    rooted_visits = visits[0]
    with xdsl_population():
        stock = _outcome(_Pipeline, text)
    assert rooted == stock
    assert not rooted.startswith("error")
    assert rooted_visits < 0.75 * (visits[0] - rooted_visits)


Action = Callable[[Operation, PatternRewriter, list[int]], None]


def _mark(op: Operation, rewriter: PatternRewriter, clock: list[int]) -> None:
    """Numbers the op when first visited: the IR records the order of the visits."""
    if "visit" not in op.attributes:
        clock[0] += 1
        op.attributes["visit"] = IntegerAttr(clock[0], 64)
        rewriter.notify_op_modified(op)


def _erase_unused(op: Operation, rewriter: PatternRewriter, clock: list[int]) -> None:
    """Erases the op when its results are unused (not a terminator, no regions)."""
    if op.regions or op.successors or op.has_trait(IsTerminator):
        return
    if all(not result.uses for result in op.results):
        rewriter.erase(op)


def _insert_constant(op: Operation, rewriter: PatternRewriter, clock: list[int]) -> None:
    """Inserts a numbered constant before the op, once per op."""
    if "seen" in op.attributes:
        return
    clock[0] += 1
    op.attributes["seen"] = UnitAttr()
    rewriter.notify_op_modified(op)
    constant = arith.ConstantOp(IntegerAttr(clock[0], 32))
    constant.attributes["seen"] = UnitAttr()
    rewriter.insert(constant, InsertPoint.before(op))


def _rooted_pattern(root: type[Operation], action: Action, clock: list[int]) -> RewritePattern:
    """A pattern decorated with `op_type_rewrite_pattern` on `root` that runs `action`."""

    def match_and_rewrite(self: RewritePattern, op: Operation, rewriter: PatternRewriter) -> None:
        action(op, rewriter, clock)

    match_and_rewrite.__annotations__ = {"op": root, "rewriter": PatternRewriter, "return": None}
    kind = type("Rooted", (RewritePattern,), {"match_and_rewrite": op_type_rewrite_pattern(match_and_rewrite)})
    return kind()


@settings(max_examples=120, deadline=None)
@given(
    st.data(),
    st.lists(st.sampled_from([_mark, _erase_unused, _insert_constant]), min_size=1, max_size=3),
    st.sampled_from(["bare", "greedy", "greedy-dce", "memoized-dce"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_random_rewrites_are_xdsl_walker_rewrites(
    data: st.DataObject,
    actions: list[Action],
    applier: str,
    recursively: bool,
    regions_first: bool,
    reverse: bool,
) -> None:
    text, parsed = data.draw(st.sampled_from(parsed_chunks()))
    kinds = sorted({type(op) for op in parsed.walk()}, key=lambda kind: kind.__name__)
    roots = [data.draw(st.sampled_from([*kinds, arith.ConstantOp])) for _ in actions]

    def run(walker: type[PatternRewriteWalker]) -> tuple[bool, str]:
        module = Parser(make_context(allow_unregistered=True), text).parse_module()
        clock = [0]
        patterns = [_rooted_pattern(r, a, clock) for r, a in zip(roots, actions, strict=True)]
        pattern = {
            "bare": lambda: patterns[0],
            "greedy": lambda: GreedyRewritePatternApplier(list(patterns), dce_enabled=False),
            "greedy-dce": lambda: GreedyRewritePatternApplier(list(patterns)),
            "memoized-dce": lambda: GreedyApplierWithMemoizedDce(patterns),
        }[applier]()
        changed = walker(
            pattern,
            apply_recursively=recursively,
            walk_regions_first=regions_first,
            walk_reverse=reverse,
        ).rewrite_module(module)
        return changed, str(module)

    assert run(RootedWalker) == run(PatternRewriteWalker)
