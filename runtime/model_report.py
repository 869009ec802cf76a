"""Run a whole model (a graph-level module, e.g. a torch-mlir export) on an OpenCL device and
report what the compiler made of it: compile seconds per pass, launches per inference, how
many of them are layout transforms and copies, the multiplies they execute
(`kernel_stats`), how many intermediate tensors live in
textures and in global memory, device time, and the error against expected outputs.

`run_model(text, inputs, expected, runtime)` is what `make models`, `bench/bench_models.py`
and the model execution tests share; `physlayout run --inputs/--expected` does the same run
for one model from the command line.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from physlayout.dialects.layout import AllocateOp, PtrType, is_texture_scope
from physlayout.lowering.pipelines import DeclaredPipeline, PhyslayoutOpenCLPass
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.host import execute, run_prepare
from physlayout.runtime.kernel_stats import kernel_stats
from physlayout.runtime.opencl import CompiledModule, compile_module, device_pipeline, numpy_dtype
from physlayout.universe import make_context
from physlayout.verification import verify_module

__all__ = ["ModelReport", "bytes_per_inference", "run_model"]

ELEMENT_BYTES = {"half": 2, "float": 4, "double": 8, "int": 4, "long": 8}
"""Bytes of one element of a kernel argument, by its C element type."""


def bytes_per_inference(compiled: CompiledModule, kernels: Sequence[str]) -> int:
    """The bytes the launches `kernels` (one inference, in launch order) move: every buffer
    or image argument of every launch, read or written, once per launch (elements of its
    physical shape x element bytes: 2 for half, 4 for float)."""
    per_launch = {
        launch.kernel: sum(
            ELEMENT_BYTES.get(arg.c_type, 4) * prod(arg.physical_shape)
            for arg in info.args
            if arg.kind != "scalar"
        )
        for info in compiled.program.kernels.values()
        for launch in info.launches
    }
    return sum(per_launch[kernel] for kernel in kernels)


@dataclass
class ModelReport:
    """What one model run gave (see the module docstring)."""

    name: str
    pass_seconds: dict[str, float] = field(default_factory=dict[str, float])
    """Compile seconds of each graph/buffer pass (summed over repeats of a name)."""
    opencl_seconds: float = 0.0
    """Generating and building the OpenCL program."""
    launches: int = 0
    """Launches of one inference (`@main`; with prepared parameters, not `@main_prepare`)."""
    prepare_launches: int = 0
    """Launches of `@main_prepare` (run once; 0 without `lift-transform-params`)."""
    prepare_ms: float = 0.0
    goal: int = 0
    """A launch count to compare with (set by the caller, e.g. `bench_models.launch_goal`)."""
    layout_launches: int = 0
    """Launches of layout-transform kernels (`*_transform*`)."""
    copy_launches: int = 0
    """Launches of scope or result copies (`*_copy*`)."""
    multiplies: int | None = None
    """Floating-point multiplies the launches of one inference execute
    (`kernel_stats.multiplies` summed; None when a kernel's count is unknown)."""
    texture_tensors: int = 0
    """Intermediate tensors allocated as textures by the host function."""
    global_tensors: int = 0
    """Intermediate tensors allocated in global memory by the host function."""
    device_ms: float = 0.0
    bytes_moved: int = 0
    """Bytes the launches of one inference move (`bytes_per_inference`)."""
    outputs: list[np.ndarray] = field(default_factory=list[np.ndarray])
    errors: dict[str, float] = field(default_factory=dict[str, float])
    """Per expected output: max|got - expected| / max|expected|."""

    @property
    def compile_seconds(self) -> float:
        """All compile time: every pass and the OpenCL build."""
        return sum(self.pass_seconds.values()) + self.opencl_seconds

    @property
    def max_error(self) -> float:
        """The largest relative error over the expected outputs (0.0 without any)."""
        return max(self.errors.values(), default=0.0)


def _timed_pipeline(
    spec: str, runtime: OpenCLRuntime, report: ModelReport, module: ModuleOp
) -> bool:
    """Apply `spec` (declared pipelines expanded into their passes), timing every pass;
    whether it ended with `physlayout-opencl`'s passes (as `physlayout-adreno` does)."""
    passes: list[ModulePass] = []
    for one in device_pipeline(spec, runtime.limits).passes:
        passes.extend(one.passes() if isinstance(one, DeclaredPipeline) else (one,))
    ctx = make_context()
    for one in passes:
        start = time.perf_counter()
        one.apply(ctx, module)
        verify_module(module)
        elapsed = time.perf_counter() - start
        report.pass_seconds[one.name] = report.pass_seconds.get(one.name, 0.0) + elapsed
    tail = [one.name for one in PhyslayoutOpenCLPass().passes()]
    return [one.name for one in passes[-len(tail):]] == tail


def _multiplies(compiled: CompiledModule, launched: Sequence[str]) -> int | None:
    """The multiplies of the launches `launched` (`kernel_stats`, per kernel function; a
    function cut into launches ``f_0, f_1, ...`` counts once, at ``f_0``); None when one is
    unknown."""
    stats = kernel_stats(compiled.lowered, compiled.program.kernels)
    total = 0
    for name in launched:
        base, _, index = name.rpartition("_")
        if name in stats:
            count = stats[name].multiplies
        elif base in stats and index.isdigit():
            count = stats[base].multiplies if index == "0" else 0
        else:
            count = None
        if count is None:
            return None
        total += count
    return total


def run_model(
    name: str,
    text: str,
    inputs: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    runtime: OpenCLRuntime,
    pipeline: str = "physlayout-adreno",
) -> ModelReport:
    """Compile the graph-level module `text` with `pipeline`, run `@main` (else its only
    function) on `inputs` (arrays by argument name; every tensor argument must be given) and
    compare its results `result0, ...` with `expected`."""
    report = ModelReport(name)
    start = time.perf_counter()
    source = Parser(make_context(), text).parse_module()
    source.verify()
    report.pass_seconds["parse"] = time.perf_counter() - start
    functions = [op for op in source.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    entry = next((f for f in functions if f.sym_name.data == "main"), functions[0])
    entry_name = entry.sym_name.data
    lowered = source.clone()
    lowered_already = _timed_pipeline(pipeline, runtime, report, lowered)
    start = time.perf_counter()
    compiled = compile_module(lowered, runtime, lowered_already=lowered_already)
    report.opencl_seconds = time.perf_counter() - start
    for op in compiled.lowered.walk():
        if isinstance(op, AllocateOp) and isinstance(op.ptr.type, PtrType):
            if is_texture_scope(op.ptr.type.get_scope()):
                report.texture_tensors += 1
            else:
                report.global_tensors += 1
    args: list[Any] = []
    for arg, arg_type in zip(
        entry.body.blocks[0].args, entry.function_type.inputs.data, strict=True
    ):
        assert isinstance(arg_type, TensorType)
        value = np.asarray(
            inputs[arg.name_hint or str(arg.index)],
            dtype=numpy_dtype(arg_type.get_element_type(), "input"),
        )
        args.append(np.array(value.reshape(value.shape or (1,))))
    outputs = [
        np.zeros(tuple(t.get_shape()) or (1,), dtype=numpy_dtype(t.get_element_type(), "result"))
        for t in entry.function_type.outputs.data
        if isinstance(t, TensorType)
    ]
    names = [arg.name_hint or str(arg.index) for arg in entry.body.blocks[0].args]
    args, prepared = run_prepare(compiled, entry_name, names, args)
    if prepared is not None:
        report.prepare_launches = len(prepared.times)
        report.prepare_ms = prepared.total_seconds * 1e3
    result = execute(compiled, entry_name, [*args, *outputs])
    report.launches = len(result.times)
    report.bytes_moved = bytes_per_inference(compiled, [t.kernel for t in result.times])
    report.layout_launches = sum("_transform" in t.kernel for t in result.times)
    report.copy_launches = sum("_copy" in t.kernel for t in result.times)
    report.multiplies = _multiplies(compiled, [t.kernel for t in result.times])
    report.device_ms = result.total_seconds * 1e3
    report.outputs = outputs
    for j, got in enumerate(outputs):
        want = expected.get(f"result{j}")
        if want is None:
            continue
        got = got.reshape(want.shape)
        scale = float(np.max(np.abs(want))) or 1.0
        report.errors[f"result{j}"] = float(np.max(np.abs(got.astype(np.float64) - want))) / scale
    return report
