"""The launch plan as JSON (`plan.json` of an artifact; JSON Schema `docs/plan.schema.json`):
`plan_to_json` / `dumps` write a `Plan` (`runtime/plan.py`), `plan_from_json` reads one back,
refusing another schema version, a missing or mistyped field and a step that names a
storage, parameter or kernel the plan does not have (`PlanError`).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from physlayout.runtime.plan import (
    C_SCALARS,
    PLAN_SCHEMA,
    PLAN_VERSION,
    Allocate,
    Arg,
    Check,
    CopyBufferToImage,
    CopyImageToBuffer,
    Fill,
    InputArg,
    Launch,
    Plan,
    PlanError,
    PlanParam,
    Read,
    Requirements,
    Step,
    Storage,
    StorageArg,
    ValueArg,
    Write,
)

# JSON ----------------------------------------------------------------------------------------


def plan_to_json(plan: Plan) -> dict[str, Any]:
    """The JSON object of `plan` (docs/plan.schema.json)."""
    return {
        "schema": PLAN_SCHEMA,
        "version": PLAN_VERSION,
        "artifact_id": plan.artifact_id,
        "entry": plan.entry,
        "level": plan.level,
        "io_layout": plan.io_layout,
        "options": dict(plan.options),
        "requirements": {
            "extensions": list(plan.requirements.extensions),
            "image_support": plan.requirements.image_support,
            "max_image_width": plan.requirements.max_image_width,
            "max_image_height": plan.requirements.max_image_height,
        },
        "kernels": list(plan.kernels),
        "storages": [_storage_json(i, s) for i, s in enumerate(plan.storages)],
        "inputs": [_param_json(p) for p in plan.inputs],
        "outputs": [_param_json(p) for p in plan.outputs],
        "prepare": [_step_json(s) for s in plan.prepare],
        "steps": [_step_json(s) for s in plan.steps],
    }


def _storage_json(index: int, storage: Storage) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": index,
        "name": storage.name,
        "kind": storage.kind,
        "scope": storage.scope,
        "role": storage.role,
        "element_type": storage.element_type,
        "dtype": storage.dtype,
        "shape": list(storage.shape),
        "bytes": storage.bytes,
    }
    if storage.kind == "image":
        width, height = storage.image_size
        data["image"] = {
            "channel_order": "CL_RGBA",
            "channel_type": storage.channel_type,
            "width": width,
            "height": height,
        }
    return data


def _param_json(param: PlanParam) -> dict[str, Any]:
    return {
        "name": param.name,
        "index": param.index,
        "kind": param.kind,
        "direction": param.direction,
        "element_type": param.element_type,
        "dtype": param.dtype,
        "shape": list(param.shape),
        "layout": param.layout,
        "storage": param.storage,
        "host_storage": param.host_storage,
        "transform": param.transform,
        "pad_value": _json_number(param.pad_value),
        "physical_shape": list(param.physical_shape),
    }


def _json_number(value: int | float | None) -> int | float | str | None:
    """JSON has no NaN or infinities: those are the strings "nan", "inf", "-inf"."""
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def _number(value: Any) -> int | float:
    if isinstance(value, str):
        return float(value)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise PlanError(f"plan.json: expected a number, got {value!r}")
    return value


def _arg_json(arg: Arg) -> dict[str, Any]:
    match arg:
        case StorageArg():
            return {"storage": arg.storage}
        case ValueArg():
            return {"type": arg.c_type, "value": _json_number(arg.value)}
        case InputArg():
            return {"type": arg.c_type, "input": arg.input}


def _step_json(step: Step) -> dict[str, Any]:
    match step:
        case Allocate():
            return {"op": "allocate", "phase": step.phase, "storage": step.storage}
        case Fill():
            value = _json_number(step.value)
            return {"op": "fill", "phase": step.phase, "storage": step.storage, "value": value}
        case Write():
            return {"op": "write", "phase": step.phase, "storage": step.storage, "input": step.input}
        case Read():
            return {
                "op": "read", "phase": step.phase, "storage": step.storage, "output": step.output
            }
        case Launch():
            return {
                "op": "launch",
                "phase": step.phase,
                "function": step.function,
                "kernel": step.kernel,
                "args": [_arg_json(a) for a in step.args],
                "global_size": list(step.global_size),
                "local_size": list(step.local_size),
            }
        case CopyBufferToImage():
            return {"op": "copy_buffer_to_image", "phase": step.phase, "src": step.src,
                    "dst": step.dst}  # fmt: skip
        case CopyImageToBuffer():
            return {"op": "copy_image_to_buffer", "phase": step.phase, "src": step.src,
                    "dst": step.dst}  # fmt: skip
        case Check():
            return {"op": "check", "phase": step.phase, "storage": step.storage,
                    "offset": step.offset, "count": step.count, "message": step.message}  # fmt: skip


def dumps(plan: Plan) -> str:
    """plan.json's text (deterministic: same plan, same bytes)."""
    return json.dumps(plan_to_json(plan), indent=1) + "\n"


