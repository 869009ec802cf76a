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

Texture rules (each refused with a diagnostic naming the parameter or the access): the
element type is f32; the parameter obeys verify-buffers' texture rules 5-8
(`texture_problem`: the innermost physical extent is 4, a rank-2 texture is taken as an
already flattened image whose column count is a multiple of 4, and the image width
(texels) and height fit `max-image-width` x `max-image-height`: target options, default
16384, the Adreno limit; the runtime passes the real device's limits); a `vector<4xf32>` load or
store covers exactly one texel (its column is provably a multiple of 4), a scalar load
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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO

from xdsl.context import Context
from xdsl.dialects import affine, arith, func, scf, vector
from xdsl.dialects.builtin import IndexType, ModuleOp, VectorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from physlayout.dialects.buffer_layout import (
    TEXEL_LANES,
    flattened_type,
    flattening_separators,
    image_size,
)
from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    DataOp,
    DeclBufferOp,
    LoadOp,
    PtrType,
    StoreOp,
    is_texture_scope,
)
from physlayout.indexing.index_exprs import IndexAnalysis, from_affine_expr
from physlayout.indexing.index_map import flatten_exprs
from physlayout.indexing.quasi_affine import Const, Dim, Expr, FloorDiv, Mod, simplify
from physlayout.lowering.opencl_c import (
    HELPERS,
    NameTable,
    c_type,
    constant_literal,
    index_c,
    lane_suffix,
    op_expression,
)
from physlayout.lowering.opencl_parallel import LOOPS, BandDim, is_pure_op, parallel_band
from physlayout.transforms.buffer_aliases import (
    buffer_root,
    parameters_at_offsets,
    trace_declarations,
)
from physlayout.transforms.verify_buffers import refuse_invalid_buffers, texture_problem

SAMPLER = "CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST"

INDEX_OPS: frozenset[str] = frozenset(
    {
        "arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi",
        "arith.floordivsi", "arith.ceildivsi", "affine.apply",
    }
)  # fmt: skip
"""Index ops printed from their quasi-affine expression."""

_MAX_ELEMENTS = 2**31 - 1


@dataclass(frozen=True)
class ImageLimits:
    """The largest 2-D image (in texels) the device accepts."""

    max_width: int = 16384
    max_height: int = 16384


@dataclass(frozen=True)
class KernelArg:
    """One argument of a kernel (one parameter of the `func.func`)."""

    name: str
    """The C name."""
    kind: str
    """'global', 'texture' or 'scalar'."""
    type: Attribute
    """The parameter's type (after the passes)."""
    c_type: str
    """The element type (buffers) or value type (scalars) in C."""
    physical_shape: tuple[int, ...] = ()
    """Buffers: the flattened physical shape ([rows, cols] for textures)."""
    read: bool = False
    written: bool = False
    offset_argument: bool = False
    """Global buffers: the kernel takes the buffer's element offset in its storage as an
    extra `int` argument right after it (some call may pass a view at an offset)."""

    @property
    def image_size(self) -> tuple[int, int]:
        """Textures: (width, height) in texels."""
        assert isinstance(self.type, BufferType)
        return image_size(self.type)


@dataclass(frozen=True)
class Launch:
    """One OpenCL kernel of a function and its NDRange (dimension 0 first)."""

    kernel: str
    global_size: tuple[int, ...]
    work_item_loops: tuple[str, ...] = ()
    """The C names of the loop variables mapped to get_global_id(0), (1), (2)."""


@dataclass(frozen=True)
class KernelInfo:
    """A kernel function: its arguments and the launches that execute its body."""

    name: str
    args: tuple[KernelArg, ...]
    launches: tuple[Launch, ...]


@dataclass(frozen=True)
class OpenCLProgram:
    """The generated source and what the runtime needs to launch it."""

    source: str
    kernels: dict[str, KernelInfo]


def fail(where: str, message: str) -> DiagnosticException:
    return DiagnosticException(f"opencl: {where}: {message}")


# Buffers --------------------------------------------------------------------------------


@dataclass
class _BufferArg:
    """A buffer parameter and how accesses reach it."""

    index: int
    value: BlockArgument
    type: BufferType
    name: str
    texture: bool
    flat_shape: tuple[int, ...]
    offset_name: str | None = None
    """The C name of the element-offset argument, for parameters that callers may bind
    to a view at an offset."""


def _trace(buffer: SSAValue, where: str) -> tuple[BlockArgument, int]:
    """The kernel parameter a buffer value is declared over, and the element offset."""
    root, offset = trace_declarations(buffer)
    if isinstance(root, BlockArgument) and isinstance(root.type, BufferType):
        return root, offset
    raise fail(
        where,
        "a buffer that is not declared over a kernel parameter (allocations inside kernels "
        "are not supported; allocate in the host function)",
    )


