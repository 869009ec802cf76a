"""The launch plan: everything a host program does to run one compiled function on an
OpenCL device, as data (docs/deploy.md; JSON Schema `docs/plan.schema.json`).

A `Plan` holds
- `storages`: every device buffer and image (element type, physical shape, scope, bytes;
  images are `CL_RGBA` of `CL_FLOAT` or `CL_HALF_FLOAT`, width = cols / 4, height = rows
  of the flattened [rows, cols] texture);
- `steps`, in order, each in a phase: `input` (allocate the parameters, write the caller's
  data, relayout it), `body` (the host function: allocations filled with zeros, kernel
  launches with their argument bindings, global and local sizes) and `output` (relayout
  back, read the results); a fill that the next launch touching its storage overwrites
  whole, unread, is left out (`plan_builder.dead_fills`);
- `prepare`: the steps run once before the first run: for an entry that
  `lift-transform-params` split, the input steps of its parameters and `@ENTRY_prepare`
  (phase `prepare`: the prepared storages, its allocations and launches);
- `params`: the entry's parameters with their direction (`in`, `out`, `inout`: whether
  some launch reads / writes their storage), the shape and layout in which the caller
  gives and gets them;
- `requirements`: the device extensions the kernels enable, image support and the largest
  image the plan uses.

`runtime/plan_builder.py` builds plans from compiled modules; the Python runtime
(`runtime/host.py`) executes them; the generated C host (`runtime/host_c.py`) executes the
same plan compiled into tables; `runtime/plan_json.py` writes and reads plan.json. This
module is data only: reading an artifact needs no compiler.

Layouts at the boundary (`io_layout`): `physical` plans take every buffer in its physical
layout (the transformed shape, padding included; a texture's rows and columns): the
caller converts, as `physlayout run FILE.mlir` does on the host with numpy. `logical`
plans take buffers in the entry's logical layout: a parameter with pending transforms
gets a logical staging buffer and the boundary kernels of `runtime/boundary.py` (fill the
padding with the pad value, scatter into the physical layout, copy to the image for a
texture; and back after the body). An `out` parameter is not an input: it starts filled
with its pad value (0 without one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from physlayout.runtime.device import OpenCLRuntimeError

PLAN_SCHEMA = "physlayout-plan"
PLAN_VERSION = 1
"""The plan schema's version: a reader refuses any other."""

C_SCALARS: dict[str, str] = {
    "int": "int32", "long": "int64", "float": "float32", "double": "float64",
    "short": "int16", "char": "int8", "uint": "uint32", "ulong": "uint64",
    "ushort": "uint16", "uchar": "uint8", "half": "float16",
}  # fmt: skip
"""The numpy dtype of each C type a scalar kernel argument may have."""


def artifact_line(artifact_id: str) -> str:
    """The first line of an artifact's kernels.cl: the artifact's id and plan schema version
    (the Python runner and the C host refuse a kernels.cl of another artifact)."""
    return f"// physlayout artifact {artifact_id} (plan schema {PLAN_VERSION})"


class PlanError(OpenCLRuntimeError):
    """A plan that cannot be read or run: another schema version, a missing field, a
    kernel its kernels.cl lacks, a device without what it requires."""


# The plan ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Storage:
    """A device buffer (`kind` "buffer", shape [elements]) or RGBA image (`kind` "image",
    shape [rows, cols]: width cols / 4 texels, height rows)."""

    name: str
    kind: str
    scope: str
    element_type: str
    dtype: str
    shape: tuple[int, ...]
    role: str
    """`param` (a parameter's storage), `staging` (a boundary buffer), `allocation`, or
    `prepared` (a value `@ENTRY_prepare` makes once, which the body reads)."""

    @property
    def elements(self) -> int:
        """The number of elements."""
        return prod(self.shape)

    @property
    def bytes(self) -> int:
        """The bytes of device memory (a buffer has at least one element)."""
        return max(1, self.elements) * np.dtype(self.dtype).itemsize

    @property
    def image_size(self) -> tuple[int, int]:
        """Images: (width, height) in texels."""
        rows, cols = self.shape
        return cols // 4, rows

    @property
    def channel_type(self) -> str:
        """Images: the OpenCL channel type of the texels."""
        return "CL_HALF_FLOAT" if self.dtype == "float16" else "CL_FLOAT"


@dataclass(frozen=True)
class StorageArg:
    """A buffer or image kernel argument."""

    storage: int


@dataclass(frozen=True)
class ValueArg:
    """A scalar kernel argument known when the plan is built."""

    c_type: str
    value: int | float


@dataclass(frozen=True)
class InputArg:
    """A scalar kernel argument: the value of scalar parameter `input`."""

    c_type: str
    input: str


Arg = StorageArg | ValueArg | InputArg


@dataclass(frozen=True)
class Allocate:
    """Device memory for the storage (`clCreateBuffer` / `clCreateImage`)."""

    phase: str
    storage: int


@dataclass(frozen=True)
class Fill:
    """Every element of the storage (every channel of every texel) set to `value`."""

    phase: str
    storage: int
    value: int | float