def plan_from_json(data: Any, where: str = "plan.json") -> Plan:
    """The plan of a JSON object written by `plan_to_json`. Raises PlanError naming the
    problem: another schema or version, a missing or ill-typed field, a reference to a
    storage, input or output that does not exist."""
    if not isinstance(data, dict):
        raise PlanError(f"{where}: expected a JSON object")
    obj: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
    if obj.get("schema") != PLAN_SCHEMA:
        raise PlanError(f"{where}: not a physlayout plan (schema {obj.get('schema')!r})")
    if obj.get("version") != PLAN_VERSION:
        raise PlanError(
            f"{where}: plan schema version {obj.get('version')!r}, but this physlayout reads "
            f"version {PLAN_VERSION}: compile the artifact again with this physlayout"
        )
    try:
        storages = tuple(_storage_from(s) for s in obj["storages"])
        params: dict[str, PlanParam] = {}
        for p in [*obj["inputs"], *obj["outputs"]]:
            params[p["name"]] = _param_from(p)
        requirements = obj["requirements"]
        plan = Plan(
            entry=str(obj["entry"]),
            level=str(obj["level"]),
            io_layout=str(obj["io_layout"]),
            storages=storages,
            params=tuple(sorted(params.values(), key=lambda p: p.index)),
            steps=tuple(_step_from(s) for s in obj["steps"]),
            prepare=tuple(_step_from(s) for s in obj["prepare"]),
            requirements=Requirements(
                tuple(requirements["extensions"]),
                bool(requirements["image_support"]),
                int(requirements["max_image_width"]),
                int(requirements["max_image_height"]),
            ),
            options=dict(obj.get("options", {})),
            artifact_id=str(obj.get("artifact_id", "")),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise PlanError(f"{where}: malformed plan ({type(err).__name__}: {err})") from None
    _check_references(plan, where)
    return plan


def _storage_from(s: dict[str, Any]) -> Storage:
    return Storage(
        str(s["name"]), str(s["kind"]), str(s["scope"]), str(s["element_type"]),
        np.dtype(s["dtype"]).name, tuple(int(e) for e in s["shape"]), str(s["role"]),
    )  # fmt: skip


def _param_from(p: dict[str, Any]) -> PlanParam:
    pad = p.get("pad_value")
    return PlanParam(
        name=str(p["name"]),
        index=int(p["index"]),
        kind=str(p["kind"]),
        direction=str(p["direction"]),
        element_type=str(p["element_type"]),
        dtype=np.dtype(p["dtype"]).name,
        shape=tuple(int(e) for e in p["shape"]),
        layout=str(p["layout"]),
        storage=p.get("storage"),
        host_storage=p.get("host_storage"),
        transform=p.get("transform"),
        pad_value=None if pad is None else _number(pad),
        physical_shape=tuple(int(e) for e in p.get("physical_shape", ())),
    )


def _arg_from(a: dict[str, Any]) -> Arg:
    if "storage" in a:
        return StorageArg(int(a["storage"]))
    if "input" in a:
        return InputArg(str(a["type"]), str(a["input"]))
    return ValueArg(str(a["type"]), _number(a["value"]))


def _step_from(s: dict[str, Any]) -> Step:
    op, phase = s["op"], str(s["phase"])
    match op:
        case "allocate":
            return Allocate(phase, int(s["storage"]))
        case "fill":
            return Fill(phase, int(s["storage"]), _number(s["value"]))
        case "write":
            return Write(phase, int(s["storage"]), str(s["input"]))
        case "read":
            return Read(phase, int(s["storage"]), str(s["output"]))
        case "launch":
            return Launch(
                phase, str(s["function"]), str(s["kernel"]),
                tuple(_arg_from(a) for a in s["args"]),
                tuple(int(g) for g in s["global_size"]),
                tuple(int(g) for g in s["local_size"]),
            )  # fmt: skip
        case "copy_buffer_to_image":
            return CopyBufferToImage(phase, int(s["src"]), int(s["dst"]))
        case "copy_image_to_buffer":
            return CopyImageToBuffer(phase, int(s["src"]), int(s["dst"]))
        case "check":
            return Check(phase, int(s["storage"]), int(s["offset"]), int(s["count"]),
                         str(s["message"]))  # fmt: skip
        case _:
            raise PlanError(f"plan.json: unknown step op {op!r}")


def _check_references(plan: Plan, where: str) -> None:
    count = len(plan.storages)
    names = {p.name for p in plan.params}
    for step in (*plan.prepare, *plan.steps):
        ids = [getattr(step, f) for f in ("storage", "src", "dst") if hasattr(step, f)]
        if isinstance(step, Launch):
            ids += [a.storage for a in step.args if isinstance(a, StorageArg)]
            for a in step.args:
                if isinstance(a, InputArg) and a.input not in names:
                    raise PlanError(f"{where}: kernel {step.kernel} takes unknown input '{a.input}'")
                if not isinstance(a, StorageArg) and a.c_type not in C_SCALARS:
                    raise PlanError(f"{where}: kernel {step.kernel}: unknown C type '{a.c_type}'")
        for index in ids:
            if not 0 <= index < count:
                raise PlanError(f"{where}: a {type(step).__name__} step names storage {index}, "
                                f"but the plan has {count}")  # fmt: skip
        name = step.input if isinstance(step, Write) else step.output if isinstance(step, Read) else None
        if name is not None and name not in names:
            raise PlanError(f"{where}: a {type(step).__name__} step names unknown parameter '{name}'")
