"""The C host of an artifact: `runtime/host_main.c` with the launch plan generated into it
as C tables (so the program needs no JSON library).

`host_c(plan, artifact_line)` fills the marker `/* @PLAN_TABLES@ */` of host_main.c with:
`STORAGES` (kind, dtype, elements, bytes, image width x height), `PARAMS` (name, dtype,
direction, shape in the caller's layout, the storage the host writes/reads), `KERNELS`,
`ARGS` (per launch: storage, constant bytes, or scalar parameter), `STEPS` (the plan's
`prepare` steps, then its steps, in order; each with its place in plan.json, e.g.
`prepare[3]`, and its phase, for the host's messages), `N_PREPARE_STEPS` (how many of them
run once, before the first run), `EXTENSIONS` and the largest image. The program
is deterministic text: the same plan gives the same bytes. It compiles with
`gcc -std=c99 -Wall -Werror` against the OpenCL 1.2 headers.
"""

from __future__ import annotations

import math
from importlib import resources
from typing import Any

import numpy as np

from physlayout.runtime.plan import (
    C_SCALARS,
    Allocate,
    Check,
    CopyBufferToImage,
    CopyImageToBuffer,
    Fill,
    InputArg,
    Launch,
    Plan,
    PlanError,
    Read,
    Step,
    StorageArg,
    ValueArg,
    Write,
    artifact_line,
)

MARKER = "/* @PLAN_TABLES@ */"

BUILD_COMMAND = "gcc -std=c99 -O2 -Wall -o host host.c -lOpenCL"
"""The one-line build of host.c on a Linux machine with the OpenCL headers and ICD loader
(Debian: ocl-icd-opencl-dev, opencl-c-headers)."""

_DTYPES = ("float32", "float16", "float64", "int8", "int16", "int32", "int64", "uint8",
           "uint16", "uint32", "uint64", "bool")  # fmt: skip
"""The order of `enum dtype` in host_main.c."""


def _dt(dtype: str) -> str:
    if dtype not in _DTYPES:
        raise PlanError(f"the C host does not support {dtype} values")
    return "DT_" + {"float32": "F32", "float16": "F16", "float64": "F64", "bool": "BOOL"}.get(
        dtype, dtype.upper().replace("UINT", "U").replace("INT", "I")
    )


def _c_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _c_float(value: float) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "-INFINITY" if value < 0 else "INFINITY"
    return f"{float(np.float32(value))!r}f"


def _bytes(value: Any, dtype: str) -> str:
    data = np.asarray(value, dtype=np.dtype(dtype)).astype(np.dtype(dtype).newbyteorder("<"))
    return "{" + ", ".join(f"0x{b:02x}" for b in data.tobytes()) + "}"


def host_c(plan: Plan, artifact_id: str) -> str:
    """host.c for `plan` of artifact `artifact_id`; the program accepts only a kernels.cl
    whose first line is `artifact_line(artifact_id)`."""
    template = resources.files("physlayout.runtime").joinpath("host_main.c").read_text()
    if MARKER not in template:  # pragma: no cover - the template is part of the package
        raise PlanError("host_main.c lacks the plan marker")
    return template.replace(MARKER, _tables(plan, artifact_id), 1)


def _tables(plan: Plan, artifact_id: str) -> str:
    lines = [
        f"#define ARTIFACT_LINE {_c_string(artifact_line(artifact_id))}",
        f"#define ARTIFACT_ID {_c_string(artifact_id)}",
        f"#define ENTRY {_c_string(plan.entry)}",
        f"#define NEEDS_IMAGES {int(plan.requirements.image_support)}",
        f"#define MAX_IMAGE_WIDTH {plan.requirements.max_image_width}",
        f"#define MAX_IMAGE_HEIGHT {plan.requirements.max_image_height}",
        "",
    ]
    storages = [
        f"    {{{_c_string(s.name)}, {'KIND_IMAGE' if s.kind == 'image' else 'KIND_BUFFER'}, "
        f"{_dt(s.dtype)}, {s.elements}u, {s.bytes}u, "
        f"{s.image_size[0] if s.kind == 'image' else 0}u, {s.image_size[1] if s.kind == 'image' else 0}u}},"
        for s in plan.storages
    ]
    lines += _array("static const struct storage", "STORAGES", storages, "N_STORAGES")
    params: list[str] = []
    names = {p.name: k for k, p in enumerate(plan.params)}
    for k, p in enumerate(plan.params):
        if p.shape:
            lines.append(f"static const long long SHAPE_{k}[] = {{{', '.join(map(str, p.shape))}}};")
        shape = f"SHAPE_{k}" if p.shape else "NULL"
        direction = {"in": "DIR_IN", "out": "DIR_OUT", "inout": "DIR_INOUT"}[p.direction]
        host = -1 if p.host_storage is None else p.host_storage
        params.append(
            f"    {{{_c_string(p.name)}, {int(p.kind == 'scalar')}, {_dt(p.dtype)}, {direction}, "
            f"{len(p.shape)}, {shape}, {host}, {_c_string(p.layout)}}},"
        )
    lines += _array("static const struct param", "PARAMS", params, "N_PARAMS")
    kernels = list(plan.kernels)
    lines += _array("static const char *const", "KERNELS", [f"    {_c_string(k)}," for k in kernels], "N_KERNELS")
    extensions = [f"    {_c_string(e)}," for e in plan.requirements.extensions]
    lines += _array("static const char *const", "EXTENSIONS", extensions, "N_EXTENSIONS")
    args: list[str] = []
    steps: list[str] = []
    values: list[str] = []
    for where, sequence in (("prepare", plan.prepare), ("steps", plan.steps)):
        for index, step in enumerate(sequence):
            steps.append(_step(step, f"{where}[{index}]", kernels, names, args, values, plan))
    lines += values
    lines += _array("static const struct arg", "ARGS", args, "N_ARGS")
    lines += _array("static const struct step", "STEPS", steps, "N_STEPS")
    lines += [f"#define N_PREPARE_STEPS {len(plan.prepare)}", ""]
    return "\n".join(lines) + "\n"


