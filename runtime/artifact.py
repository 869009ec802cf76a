"""Artifacts on disk: what `physlayout compile FILE.mlir -o OUT/` writes and `physlayout run
OUT/`, `physlayout.load` and the compile cache read.

An artifact is a directory holding
- `kernels.cl`: the OpenCL C of every kernel, its first line `artifact_line(id)`;
- `plan.json`: the launch plan (`runtime/plan.py`, JSON Schema `docs/plan.schema.json`);
- `host.c`: the standalone C99 host of the plan (`runtime/host_c.py`);
- `README.txt`: how to build and run host.c;
- `source.mlir`: the source module (what `physlayout run OUT/ --check` compares with);
- `kernels.json`: per kernel function, the multiplies one launch executes and the source
  lines it came from (`runtime/kernel_stats.py`; what `physlayout run OUT/ --profile` reads).

The artifact's id is a hash of its plan and kernels, so a kernels.cl of another compile is
refused by both runners. `load_artifact` reads one back (refusing another schema version or
a kernels.cl of another artifact); `check_device` refuses a device without what the plan
requires. Nothing here compiles (`runtime/deploy.py` does): reading and writing artifacts
loads no pass.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.host_c import BUILD_COMMAND, host_c
from physlayout.runtime.kernel_stats import KernelStats
from physlayout.runtime.plan import Plan, PlanError, artifact_line
from physlayout.runtime.plan_json import dumps, plan_from_json

KERNELS_FILE = "kernels.cl"
PLAN_FILE = "plan.json"
HOST_FILE = "host.c"
README_FILE = "README.txt"
SOURCE_FILE = "source.mlir"
STATS_FILE = "kernels.json"


@dataclass(frozen=True)
class Artifact:
    """A compiled artifact in memory."""

    plan: Plan
    kernels: str
    """kernels.cl's text (its first line names the artifact)."""
    source: str | None
    """source.mlir's text (None when the artifact has none)."""
    stats: Mapping[str, KernelStats] | None = None
    """kernels.json: what each kernel function does per launch (`runtime/kernel_stats.py`;
    None when the artifact has none)."""

    def files(self) -> dict[str, str]:
        """The artifact's files by name."""
        files = {
            KERNELS_FILE: self.kernels,
            PLAN_FILE: dumps(self.plan),
            HOST_FILE: host_c(self.plan, self.plan.artifact_id),
            README_FILE: readme(self.plan),
        }
        if self.source is not None:
            files[SOURCE_FILE] = self.source
        if self.stats is not None:
            entries = {name: stats.to_json() for name, stats in sorted(self.stats.items())}
            files[STATS_FILE] = json.dumps(entries, indent=1) + "\n"
        return files


def readme(plan: Plan) -> str:
    """README.txt: what the artifact is, the one-line build, a run command."""
    inputs = " ".join(f"--input {p.name}={p.name}.npy" for p in plan.inputs if p.kind == "buffer")
    scalars = " ".join(f"--input {p.name}=1" for p in plan.inputs if p.kind == "scalar")
    outputs = " ".join(f"--output {p.name}={p.name}.out.npy" for p in plan.outputs)
    run = " ".join(x for x in ("./host", inputs, scalars, outputs) if x)
    return (
        f"physlayout artifact {plan.artifact_id}: @{plan.entry} ({plan.level}-level source; "
        f"inputs and outputs in the {plan.io_layout} layout, see plan.json)\n"
        f"Build: {BUILD_COMMAND}\n"
        f"Run:   {run}\n"
        "Files: kernels.cl (OpenCL C, loaded at run time), plan.json (the launch plan), "
        "host.c (this plan's C host), kernels.json (what each kernel computes, for "
        "profiles), source.mlir (the source module)\n"
    )


def write_artifact(artifact: Artifact, directory: str) -> list[str]:
    """Write the artifact's files into `directory` (created if missing); the paths written.
    Every file is generated before the first is written."""
    files = artifact.files()
    os.makedirs(directory, exist_ok=True)
    written: list[str] = []
    for name, text in files.items():
        path = os.path.join(directory, name)
        with open(path, "w") as stream:
            stream.write(text)
        written.append(path)
    return written


def load_artifact(directory: str) -> Artifact:
    """The artifact in `directory`; PlanError when it is not one, is of another schema
    version, or its kernels.cl belongs to another artifact."""
    plan_path = os.path.join(directory, PLAN_FILE)
    if not os.path.isfile(plan_path):
        raise PlanError(f"{directory} is not a physlayout artifact: it has no {PLAN_FILE}")
    with open(plan_path) as stream:
        try:
            data = json.load(stream)
        except json.JSONDecodeError as err:
            raise PlanError(f"{plan_path}: not valid JSON ({err})") from None
    plan = plan_from_json(data, plan_path)
    kernels_path = os.path.join(directory, KERNELS_FILE)
    if not os.path.isfile(kernels_path):
        raise PlanError(f"{directory}: the artifact has no {KERNELS_FILE}")
    with open(kernels_path) as stream:
        kernels = stream.read()
    line = artifact_line(plan.artifact_id)
    first = kernels.split("\n", 1)[0].rstrip("\r")
    if first != line:
        raise PlanError(
            f"{kernels_path} belongs to another artifact (its first line is '{first[:120]}'; "
            f"{PLAN_FILE} expects '{line}'): use the files of one `physlayout compile`"
        )
    source_path = os.path.join(directory, SOURCE_FILE)
    source = None
    if os.path.isfile(source_path):
        with open(source_path) as stream:
            source = stream.read()
    return Artifact(plan, kernels, source, _stats(os.path.join(directory, STATS_FILE)))


def _stats(path: str) -> dict[str, KernelStats] | None:
    """kernels.json's entries (None without the file); PlanError when it is not one."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path) as stream:
            data = json.load(stream)
        if not isinstance(data, dict):
            raise ValueError("expected an object of kernels")
        return {str(k): KernelStats.from_json(v) for k, v in data.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    except (ValueError, OSError) as err:
        raise PlanError(f"{path}: not a kernels.json ({err})") from None


def check_device(plan: Plan, runtime: OpenCLRuntime) -> None:
    """Refuse (PlanError) a device that lacks what `plan` requires: an extension its
    kernels enable, image support, or images as large as the plan's."""
    device = runtime.describe()
    extensions = set(runtime.device.extensions.split())
    for extension in plan.requirements.extensions:
        if extension not in extensions:
            raise PlanError(
                f"device {device} lacks the OpenCL extension {extension}, which the plan's "
                "kernels need"
            )
    requirements = plan.requirements
    if requirements.image_support:
        limits = runtime.limits
        if not limits.image_support:
            raise PlanError(f"device {device} has no image support; the plan uses images")
        if (
            requirements.max_image_width > limits.max_image_width
            or requirements.max_image_height > limits.max_image_height
        ):
            raise PlanError(
                f"the plan uses images up to {requirements.max_image_width} x "
                f"{requirements.max_image_height} texels; device {device} allows "
                f"{limits.max_image_width} x {limits.max_image_height}"
            )