def _stored_roots(op: Operation) -> set[SSAValue]:
    return {buffer_root(s.buffer) for s in op.walk() if isinstance(s, StoreOp)}


def _roots_stored_after(ops: Sequence[Operation]) -> dict[Operation, set[SSAValue]]:
    """For each top-level op, the storage roots stored to by the top-level ops after it."""
    after: dict[Operation, set[SSAValue]] = {}
    stored: set[SSAValue] = set()
    for op in reversed(ops):
        after[op] = set(stored)
        stored |= _stored_roots(op)
    return after


def _is_invariant_load(
    load: LoadOp, stored_later: set[SSAValue], open_segment: _Segment | None
) -> bool:
    """A top-level load whose storage nothing stores to from its position until the end
    of the kernel (launches run in order, so stores of earlier launches are visible; a
    store earlier in the single-work-item launch it would join is not, so that keeps it
    there). Its value is then the same wherever it is read: it is a setup value, read by
    each work-item of every launch that uses it."""
    root = buffer_root(load.buffer)
    if root in stored_later:
        return False
    return open_segment is None or all(root not in _stored_roots(op) for op in open_segment.ops)


def _texture_shape(arg: BufferType, where: str, limits: ImageLimits) -> tuple[int, int]:
    """Check the texture rules of a parameter type (verify-buffers' rules 5-8 with the
    device limits; this target also needs f32 channels); its image [rows, cols]."""
    if str(arg.element_type) != "f32":
        raise fail(
            where,
            f"texture element type must be f32 (image2d_t with RGBA FLOAT texels), "
            f"got {arg.element_type}",
        )
    problem = texture_problem(arg, limits.max_width, limits.max_height)
    if problem is not None:
        raise fail(where, f"the texture {problem}")
    rows, cols = flattened_type(arg).get_shape()
    return rows, cols


# The kernel writer ------------------------------------------------------------------------


@dataclass
class _Segment:
    """Top-level ops of a kernel executed by one OpenCL kernel launch."""

    ops: list[Operation]
    loop: bool


