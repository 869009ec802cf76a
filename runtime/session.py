"""A compiled artifact loaded on an OpenCL device, called many times.

`Session(artifact, runtime, params)` builds the artifact's kernels once, allocates every
storage of its plan once, uploads the bound parameters once and runs the plan's `prepare`
steps once (an entry `lift-transform-params` split: the parameters' layout transforms and
batch-norm folding, `@ENTRY_prepare`). Each `run(inputs)` then writes only the inputs that
are not bound, enqueues the body's launches without waiting between them (`PlanRunner`) and
reads the outputs: the prepared values and the bound parameters stay resident on the device
between calls.

Binding rules (each refusal a `DiagnosticException` naming the parameters):
- every parameter the `prepare` steps write must be bound (it is read once, here);
- a bound parameter that the body writes (`out` or `inout`) is refused: it is not constant;
- a run must give every other input (no value is guessed) and nothing else;
- arrays must have the plan's caller shape (`PlanParam.shape`); they are converted to the
  parameter's dtype.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.utils.exceptions import DiagnosticException

from physlayout.runtime.artifact import Artifact, check_device
from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.host import PlanRunner, RunResult
from physlayout.runtime.plan import Plan, PlanParam, Write


class Session:
    """An artifact's plan on one device, with its parameters bound (module docstring)."""

    def __init__(
        self, artifact: Artifact, runtime: OpenCLRuntime, params: Mapping[str, Any] | None = None
    ) -> None:
        plan = artifact.plan
        check_device(plan, runtime)
        self.artifact = artifact
        self.runtime = runtime
        self.runner = PlanRunner(plan, runtime, runtime.build(artifact.kernels))
        given = dict(params or {})
        _refuse_unknown(plan, given, "params")
        lifted = {s.input for s in plan.prepare if isinstance(s, Write)}
        missing = [p.name for p in plan.inputs if p.name in lifted and p.name not in given]
        if missing:
            raise DiagnosticException(
                f"@{plan.entry}: the prepared parameters {listed_names(missing)} are not bound "
                "(give them as params; they are read once, before the first run)"
            )
        for name in given:
            param = plan.param(name)
            if param.direction != "in":
                raise DiagnosticException(
                    f"@{plan.entry}: %{name} is written by the run ({param.direction}); only "
                    "inputs can be bound as parameters"
                )
        self.bound = {name: caller_value(plan.param(name), v) for name, v in given.items()}
        self._params = {p.name: p for p in plan.params}
        self._inputs = tuple(p for p in plan.inputs if p.name not in self.bound)
        self._input_names = frozenset(p.name for p in self._inputs)
        self.prepared: RunResult | None = None
        if plan.prepare:
            self.prepared = self.runner.run(plan.prepare, self.bound)
        self._resident: frozenset[str] = frozenset()
        """Bound inputs whose storage holds them since the first run."""

    @property
    def plan(self) -> Plan:
        """The artifact's launch plan."""
        return self.artifact.plan

    @property
    def inputs(self) -> tuple[PlanParam, ...]:
        """The parameters a run takes: the plan's inputs that are not bound."""
        return self._inputs

    def run(self, inputs: Mapping[str, Any], profile: bool = True) -> RunResult:
        """One run of the plan's steps on `inputs` (by parameter name); the outputs are in
        `RunResult.outputs`, the launches' times in `times` (`pending` without
        `profile`)."""
        plan = self.plan
        if len(inputs) != len(self._inputs) or not self._input_names.issuperset(inputs):
            _refuse_unknown(plan, inputs, "inputs")
            for name in inputs:
                if name in self.bound:
                    raise DiagnosticException(
                        f"@{plan.entry}: %{name} is bound as a parameter; it is not an input "
                        "of a run"
                    )
            missing = [p.name for p in self._inputs if p.name not in inputs]
            raise DiagnosticException(f"@{plan.entry}: no value for the inputs {listed_names(missing)}")
        values = dict(self.bound)
        params = self._params
        for name, value in inputs.items():
            values[name] = caller_value(params[name], value)
        result = self.runner.run(plan.steps, values, self._resident, profile)
        self._resident = frozenset(self.bound)
        return result


def caller_value(param: PlanParam, value: Any) -> Any:
    """`value` as the plan takes parameter `param`: an array of its caller shape and dtype,
    or a scalar of its dtype (a `DiagnosticException` for another shape)."""
    dtype = np.dtype(param.dtype)
    array = np.asarray(value)
    if param.kind == "scalar":
        if array.size != 1:
            raise DiagnosticException(
                f"%{param.name}: expected one {param.element_type} value, got shape "
                f"{list(array.shape)}"
            )
        return dtype.type(array.reshape(()).item())
    if tuple(array.shape) != tuple(param.shape):
        raise DiagnosticException(
            f"%{param.name}: expected shape {list(param.shape)} ({param.layout} layout), got "
            f"{list(array.shape)}"
        )
    if array.dtype.kind not in "biuf" or (dtype.kind in "biu" and array.dtype.kind == "f"):
        raise DiagnosticException(
            f"%{param.name}: {array.dtype} values do not convert to {dtype.name}"
        )
    return np.ascontiguousarray(array, dtype=dtype)


def _refuse_unknown(plan: Plan, values: Mapping[str, Any], what: str) -> None:
    names = [p.name for p in plan.inputs]
    for name in values:
        if name in names:
            continue
        close = difflib.get_close_matches(name.replace(".", "_"), names, n=1)
        hint = f"; did you mean %{close[0]}?" if close else f" (inputs: {listed_names(names)})"
        raise DiagnosticException(f"@{plan.entry}: {what}: no input %{name}{hint}")


def listed_names(names: Sequence[str]) -> str:
    """`%a, %b, ...`: the first eight names, then how many more (for diagnostics)."""
    shown = ", ".join(f"%{n}" for n in names[:8])
    return shown + (f" and {len(names) - 8} more" if len(names) > 8 else "")
