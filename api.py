"""The Python API: compile a module once, bind its parameters, call it many times.

    import physlayout
    model = physlayout.compile("model.mlir", params=weights)   # MLIR text, a path or a ModuleOp
    (y,) = model(x)                       # numpy in, numpy out (logical layouts)
    model.save("out/")                    # the artifact `physlayout compile` writes
    again = physlayout.load("out/", params=weights)

`compile` runs what `physlayout compile` runs (`runtime/deploy.compile_artifact`: the graph
pipeline for graph-level IR, by default `physlayout-adreno{lift-params=true}` so that the
work on parameters runs once, in the prepare phase; `prepare=False` turns that off), builds
the kernels for an OpenCL device and opens a `runtime/session.Session`: the bound
parameters are uploaded and prepared once and stay on the device; a call uploads only its
inputs and downloads only the results. Errors are the command line's MLIR-style
diagnostics, raised as xDSL's `DiagnosticException` / `ParseError` / `PassFailedException`.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

if TYPE_CHECKING:  # the runtime (numpy, pyopencl) loads when a model is compiled or loaded
    from physlayout.runtime.artifact import Artifact
    from physlayout.runtime.host import RunResult
    from physlayout.runtime.plan import Plan, PlanParam
    from physlayout.runtime.session import Session

GRAPH_PIPELINE = "physlayout-adreno"
"""The graph pipeline of graph-level sources (with `lift-params=true` unless `prepare` is
off)."""


def default_pipeline(prepare: bool = True) -> str:
    """The pipeline `compile`, `physlayout run` and `physlayout compile` use for graph-level
    IR when none is given: the Adreno pipeline, its parameter work lifted into the prepare
    phase unless `prepare` is false."""
    return f"{GRAPH_PIPELINE}{{lift-params=true}}" if prepare else GRAPH_PIPELINE


@dataclass(frozen=True)
class Timing:
    """Repeated calls of a model (`CompiledModel.time`): medians per call."""

    runs: int
    warmup: int
    wall_ms: float
    """Median wall time of one call: inputs up, every launch, results down."""
    device_ms: float
    """Median of the summed device time (profiling events) of one call's launches."""
    launches: int

    def line(self) -> str:
        """One report line, as `physlayout run --repeat` prints it."""
        per_launch = (self.wall_ms - self.device_ms) * 1e3 / max(1, self.launches)
        return (
            f"repeat: {self.runs} run(s) after {self.warmup} warm-up: median wall "
            f"{self.wall_ms:.3f} ms, median device {self.device_ms:.3f} ms per inference "
            f"({self.launches} launch(es), {per_launch:.0f} us per launch outside the kernels)"
        )


class CompiledModel:
    """A compiled function on a device with its parameters bound (module docstring)."""

    def __init__(self, artifact: Artifact, session: Session) -> None:
        self.artifact = artifact
        self.session = session
        self.last_run: RunResult | None = None
        """The result of the latest call: its launches' device times."""

    # Inspection ---------------------------------------------------------------------------

    @property
    def plan(self) -> Plan:
        """The launch plan (`runtime/plan.Plan`)."""
        return self.artifact.plan

    @property
    def kernels(self) -> str:
        """The OpenCL C of every kernel (kernels.cl)."""
        return self.artifact.kernels

    @property
    def inputs(self) -> tuple[PlanParam, ...]:
        """The parameters a call takes, in order (the bound ones left out)."""
        return self.session.inputs

    @property
    def outputs(self) -> tuple[PlanParam, ...]:
        """What a call returns, in order."""
        return self.plan.outputs

    @property
    def launches(self) -> int:
        """Kernel launches per call."""
        return _launches(self.plan.steps)

    @property
    def prepare_launches(self) -> int:
        """Kernel launches of the prepare phase, run once when the model is opened."""
        return _launches(self.plan.prepare)

    # Calling ------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run once on the inputs (by position in `inputs` order, or by name); the result,
        or a tuple of the results when the function has several. The launches' profiling
        events are not read: `last_run.resolve()` reads them when wanted."""
        result = self.run(self.bind(args, kwargs), profile=False)
        outputs = tuple(result.outputs[p.name] for p in self.outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The inputs by name from positional and keyword arguments."""
        names = [p.name for p in self.inputs]
        if len(args) > len(names):
            raise DiagnosticException(
                f"@{self.plan.entry} takes {len(names)} input(s), got {len(args)} positional"
            )
        values = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name in values:
                raise DiagnosticException(f"@{self.plan.entry}: %{name} given twice")
            values[name] = value
        return values

    def run(self, inputs: Mapping[str, Any], profile: bool = True) -> RunResult:
        """One call on `inputs` by name; the whole `RunResult` (outputs and times; with
        `profile` off the times wait in `RunResult.pending` until `resolve`)."""
        if not isinstance(inputs, Mapping):
            raise DiagnosticException(
                f"@{self.plan.entry}: run takes the inputs by name (a dict), got "
                f"{type(inputs).__name__}; call the model to give them by position"
            )
        result = self.session.run(inputs, profile)
        self.last_run = result
        return result

    def time(self, *args: Any, repeat: int = 10, warmup: int = 2, **kwargs: Any) -> Timing:
        """Call `warmup` times, then `repeat` times timing each call (wall clock around the
        whole call; device time from the launches' profiling events, read after the
        clock stops). The inputs as a call takes them (by position or name), or one dict
        of them by name."""
        if len(args) == 1 and not kwargs and isinstance(args[0], Mapping):
            inputs = dict(args[0])  # pyright: ignore[reportUnknownArgumentType]
        else:
            inputs = self.bind(args, kwargs)
        if repeat < 1 or warmup < 0:
            raise DiagnosticException(f"repeat must be >= 1 and warmup >= 0, got {repeat}, {warmup}")
        for _ in range(warmup):
            self.run(inputs, profile=False)
        walls: list[float] = []
        devices: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter()
            result = self.run(inputs, profile=False)
            walls.append(time.perf_counter() - start)
            devices.append(result.resolve().total_seconds)
        return Timing(
            repeat, warmup, statistics.median(walls) * 1e3, statistics.median(devices) * 1e3,
            self.launches,
        )

    def save(self, directory: str) -> list[str]:
        """Write the artifact (kernels.cl, plan.json, host.c, README.txt, source.mlir) into
        `directory`, as `physlayout compile` does; the paths written."""
        from physlayout.runtime.artifact import write_artifact

        return write_artifact(self.artifact, directory)