@dataclass
class _Writer:
    """Writes the OpenCL kernels of one `func.func`."""

    function: func.FuncOp
    limits: ImageLimits
    helpers: set[str]
    kernel_names: NameTable
    offset_params: set[int] = field(default_factory=set[int])
    """Indices of the buffer parameters that callers may bind to views at an offset."""
    names: NameTable = field(default_factory=NameTable)
    c_names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    buffers: dict[BlockArgument, _BufferArg] = field(default_factory=dict[BlockArgument, _BufferArg])
    analysis: IndexAnalysis = field(default_factory=IndexAnalysis)
    lines: list[str] = field(default_factory=list[str])
    depth: int = 0
    reads: set[BlockArgument] = field(default_factory=set[BlockArgument])
    writes: set[BlockArgument] = field(default_factory=set[BlockArgument])
    emitted: set[Operation] = field(default_factory=set[Operation])
    carried: list[list[str]] = field(default_factory=list[list[str]])
    launch_reads: set[BlockArgument] = field(default_factory=set[BlockArgument])
    launch_writes: set[BlockArgument] = field(default_factory=set[BlockArgument])

    @property
    def where(self) -> str:
        return f"@{self.function.sym_name.data}"

    def at(self, op: Operation) -> str:
        return f"{self.where}: '{op.name}'"

    # Lines ------------------------------------------------------------------------------

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def open(self, text: str) -> None:
        self.line(text + " {")
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1
        self.line("}")

    # Values -----------------------------------------------------------------------------

    def name_of(self, value: SSAValue, fallback: str = "v") -> str:
        name = self.c_names.get(value)
        if name is None:
            name = self.names.fresh(value.name_hint, fallback)
            self.c_names[value] = name
        return name

    def expr(self, value: SSAValue) -> str:
        """The C expression of an SSA value (constants inline, others by name)."""
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return constant_literal(owner.value, value.type, self.at(owner))
        if value in self.c_names:
            return self.c_names[value]
        raise fail(self.where, f"internal: value {value} used before it was emitted")

    def index(self, expr: Expr) -> str:
        leaves = {name: self.expr(value) for name, value in self.analysis.leaves.items()
                  if name in expr.dims()}
        return index_c(expr, leaves, self.analysis.bounds, self.helpers)

    def describe(self, expr: Expr) -> str:
        """`expr` with its leaves named as in the C code (for diagnostics)."""
        names = {n: Dim(self.expr(v)) for n, v in self.analysis.leaves.items() if n in expr.dims()}
        return str(expr.substitute(names))

    def index_exprs(self, op: LoadOp | StoreOp) -> list[Expr]:
        return [simplify(self.analysis.expr_of(i), self.analysis.bounds) for i in op.indices]

    # Parameters -------------------------------------------------------------------------

    def parameters(self) -> list[tuple[BlockArgument, str]]:
        entry = self.function.body.blocks[0]
        params: list[tuple[BlockArgument, str]] = []
        for arg in entry.args:
            where = f"{self.where}: parameter %{arg.name_hint or arg.index}"
            name = self.name_of(arg, "arg")
            params.append((arg, name))
            if isinstance(arg.type, BufferType):
                self._buffer_param(arg, name, where)
            elif isinstance(arg.type, PtrType | VectorType) or c_type(arg.type, where) == "bool":
                raise fail(where, f"unsupported kernel parameter type {arg.type}")
        return params

    def _buffer_param(self, arg: BlockArgument, name: str, where: str) -> None:
        buffer_type = arg.type
        assert isinstance(buffer_type, BufferType)
        if buffer_type.get_transforms():
            raise fail(where, f"{buffer_type} still has a pending transform; run apply-layout")
        if isinstance(buffer_type.element_type, VectorType):
            raise fail(where, f"buffers of vectors ({buffer_type}) are not supported")
        c_type(buffer_type.element_type, where)
        if buffer_type.num_elements() > _MAX_ELEMENTS:
            raise fail(where, f"{buffer_type} has more than 2^31 - 1 elements")
        texture = is_texture_scope(buffer_type.get_scope())
        flat = (
            _texture_shape(buffer_type, where, self.limits)
            if texture
            else (buffer_type.num_elements(),)
        )
        offset_name = None
        if arg.index in self.offset_params:
            if texture:
                raise fail(
                    where,
                    "a call may bind this texture to a buffer at an element offset, but an "
                    "image2d_t starts at its first texel (declare texture views at offset 0)",
                )
            offset_name = f"{name}_offset"
            self.names.used.add(offset_name)
        self.buffers[arg] = _BufferArg(
            arg.index, arg, buffer_type, name, texture, flat, offset_name
        )

    # Segments ---------------------------------------------------------------------------

    def segments(self) -> tuple[list[Operation], list[_Segment]]:
        entry = self.function.body.blocks[0]
        for op in self.function.walk():
            if isinstance(op, AllocateOp):
                raise fail(
                    self.at(op),
                    "allocations inside kernels are not supported; allocate in the host "
                    "function and pass the buffer",
                )
        setup: list[Operation] = []
        segments: list[_Segment] = []
        stored_later = _roots_stored_after(list(entry.ops))
        for op in entry.ops:
            if isinstance(op, func.ReturnOp):
                if op.operands:
                    raise fail(self.at(op), "kernels return nothing (write results to buffers)")
                continue
            if isinstance(op, func.CallOp):
                raise fail(self.at(op), "calls are not supported inside kernels")
            open_segment = segments[-1] if segments and not segments[-1].loop else None
            if isinstance(op, LOOPS):
                segments.append(_Segment([op], loop=True))
            elif is_pure_op(op) or (
                isinstance(op, LoadOp)
                and _is_invariant_load(op, stored_later[op], open_segment)
            ):
                setup.append(op)
            elif open_segment is not None:
                segments[-1].ops.append(op)
            else:
                segments.append(_Segment([op], loop=False))
        self._check_separate(segments)
        return setup, segments

    def _check_separate(self, segments: list[_Segment]) -> None:
        """Launches only share buffers: no SSA value flows out of a launch."""
        entry = self.function.body.blocks[0]
        for segment in segments:
            for top in segment.ops:
                for op in top.walk():
                    for use in (u for r in op.results for u in r.uses):
                        user = entry.find_ancestor_op_in_block(use.operation)
                        if user is None or user in segment.ops:
                            continue
                        why = "launches only share buffers"
                        if op is top and isinstance(op, LoadOp):
                            why = (
                                "a top-level load is re-read by the launches that use it "
                                "only when no store to its storage follows it"
                            )
                        raise fail(
                            self.at(op),
                            f"its result is used by '{use.operation.name}' outside the "
                            f"kernel launch that computes it; {why}",
                        )

    # Needed ops -------------------------------------------------------------------------

    def deps(self, op: Operation) -> Iterable[SSAValue]:
        if isinstance(op, LoadOp | StoreOp):
            exprs = self.index_exprs(op)
            names = {n for e in exprs for n in e.dims()}
            yield from (self.analysis.leaves[n] for n in sorted(names))
            if isinstance(op, StoreOp):
                yield op.value
            return
        expr = self.index_expr(op)
        if expr is not None:
            yield from (self.analysis.leaves[n] for n in sorted(expr.dims()))
            return
        yield from op.operands

    def index_expr(self, op: Operation) -> Expr | None:
        """The quasi-affine expression of an index op's result, when the analysis sees
        through the op (None for ops it keeps opaque, e.g. a product of two variables)."""
        if op.name not in INDEX_OPS or not isinstance(op.results[0].type, IndexType):
            return None
        result = op.results[0]
        expr = self.analysis.expr_of(result)
        if isinstance(expr, Dim) and self.analysis.leaves[expr.name] is result:
            return None
        return expr

    def mark_needed(self, roots: Iterable[Operation]) -> None:
        stack = list(roots)
        while stack:
            op = stack.pop()
            if op in self.emitted:
                continue
            self.emitted.add(op)
            for value in self.deps(op):
                owner = value.owner
                if isinstance(owner, Operation) and not isinstance(owner, (*LOOPS, scf.IfOp)):
                    stack.append(owner)

    @staticmethod
    def roots(ops: Sequence[Operation]) -> list[Operation]:
        found: list[Operation] = []
        for top in ops:
            for op in top.walk():
                if isinstance(op, LoadOp) or (
                    is_pure_op(op) and not isinstance(op, scf.YieldOp | affine.YieldOp)
                ):
                    continue
                found.append(op)
        return found

    # Kernels ----------------------------------------------------------------------------

    def write(self) -> tuple[list[str], KernelInfo]:
        params = self.parameters()
        setup, segments = self.segments()
        base = self.function.sym_name.data
        kernel_lines: list[str] = []
        launches: list[Launch] = []
        for k, segment in enumerate(segments):
            hint = base if len(segments) == 1 else f"{base}_{k}"
            kernel = self.kernel_names.fresh(hint, "kernel")
            text, launch = self.write_segment(kernel, params, setup, segment)
            kernel_lines.extend(text)
            launches.append(launch)
        args = tuple(self.kernel_arg(arg, name) for arg, name in params)
        return kernel_lines, KernelInfo(base, args, tuple(launches))

    def kernel_arg(self, arg: BlockArgument, name: str) -> KernelArg:
        buffer = self.buffers.get(arg)
        if buffer is None:
            return KernelArg(name, "scalar", arg.type, c_type(arg.type, self.where))
        assert isinstance(arg.type, BufferType)
        return KernelArg(
            name,
            "texture" if buffer.texture else "global",
            arg.type,
            c_type(arg.type.element_type, self.where),
            buffer.flat_shape,
            arg in self.reads,
            arg in self.writes,
            buffer.offset_name is not None,
        )

    def write_segment(
        self,
        kernel: str,
        params: list[tuple[BlockArgument, str]],
        setup: list[Operation],
        segment: _Segment,
    ) -> tuple[list[str], Launch]:
        self.lines, self.depth, self.emitted = [], 1, set()
        self.launch_reads, self.launch_writes = set(), set()
        band = parallel_band(segment.ops[0]) if segment.loop else []
        self.mark_needed(self.roots(segment.ops))
        for buffer in self.buffers.values():
            if buffer.offset_name is not None:
                self.line(f"{buffer.name} += {buffer.offset_name};")
        gids = [d for d in band if d.trip_count > 1][-3:]
        gid_names: list[str] = []
        for position, dim in enumerate(reversed(gids)):
            name = self.name_of(dim.iv, "i")
            gid_names.append(name)
            gid = f"(int)get_global_id({position})"
            if dim.step != 1:
                gid = f"{gid} * {dim.step}"
            if dim.lower:
                gid = f"{dim.lower} + {gid}"
            self.line(f"int {name} = {gid};")
        for op in setup:
            self.emit(op)
        if band:
            self.write_band(band, gids)
        else:
            for op in segment.ops:
                self.emit(op)
        for arg in sorted(self.launch_reads & self.launch_writes, key=lambda a: a.index):
            if self.buffers[arg].texture:
                raise fail(
                    self.where,
                    f"texture %{self.buffers[arg].name} is both read and written by kernel "
                    f"'{kernel}'; an OpenCL 1.2 image is read-only or write-only in a kernel",
                )
        self.reads |= self.launch_reads
        self.writes |= self.launch_writes
        text = [*self.header(kernel, params), *self.lines, "}", ""]
        size = tuple(d.trip_count for d in reversed(gids)) or (1,)
        return text, Launch(kernel, size, tuple(gid_names))

    def header(self, kernel: str, params: list[tuple[BlockArgument, str]]) -> list[str]:
        parts: list[str] = []
        for arg, name in params:
            buffer = self.buffers.get(arg)
            if buffer is None:
                parts.append(f"{c_type(arg.type, self.where)} {name}")
            elif buffer.texture:
                qualifier = "__write_only" if arg in self.launch_writes else "__read_only"
                parts.append(f"{qualifier} image2d_t {name}")
            else:
                element = c_type(buffer.type.element_type, self.where)
                const = "" if arg in self.launch_writes else "const "
                parts.append(f"__global {const}{element}* {name}")
                if buffer.offset_name is not None:
                    parts.append(f"int {buffer.offset_name}")
        one_line = f"__kernel void {kernel}({', '.join(parts)}) {{"
        if len(one_line) <= 100:
            return [one_line]
        return [f"__kernel void {kernel}(", *[f"    {p}," for p in parts[:-1]], f"    {parts[-1]}) {{"]

    def write_band(self, band: list[BandDim], gids: list[BandDim]) -> None:
        loops: list[Operation] = []
        for dim in band:
            if not loops or loops[-1] is not dim.loop:
                loops.append(dim.loop)
        opened = 0
        for position, loop in enumerate(loops):
            for dim in (d for d in band if d.loop is loop):
                if dim in gids:
                    continue
                name = self.name_of(dim.iv, "i")
                if dim.trip_count == 1:
                    self.line(f"int {name} = {dim.lower};")
                    continue
                self.open(
                    f"for (int {name} = {dim.lower}; {name} < {dim.upper}; {name} += {dim.step})"
                )
                opened += 1
            block = loop.regions[0].blocks[0]
            inner = loops[position + 1] if position + 1 < len(loops) else None
            for op in block.ops:
                if op is inner or op is block.last_op:
                    continue
                self.emit(op)
        for _ in range(opened):
            self.close()

    # Ops --------------------------------------------------------------------------------

    def emit_block(self, block: Block) -> None:
        for op in block.ops:
            self.emit(op)

    def emit(self, op: Operation) -> None:
        if op not in self.emitted and not isinstance(op, scf.YieldOp | affine.YieldOp):
            return
        match op:
            case arith.ConstantOp() | DataOp() | DeclBufferOp():
                return
            case LoadOp():
                self.emit_load(op)
            case StoreOp():
                self.emit_store(op)
            case scf.ForOp():
                self.emit_scf_for(op)
            case affine.ForOp():
                self.emit_affine_for(op)
            case scf.ParallelOp() | affine.ParallelOp():
                self.emit_parallel(op)
            case scf.IfOp():
                self.emit_if(op)
            case scf.YieldOp() | affine.YieldOp():
                self.emit_yield(op)
            case _:
                self.emit_pure(op)

    def declare(self, value: SSAValue, text: str, where: str) -> None:
        name = self.name_of(value)
        self.line(f"{c_type(value.type, where)} {name} = {text};")

    def emit_pure(self, op: Operation) -> None:
        where = self.at(op)
        if op.regions or not is_pure_op(op) or len(op.results) != 1:
            raise fail(where, "operation is not supported by the OpenCL target")
        result = op.results[0]
        expr = self.index_expr(op)
        if expr is not None:
            self.declare(result, self.index(simplify(expr, self.analysis.bounds)), where)
            return
        if op.name in ("arith.floordivsi", "arith.ceildivsi"):
            helper = "px_floordiv" if op.name == "arith.floordivsi" else "px_ceildiv"
            self.helpers.add(helper)
            operands = ", ".join(self.expr(v) for v in op.operands)
            self.declare(result, f"{helper}({operands})", where)
            return
        if op.name in ("affine.min", "affine.max"):
            self.declare(result, self.affine_bound(op, op.name == "affine.min"), where)
            return
        if isinstance(op, vector.ExtractOp | vector.InsertOp | vector.ReductionOp):
            self.emit_vector(op, where)
            return
        if isinstance(op, arith.SelectOp) and isinstance(op.cond.type, VectorType):
            raise fail(where, "selects with a vector condition are not supported")
        if op.name in ("arith.cmpi", "arith.cmpf") and isinstance(op.operands[0].type, VectorType):
            raise fail(where, "vector comparisons are not supported")
        text = op_expression(op, [self.expr(v) for v in op.operands], where)
        if text is None:
            raise fail(where, "operation is not supported by the OpenCL target")
        self.declare(result, text, where)

    def affine_bound(self, op: Operation, is_min: bool) -> str:
        amap = op.properties["map"]
        results = amap.data.results  # type: ignore[attr-defined]
        num_dims = amap.data.num_dims  # type: ignore[attr-defined]
        texts = [self.affine_expr(e, list(op.operands), num_dims, op) for e in results]
        fn = "min" if is_min else "max"
        text = texts[0]
        for other in texts[1:]:
            text = f"{fn}({text}, {other})"
        return text

    def affine_expr(
        self, expr: AffineExpr, operands: list[SSAValue], num_dims: int, op: Operation
    ) -> str:
        values = [self.analysis.expr_of(v) for v in operands]
        converted = from_affine_expr(expr, values[:num_dims], values[num_dims:])
        if converted is None:
            raise fail(self.at(op), f"unsupported affine expression {expr}")
        return self.index(simplify(converted, self.analysis.bounds))

    def emit_vector(
        self, op: vector.ExtractOp | vector.InsertOp | vector.ReductionOp, where: str
    ) -> None:
        if isinstance(op, vector.ReductionOp):
            self.declare(op.results[0], self.reduction(op, where), where)
            return
        positions = list(op.static_position.get_values())
        if op.dynamic_position or len(positions) != 1:
            raise fail(where, "only static positions in 1-D vectors are supported")
        if isinstance(op, vector.ExtractOp):
            self.declare(op.result, f"{self.expr(op.vector)}{lane_suffix(positions[0])}", where)
            return
        name = self.name_of(op.result)
        self.line(f"{c_type(op.result.type, where)} {name} = {self.expr(op.dest)};")
        self.line(f"{name}{lane_suffix(positions[0])} = {self.expr(op.source)};")

    def reduction(self, op: vector.ReductionOp, where: str) -> str:
        kind = str(op.kind.data.value)
        source = op.vector
        assert isinstance(source.type, VectorType)
        lanes = [f"{self.expr(source)}{lane_suffix(k)}" for k in range(source.type.get_shape()[0])]
        if op.acc is not None:
            lanes.append(self.expr(op.acc))
        if kind in ("add", "mul"):
            return (" + " if kind == "add" else " * ").join(lanes)
        calls = {"maxnumf": "fmax", "maximumf": "fmax", "minnumf": "fmin", "minimumf": "fmin"}
        if kind not in calls:
            raise fail(where, f"unsupported reduction kind '{kind}'")
        text = lanes[0]
        for lane in lanes[1:]:
            text = f"{calls[kind]}({text}, {lane})"
        return text

    # Memory -----------------------------------------------------------------------------

    def access_target(self, op: LoadOp | StoreOp) -> tuple[_BufferArg, BufferType, int]:
        where = self.at(op)
        param, offset = _trace(op.buffer, where)
        buffer = self.buffers.get(param)
        if buffer is None:
            raise fail(where, "buffers must be kernel parameters (or views of them)")
        accessed = op.buffer.type
        assert isinstance(accessed, BufferType)
        if accessed.element_type != buffer.type.element_type:
            raise fail(
                where,
                f"buffer {accessed} views parameter %{buffer.name} with a different element "
                f"type ({buffer.type.element_type})",
            )
        if buffer.texture:
            if offset:
                raise fail(where, f"a texture view must start at offset 0, got {offset}")
            if flattened_type(accessed).get_shape() != buffer.flat_shape:
                raise fail(
                    where,
                    f"texture view {accessed} does not flatten to the image "
                    f"{list(buffer.flat_shape)} of parameter %{buffer.name}",
                )
        elif offset + accessed.num_elements() > buffer.type.num_elements():
            raise fail(where, f"buffer view {accessed} at offset {offset} exceeds %{buffer.name}")
        (self.launch_writes if isinstance(op, StoreOp) else self.launch_reads).add(param)
        return buffer, accessed, offset

    @staticmethod
    def lanes_of(value_type: Attribute) -> int:
        if isinstance(value_type, VectorType):
            return value_type.get_shape()[0]
        return 1

    def global_flat(self, op: LoadOp | StoreOp, accessed: BufferType, offset: int) -> Expr:
        exprs = self.index_exprs(op)
        (flat,) = flatten_exprs(exprs, accessed.get_shape(), (), self.analysis.bounds)
        return simplify(flat + offset, self.analysis.bounds)

    def global_index(self, op: LoadOp | StoreOp, accessed: BufferType, offset: int) -> str:
        return self.index(self.global_flat(op, accessed, offset))

    def aligned(
        self, op: LoadOp | StoreOp, buffer: _BufferArg, accessed: BufferType, offset: int,
        lanes: int,
    ) -> bool:
        """A vector access whose element index is a provable multiple of its lane count
        (power of two) is naturally aligned (device buffers start aligned; a parameter
        with an offset argument may not): it is a plain vector load/store, which compilers
        handle better than vloadN/vstoreN."""
        if lanes not in (2, 4, 8, 16) or buffer.offset_name is not None:
            return False
        flat = self.global_flat(op, accessed, offset)
        return simplify(Mod(flat, lanes), self.analysis.bounds) == Const(0)

    def texel(self, op: LoadOp | StoreOp, accessed: BufferType) -> tuple[str, Expr]:
        """`(int2)(x, y)` of the accessed texel, and the lane expression."""
        exprs = self.index_exprs(op)
        separators = flattening_separators(accessed)
        bounds = self.analysis.bounds
        row, col = flatten_exprs(exprs, accessed.get_shape(), separators, bounds)
        x = simplify(FloorDiv(col, TEXEL_LANES), bounds)
        lane = simplify(Mod(col, TEXEL_LANES), bounds)
        coord = f"(int2)({self.index(x)}, {self.index(simplify(row, bounds))})"
        return coord, lane

    def emit_load(self, op: LoadOp) -> None:
        where = self.at(op)
        buffer, accessed, offset = self.access_target(op)
        lanes = self.lanes_of(op.result.type)
        if not buffer.texture:
            index = self.global_index(op, accessed, offset)
            if lanes == 1:
                self.declare(op.result, f"{buffer.name}[{index}]", where)
            elif self.aligned(op, buffer, accessed, offset, lanes):
                vector_type = c_type(op.result.type, where)
                pointer = f"(__global const {vector_type}*)({buffer.name} + {index})"
                self.declare(op.result, f"*{pointer}", where)
            else:
                self.declare(op.result, f"vload{lanes}(0, {buffer.name} + {index})", where)
            return
        coord, lane = self.texel(op, accessed)
        read = f"read_imagef({buffer.name}, px_sampler, {coord})"
        if lanes == TEXEL_LANES:
            if lane != Const(0):
                raise fail(
                    where,
                    f"a vector<4xf32> texture load must read one whole texel, but its column "
                    f"is not provably a multiple of {TEXEL_LANES} (lane {self.describe(lane)})",
                )
            self.declare(op.result, read, where)
        elif lanes != 1:
            raise fail(
                where,
                f"texture loads read one lane or one whole texel (vector<4xf32>), not "
                f"{op.result.type}",
            )
        elif isinstance(lane, Const):
            self.declare(op.result, f"{read}{lane_suffix(lane.value)}", where)
        else:
            self.helpers.add("px_lane")
            self.declare(op.result, f"px_lane({read}, {self.index(lane)})", where)

    def emit_store(self, op: StoreOp) -> None:
        where = self.at(op)
        buffer, accessed, offset = self.access_target(op)
        lanes = self.lanes_of(op.value.type)
        value = self.expr(op.value)
        if not buffer.texture:
            index = self.global_index(op, accessed, offset)
            if lanes == 1:
                self.line(f"{buffer.name}[{index}] = {value};")
            elif self.aligned(op, buffer, accessed, offset, lanes):
                vector_type = c_type(op.value.type, where)
                self.line(f"*(__global {vector_type}*)({buffer.name} + {index}) = {value};")
            else:
                self.line(f"vstore{lanes}({value}, 0, {buffer.name} + {index});")
            return
        coord, lane = self.texel(op, accessed)
        if lanes != TEXEL_LANES:
            raise fail(
                where,
                f"texture store of {op.value.type} into %{buffer.name} would write part of a "
                f"texel; a texture store writes all four channels (store a vector<4xf32> "
                f"texel, e.g. after vectorize-texels)",
            )
        if lane != Const(0):
            raise fail(
                where,
                f"texture store into %{buffer.name} must write one whole texel, but its "
                f"column is not provably a multiple of {TEXEL_LANES} (lane {self.describe(lane)})",
            )
        self.line(f"write_imagef({buffer.name}, {coord}, {value});")

    # Control flow -----------------------------------------------------------------------

    def carry(self, op: Operation, inits: Sequence[SSAValue], args: Sequence[SSAValue]) -> list[str]:
        """Declare one C variable per carried value: loop block arg and result share it."""
        names: list[str] = []
        for init, arg, result in zip(inits, args, op.results, strict=True):
            name = self.name_of(result)
            self.c_names[arg] = name
            names.append(name)
            self.line(f"{c_type(result.type, self.at(op))} {name} = {self.expr(init)};")
        return names

    def emit_scf_for(self, op: scf.ForOp) -> None:
        body = op.body.block
        names = self.carry(op, list(op.iter_args), list(body.args[1:]))
        iv = self.name_of(body.args[0], "i")
        lb, ub, step = self.expr(op.lb), self.expr(op.ub), self.expr(op.step)
        self.open(f"for (int {iv} = {lb}; {iv} < {ub}; {iv} += {step})")
        self.carried.append(names)
        self.emit_block(body)
        self.carried.pop()
        self.close()

    def emit_affine_for(self, op: affine.ForOp) -> None:
        body = op.body.block
        names = self.carry(op, list(op.inits), list(body.args[1:]))
        iv = self.name_of(body.args[0], "i")
        lower_ops = list(op.lowerBoundOperands)
        upper_ops = list(op.upperBoundOperands)
        lower_map, upper_map = op.lowerBoundMap.data, op.upperBoundMap.data
        lowers = [self.affine_expr(e, lower_ops, lower_map.num_dims, op) for e in lower_map.results]
        uppers = [self.affine_expr(e, upper_ops, upper_map.num_dims, op) for e in upper_map.results]
        lb, ub = lowers[0], uppers[0]
        for other in lowers[1:]:
            lb = f"max({lb}, {other})"
        for other in uppers[1:]:
            ub = f"min({ub}, {other})"
        step = op.step.value.data
        self.open(f"for (int {iv} = {lb}; {iv} < {ub}; {iv} += {step})")
        self.carried.append(names)
        self.emit_block(body)
        self.carried.pop()
        self.close()

    def emit_parallel(self, op: scf.ParallelOp | affine.ParallelOp) -> None:
        from physlayout.lowering.opencl_parallel import loop_dims

        dims = loop_dims(op)
        if dims is None:
            raise fail(
                self.at(op),
                "parallel loops need constant bounds and no reductions in the OpenCL target",
            )
        for dim in dims:
            name = self.name_of(dim.iv, "i")
            self.open(f"for (int {name} = {dim.lower}; {name} < {dim.upper}; {name} += {dim.step})")
        self.carried.append([])
        body = op.regions[0].blocks[0]
        for inner in body.ops:
            if inner is body.last_op:
                continue
            self.emit(inner)
        self.carried.pop()
        for _ in dims:
            self.close()

    def emit_if(self, op: scf.IfOp) -> None:
        names: list[str] = []
        for result in op.results:
            name = self.name_of(result)
            names.append(name)
            self.line(f"{c_type(result.type, self.at(op))} {name};")
        self.open(f"if ({self.expr(op.cond)})")
        self.carried.append(names)
        self.emit_block(op.true_region.blocks[0])
        if op.false_region.blocks and (
            len(op.false_region.blocks[0].ops) > 1 or names
        ):
            self.depth -= 1
            self.line("} else {")
            self.depth += 1
            self.emit_block(op.false_region.blocks[0])
        self.carried.pop()
        self.close()

    def emit_yield(self, op: Operation) -> None:
        names = self.carried[-1] if self.carried else []
        values = [self.expr(v) for v in op.operands]
        pairs = [(n, v) for n, v in zip(names, values, strict=True) if n != v]
        if len(pairs) <= 1:
            for name, value in pairs:
                self.line(f"{name} = {value};")
            return
        temps: list[str] = []
        for (name, value), operand in zip(pairs, op.operands, strict=False):
            temp = self.names.fresh(None, "t")
            temps.append(temp)
            self.line(f"{c_type(operand.type, self.at(op))} {temp} = {value};")
            del name
        for (name, _), temp in zip(pairs, temps, strict=True):
            self.line(f"{name} = {temp};")