def _array(declaration: str, name: str, rows: list[str], count: str) -> list[str]:
    """A C array of `rows` (one zero row when empty: C99 has no empty arrays)."""
    body = rows or ["    {0},"]
    if declaration.endswith("char *const"):
        body = rows or ["    NULL,"]
    return [f"{declaration} {name}[] = {{", *body, "};", f"#define {count} {len(rows)}", ""]


def _step(
    step: Step,
    where: str,
    kernels: list[str],
    names: dict[str, int],
    args: list[str],
    values: list[str],
    plan: Plan,
) -> str:
    """One `struct step` initializer: {op, storage, src, dst, param, kernel, function,
    first_arg, n_args, dims, global, local, fill, fill_color, offset, count, message, where,
    phase}."""
    storage, src, dst, param, kernel = -1, -1, -1, -1, -1
    function, first, count, dims = "NULL", 0, 0, 0
    offset, flags, message = 0, 0, "NULL"
    global_size, local_size = "{0, 0, 0}", "{0, 0, 0}"
    fill, color = "NULL", "0.0f"
    match step:
        case Allocate():
            op, storage = "OP_ALLOCATE", step.storage
        case Fill():
            op, storage = "OP_FILL", step.storage
            name = f"FILL_{len(values)}"
            values.append(
                f"static const unsigned char {name}[] = "
                f"{_bytes(step.value, plan.storages[storage].dtype)};"
            )
            fill, color = name, _c_float(float(step.value))
        case Write():
            op, storage, param = "OP_WRITE", step.storage, names[step.input]
        case Read():
            op, storage, param = "OP_READ", step.storage, names[step.output]
        case CopyBufferToImage():
            op, src, dst = "OP_COPY_BUFFER_TO_IMAGE", step.src, step.dst
        case CopyImageToBuffer():
            op, src, dst = "OP_COPY_IMAGE_TO_BUFFER", step.src, step.dst
        case Check():
            op, storage, offset, flags = "OP_CHECK", step.storage, step.offset, step.count
            message = _c_string(step.message)
        case Launch():
            op, kernel, function = "OP_LAUNCH", kernels.index(step.kernel), _c_string(step.function)
            if not 1 <= len(step.global_size) <= 3:
                raise PlanError(f"kernel {step.kernel}: {len(step.global_size)} NDRange dimensions")
            first, count, dims = len(args), len(step.args), len(step.global_size)
            padded = [*step.global_size, 0, 0][:3]
            global_size = "{" + ", ".join(f"{g}u" for g in padded) + "}"
            local_size = "{" + ", ".join(f"{g}u" for g in [*step.local_size, 0, 0][:3]) + "}"
            for arg in step.args:
                args.append(_arg(arg, names, values))
    return (
        f"    {{{op}, {storage}, {src}, {dst}, {param}, {kernel}, {function}, {first}, {count}, "
        f"{dims}, {global_size}, {local_size}, {fill}, {color}, {offset}u, {flags}u, {message}, "
        f"{_c_string(where)}, {_c_string(step.phase)}}},"
    )


def _arg(arg: StorageArg | ValueArg | InputArg, names: dict[str, int], values: list[str]) -> str:
    """One `struct arg` initializer: {kind, storage, dtype, param, value}."""
    match arg:
        case StorageArg():
            return f"    {{ARG_STORAGE, {arg.storage}, 0, -1, NULL}},"
        case ValueArg():
            dtype = C_SCALARS[arg.c_type]
            name = f"VALUE_{len(values)}"
            values.append(f"static const unsigned char {name}[] = {_bytes(arg.value, dtype)};")
            return f"    {{ARG_VALUE, -1, {_dt(dtype)}, -1, {name}}},"
        case InputArg():
            dtype = C_SCALARS[arg.c_type]
            return f"    {{ARG_INPUT, -1, {_dt(dtype)}, {names[arg.input]}, NULL}},"

