"""The model checker (`check_model`): torch-mlir-style graphs from `fuzz.models` through
`physlayout-adreno` as a whole, against issue 23's contract.

The graph-level passes of the pipeline are checked in the graph evaluator (results within
MODEL_GRAPH_RTOL of max|reference|), then the whole pipeline runs on the OpenCL device
(`runtime.model_report.run_model`, as `physlayout run` and `make models` do; results within
MODEL_OPENCL_RTOL), and any refusal after the graph passes accepted a model is a
`mismatch`, its detail naming the stage that refused (`_pipeline_stage`). Inputs and
errors are `fuzz.values`' `model_inputs` and `relative_error`; steps and outcomes are
`fuzz.steps`'.
"""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fuzz.steps import (
    DIAGNOSTICS,
    Report,
    apply_verified,
    crash_detail,
    describe,
    evaluate_source,
    verified_source,
)
from fuzz.values import model_inputs, relative_error

MODEL_GRAPH_RTOL = 1e-5
"""Error bound of the graph-level passes, relative to max|reference|."""
MODEL_OPENCL_RTOL = 1e-4
"""Error bound of the whole pipeline on the OpenCL device, relative to max|reference|."""
_MODEL_RUNTIME: dict[str, Any] = {}
"""The OpenCL runtime of `check_model` (`runtime`), or why there is none (`error`)."""


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
            _MODEL_RUNTIME["error"] = describe(err)
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
    reference = evaluate_source(report, lambda: _run_graph_entry(source, names, inputs))
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
        report.add(name, "mismatch", f"the output does not run: {describe(err)}")
        return report
    except Exception as err:
        report.add(name, "crash", f"running the output: {crash_detail(err)}")
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
            f"{stage} refused what the graph passes accepted: {describe(err)}",
        )
        return report
    except Exception as err:
        report.add("opencl-run", "crash", f"{_pipeline_stage(err)}: {crash_detail(err)}")
        return report
    for key, want in expected.items():
        error = relative_error(want, ran.outputs[int(key[6:])].reshape(want.shape))
        if not error <= MODEL_OPENCL_RTOL:
            report.add("opencl-run", "mismatch", f"{key}: relative error {error:.2g}")
            return report
    report.add("opencl-run", "equal", f"max error {ran.max_error:.1e}, {ran.launches} launches")
    return report
