"""The random-program checker, bounded (`make test`); `make fuzz` runs the long campaign.

Random buffer-level and graph-level programs (`fuzz.programs`, `fuzz.graphs`) go through
every pass and documented pipeline; each step must give equal results or a diagnostic
(`fuzz.checker`). The features that hit bugs being fixed on other branches are switched
off here (`Features.safe()`); `make fuzz` turns everything on. Derandomized: the same
examples every run. `PHYSLAYOUT_FUZZ_EXAMPLES` scales the example counts.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from fuzz.campaign import check_program_file, failure_key
from fuzz.checker import Backends, Checker, check_graph
from fuzz.choices import RandomChooser, ReplayChooser, shrink_choices
from fuzz.features import Features
from fuzz.graphs import Graph, generate_graph, graphs
from fuzz.layouts import DIM_NAMES, _MapBuilder
from fuzz.programs import Program, generate_program, programs
from fuzz.steps import Pipeline
from fuzz.values import GARBAGE, Inputs, Outcome, compare, padding_mask
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.indexing.index_map import IndexMap
from physlayout.runtime.mlir_runner import MlirTools
from physlayout.transforms.apply_layout import ApplyLayoutPass

SCALE = float(os.environ.get("PHYSLAYOUT_FUZZ_EXAMPLES", "1"))


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


SAFE = Features()  # every switched bug is fixed on main: all features on
CHECKER = Checker()


def assert_checked(program: Program, backends: Backends | None = None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = CHECKER.check(program, backends)
    assert report.invalid is None, f"generator bug: {report.invalid}\n{program.text}"
    failures = "\n".join(f"{s.name}: {s.outcome}: {s.detail}" for s in report.failures())
    assert not failures, f"{failures}\n{program.text}"


@fuzz_settings(30)
@given(programs(SAFE))
def test_buffer_programs_agree_after_every_pipeline(program: Program) -> None:
    assert_checked(program)


def _failing(program: Program) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = CHECKER.check(program)
    if report.invalid is not None:
        return [f"invalid: {report.invalid}"]
    return [f"{s.name}: {s.outcome}: {s.detail}" for s in report.failures()]


@pytest.mark.parametrize("index", range(int(40 * SCALE)))
def test_seeded_buffer_programs_agree_after_every_pipeline(index: int) -> None:
    """Programs from fixed seeds (Hypothesis re-generates many identical programs; these
    are all different). A failure is reported with its choices shrunk."""
    program = generate_program(RandomChooser(f"test:{index}"), SAFE)
    problems = _failing(program)
    if not problems:
        return
    shrunk = shrink_choices(
        program.choices,
        lambda c: bool(_failing(generate_program(ReplayChooser(c), SAFE))),
        40,
        lambda c: generate_program(ReplayChooser(c), SAFE).spans,
    )
    small = generate_program(ReplayChooser(shrunk), SAFE)
    pytest.fail("\n".join([*problems, "minimized:", *_failing(small), small.text]))


@fuzz_settings(6)
@given(programs(Features.safe()))  # see README "random-program checker": reversed small tiles
def test_buffer_programs_agree_on_opencl(program: Program) -> None:
    if CHECKER.opencl_runtime() is None:
        pytest.skip("no OpenCL device")
    assert_checked(program, Backends(opencl=True))


TOOLS = MlirTools.find()


@pytest.mark.skipif(TOOLS is None or TOOLS.runner is None, reason="mlir-runner-22 not installed")
@fuzz_settings(5)
@given(programs(SAFE))
def test_lowered_programs_agree_under_mlir_runner(program: Program) -> None:
    assert_checked(program, Backends(mlir=True))


def assert_graph_checked(text: str) -> None:
    report = check_graph(text)
    assert report.invalid is None, f"generator bug: {report.invalid}\n{text}"
    failures = "\n".join(f"{s.name}: {s.outcome}: {s.detail}" for s in report.failures())
    assert not failures, f"{failures}\n{text}"


@fuzz_settings(25)
@given(graphs(SAFE))
def test_graph_programs_agree_after_every_pipeline(graph: Graph) -> None:
    assert_graph_checked(graph.text)


@pytest.mark.parametrize("index", range(int(30 * SCALE)))
def test_seeded_graph_programs_agree_after_every_pipeline(index: int) -> None:
    assert_graph_checked(generate_graph(RandomChooser(f"test:{index}"), SAFE).text)


# The generator ---------------------------------------------------------------------------------


def test_generator_rarely_builds_invalid_programs() -> None:
    """Every program parses, verifies and passes verify-buffers (running them is checked
    by the property tests above); safe programs use no switched-off feature."""
    from fuzz.steps import parse

    from physlayout.transforms.verify_buffers import buffer_problems

    for index in range(150):
        program = generate_program(RandomChooser(index), Features.safe())
        assert not program.features_used, index
        module = parse(program.text)
        module.verify()
        assert not buffer_problems(module), (index, program.text)


def test_programs_cover_the_features_the_brief_lists() -> None:
    texts = "\n".join(generate_program(RandomChooser(i)).text for i in range(120))
    for needle in [
        "floordiv",
        "mod",
        "ceildiv",
        " * 2",
        "transform = [",
        "pad_value",
        " | ",
        "axis_separators",
        '"global.texture"',
        '"global.texture-nhwc"',
        '"global.texture-weight"',
        "scf.for",
        "affine.for",
        '"scf.parallel"',
        '"affine.parallel"',
        "iter_args",
        "layout.allocate",
        "layout.data",
        "offset",
        "func.call",
        "vector<4xf32>",
        "scf.if",
        "arith.divui",
        "arith.maxsi",
        "memref.load",
        "affine_map<",
    ]:
        assert needle in texts, needle
    graph_texts = "\n".join(generate_graph(RandomChooser(i)).text for i in range(80))
    for needle in [
        "layout.transform",
        "layout.pad",
        "layout.crop",
        "cropped_value",
        "linalg.generic",
        "layout.frozen",
        '"reduction"',
    ]:
        assert needle in graph_texts, needle


@pytest.mark.parametrize("name", Features.names())
def test_each_switch_turns_its_feature_on(name: str) -> None:
    """With only `name` on, some program uses it; with everything off, none does."""
    only = Features.parse(name)
    used = set().union(
        *(generate_program(RandomChooser(i), only).features_used for i in range(300)),
        *(generate_graph(RandomChooser(i), only).features_used for i in range(100)),
    )
    assert used == {name}
    none = Features.safe()
    assert not set().union(
        *(generate_program(RandomChooser(i), none).features_used for i in range(100)),
        *(generate_graph(RandomChooser(i), none).features_used for i in range(100)),
    )


def test_replaying_the_choices_regenerates_the_program() -> None:
    for index in range(20):
        first = generate_program(RandomChooser(index))
        again = generate_program(ReplayChooser(first.choices))
        assert again.text == first.text
        graph = generate_graph(RandomChooser(index))
        assert generate_graph(ReplayChooser(graph.choices)).text == graph.text


def test_shrink_choices_keeps_the_property_and_shrinks() -> None:
    def interesting(choices: list[int]) -> bool:
        return sum(choices) >= 10 and 7 in choices

    shrunk = shrink_choices([3, 9, 7, 1, 0, 8, 2], interesting)
    assert interesting(shrunk)
    assert shrunk == [3, 7] or sum(shrunk) <= 10


def test_shrinking_a_program_keeps_the_property_and_drops_the_rest() -> None:
    """Span-aware shrinking of a generated program: whole functions and statements go."""
    program = next(
        p
        for p in (generate_program(RandomChooser(i)) for i in range(200))
        if "iter_args" in p.text and p.text.count("func.func") > 1
    )

    def interesting(choices: list[int]) -> bool:
        return "iter_args" in generate_program(ReplayChooser(choices)).text

    shrunk = shrink_choices(
        program.choices, interesting, 150, lambda c: generate_program(ReplayChooser(c)).spans
    )
    small = generate_program(ReplayChooser(shrunk))
    assert "iter_args" in small.text
    assert small.text.count("func.func") == 1
    assert small.text.count("\n") < program.text.count("\n") / 2


# The checker sees wrong answers -------------------------------------------------------------------


def _planted(transform: type[ModulePass], name: str) -> list[Pipeline]:
    return [Pipeline(name, None, lambda: [transform()])]


class _SwapAddSub(ModulePass):
    """A wrong 'optimization': every arith.addf becomes arith.subf."""

    name = "swap-add-sub"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for add in [o for o in op.walk() if isinstance(o, arith.AddfOp)]:
            Rewriter.replace_op(add, arith.SubfOp(add.lhs, add.rhs))


class _Crashes(ModulePass):
    name = "crashes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise KeyError("planted")


class _Refuses(ModulePass):
    name = "refuses"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise PassFailedException("planted refusal")


ADD_PROGRAM = Program(
    """func.func @k(%a: !layout.buffer<5xf32>, %b: !layout.buffer<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %v = layout.load %a[%i] : !layout.buffer<5xf32>, f32
    %w = arith.addf %v, %v : f32
    layout.store %w, %b[%i] : !layout.buffer<5xf32>, f32
  }
  func.return
}
""",
    [],
)


@pytest.mark.parametrize(
    ("planted", "outcome"),
    [(_SwapAddSub, "mismatch"), (_Crashes, "crash"), (_Refuses, "refused")],
)
def test_checker_classifies_planted_passes(planted: type[ModulePass], outcome: str) -> None:
    report = Checker(_planted(planted, "planted")).check(ADD_PROGRAM)
    assert [s.outcome for s in report.steps] == [outcome]


def test_checker_sees_unfilled_padding() -> None:
    """A written buffer whose padding still holds the garbage it started with is a
    mismatch; a read-only buffer may keep it."""
    split = IndexMap.parse("(i) -> (i floordiv 2, i mod 2)")
    layout = PendingLayout((3,), (split,), split, (2, 2), (), None, -1.0)
    layout = PendingLayout(
        layout.logical_shape,
        layout.steps,
        layout.index_map,
        layout.shape,
        (),
        layout.index_map.padding_predicate([3]),
        -1.0,
    )
    logical = np.array([1.0, 2.0, 3.0], np.float32)
    physical = layout.index_map.map_ndarray(logical, pad_value=GARBAGE)
    assert padding_mask(layout).tolist() == [[False, False], [False, True]]
    inputs = Inputs([logical], [layout])
    outcome = Outcome([logical], [physical], [])
    assert "padding" in (compare(outcome, outcome, inputs, {0}, [True]) or "")
    assert compare(outcome, outcome, inputs, set(), [True]) is None
    filled = physical.copy()
    filled[1, 1] = -1.0
    assert compare(outcome, Outcome([logical], [filled], []), inputs, {0}, [True]) is None


def test_checker_finds_apply_layout_equal_on_a_padded_split() -> None:
    text = ADD_PROGRAM.text.replace(
        "%b: !layout.buffer<5xf32>",
        "%b: !layout.buffer<5xf32, transform = #layout.index_map<(i) -> (i floordiv 3, i mod 3)>, pad_value = -1.0 : f32>",
    ).replace(
        "%b[%i] : !layout.buffer<5xf32>",
        "%b[%i] : !layout.buffer<5xf32, transform = #layout.index_map<(i) -> (i floordiv 3, i mod 3)>, pad_value = -1.0 : f32>",
    )
    from fuzz.emitter import FunctionInfo

    info = FunctionInfo("k", [], {1}, False, False, False)
    pipeline = [Pipeline("apply-layout", None, lambda: [ApplyLayoutPass()])]
    report = Checker(pipeline).check(Program(text, [info]))
    assert [(s.name, s.outcome) for s in report.steps] == [("apply-layout", "equal")]


def test_failure_classes_abstract_names_and_numbers() -> None:
    a = failure_key(
        "buffer",
        "apply-layout",
        "mismatch",
        "@k1: argument 2: 3 element(s) differ, e.g. at [1]: 1.0 instead of 2.0",
    )
    b = failure_key(
        "buffer",
        "apply-layout",
        "mismatch",
        "@k0: argument 0: 1 element(s) differ, e.g. at [0, 2]: 5.0 instead of 7.0",
    )
    assert a == b
    c = failure_key(
        "buffer",
        "apply-layout",
        "crash",
        "ValueError: no single quasi-affine expression was found for the inverse of index map (i) -> (i ceildiv 3, i mod 3) on shape [5] (isl)",
    )
    d = failure_key(
        "buffer",
        "apply-layout",
        "crash",
        "ValueError: no single quasi-affine expression was found for the inverse of index map (i, j) -> ((i * 2 + j) ceildiv 4, (j - i) mod 4) on shape [3, 2] (isl)",
    )
    assert c == d


REGRESSIONS = Path(__file__).parent / "fuzz" / "regressions"
"""Programs on which the checker found bugs (each fixed): the step that failed and the
outcome it has now (`refused`: a diagnostic instead of the crash)."""
REGRESSION_STEPS = {
    "apply-layout-padding-fill-piecewise-inverse.mlir": ("apply-layout", "refused"),
    "flow-rank0-operand-transform.mlir": ("flow-layout-rewrites", "equal"),
    "vectorize-texels-misaligned-texture-load.mlir": ("opencl-pipeline", "equal"),
    "mlir-runner-non-strided-layout.mlir": ("mlir-runner", "skipped"),
    "mlir-runner-unnormalized-permutation.mlir": ("mlir-runner", "skipped"),
    "known-item1-rewrite-loops-in-place-stencil.mlir": ("opencl-pipeline", "equal"),
    "known-item2-physical-view.mlir": ("apply-layout", "equal"),
    "known-item9-dead-invalid-alias.mlir": ("flatten-buffers", "refused"),
    "map-ndarray-rank0-result.mlir": ("fold-layout-rewrites", "equal"),
}


@pytest.mark.parametrize("name", sorted(REGRESSION_STEPS))
def test_checker_regressions(name: str) -> None:
    """Every step of the checker gives equal results or a diagnostic on each program that
    once failed, and the step that failed now has its fixed outcome."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = check_program_file(REGRESSIONS / name)
    assert report.invalid is None, report.invalid
    failures = "\n".join(f"{s.name}: {s.outcome}: {s.detail}" for s in report.failures())
    assert not failures, failures
    step, outcome = REGRESSION_STEPS[name]
    assert {s.name: s.outcome for s in report.steps}[step] == outcome


