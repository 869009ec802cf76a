"""`xdsl-opt -t opencl`: buffer-level kernels -> OpenCL C (the Adreno texture path).

Input: a module after `apply-layout` and `flatten-buffers` (and usually
`vectorize-texels`). Every `func.func` with a body and without `func.call` is a *kernel*;
functions that call others are host functions (see `runtime/host.py`) and only get a
comment. Output: deterministic OpenCL C 1.2 (same module, byte-identical text).

Kernel ABI
----------
Each parameter of a kernel is one kernel argument, in order:
- a `global`/`shared`/`local`-scope buffer -> `__global T*` (`const` when only read),
  indexed with the row-major flattened index of the accessed buffer plus its
  `layout.decl_buffer` offset (`flatten-buffers` already made it 1-D). A parameter that
  some call in the module may bind to a buffer declared at an element offset
  (`transforms.buffer_aliases.parameters_at_offsets`) takes that offset as one more
  argument, `int NAME_offset`, right after it; the kernel starts with
  `NAME += NAME_offset;` and uses unaligned `vloadN`/`vstoreN` for its vector accesses. A
  texture parameter cannot be bound at an offset (refused);
- a `global.texture*` buffer -> `image2d_t`, `__read_only` or `__write_only` by its use in
  that OpenCL kernel (reading and writing one image in one kernel is refused: OpenCL 1.2
  images are one or the other). The buffer is the 2-D image [rows, cols] of its flattened
  type: physical index [row, col] is texel `(int2)(col / 4, row)`, lane `col % 4`. Reads use
  the sampler `CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST`;
- an `index`/integer/float scalar -> `int`/`long`/`float`/... by value.

f16 runs on every device (docs/f16.md). Storage is always half: a global f16 buffer is
`__global half*`, an f16 texture a `HALF_FLOAT` image (both core OpenCL 1.2). Arithmetic
depends on the target option `fp16` (half arithmetic; default false; it needs the device
extension cl_khr_fp16, which the runtime passes only when asked to, see
`OpenCLRuntime.half_arithmetic`):
- `fp16=false`, f16 as storage only: f16 values are `float` in registers and every one
  holds an f16 value. An op whose f16 result may not be one (arithmetic, math functions,
  `truncf`/`sitofp`/`uitofp` to f16, add/mul reductions: `opencl_c.rounds_to_half`) is
  computed in float and rounded to the nearest half, ties to even, by `px_half_rteN`
  (float arithmetic, no extension); for +, -, *, / and sqrt that is exactly the f16
  result. Buffers are read with `vload_half(N)` and written with `vstore_half(N)_rte`
  (round to nearest even); a `truncf` used only by such stores is rounded by them.
  Textures are read with `read_imagef` and written with `write_imagef` (its float to half
  conversion is exact, the values being halves already). A bitcast of f16, and a truncf
  from f64 to f16 (which would round twice), are refused.
- `fp16=true`: f16 is `half` (`half4` texels read and written with `read_imageh`/
  `write_imageh`), under `#pragma OPENCL EXTENSION cl_khr_fp16 : enable`.
Both give the f16 values the numpy evaluator computes (numpy rounds each f16 operation to
the nearest half) for +, -, *, /, sqrt, comparisons, max/min and conversions; math
functions and fused multiply-adds may differ in the last place. Likewise f64 is `double` and needs cl_khr_fp64 (the program then enables
it with `#pragma OPENCL EXTENSION cl_khr_fp64 : enable`): target option `fp64` (default
true; the runtime passes whether the device reports it); without it any f64 value is
refused with a diagnostic naming the extension, so no program is built for the device.

Texture rules (each refused with a diagnostic naming the parameter or the access): the
element type is f32 or f16; the parameter obeys verify-buffers' texture rules 5-8
(`texture_problem`: the innermost physical extent is 4, a rank-2 texture is taken as an
already flattened image whose column count is a multiple of 4, and the image width
(texels) and height fit `max-image-width` x `max-image-height`: target options, default
16384, the Adreno limit; the runtime passes the real device's limits); a `vector<4xf32>`
(`vector<4xf16>`) load or store covers exactly one texel (its column is provably a multiple of 4), a scalar load
reads one lane; any store that would write only part of a texel (a scalar or narrower
vector store) is refused, since an image write sets all four channels. After these, any
other problem `verify-buffers` finds (e.g. a dead alias that does not fit its storage,
which the emitted C would silently drop) is refused too.

Work-items (see `lowering/opencl_parallel.py` for the proof rule)
-----------------------------------------------------------------
The kernel body is cut into *launches*: each top-level loop op is one OpenCL kernel
(`@f` -> `f`, or `f_0`, `f_1`, ... when there are several), and consecutive top-level
memory ops outside loops form a single-work-item kernel. Launches run in order, as the
body did; a value computed in one launch and used in another is refused, except a
top-level load whose storage no later op (and no earlier op of the single-work-item
launch it would join) stores to: it reads the same value wherever it runs, so it is a
setup value like the pure top-level ops, read by every work-item of each launch that
uses it (a scale factor read once before the parallel nest). In a loop
launch, the band of proven-parallel loops becomes the NDRange: its innermost three loops
with more than one iteration are `get_global_id(0)` (innermost, for coalescing), `(1)`,
`(2)`; outer band loops become C loops inside each work-item; everything below the band
is sequential C (loops, `iter_args` as variables, `scf.if`). A launch whose first loop is
not parallel runs as one work-item.

Supported ops: `arith` and `math` on scalars and vectors (see `opencl_c.py`),
`vector.broadcast/extract/insert/reduction/fma`, `affine.apply/min/max`, `scf.for/if/
parallel/yield`, `affine.for/parallel/yield` with constant or expression bounds,
`layout.load/store/data/decl_buffer`. Anything else is a diagnostic.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.buffer_layout import ImageLimits
from physlayout.dialects.layout import DataOp, DeclBufferOp, LoadOp, StoreOp
from physlayout.lowering.opencl_arith import ArithWriter
from physlayout.lowering.opencl_c import HELPERS, NameTable
from physlayout.lowering.opencl_control import ControlFlowWriter
from physlayout.lowering.opencl_kernels import (
    SAMPLER,
    TEXTURE_STORAGES,
    KernelArg,
    KernelInfo,
    Launch,
    OpenCLProgram,
)
from physlayout.lowering.opencl_memory import MemoryWriter
from physlayout.lowering.opencl_workers import (
    KernelJob,
    Written,
    can_fork,
    worth_forking,
    write_forked,
)
from physlayout.lowering.pipelines import survivors_frozen
from physlayout.transforms.buffer_aliases import BufferAliases, parameters_at_offsets
from physlayout.transforms.diagnostics import require_options
from physlayout.transforms.pass_options import PhyslayoutTarget
from physlayout.transforms.verify_buffers import refuse_invalid_buffers

__all__ = ["ImageLimits", "KernelArg", "KernelInfo", "Launch", "OpenCLProgram", "OpenCLTarget",
           "generate_opencl"]


class _Writer(MemoryWriter, ArithWriter, ControlFlowWriter):
    """The OpenCL writer of one `func.func`: every op family, dispatched by `emit`."""

    def emit(self, op: Operation) -> None:
        writer = _writer_of(type(op))
        if op not in self.emitted and writer is not _Writer.emit_yield:
            return
        writer(self, op)

    def skip(self, op: Operation) -> None:
        """Constants (written inline where used) and declarations write nothing."""


_WRITERS: tuple[tuple[tuple[type[Operation], ...], Callable[[_Writer, Any], None]], ...] = (
    ((arith.ConstantOp, DataOp, DeclBufferOp), _Writer.skip),
    ((LoadOp,), _Writer.emit_load),
    ((StoreOp,), _Writer.emit_store),
    ((scf.ForOp,), _Writer.emit_scf_for),
    ((affine.ForOp,), _Writer.emit_affine_for),
    ((scf.ParallelOp, affine.ParallelOp), _Writer.emit_parallel),
    ((scf.IfOp,), _Writer.emit_if),
    ((scf.YieldOp, affine.YieldOp), _Writer.emit_yield),
)
"""Which `_Writer` method writes which ops (the others are `emit_pure`'s)."""


@cache
def _writer_of(kind: type[Operation]) -> Callable[[_Writer, Any], None]:
    """The method of `_WRITERS` for ops of class `kind`, looked up once per class (an
    `isinstance` chain per op showed in the cost of writing unrolled kernels)."""
    for classes, writer in _WRITERS:
        if issubclass(kind, classes):
            return writer
    return _Writer.emit_pure


# The program ------------------------------------------------------------------------------


_HALF = re.compile(r"\bhalf\d*\b")
"""The `half` types in C text (the names of the writer never look like them)."""


def _is_host(function: func.FuncOp) -> bool:
    return any(isinstance(op, func.CallOp) for op in function.walk())


def generate_opencl(
    module: ModuleOp,
    limits: ImageLimits | None = None,
    fp16: bool = False,
    fp64: bool = True,
    vectorized: bool = False,
    texture_storage: str = "image",
    processes: int = 2,
) -> OpenCLProgram:
    """OpenCL C for every kernel of `module` and the launch plan of each; `fp16`: half
    arithmetic (the device has cl_khr_fp16; without it f16 is storage only, computed in
    float); `fp64`: the device has cl_khr_fp64 (f64 values are refused without it);
    `vectorized`: `vectorize-texels` has run (only the diagnostic of a partial-texel store
    depends on it); `texture_storage`: "image" (`image2d_t`) or "buffer" (a `__global`
    array of the image's texels, `KernelWriter.texture_buffers`); `processes`: 2 lets a
    forked process write some of the kernels of a large module where that is safe
    (`opencl_workers.write_forked`: the same text), 1 writes them all in this process.

    Raises DiagnosticException for anything the target does not support or the texture
    rules forbid. The objects alive when it starts (the module above all) are left out of
    Python's cyclic garbage collections while it writes (`survivors_frozen`): every full
    collection would scan them all (googlenet: 1.1 of 4.9 s).
    """
    with survivors_frozen():
        return _generate(module, limits, fp16, fp64, vectorized, texture_storage, processes)


def _generate(
    module: ModuleOp,
    limits: ImageLimits | None,
    fp16: bool,
    fp64: bool,
    vectorized: bool,
    texture_storage: str,
    processes: int,
) -> OpenCLProgram:
    """`generate_opencl`'s work."""
    limits = limits or ImageLimits()
    if texture_storage not in TEXTURE_STORAGES:
        raise PassFailedException(
            f"opencl: option texture-storage must be {' or '.join(TEXTURE_STORAGES)}, "
            f"got '{texture_storage}'"
        )
    helpers: set[str] = set()
    kernel_names = NameTable(reserved={"main"}, allow_underscores=True)
    kernels: dict[str, KernelInfo] = {}
    bodies: list[str] = []
    aliases = BufferAliases(module)  # one analysis for the offsets and the buffer rules
    offsets = parameters_at_offsets(module, aliases)
    jobs: list[tuple[int, KernelJob]] = []  # (its place in `bodies`, the kernel)
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        name = function.sym_name.data
        if _is_host(function):
            callees = [
                op.callee.root_reference.data for op in function.walk() if isinstance(op, func.CallOp)
            ]
            bodies.append(f"// host function @{name} launches: {', '.join(callees)}\n")
            continue
        offset_params = frozenset(index for callee, index in offsets if callee == name)
        jobs.append((len(bodies), KernelJob(function, offset_params)))
        bodies.append("")

    def write_one(job: KernelJob, helpers: set[str], kernel_names: NameTable) -> Written:
        writer = _Writer(
            job.function, limits, helpers, kernel_names, set(job.offset_params), fp16, fp64,
            vectorized, texture_buffers=texture_storage == "buffer",
        )
        return writer.write()

    checked: list[Exception | None] = []  # what checking the buffers raised, once checked

    def check_buffers() -> None:
        try:
            refuse_invalid_buffers("opencl", module, limits.max_width, limits.max_height, aliases)
        except Exception as error:
            checked.append(error)
            return
        checked.append(None)

    kernel_jobs = [job for _, job in jobs]
    written = None
    if processes > 1 and worth_forking(kernel_jobs) and can_fork():
        # the buffers are checked while the child writes; raised after the kernels, as below
        written = write_forked(kernel_jobs, write_one, helpers, kernel_names, check_buffers)
    if written is None:
        written = [write_one(job, helpers, kernel_names) for job in kernel_jobs]
    uses_double = False
    uses_half = False
    for (place, job), (lines, info) in zip(jobs, written, strict=True):
        bodies[place] = "\n".join(lines)
        kernels[job.function.sym_name.data] = info
        uses_double |= any(" double" in line or "(double" in line for line in lines)
        uses_half |= any(_HALF.search(line) for line in lines)
    preamble = [
        "// Generated by physlayout -t opencl (OpenCL C 1.2).",
        "#pragma OPENCL FP_CONTRACT OFF",
    ]
    if uses_double:
        preamble.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if uses_half and fp16:
        preamble.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
    if any(k.kind == "texture" for info in kernels.values() for k in info.args):
        preamble.append(f"__constant sampler_t px_sampler = {SAMPLER};")
    for helper, text in HELPERS.items():
        if helper in helpers:
            preamble.append(text)
    source = "\n".join(preamble) + "\n\n" + "\n".join(bodies)
    if not checked:
        check_buffers()
    if checked[0] is not None:
        raise checked[0]
    return OpenCLProgram(source, kernels, texture_storage)


@dataclass(frozen=True)
class OpenCLTarget(PhyslayoutTarget):
    """`-t opencl{max-image-width=W max-image-height=H fp16=false fp64=true
    texture-storage=image}`: OpenCL C for the kernels (`fp16=true`: half arithmetic, for a
    device with cl_khr_fp16; `fp64=false`: the device lacks cl_khr_fp64;
    `texture-storage=buffer`: textures as `__global` arrays of texels, for devices that
    emulate images in software)."""

    name = "opencl"

    max_image_width: int = 16384
    max_image_height: int = 16384
    fp16: bool = False
    fp64: bool = True
    texture_storage: str = "image"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        require_options(
            self.name, max_image_width=self.max_image_width, max_image_height=self.max_image_height
        )
        limits = ImageLimits(self.max_image_width, self.max_image_height)
        program = generate_opencl(
            module, limits, self.fp16, self.fp64, texture_storage=self.texture_storage
        )
        output.write(program.source)
