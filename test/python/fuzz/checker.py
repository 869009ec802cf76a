"""The differential checker: run a generated program through every pass and documented
pipeline, evaluate it before and after on the same random inputs, and classify each step.

Outcomes of one step (a pipeline applied to the source, or a backend run):

- `equal`: the output verifies (op verifiers, and `verify-buffers` when the source
  passes it) and computes what the source computes: every buffer argument equal in its
  logical layout, every result equal, and the padding of every buffer the function writes
  holding the pad value (arguments start with garbage in their padding: reads never reach
  it);
- `refused`: the pass raised one of xDSL's diagnostic exceptions (`ParseError`,
  `VerifyException`, `PassFailedException`, `DiagnosticException`);
- `mismatch`: a different value, padding not filled, output IR that does not verify (or
  that `verify-buffers` rejects although the source passes; or that it accepts although
  the source is rejected: the pass hid an invalid buffer), or output the evaluator cannot
  run;
- `crash`: any other exception;
- `skipped`: the step did not apply (its prefix failed, a backend is missing, the
  function cannot be run there).

The source itself must parse, verify, pass `verify-buffers` and run in the evaluator;
otherwise the program is `invalid` (a generator bug), except for programs that use the
item-9 feature (a deliberately invalid alias).

Pipelines (`BUFFER_PIPELINES`, `GRAPH_PIPELINES`; steps share their prefixes): every
physlayout pass alone, `apply-layout` with and without `rewrite-loops` followed by
`flatten-buffers`, the pipeline of `physlayout run` (`physlayout-opencl`)
followed by the OpenCL target, `apply-layout,flatten-buffers,lower-layout`, and the graph
passes (which must leave buffer-level modules alone, as the buffer-level passes must leave
tensors). A pass documented as idempotent is run a second time on its output, which must
not change (step `NAME (again)`). Upstream memrefs with affine layouts are passed in the
layout of their normalized type. Backends on a sample: pyopencl (`physlayout run`'s
compile + execute, rtol 1e-5: OpenCL may contract `a * b + c`), and `mlir-runner` on the
lowered module (compared with the evaluator on the same physical data: that checks
lower-layout's output against upstream MLIR).

Models (`check_model`, torch-mlir-style graphs from `fuzz.models`) go through
`physlayout-adreno` as a whole: its graph-level passes are checked in the graph evaluator,
then the whole pipeline runs on the OpenCL device, and any refusal after the graph passes
accepted a model is a `mismatch` (issue 23's contract).
"""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp, TensorType
from xdsl.ir.affine import AffineMap
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import DiagnosticException, ParseError

import physlayout
from fuzz.programs import FunctionInfo, Program
from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import BufferType
from physlayout.indexing.index_map import IndexMap
from physlayout.lowering.lower_layout import LowerLayoutPass
from physlayout.semantics.evaluator import run_function
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.transforms.fuse_elementwise import FuseElementwisePass
from physlayout.transforms.vectorize_texels import VectorizeTexelsPass
from physlayout.transforms.verify_buffers import VerifyBuffersPass, buffer_problems
from physlayout.universe import make_context

DIAGNOSTICS = (ParseError, DiagnosticException)
"""xDSL's diagnostic exceptions (VerifyException and PassFailedException derive from
DiagnosticException)."""
GARBAGE = 12345.0
"""What the padding of every argument holds before a run."""
OUTCOMES = ("equal", "refused", "mismatch", "crash", "skipped")