def test_regression_files_are_all_tested() -> None:
    assert sorted(p.name for p in REGRESSIONS.glob("*.mlir")) == sorted(REGRESSION_STEPS)


@pytest.mark.parametrize(
    ("shape", "steps", "expected"),
    [
        # The generator bug: a reversed split of an axis shorter than one tile.
        ([1], [("split", 0, 2), ("reverse", 1)], "(i) -> (i floordiv 2, 0 - (i mod 2))"),
        ([3], [("split", 0, 4), ("reverse", 1)], "(i) -> (i floordiv 4, 2 - (i mod 4))"),
        (
            [5],
            [("split", 0, 2), ("reverse", 0), ("reverse", 1)],
            "(i) -> (2 - (i floordiv 2), 1 - (i mod 2))",
        ),
        ([3], [("stride", 0), ("reverse", 0)], "(i) -> (4 - (i * 2))"),
        # A shear of two results that share an input: `i + (12 - (i + j))` never is 0, so
        # the second shear (and such a fusion) is not made.
        ([13, 1], [("shear", 0), ("reverse", 1), ("shear", 0)], "(i, j) -> (i, 12 - (i + j))"),
        ([13, 1], [("shear", 0), ("reverse", 1), ("fuse", 0)], "(i, j) -> (i, 12 - (i + j))"),
        # Structurally `i ceildiv 7 + i mod 7` on [11] spans [0, 8] while its values reach 7
        # only, so `7 - (...)` has structural minimum -1 (an error): the reversal is skipped
        # (found by the 5,000-program campaign, seed 10).
        (
            [11],
            [("ceil", 0, 7), ("shear", 0), ("reverse", 1)],
            "(i) -> (i ceildiv 7, (i ceildiv 7) + (i mod 7))",
        ),
    ],
)
def test_reversals_start_at_zero(
    shape: list[int], steps: list[tuple[str, int] | tuple[str, int, int]], expected: str
) -> None:
    """A reversed result is its largest value minus itself, and a shear or fusion that would
    not reach 0 is skipped, so the smallest result of every generated map is 0 (DESIGN.md):
    `1 - i mod 2` on `[1]` and `i + (12 - (i + j))` on `[13, 1]` were emitted and rejected."""
    builder = _MapBuilder.start(DIM_NAMES[: len(shape)], shape, Features(), set())
    for step in steps:
        if step[0] in ("split", "ceil"):
            builder.split(step[1], step[2], inner_last=False, ceil=step[0] == "ceil")  # type: ignore[misc]
        else:
            getattr(builder, step[0])(step[1])
    assert builder.text() == expected
    index_map = IndexMap.parse(expected)
    results = index_map.map_indices(list(np.indices(shape)))
    assert [int(np.min(r)) for r in results] == [0] * len(results)
