"""The differential checker: run a generated program through every pass and documented
pipeline, evaluate it before and after on the same random inputs, and classify each step
(`equal`, `refused`, `mismatch`, `crash`, `skipped`: the outcomes `fuzz.steps` defines).

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

`Checker` checks buffer-level programs (`fuzz.programs`), `check_graph` graph-level ones
(`fuzz.graphs`); the arguments they run on and how values are compared are `fuzz.values`.
Models (torch-mlir-style graphs from `fuzz.models`) go through `physlayout-adreno` as a
whole in `fuzz.model_checker.check_model`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from fuzz.emitter import FunctionInfo
from fuzz.programs import Program
from fuzz.steps import (
    DIAGNOSTICS,
    Pipeline,
    Report,
    apply_verified,
    check_idempotent,
    crash_detail,
    describe,
    evaluate_source,
    module_text,
    verified_source,
)
from fuzz.values import (
    Inputs,
    Outcome,
    all_close,
    compare,
    compare_results,
    graph_inputs,
    is_pending,
    random_inputs,
    run_with_layouts,
)
from physlayout.lowering.lower_layout import LowerLayoutPass
from physlayout.semantics.evaluator import run_function
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.transforms.fuse_elementwise import FuseElementwisePass
from physlayout.transforms.vectorize_texels import VectorizeTexelsPass
from physlayout.transforms.verify_buffers import VerifyBuffersPass, buffer_problems

# Pipelines -------------------------------------------------------------------------------


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
                    report.invalid = f"source does not run: @{name}: {describe(err)}"
                    return report
            except Exception as err:
                report.add("evaluate-source", "crash", f"@{name}: {crash_detail(err)}")
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
            report.add(name, "crash", f"verify-buffers on the output: {crash_detail(err)}")
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
                layout is not None and not is_pending(t)
                for layout, t in zip(
                    inputs.layouts, function.function_type.inputs.data, strict=True
                )
            ]
            try:
                got = run_with_layouts(module, name, inputs, physical)
            except DIAGNOSTICS as err:
                return "mismatch", f"@{name}: the output does not run: {describe(err)}"
            except Exception as err:
                return "crash", f"@{name}: running the output: {crash_detail(err)}"
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
            report.add("opencl-target", "refused", describe(err))
            return
        except Exception as err:
            report.add("opencl-target", "crash", crash_detail(err))
            return
        report.add("opencl-target", "equal", "generated")

    def opencl_runtime(self) -> Any:
        if self._opencl is None and self._opencl_error is None:
            try:
                from physlayout.runtime.device import OpenCLRuntime

                self._opencl = OpenCLRuntime()
            except Exception as err:
                self._opencl_error = describe(err)
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
            report.add("opencl-run", "refused", describe(err))
            return
        except Exception as err:
            report.add("opencl-run", "crash", crash_detail(err))
            return
        ran = 0
        for name, (inputs, reference) in references.items():
            args = [v.copy() if isinstance(v, np.ndarray) else v for v in inputs.values]
            try:
                execute(compiled, name, args)
            except DIAGNOSTICS as err:
                report.add("opencl-run", "refused", f"@{name}: {describe(err)}")
                continue
            except Exception as err:
                report.add("opencl-run", "crash", f"@{name}: {crash_detail(err)}")
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
                report.add("mlir-runner", "skipped", f"@{info.name}: {describe(err)}")
                continue
            args = [harness_values(t.get_shape(), k) for k, t in enumerate(types)]  # type: ignore[union-attr]
            try:
                output = run_mlir(with_main, "fuzz_main", tools, timeout=60)
                printed = parse_printed_memrefs(output)
            except DIAGNOSTICS as err:
                report.add("mlir-runner", "mismatch", f"@{info.name}: {describe(err)}")
                continue
            except Exception as err:
                report.add("mlir-runner", "crash", f"@{info.name}: {crash_detail(err)}")
                continue
            try:
                run_function(lowered, info.name, args)
            except DIAGNOSTICS as err:
                report.add("mlir-runner", "mismatch", f"@{info.name}: evaluator: {describe(err)}")
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
                if not all_close(want, have, 1e-5):
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
    reference = evaluate_source(report, lambda: run_graph(source, name, [x.copy() for x in inputs]))
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
            report.add(pipeline.name, "mismatch", f"the output does not run: {describe(err)}")
            continue
        except Exception as err:
            report.add(pipeline.name, "crash", f"running the output: {crash_detail(err)}")
            continue
        difference = compare_results(reference, got)
        if difference is not None:
            report.add(pipeline.name, "mismatch", difference)
            continue
        report.add(pipeline.name, "equal")
        check_idempotent(pipeline, module, report)
        outputs[pipeline.name] = module
    return report


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