def module_text(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def verified_source(text: str, report: Report) -> ModuleOp | None:
    """`text` parsed and verified, or None with `report.invalid` saying why not."""
    try:
        source = parse(text)
        source.verify()
    except DIAGNOSTICS as err:
        report.invalid = f"source does not verify: {_describe(err)}"
        return None
    return source


@dataclass
class Step:
    """The outcome of one step on one program."""

    name: str
    outcome: str
    detail: str = ""


@dataclass
class Report:
    """Every step's outcome for one program; `invalid` says why the source itself is bad."""

    steps: list[Step] = field(default_factory=list[Step])
    invalid: str | None = None

    def add(self, name: str, outcome: str, detail: str = "") -> Step:
        step = Step(name, outcome, detail)
        self.steps.append(step)
        return step

    def failures(self) -> list[Step]:
        return [s for s in self.steps if s.outcome in ("mismatch", "crash")]

    @property
    def outcome(self) -> str:
        """The program's outcome: `invalid` (generator bug), else `crash` or `mismatch` when
        any step has one, else `refused` when the level's main pipeline refused it
        (`apply-layout` for buffer-level programs, `flow-layout-rewrites` or
        `fold-layout-rewrites` for graph-level ones, `graph-passes` for models), else
        `equal`. Refusals of other steps
        (e.g. `flatten-buffers` before `apply-layout`, or an OpenCL limitation) are counted
        per step only."""
        if self.invalid is not None:
            return "invalid"
        kinds = {s.outcome for s in self.steps}
        for kind in ("crash", "mismatch"):
            if kind in kinds:
                return kind
        main = ("apply-layout", "fold-layout-rewrites", "flow-layout-rewrites", "graph-passes")
        if any(s.outcome == "refused" and s.name in main for s in self.steps):
            return "refused"
        return "equal"


def _describe(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(err).__name__}: {first[:300]}"


_PACKAGE_ROOT = str(Path(physlayout.__file__).resolve().parent) + "/"
"""The installed physlayout package's folder (the checkout, for an editable install)."""


def _is_physlayout_frame(filename: str) -> bool:
    if "/site-packages/" in filename or "/test/" in filename:
        return False
    return filename.startswith(_PACKAGE_ROOT) or "physlayout" in filename or "/wt/" in filename


def _evaluate_source(report: Report, run: Callable[[], list[Any]]) -> list[Any] | None:
    """The source's outputs (`run()`), or None after recording in `report` why it does not
    run: a diagnostic makes the program invalid, anything else is a crash."""
    try:
        return run()
    except DIAGNOSTICS as err:
        report.invalid = f"source does not run: {_describe(err)}"
    except Exception as err:
        report.add("evaluate-source", "crash", _crash_detail(err))
    return None


def _crash_detail(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    where = next(
        (
            f"{f.filename.rsplit('/', 2)[-2]}/{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"
            for f in reversed(frames)
            if _is_physlayout_frame(f.filename)
        ),
        "?",
    )
    return f"{_describe(err)} at {where}"


# Pipelines -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pipeline:
    """A named step: `passes` applied to the output of `parent` (None: the source).
    `idempotent`: the last pass, run again on the output, must change nothing (checked
    as the extra step `NAME (again)`)."""

    name: str
    parent: str | None
    passes: Callable[[], list[ModulePass]]
    idempotent: bool = False


def _passes(*factories: Callable[[], ModulePass]) -> Callable[[], list[ModulePass]]:
    return lambda: [f() for f in factories]


BUFFER_PIPELINES: tuple[Pipeline, ...] = (
    Pipeline("verify-buffers", None, _passes(VerifyBuffersPass)),
    Pipeline("apply-layout", None, _passes(ApplyLayoutPass), idempotent=True),
    Pipeline(
        "apply-layout,flatten-buffers",
        "apply-layout",
        _passes(FlattenBuffersPass),
        idempotent=True,
    ),
    Pipeline(
        "apply-layout{rewrite-loops=true}",
        None,
        _passes(lambda: ApplyLayoutPass(True)),
        idempotent=True,
    ),
    Pipeline(
        "apply-layout{rewrite-loops=true},flatten-buffers",
        "apply-layout{rewrite-loops=true}",
        _passes(FlattenBuffersPass),
    ),
    Pipeline(
        "opencl-pipeline",
        "apply-layout{rewrite-loops=true},flatten-buffers",
        _passes(VectorizeTexelsPass, DeadCodeElimination),
        idempotent=True,
    ),
    Pipeline("flatten-buffers", None, _passes(FlattenBuffersPass)),
    Pipeline("vectorize-texels", None, _passes(VectorizeTexelsPass)),
    Pipeline(
        "apply-layout,flatten-buffers,lower-layout",
        "apply-layout,flatten-buffers",
        _passes(LowerLayoutPass),
        idempotent=True,
    ),
    Pipeline("fold-layout-rewrites", None, _passes(FoldLayoutRewritesPass)),
    Pipeline("flow-layout-rewrites", None, _passes(FlowLayoutRewritesPass)),
)
"""`opencl-pipeline` is the passes of `physlayout-opencl` (checked at import below)."""


def _check_opencl_pipeline() -> None:
    from physlayout.lowering.pipelines import PhyslayoutOpenCLPass

    names = [
        p.name + ("{rewrite-loops=true}" if getattr(p, "rewrite_loops", False) else "")
        for p in PhyslayoutOpenCLPass().passes()
    ]
    expected = ["apply-layout{rewrite-loops=true}", "flatten-buffers", "vectorize-texels", "dce"]
    assert names == expected, f"physlayout run's lowering passes changed: {names}"


_check_opencl_pipeline()


def apply_verified(
    report: Report,
    step: str,
    passes: Sequence[ModulePass],
    module: ModuleOp,
    label: str | None = None,
) -> bool:
    """Apply `passes` to `module`, then verify it; whether both succeeded. Otherwise the
    step is recorded in `report`: `refused` (an xDSL diagnostic), `mismatch` (output that
    does not verify) or `crash`; `label` (a pass name) prefixes the details."""
    ctx = make_context()
    prefix = f"{label}: " if label else ""
    try:
        for one_pass in passes:
            one_pass.apply(ctx, module)
    except DIAGNOSTICS as err:
        report.add(step, "refused", prefix + _describe(err))
        return False
    except Exception as err:
        report.add(step, "crash", prefix + _crash_detail(err))
        return False
    try:
        module.verify()
    except DIAGNOSTICS as err:
        what = f"{label} produced invalid IR" if label else "output does not verify"
        report.add(step, "mismatch", f"{what}: {_describe(err)}")
        return False
    except Exception as err:
        output = f"{label}'s output" if label else "the output"
        report.add(step, "crash", f"verifying {output}: {_crash_detail(err)}")
        return False
    return True


def check_idempotent(pipeline: Pipeline, module: ModuleOp, report: Report) -> None:
    """Run the step's own passes (after its prefix) again on its output: nothing may change."""
    if not pipeline.idempotent:
        return
    name = f"{pipeline.name} (again)"
    again = module.clone()
    try:
        for step_pass in pipeline.passes():
            step_pass.apply(make_context(), again)
    except DIAGNOSTICS as err:
        report.add(name, "mismatch", f"refuses its own output: {_describe(err)}")
        return
    except Exception as err:
        report.add(name, "crash", _crash_detail(err))
        return
    if module_text(again) != module_text(module):
        report.add(name, "mismatch", "not idempotent: a second run changes the module")
        return
    report.add(name, "equal")


# Running functions -------------------------------------------------------------------------


@dataclass
class Inputs:
    """Logical arguments of one function (seeded)."""

    values: list[Any]
    layouts: list[PendingLayout | MemrefLayout | None]


@dataclass(frozen=True)
class MemrefLayout:
    """A memref's affine layout map. Normalization gives the memref the map's extents as
    upstream computes them (not always the engine's structural shape), so the physical
    shape is read from the normalized type; nothing fills the padding of a normalized
    memref, so it is not checked."""

    logical_shape: tuple[int, ...]
    index_map: IndexMap
    padding: None = None
    pad_value: None = None

    def positions(self) -> tuple[np.ndarray, ...]:
        grids = np.indices(self.logical_shape, dtype=np.int64) if self.logical_shape else []
        mapped = self.index_map.map_indices([np.asarray(g) for g in grids])
        return tuple(np.broadcast_to(np.asarray(m), self.logical_shape) for m in mapped)

    def to_physical(self, x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        out = np.full(tuple(shape), GARBAGE, dtype=x.dtype)
        out[self.positions()] = x
        return out

    def to_logical(self, y: np.ndarray) -> np.ndarray:
        return np.array(y[self.positions()])


def memref_layout(memref_type: MemRefType) -> MemrefLayout | None:
    """None for memrefs without an affine map, and maps the engine cannot read."""
    layout = memref_type.layout
    if not isinstance(layout, AffineMapAttr):
        return None
    try:
        return MemrefLayout(tuple(memref_type.get_shape()), IndexMap.parse(str(layout.data)))
    except ValueError:
        return None


def random_inputs(function: func.FuncOp, seed: int) -> Inputs:
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    layouts: list[PendingLayout | MemrefLayout | None] = []
    for arg_type in function.function_type.inputs.data:
        if isinstance(arg_type, MemRefType):
            values.append(rng.standard_normal(arg_type.get_shape()).astype(np.float32))
            layouts.append(memref_layout(arg_type))
        elif isinstance(arg_type, BufferType):
            values.append(rng.standard_normal(arg_type.get_shape()).astype(np.float32))
            try:
                layouts.append(PendingLayout.of(arg_type))
            except ValueError:
                # The engine rejects the layout: every pass must refuse it too.
                layouts.append(None)
        else:
            values.append(np.float32(rng.standard_normal()))
            layouts.append(None)
    return Inputs(values, layouts)


@dataclass
class Outcome:
    buffers: list[np.ndarray]
    physical: list[np.ndarray]
    results: list[Any]


def _is_pending(type_: Any) -> bool:
    """Whether an argument of this type still takes its LOGICAL layout."""
    if isinstance(type_, MemRefType):
        return isinstance(type_.layout, AffineMapAttr)
    return isinstance(type_, BufferType) and bool(type_.get_transforms())


def run_with_layouts(
    module: ModuleOp, name: str, inputs: Inputs, physical: Sequence[bool]
) -> Outcome:
    """Run `name`; arguments flagged in `physical` are passed in their transformed layout
    (padding holds GARBAGE) and mapped back afterwards."""
    function = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    types = function.function_type.inputs.data
    args: list[Any] = []
    for value, layout, phys, type_ in zip(
        inputs.values, inputs.layouts, physical, types, strict=True
    ):
        if not isinstance(value, np.ndarray):
            args.append(value)
        elif layout is None or not phys:
            args.append(value.copy())
        elif isinstance(layout, MemrefLayout):
            shape = type_.get_shape() if isinstance(type_, MemRefType) else ()
            args.append(layout.to_physical(value, shape))
        else:
            mapped = layout.map_ndarray(value, pad_value=GARBAGE)
            args.append(np.ascontiguousarray(mapped, dtype=np.float32))
    results = run_function(module, name, args)
    buffers: list[np.ndarray] = []
    raw: list[np.ndarray] = []
    for arg, layout, phys in zip(args, inputs.layouts, physical, strict=True):
        if not isinstance(arg, np.ndarray):
            continue
        raw.append(arg)
        if layout is None or not phys:
            buffers.append(arg)
        elif isinstance(layout, MemrefLayout):
            buffers.append(layout.to_logical(arg))
        else:
            buffers.append(layout.unmap_ndarray(arg))
    return Outcome(buffers, raw, list(results))


def padding_mask(layout: PendingLayout) -> np.ndarray:
    ones = np.ones(layout.logical_shape, dtype=np.float32)
    return layout.map_ndarray(ones, pad_value=0.0) == 0.0


def compare(
    reference: Outcome,
    got: Outcome,
    inputs: Inputs,
    written: set[int],
    physical: Sequence[bool],
    rtol: float = 0.0,
) -> str | None:
    """None when `got` matches `reference`, else what differs."""
    buffer_params = [k for k, v in enumerate(inputs.values) if isinstance(v, np.ndarray)]
    for position, (want, have) in enumerate(zip(reference.buffers, got.buffers, strict=True)):
        param = buffer_params[position]
        if want.shape != have.shape:
            return f"argument {param}: shape {have.shape} instead of {want.shape}"
        if not _close(want, have, rtol):
            diff = np.argwhere(~_close_mask(want, have, rtol))
            index = tuple(int(i) for i in diff[0])
            return (
                f"argument {param}: {len(diff)} element(s) differ, e.g. at {list(index)}: "
                f"{have[index]!r} instead of {want[index]!r}"
            )
        layout = inputs.layouts[param]
        if layout is None or layout.padding is None or not physical[param]:
            continue
        if param in written:
            mask = padding_mask(layout)
            raw = got.physical[position]
            pad = np.float32(layout.pad_value if layout.pad_value is not None else 0)
            if mask.shape == raw.shape and not np.all(raw[mask] == pad):
                count = int(np.sum(raw[mask] != pad))
                return f"argument {param}: {count} padding element(s) do not hold {pad}"
    for k, (want, have) in enumerate(zip(reference.results, got.results, strict=True)):
        if not _close(np.asarray(want), np.asarray(have), rtol):
            return f"result {k}: {have!r} instead of {want!r}"
    return None


def _close_mask(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    if rtol == 0:
        return (a == b) | (np.isnan(a) & np.isnan(b))
    scale = max(1.0, float(np.nanmax(np.abs(a)))) if a.size else 1.0
    return (np.abs(a - b) <= rtol * scale) | (np.isnan(a) & np.isnan(b))


def _close(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    return bool(np.all(_close_mask(a, b, rtol)))


# The checker -----------------------------------------------------------------------------------


@dataclass
class Backends:
    """Which sampled backends to run for this program."""

    opencl: bool = False
    mlir: bool = False


class Checker:
    """Checks generated programs (keeps an OpenCL runtime and the MLIR tools once found)."""

    def __init__(self, pipelines: Sequence[Pipeline] = BUFFER_PIPELINES, seed: int = 0) -> None:
        self.pipelines = list(pipelines)
        self.seed = seed
        self._opencl: Any = None
        self._opencl_error: str | None = None
        self._mlir: Any = None
        self._mlir_searched = False

    # Source ------------------------------------------------------------------------------

    def check(self, program: Program, backends: Backends | None = None) -> Report:
        backends = backends or Backends()
        report = Report()
        expect_invalid = "item9_dead_invalid_aliases" in program.features_used
        source = verified_source(program.text, report)
        if source is None:
            return report
        problems = buffer_problems(source)
        source_valid = not problems
        if problems and not expect_invalid:
            report.invalid = f"source fails verify-buffers: {problems[0].message}"
            return report
        functions = [f for f in source.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        infos = {i.name: i for i in program.functions}
        references: dict[str, tuple[Inputs, Outcome]] = {}
        for function in functions:
            name = function.sym_name.data
            try:
                inputs = random_inputs(function, self.seed)
                no_layouts = [False] * len(inputs.values)
                references[name] = (inputs, run_with_layouts(source, name, inputs, no_layouts))
            except DIAGNOSTICS as err:
                if source_valid:
                    report.invalid = f"source does not run: @{name}: {_describe(err)}"
                    return report
            except Exception as err:
                report.add("evaluate-source", "crash", f"@{name}: {_crash_detail(err)}")
                return report
        outputs: dict[str | None, ModuleOp | None] = {None: source}
        for pipeline in self.pipelines:
            outputs[pipeline.name] = self.run_pipeline(
                pipeline,
                outputs.get(pipeline.parent),
                source,
                source_valid,
                references,
                infos,
                report,
            )
        opencl_module = outputs.get("opencl-pipeline")
        if opencl_module is not None:
            self.opencl_target(opencl_module, report)
        if backends.opencl and source_valid:
            self.run_opencl(program, references, report)
        lowered = outputs.get("apply-layout,flatten-buffers,lower-layout")
        if backends.mlir and lowered is not None and source_valid:
            self.run_mlir(lowered, program, report)
        return report

    def run_pipeline(
        self,
        pipeline: Pipeline,
        parent: ModuleOp | None,
        source: ModuleOp,
        source_valid: bool,
        references: dict[str, tuple[Inputs, Outcome]],
        infos: dict[str, FunctionInfo],
        report: Report,
    ) -> ModuleOp | None:
        name = pipeline.name
        if parent is None:
            report.add(name, "skipped", "prefix did not succeed")
            return None
        module = parent.clone()
        before = module_text(module) if name == "verify-buffers" else ""
        if not apply_verified(report, name, pipeline.passes(), module):
            return None
        try:
            problems = buffer_problems(module)
        except Exception as err:
            report.add(name, "crash", f"verify-buffers on the output: {_crash_detail(err)}")
            return None
        if source_valid and problems:
            report.add(
                name, "mismatch", f"verify-buffers rejects the output: {problems[0].message}"
            )
            return None
        if not source_valid:
            if not problems:
                report.add(
                    name,
                    "mismatch",
                    "accepted an invalid buffer and hid it "
                    "(verify-buffers rejects the source, accepts the output)",
                )
            else:
                report.add(name, "equal", "invalid source stays invalid")
            return None
        if name == "verify-buffers":
            after = module_text(module)
            if after != before:
                report.add(name, "mismatch", "changed the module")
                return None
        detail = self.compare_module(module, references, infos)
        if detail is None:
            report.add(name, "equal")
            check_idempotent(pipeline, module, report)
            return module
        outcome, text = detail
        report.add(name, outcome, text)
        return None

    def compare_module(
        self,
        module: ModuleOp,
        references: dict[str, tuple[Inputs, Outcome]],
        infos: dict[str, FunctionInfo],
    ) -> tuple[str, str] | None:
        functions = {
            f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks
        }
        for name, (inputs, reference) in references.items():
            function = functions.get(name)
            if function is None:
                return "mismatch", f"@{name} disappeared"
            physical = [
                layout is not None and not _is_pending(t)
                for layout, t in zip(
                    inputs.layouts, function.function_type.inputs.data, strict=True
                )
            ]
            try:
                got = run_with_layouts(module, name, inputs, physical)
            except DIAGNOSTICS as err:
                return "mismatch", f"@{name}: the output does not run: {_describe(err)}"
            except Exception as err:
                return "crash", f"@{name}: running the output: {_crash_detail(err)}"
            info = infos.get(name)
            written = info.written_params if info is not None else set()
            difference = compare(reference, got, inputs, written, physical)
            if difference is not None:
                return "mismatch", f"@{name}: {difference}"
        return None

    # OpenCL ----------------------------------------------------------------------------------

    def opencl_target(self, module: ModuleOp, report: Report) -> None:
        from physlayout.lowering.opencl import generate_opencl

        try:
            generate_opencl(module)
        except DIAGNOSTICS as err:
            report.add("opencl-target", "refused", _describe(err))
            return
        except Exception as err:
            report.add("opencl-target", "crash", _crash_detail(err))
            return
        report.add("opencl-target", "equal", "generated")

    def opencl_runtime(self) -> Any:
        if self._opencl is None and self._opencl_error is None:
            try:
                from physlayout.runtime.device import OpenCLRuntime

                self._opencl = OpenCLRuntime()
            except Exception as err:
                self._opencl_error = _describe(err)
        return self._opencl

    def run_opencl(
        self, program: Program, references: dict[str, tuple[Inputs, Outcome]], report: Report
    ) -> None:
        """`physlayout run`'s path: compile the source for the device and execute every
        kernel or host function; compare the logical buffers (rtol 1e-5: OpenCL may
        contract a * b + c into one fma)."""
        runtime = self.opencl_runtime()
        if runtime is None:
            report.add("opencl-run", "skipped", f"no OpenCL device: {self._opencl_error}")
            return
        from physlayout.runtime.host import execute
        from physlayout.runtime.opencl import compile_module

        try:
            compiled = compile_module(program.text, runtime)
        except DIAGNOSTICS as err:
            report.add("opencl-run", "refused", _describe(err))
            return
        except Exception as err:
            report.add("opencl-run", "crash", _crash_detail(err))
            return
        ran = 0
        for name, (inputs, reference) in references.items():
            args = [v.copy() if isinstance(v, np.ndarray) else v for v in inputs.values]
            try:
                execute(compiled, name, args)
            except DIAGNOSTICS as err:
                report.add("opencl-run", "refused", f"@{name}: {_describe(err)}")
                continue
            except Exception as err:
                report.add("opencl-run", "crash", f"@{name}: {_crash_detail(err)}")
                continue
            ran += 1
            got = Outcome([a for a in args if isinstance(a, np.ndarray)], [], reference.results)
            none = [False] * len(args)
            difference = compare(reference, got, inputs, set(), none, rtol=1e-5)
            if difference is not None:
                report.add("opencl-run", "mismatch", f"@{name}: {difference}")
                continue
            report.add("opencl-run", "equal", f"@{name}")
        if not references:
            report.add("opencl-run", "skipped", "no function")

    # mlir-runner -------------------------------------------------------------------------------

    def mlir_tools(self) -> Any:
        if not self._mlir_searched:
            from physlayout.runtime.mlir_runner import MlirTools

            self._mlir = MlirTools.find()
            self._mlir_searched = True
        return self._mlir

    def run_mlir(self, lowered: ModuleOp, program: Program, report: Report) -> None:
        """Every function without calls, allocations or scalar parameters, run under the
        generated harness with `mlir-runner`, against the evaluator on the same physical
        data (the harness fills every argument, padding included)."""
        tools = self.mlir_tools()
        if tools is None or tools.runner is None:
            report.add("mlir-runner", "skipped", "mlir-opt-22 / mlir-runner-22 not found")
            return
        from physlayout.runtime.mlir_runner import (
            add_harness,
            harness_values,
            parse_printed_memrefs,
            run_mlir,
        )

        text = module_text(lowered)
        unlowerable = _unlowerable_memref_layout(lowered)
        if unlowerable is not None:
            # Upstream cannot lower a non-strided layout to LLVM (`-normalize-memrefs` leaves
            # it too); one such memref makes the whole module fail to compile.
            report.add("mlir-runner", "skipped", f"unnormalized memref layout: {unlowerable}")
            return
        for info in program.functions:
            if info.calls or info.allocates or any(t == "f32" for t in info.param_types):
                continue
            function = next(
                f
                for f in lowered.ops
                if isinstance(f, func.FuncOp) and f.sym_name.data == info.name
            )
            types = function.function_type.inputs.data
            try:
                with_main = add_harness(text, info.name, entry="fuzz_main")
            except DIAGNOSTICS as err:
                report.add("mlir-runner", "skipped", f"@{info.name}: {_describe(err)}")
                continue
            args = [harness_values(t.get_shape(), k) for k, t in enumerate(types)]  # type: ignore[union-attr]
            try:
                output = run_mlir(with_main, "fuzz_main", tools, timeout=60)
                printed = parse_printed_memrefs(output)
            except DIAGNOSTICS as err:
                report.add("mlir-runner", "mismatch", f"@{info.name}: {_describe(err)}")
                continue
            except Exception as err:
                report.add("mlir-runner", "crash", f"@{info.name}: {_crash_detail(err)}")
                continue
            try:
                run_function(lowered, info.name, args)
            except DIAGNOSTICS as err:
                report.add("mlir-runner", "mismatch", f"@{info.name}: evaluator: {_describe(err)}")
                continue
            if len(printed) != len(args):
                report.add(
                    "mlir-runner",
                    "mismatch",
                    f"@{info.name}: printed {len(printed)} memrefs for {len(args)} arguments",
                )
                continue
            for k, (have, want) in enumerate(zip(printed, args, strict=True)):
                have = have.reshape(want.shape)
                if not _close(want, have, 1e-5):
                    report.add(
                        "mlir-runner",
                        "mismatch",
                        f"@{info.name}: argument {k} differs between mlir-runner and the evaluator",
                    )
                    break
            else:
                report.add("mlir-runner", "equal", f"@{info.name}")


# Graph level ----------------------------------------------------------------------------------

GRAPH_PIPELINES: tuple[Pipeline, ...] = (
    Pipeline("fold-layout-rewrites", None, _passes(FoldLayoutRewritesPass), idempotent=True),
    Pipeline("flow-layout-rewrites", None, _passes(FlowLayoutRewritesPass)),
    Pipeline(
        "flow-layout-rewrites,fold-layout-rewrites",
        "flow-layout-rewrites",
        _passes(FoldLayoutRewritesPass),
        idempotent=True,
    ),
    Pipeline("fuse-elementwise", None, _passes(FuseElementwisePass), idempotent=True),
    Pipeline(
        "flow-layout-rewrites,fold-layout-rewrites,fuse-elementwise",
        "flow-layout-rewrites,fold-layout-rewrites",
        _passes(FuseElementwisePass),
        idempotent=True,
    ),
    Pipeline("apply-layout", None, _passes(ApplyLayoutPass)),
    Pipeline("flatten-buffers", None, _passes(FlattenBuffersPass)),
    Pipeline("verify-buffers", None, _passes(VerifyBuffersPass)),
    Pipeline("vectorize-texels", None, _passes(VectorizeTexelsPass)),
    Pipeline("lower-layout", None, _passes(LowerLayoutPass)),
)
"""Graph passes, and the buffer-level passes (which must leave tensors alone or refuse)."""


def graph_inputs(function: func.FuncOp, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    args: list[np.ndarray] = []
    for arg_type in function.function_type.inputs.data:
        shape = tuple(arg_type.get_shape())  # type: ignore[attr-defined]
        args.append(np.asarray(rng.standard_normal(shape)).astype(np.float32))
    return args


def check_graph(
    text: str, pipelines: Sequence[Pipeline] = GRAPH_PIPELINES, seed: int = 0
) -> Report:
    """Evaluate a graph-level module before and after every pipeline (exact equality)."""
    from physlayout.semantics.graph_evaluator import run_graph

    report = Report()
    source = verified_source(text, report)
    if source is None:
        return report
    function = next(f for f in source.ops if isinstance(f, func.FuncOp))
    name = function.sym_name.data
    inputs = graph_inputs(function, seed)
    reference = _evaluate_source(report, lambda: run_graph(source, name, [x.copy() for x in inputs]))
    if reference is None:
        return report
    outputs: dict[str | None, ModuleOp | None] = {None: source}
    for pipeline in pipelines:
        parent = outputs.get(pipeline.parent)
        outputs[pipeline.name] = None
        if parent is None:
            report.add(pipeline.name, "skipped", "prefix did not succeed")
            continue
        module = parent.clone()
        if not apply_verified(report, pipeline.name, pipeline.passes(), module):
            continue
        try:
            got = run_graph(module, name, [x.copy() for x in inputs])
        except DIAGNOSTICS as err:
            report.add(pipeline.name, "mismatch", f"the output does not run: {_describe(err)}")
            continue
        except Exception as err:
            report.add(pipeline.name, "crash", f"running the output: {_crash_detail(err)}")
            continue
        difference = _compare_results(reference, got)
        if difference is not None:
            report.add(pipeline.name, "mismatch", difference)
            continue
        report.add(pipeline.name, "equal")
        check_idempotent(pipeline, module, report)
        outputs[pipeline.name] = module
    return report


def _compare_results(reference: Sequence[Any], got: Sequence[Any]) -> str | None:
    if len(reference) != len(got):
        return f"{len(got)} results instead of {len(reference)}"
    for k, (want, have) in enumerate(zip(reference, got, strict=True)):
        want, have = np.asarray(want), np.asarray(have)
        if want.shape != have.shape:
            return f"result {k}: shape {have.shape} instead of {want.shape}"
        if not _close(want, have, 0.0):
            diff = np.argwhere(~_close_mask(want, have, 0.0))
            index = tuple(int(i) for i in diff[0])
            return (
                f"result {k}: {len(diff)} element(s) differ, e.g. at {list(index)}: "
                f"{have[index]!r} instead of {want[index]!r}"
            )
    return None


def _unlowerable_memref_layout(module: ModuleOp) -> str | None:
    """A memref type of `module` with a non-identity affine-map layout: one left
    unnormalized, which MLIR's LLVM lowering rejects ("conversion to strided form failed")."""
    for op in module.walk():
        types = [*op.operand_types, *op.result_types]
        if isinstance(op, func.FuncOp):
            types += [*op.function_type.inputs.data, *op.function_type.outputs.data]
        for type_ in types:
            if isinstance(type_, MemRefType) and isinstance(type_.layout, AffineMapAttr):
                amap = type_.layout.data
                if amap != AffineMap.identity(amap.num_dims):
                    return str(type_)
    return None


# Models (torch-mlir-style graphs through the whole physlayout-adreno pipeline) ----------------

MODEL_GRAPH_RTOL = 1e-5
"""Error bound of the graph-level passes, relative to max|reference|."""
MODEL_OPENCL_RTOL = 1e-4
"""Error bound of the whole pipeline on the OpenCL device, relative to max|reference|."""
_MODEL_RUNTIME: dict[str, Any] = {}
"""The OpenCL runtime of `check_model` (`runtime`), or why there is none (`error`)."""


def model_inputs(function: func.FuncOp, seed: int) -> list[np.ndarray]:
    """Arguments of a torch-mlir-style `@main`, by name as the shared models' `inputs.py`
    makes them (each from `default_rng([seed, position])`): the input uniform in [-1, 1),
    running variances in [0.5, 1.5) (so `sqrt(var + eps)` is real), running means in
    [-0.5, 0.5), 1-D weights (norm scales) in [0.5, 1.5), biases in [-0.1, 0.1), other
    weights uniform in [-1, 1) * sqrt(3 / fan_in)."""
    args: list[np.ndarray] = []
    block = function.body.blocks[0]
    for position, (arg, arg_type) in enumerate(
        zip(block.args, function.function_type.inputs.data, strict=True)
    ):
        rng = np.random.default_rng([seed, position])
        assert isinstance(arg_type, TensorType)
        shape: tuple[int, ...] = tuple(arg_type.get_shape())
        name = arg.name_hint or ""
        if position == 0:
            values = rng.uniform(-1.0, 1.0, shape)
        elif name.endswith("running_var"):
            values = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("running_mean"):
            values = rng.uniform(-0.5, 0.5, shape)
        elif len(shape) == 1 and name.endswith("weight"):
            values = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("bias"):
            values = rng.uniform(-0.1, 0.1, shape)
        elif len(shape) >= 2:
            fan_in = max(int(np.prod(shape[1:])), 1)
            values = rng.uniform(-1.0, 1.0, shape) * np.sqrt(3.0 / fan_in)
        else:
            values = rng.uniform(-0.1, 0.1, shape)
        args.append(np.asarray(values, dtype=np.float32))
    return args


def relative_error(want: np.ndarray, got: np.ndarray) -> float:
    """max|got - want| / max|want| (1 when `want` is all zeros); infinite where the shapes
    differ or where one of them is NaN or infinite and the other is not the same."""
    want = np.asarray(want, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if want.shape != got.shape:
        return float("inf")
    same = (want == got) | (np.isnan(want) & np.isnan(got))
    if not np.all(np.isfinite(got) | same):
        return float("inf")
    finite = np.isfinite(want) & np.isfinite(got)
    if not finite.any():
        return 0.0
    scale = float(np.max(np.abs(want[finite]))) or 1.0
    return float(np.max(np.abs(got[finite] - want[finite]))) / scale


def _run_graph_entry(
    module: ModuleOp, names: Sequence[str], inputs: Sequence[np.ndarray]
) -> list[Any]:
    """`@main` of a graph-level module on `inputs` (by argument name); when
    `lift-transform-params` split it, `@main_prepare` first on the parameters, then `@main`
    on the other inputs followed by the prepared values (as `runtime.host.run_prepare`)."""
    from physlayout.semantics.graph_evaluator import run_graph

    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    by_name = dict(zip(names, inputs, strict=True))
    prepare = functions.get("main_prepare")
    if prepare is None:
        return list(run_graph(module, "main", [x.copy() for x in inputs]))
    lifted = [str(a.name_hint) for a in prepare.body.blocks[0].args]
    prepared = run_graph(module, "main_prepare", [by_name[n].copy() for n in lifted])
    kept = [by_name[n].copy() for n in names if n not in lifted]
    return list(run_graph(module, "main", [*kept, *prepared]))


def _model_runtime() -> Any:
    if not _MODEL_RUNTIME:
        try:
            from physlayout.runtime.device import OpenCLRuntime

            _MODEL_RUNTIME["runtime"] = OpenCLRuntime()
        except Exception as err:
            _MODEL_RUNTIME["error"] = _describe(err)
    return _MODEL_RUNTIME.get("runtime")


def _pipeline_stage(err: BaseException) -> str:
    """Which stage of `run_model` raised `err`: the pass `_timed_pipeline` was applying or
    verifying, OpenCL C generation and build (`compile_module`), or a run on the device
    (`run_prepare`, `execute`); the innermost one."""
    stage = "run_model"
    for frame, _ in traceback.walk_tb(err.__traceback__):
        code = frame.f_code.co_name
        current = frame.f_locals.get("one")
        if code == "_timed_pipeline" and isinstance(current, ModulePass):
            stage = current.name
        elif code == "compile_module":
            stage = "OpenCL C generation and build"
        elif code in ("run_prepare", "execute"):
            stage = f"execution ({code})"
    return stage


def check_model(
    text: str,
    seed: int = 0,
    lift_params: bool = False,
    fuse: bool = True,
    opencl: bool = True,
) -> Report:
    """Check one torch-mlir-style model (`fuzz.models`) against the contract of issue 23:
    whatever the graph-level passes accept, the buffer passes and the OpenCL target accept.

    The source must parse, verify and run in the graph evaluator (`@main` on `model_inputs`),
    else the program is `invalid`. Steps:

    - `graph-passes`: the passes of `physlayout-adreno{lift-params fuse}` before
      `legalize-layout` (to `fuse-elementwise`, or `realize-scopes` without fusion), each
      verified, then evaluated (through `@main_prepare` when parameters were lifted):
      `refused` when a pass raises a diagnostic, `mismatch` when its output does not
      verify or run or a result differs by more than MODEL_GRAPH_RTOL of max|reference|;
    - `opencl-run` (when the graph passes gave equal results, and `opencl`): the whole
      pipeline and the run on the local OpenCL device, as `physlayout run` and `make models`
      do (`runtime.model_report.run_model`): `mismatch` when any later stage (legalize, the
      buffer passes, OpenCL C generation or build, the run) raises a diagnostic (the
      contract), or a result differs by more than MODEL_OPENCL_RTOL of max|reference|;
      `skipped` without an OpenCL device (`opencl=False`: not run, as when the campaign
      minimizes a failure of the graph passes).

    Any other exception is a `crash` (the detail names the stage). The passes' remarks
    (printed on stderr) are dropped."""
    with contextlib.redirect_stderr(io.StringIO()):
        return _check_model(text, seed, lift_params, fuse, opencl)


def _check_model(text: str, seed: int, lift_params: bool, fuse: bool, opencl: bool) -> Report:
    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
    from physlayout.transforms.legalize_layout import LegalizeLayoutPass

    report = Report()
    source = verified_source(text, report)
    if source is None:
        return report
    entry = next(
        (f for f in source.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main"), None
    )
    if entry is None:
        report.invalid = "no @main"
        return report
    names = [a.name_hint or str(a.index) for a in entry.body.blocks[0].args]
    inputs = model_inputs(entry, seed)
    reference = _evaluate_source(report, lambda: _run_graph_entry(source, names, inputs))
    if reference is None:
        return report
    # (1) The graph-level prefix of physlayout-adreno.
    name = "graph-passes"
    module = source.clone()
    adreno = PhyslayoutAdrenoPass(lift_params=lift_params, fuse=fuse)
    for one in adreno.passes():
        if isinstance(one, LegalizeLayoutPass):
            break
        if not apply_verified(report, name, [one], module, label=one.name):
            return report
    try:
        got = _run_graph_entry(module, names, inputs)
    except DIAGNOSTICS as err:
        report.add(name, "mismatch", f"the output does not run: {_describe(err)}")
        return report
    except Exception as err:
        report.add(name, "crash", f"running the output: {_crash_detail(err)}")
        return report
    if len(got) != len(reference):
        report.add(name, "mismatch", f"{len(got)} results instead of {len(reference)}")
        return report
    for k, (want, have) in enumerate(zip(reference, got, strict=True)):
        error = relative_error(want, have)
        if not error <= MODEL_GRAPH_RTOL:
            report.add(name, "mismatch", f"result {k}: relative error {error:.2g}")
            return report
    report.add(name, "equal")
    # (2) The whole pipeline on the OpenCL device.
    if not opencl:
        return report
    runtime = _model_runtime()
    if runtime is None:
        report.add("opencl-run", "skipped", f"no OpenCL device: {_MODEL_RUNTIME['error']}")
        return report
    from physlayout.runtime.model_report import run_model

    expected = {f"result{k}": np.asarray(v) for k, v in enumerate(reference)}
    spec = f"physlayout-adreno{{lift-params={str(lift_params).lower()} fuse={str(fuse).lower()}}}"
    try:
        ran = run_model(
            "fuzz", text, dict(zip(names, inputs, strict=True)), expected, runtime, spec
        )
    except DIAGNOSTICS as err:
        stage = _pipeline_stage(err)
        report.add(
            "opencl-run",
            "mismatch",
            f"{stage} refused what the graph passes accepted: {_describe(err)}",
        )
        return report
    except Exception as err:
        report.add("opencl-run", "crash", f"{_pipeline_stage(err)}: {_crash_detail(err)}")
        return report
    for key, want in expected.items():
        error = relative_error(want, ran.outputs[int(key[6:])].reshape(want.shape))
        if not error <= MODEL_OPENCL_RTOL:
            report.add("opencl-run", "mismatch", f"{key}: relative error {error:.2g}")
            return report
    report.add("opencl-run", "equal", f"max error {ran.max_error:.1e}, {ran.launches} launches")
    return report