@dataclass(frozen=True)
class Write:
    """The caller's data of parameter `input` copied to the storage."""

    phase: str
    storage: int
    input: str


@dataclass(frozen=True)
class Read:
    """The storage copied back to the caller as parameter `output`."""

    phase: str
    storage: int
    output: str


@dataclass(frozen=True)
class Launch:
    """One NDRange launch of `kernel` (a kernel of function `function`)."""

    phase: str
    function: str
    kernel: str
    args: tuple[Arg, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    """The work-group shape for a device that allows 256 work-items per group
    (`work_group_shape`); a device (or kernel) that allows fewer uses
    `work_group_shape(global_size, its limit)`."""


@dataclass(frozen=True)
class CopyBufferToImage:
    """The whole image `dst` from buffer `src` (its rows x cols elements, row-major)."""

    phase: str
    src: int
    dst: int


@dataclass(frozen=True)
class CopyImageToBuffer:
    """The whole image `src` into buffer `dst` (rows x cols elements, row-major)."""

    phase: str
    src: int
    dst: int


@dataclass(frozen=True)
class Check:
    """`layout.check`: after the launches so far, read `count` integer flags of buffer
    `storage` from element `offset` on; the run fails with `message` unless all are
    non-zero."""

    phase: str
    storage: int
    offset: int
    count: int
    message: str


Step = Allocate | Fill | Write | Read | Launch | CopyBufferToImage | CopyImageToBuffer | Check


@dataclass(frozen=True)
class PlanParam:
    """A parameter of the entry function as the caller sees it."""

    name: str
    index: int
    kind: str
    """`buffer` or `scalar`."""
    direction: str
    """`in`, `out` or `inout` (scalars are `in`)."""
    element_type: str
    dtype: str
    shape: tuple[int, ...]
    """The shape of the caller's array: the logical shape, or the transformed shape
    (padding included) when `layout` is `physical`; () for scalars."""
    layout: str
    """`logical` or `physical`."""
    storage: int | None = None
    """The parameter's device storage (in its physical layout)."""
    host_storage: int | None = None
    """The storage the caller's data is written to and read from."""
    transform: str | None = None
    """The composed index map of the parameter's transforms (None: none)."""
    pad_value: int | float | None = None
    physical_shape: tuple[int, ...] = ()
    """The transformed shape (the logical shape without transforms)."""


@dataclass(frozen=True)
class Requirements:
    """What a device must offer to run the plan."""

    extensions: tuple[str, ...] = ()
    image_support: bool = False
    max_image_width: int = 0
    """The widest image of the plan (texels); 0 without images."""
    max_image_height: int = 0


@dataclass(frozen=True)
class Plan:
    """A compiled function's launch plan (see the module docstring)."""

    entry: str
    level: str
    """`buffer` (buffer-level source) or `graph` (graph-level source)."""
    io_layout: str
    storages: tuple[Storage, ...]
    params: tuple[PlanParam, ...]
    steps: tuple[Step, ...]
    requirements: Requirements
    prepare: tuple[Step, ...] = ()
    """Steps run once before the first run: the parameters' input steps and
    `@ENTRY_prepare` of an entry `lift-transform-params` split (else none)."""
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """How the artifact was compiled (pipeline, image limits, fp16/fp64)."""
    artifact_id: str = ""
    """The artifact's id (a hash of its plan and kernels; empty for a plan not saved)."""

    @property
    def kernels(self) -> tuple[str, ...]:
        """Every kernel the plan launches, in first-launch order."""
        names: dict[str, None] = {}
        for step in (*self.prepare, *self.steps):
            if isinstance(step, Launch):
                names[step.kernel] = None
        return tuple(names)

    @property
    def inputs(self) -> tuple[PlanParam, ...]:
        """The parameters the caller gives (`in`, `inout`)."""
        return tuple(p for p in self.params if p.direction != "out")

    @property
    def outputs(self) -> tuple[PlanParam, ...]:
        """The buffer parameters the caller gets back (`out`, `inout`)."""
        return tuple(p for p in self.params if p.direction != "in")

    def param(self, name: str) -> PlanParam:
        """The parameter `name`."""
        for param in self.params:
            if param.name == name:
                return param
        raise PlanError(f"the plan has no parameter '{name}'")


# Building ---------------------------------------------------------------------------------


def c_scalar(
    value: Any, c_type: str, function: str, name: str, type_: str | None = None
) -> int | float:
    """`value` as the C type `c_type` of a scalar kernel argument (of MLIR type `type_`);
    an integer that does not fit it (an `index` value beyond the kernels' 32-bit `int`) is
    refused, never wrapped."""
    dtype = np.dtype(C_SCALARS[c_type])
    if dtype.kind in "iu":
        limits = np.iinfo(dtype)
        if not limits.min <= int(value) <= limits.max:
            raise OpenCLRuntimeError(
                f"@{function}: argument %{name}: {value} does not fit the kernel's "
                f"{c_type} ({type_ or c_type} values are {c_type} in OpenCL kernels)"
            )
        return int(value)
    return float(np.asarray(value, dtype=dtype).item())