def compile(
    source: str | os.PathLike[str] | ModuleOp,
    *,
    entry: str | None = None,
    pipeline: str | None = None,
    precision: str = "f32",
    device: str | None = None,
    params: Mapping[str, Any] | None = None,
    prepare: bool = True,
    cache: bool = True,
    tuning_cache: str | os.PathLike[str] | bool = True,
    tune: bool = False,
    tune_budget: float | None = None,
    texture_storage: str = "auto",
    fp_contract: bool = False,
) -> CompiledModel:
    """Compile function `entry` (default: @main, else the one function no other calls) of
    `source` (MLIR text, the path of an .mlir file, or a parsed module) for the OpenCL
    device `device` (PLATFORM[:INDEX]; default as `physlayout run`), bind `params` (arrays
    by parameter name: uploaded and prepared once) and return the callable model.
    `pipeline` (graph-level IR) overrides `default_pipeline(prepare)`; `precision` "f16"
    stores tensors in f16 (f32 arithmetic). With `cache` the artifact comes from the compile
    cache when the same text was compiled with the same options before
    (`runtime/compile_cache.py`; a hit does not even parse the source), and its kernels are
    built from the device binary cached the first time (`runtime/program_cache.py`).
    Kernels take the
    schedules tuned for the device in `tuning_cache` (True: the default tuning cache, a
    path: that file, False: none; `runtime/tuning_cache.py`), the heuristic's where it has
    none; with `tune` they are tuned first (`runtime/tuner.py`, within `tune_budget`
    seconds, default about a minute), the results written to that cache. `texture_storage`
    "image" holds texture-scoped tensors in images, "buffer" in `__global` arrays of the same
    texels; "auto" (default) in buffers on a CPU device only, whose driver emulates image
    reads in software (`OpenCLRuntime.texture_storage`). `fp_contract` contracts each f32
    vector multiply whose only use is an add into one `fma` (`OpenCLRuntime.fp_contract`: faster,
    within about 1e-5 of the evaluator instead of bit-exact; tuned schedules are kept per
    setting)."""
    from physlayout.located import entry_function, parse_located
    from physlayout.runtime.compile_cache import cached_compile
    from physlayout.runtime.device import OpenCLRuntime
    from physlayout.runtime.opencl import module_text
    from physlayout.runtime.session import Session

    def parse(text: str) -> tuple[ModuleOp, str]:
        module = source if isinstance(source, ModuleOp) else parse_located(text, name)
        return module, entry_function(module, entry).sym_name.data

    if isinstance(source, ModuleOp):
        text, name = module_text(source), "<module>"
    else:
        text, name = _text(source)
    runtime = OpenCLRuntime(
        device, program_cache=cache, texture_storage=texture_storage, fp_contract=fp_contract
    )
    spec = pipeline or default_pipeline(prepare)
    path = None if tuning_cache is True else tuning_cache
    if tune:
        from physlayout.runtime.tuner import tune_model
        from physlayout.runtime.tuning_cache import DEFAULT_BUDGET

        if path is False:
            raise DiagnosticException("tune=True needs a tuning cache to write (tuning_cache=False)")
        module, name_of_entry = parse(text)
        tune_model(
            module, name_of_entry, runtime, pipeline=spec, precision=precision,
            budget=DEFAULT_BUDGET if tune_budget is None else tune_budget, cache=path,
        )  # fmt: skip
    schedules = ""
    if path is not False:
        from physlayout.runtime.tuning_cache import tuned_table

        schedules = tuned_table(runtime, path)
    artifact = cached_compile(
        text, entry, runtime.limits, pipeline=spec, precision=precision, use_cache=cache,
        schedules=schedules, parse=parse,
    )  # fmt: skip
    return CompiledModel(artifact, Session(artifact, runtime, params))


def load(
    directory: str | os.PathLike[str],
    *,
    device: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> CompiledModel:
    """The artifact in `directory` (written by `physlayout compile` or `CompiledModel.save`)
    opened on `device` with `params` bound, ready to call."""
    from physlayout.runtime.artifact import load_artifact
    from physlayout.runtime.device import OpenCLRuntime
    from physlayout.runtime.session import Session

    artifact = load_artifact(os.fspath(directory))
    return CompiledModel(artifact, Session(artifact, OpenCLRuntime(device), params))


def _text(source: Any) -> tuple[str, str]:
    """The MLIR text of `source` (text, or the path of an .mlir file) and its name for
    diagnostics."""
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and source.endswith(".mlir")
    ):
        path = os.fspath(source)
        with open(path) as stream:
            return stream.read(), path
    if not isinstance(source, str):
        raise DiagnosticException(
            f"source must be MLIR text, a path or a ModuleOp, got {type(source).__name__}"
        )
    return source, "<source>"


def _launches(steps: Any) -> int:
    from physlayout.runtime.plan import Launch

    return sum(1 for s in steps if isinstance(s, Launch))