# The program ------------------------------------------------------------------------------


def _is_host(function: func.FuncOp) -> bool:
    return any(isinstance(op, func.CallOp) for op in function.walk())


def generate_opencl(module: ModuleOp, limits: ImageLimits | None = None) -> OpenCLProgram:
    """OpenCL C for every kernel of `module` and the launch plan of each.

    Raises DiagnosticException for anything the target does not support or the texture
    rules forbid.
    """
    limits = limits or ImageLimits()
    helpers: set[str] = set()
    kernel_names = NameTable(reserved={"main"}, allow_underscores=True)
    kernels: dict[str, KernelInfo] = {}
    bodies: list[str] = []
    offsets = parameters_at_offsets(module)
    uses_double = False
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
        offset_params = {index for callee, index in offsets if callee == name}
        writer = _Writer(function, limits, helpers, kernel_names, offset_params)
        lines, info = writer.write()
        bodies.append("\n".join(lines))
        kernels[name] = info
        uses_double |= any(" double" in line or "(double" in line for line in lines)
    preamble = [
        "// Generated by physlayout -t opencl (OpenCL C 1.2).",
        "#pragma OPENCL FP_CONTRACT OFF",
    ]
    if uses_double:
        preamble.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if any(k.kind == "texture" for info in kernels.values() for k in info.args):
        preamble.append(f"__constant sampler_t px_sampler = {SAMPLER};")
    for helper, text in HELPERS.items():
        if helper in helpers:
            preamble.append(text)
    source = "\n".join(preamble) + "\n\n" + "\n".join(bodies)
    refuse_invalid_buffers("opencl", module, limits.max_width, limits.max_height)
    return OpenCLProgram(source, kernels)


@dataclass(frozen=True)
class OpenCLTarget(Target):
    """`-t opencl{max-image-width=W max-image-height=H}`: OpenCL C for the kernels."""

    name = "opencl"

    max_image_width: int = 16384
    max_image_height: int = 16384

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        limits = ImageLimits(self.max_image_width, self.max_image_height)
        output.write(generate_opencl(module, limits).source)
