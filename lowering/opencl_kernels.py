"""The kernel side of `-t opencl`: parameters, launches, NDRange and kernel signatures.

`KernelWriter` holds the state of writing the OpenCL kernels of one `func.func` (names,
lines, buffer parameters, the index analysis) and does all but the ops themselves: it
checks and names the parameters (the kernel ABI documented in `lowering/opencl.py`), cuts
the body into launches, marks the ops each launch needs, maps the parallel band to
`get_global_id` and writes each kernel's signature. The op families are written by its
subclasses in `opencl_memory.py` (buffer and image loads/stores), `opencl_arith.py`
(arith, math, vector and affine values) and `opencl_control.py` (loops, conditionals);
`opencl.py` combines them into the target.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from math import prod

from xdsl.dialects import affine, arith, func, scf
from xdsl.dialects.builtin import (
    Float16Type,
    Float64Type,
    IndexType,
    MemRefType,
    TensorType,
    VectorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr
from xdsl.utils.exceptions import DiagnosticException

from physlayout.dialects.buffer_layout import ImageLimits, flattened_type, image_size
from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    LoadOp,
    PtrType,
    StoreOp,
    is_texture_scope,
)
from physlayout.dialects.layout_schedule import SCHEDULE, SCHEDULED, ScheduleAttr
from physlayout.indexing.bridges.affine import affine_to_expr
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.indexing.simplify import simplify
from physlayout.lowering.opencl_c import (
    NameTable,
    c_type,
    constant_literal,
    index_c,
    storage_c_type,
)
from physlayout.lowering.opencl_coverage import covered_parameters
from physlayout.lowering.opencl_parallel import (
    LOOPS,
    BandDim,
    Segment,
    is_invariant_load,
    is_pure_op,
    parallel_band,
    roots_stored_after,
)
from physlayout.transforms.buffer_aliases import trace_declarations
from physlayout.transforms.verify_buffers import texture_problem

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
    covers: bool = False
    """Buffers: the kernel's unconditional stores write every element of the parameter's
    flat physical shape (`lowering/opencl_coverage.py`): a fill just before it is dead
    unless the kernel also reads the parameter."""

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
    local_size: tuple[int, ...] = ()
    """The work-group shape the kernel's schedule asks for (`#layout.schedule`'s
    `workgroup`, each extent lowered to its largest divisor of the global extent); empty:
    the runtime's choice."""


@dataclass(frozen=True)
class KernelInfo:
    """A kernel function: its arguments and the launches that execute its body."""

    name: str
    args: tuple[KernelArg, ...]
    launches: tuple[Launch, ...]


TEXTURE_STORAGES = ("image", "buffer")
"""How kernels may hold texture-scoped buffers (`OpenCLProgram.texture_storage`)."""


@dataclass(frozen=True)
class OpenCLProgram:
    """The generated source and what the runtime needs to launch it."""

    source: str
    kernels: dict[str, KernelInfo]
    texture_storage: str = "image"
    """How the kernels hold texture-scoped buffers: "image" (`image2d_t`) or "buffer" (a
    `__global` array of texels, `KernelWriter.texture_buffers`)."""


@lru_cache(maxsize=4096)
def c_words(text: str) -> frozenset[str]:
    """The words (runs of `\\w`) of C text: a C variable occurs in it when it is one."""
    return frozenset(re.findall(r"\w+", text))


def fail(where: str, message: str) -> DiagnosticException:
    """The diagnostic of an op or function this target cannot compile: `opencl: WHERE: MESSAGE`
    (`where` as `KernelWriter.where`/`at` spell it). Returned, not raised: `raise fail(...)`."""
    return DiagnosticException(f"opencl: {where}: {message}")


# Buffers --------------------------------------------------------------------------------


@dataclass
class BufferArg:
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



def _texture_shape(arg: BufferType, where: str, limits: ImageLimits) -> tuple[int, int]:
    """Check the texture rules of a parameter type (verify-buffers' rules 5-8 with the
    device limits; this target also needs f32 or f16 channels); its image [rows, cols]."""
    if str(arg.element_type) not in ("f32", "f16"):
        raise fail(
            where,
            f"texture element type must be f32 or f16 (image2d_t with RGBA FLOAT or "
            f"HALF_FLOAT texels), got {arg.element_type}",
        )
    problem = texture_problem(arg, limits.max_width, limits.max_height)
    if problem is not None:
        raise fail(where, f"the texture {problem}")
    rows, cols = flattened_type(arg).get_shape()
    return rows, cols


# The kernel writer ------------------------------------------------------------------------


@dataclass
class Rebound:
    """The yield of one unrolled copy of a loop: the C expressions of the values it yields,
    which the next copy's carried values (and, after the last copy, the loop's results)
    are named by (`ControlFlowWriter.emit_unrolled`)."""

    values: list[str] = field(default_factory=list[str])


@dataclass
class KernelWriter:
    """Writes the OpenCL kernels of one `func.func`: the parts common to all op families
    (`emit` is the op dispatch, defined by the combined writer in `opencl.py`)."""

    function: func.FuncOp
    limits: ImageLimits
    helpers: set[str]
    kernel_names: NameTable
    offset_params: set[int] = field(default_factory=set[int])
    """Indices of the buffer parameters that callers may bind to views at an offset."""
    fp16: bool = False
    """Half arithmetic: the device has cl_khr_fp16 and f16 values are `half` (`half4`
    texels, `read_imageh`/`write_imageh`). Without it f16 is storage only: values are
    `float` in registers, each rounded to a half value where MLIR's f16 op rounds
    (`opencl_c.rounds_to_half`), buffers are read and written with `vload_half`/
    `vstore_half_rte`, textures are HALF_FLOAT images read and written with `read_imagef`/
    `write_imagef`."""
    fp64: bool = True
    """The device has cl_khr_fp64 (`double`); without it any f64 value is refused."""
    vectorized: bool = False
    """`vectorize-texels` has run on the module (`physlayout run`'s pipeline): a store of part
    of a texel is one it could not vectorize, which the diagnostic says."""
    texture_buffers: bool = False
    """`texture-storage=buffer`: a texture-scoped parameter is a `__global` array of its
    image's texels, row-major (`float4*`; `half*` for f16, read and written four halves at
    a time), the same bytes as the image; a texel is `p[y * width + x]`. The texture rules
    stay (whole-texel stores, views at offset 0); a read not proven inside the image reads
    zero, as the image's CLK_ADDRESS_CLAMP sampler does, and a store not proven inside is
    skipped. For devices whose image reads are emulated in software (CPU OpenCL)."""
    names: NameTable = field(default_factory=NameTable)
    c_names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    buffers: dict[BlockArgument, BufferArg] = field(default_factory=dict[BlockArgument, BufferArg])
    analysis: IndexAnalysis = field(default_factory=IndexAnalysis)
    lines: list[str] = field(default_factory=list[str])
    depth: int = 0
    reads: set[BlockArgument] = field(default_factory=set[BlockArgument])
    writes: set[BlockArgument] = field(default_factory=set[BlockArgument])
    covered: set[BlockArgument] = field(default_factory=set[BlockArgument])
    """The written parameters whose every element the kernel's stores write
    (`lowering/opencl_coverage.py`)."""
    emitted: set[Operation] = field(default_factory=set[Operation])
    carried: list[list[str] | Rebound] = field(default_factory=list["list[str] | Rebound"])
    """Per enclosing loop or `if` with results, what its yield does: assign these C
    variables, or (a `Rebound`: a loop unrolled copy by copy) name the next copy's carried
    values by the yielded ones, with nothing written."""
    launch_reads: set[BlockArgument] = field(default_factory=set[BlockArgument])
    launch_writes: set[BlockArgument] = field(default_factory=set[BlockArgument])
    substitution: dict[str, Expr] = field(default_factory=dict[str, Expr])
    """Index leaves replaced while a loop body is emitted once per iteration (unrolled):
    the loop variable's leaf -> its value in that copy."""
    unrolled_leaves: dict[str, str] = field(default_factory=dict[str, str])
    """Dimensions that unrolling introduces (a lane loop's block counter) -> C names."""
    substituted_memo: dict[tuple[Expr, tuple[tuple[str, Expr], ...]], Expr] = field(
        default_factory=dict[tuple[Expr, tuple[tuple[str, Expr], ...]], Expr]
    )
    """`substituted`'s answers: (expression, the substituted values of its leaves) -> the
    simplified result. The copies of an unrolled body ask for the same index with the same
    loop values many times (in the autoencoder 7,226 questions, 911 distinct); a leaf's
    bounds are fixed when it is named, so an answer never changes."""
    pure_kinds: dict[Operation, str] = field(default_factory=dict[Operation, str])
    """How `ArithWriter.write_pure` writes each pure op it has met (`pure_kind`: what the
    target refuses, and how an op is written, depend on the op alone; an unrolled body's
    copies write the same ops again)."""
    defined_in: dict[Block, list[SSAValue]] = field(default_factory=dict[Block, list[SSAValue]])
    """The values defined inside each unrolled loop body, for its copies to forget their
    C names (`ControlFlowWriter.emit_copy`), listed once per body."""
    access_memo: dict[Operation, tuple[BufferArg, BufferType, int]] = field(
        default_factory=dict[Operation, tuple[BufferArg, BufferType, int]]
    )
    """`MemoryWriter.access_target`'s checked answer for each load and store (an unrolled
    body's copies access through the same ops)."""
    texel_memo: dict[tuple[BufferType, tuple[Expr, ...]], tuple[Expr, Expr, Expr]] = field(
        default_factory=dict[tuple[BufferType, tuple[Expr, ...]], tuple[Expr, Expr, Expr]]
    )
    """`MemoryWriter.texel_exprs`' answers by (accessed view type, substituted indices):
    the four lane copies of an unrolled body read the same texels (autoencoder: 2,900
    texture accesses, 404 distinct)."""
    flat_memo: dict[tuple[BufferType, tuple[Expr, ...], int], Expr] = field(
        default_factory=dict[tuple[BufferType, tuple[Expr, ...], int], Expr]
    )
    """`MemoryWriter.global_flat`'s answers by (accessed view type, substituted indices,
    view offset): copies of an unrolled body may access the same element again
    (autoencoder: 601 global accesses, 384 distinct; each a flattening and two
    simplifications)."""
    half_helpers: dict[Operation, str] = field(default_factory=dict[Operation, str])
    """`ArithWriter.half_helper`'s answer for each op: it depends on the op alone."""
    type_names: dict[int, tuple[Attribute, str]] = field(
        default_factory=dict[int, tuple[Attribute, str]]
    )
    """`c_type`'s answers by the `id` of the type (hashing an xDSL type costs more than
    naming it), with the type, which the entry keeps alive: an entry answers only for
    the very type object it was asked about."""
    access_exprs: dict[Operation, list[Expr]] = field(default_factory=dict[Operation, list[Expr]])
    """The indices of each load and store as quasi-affine expressions (`index_exprs`,
    before the unrolled copy's values are substituted)."""
    walks: dict[Operation, list[Operation]] = field(
        default_factory=dict[Operation, list[Operation]]
    )
    """`walked`'s lists: an op and the ops nested in it, in `walk` order."""
    unrolling: int = 0
    """How many enclosing loops are being unrolled."""
    texels: dict[tuple[str, str], tuple[int, str]] = field(
        default_factory=dict[tuple[str, str], tuple[int, str]]
    )
    """Texels already read in the current work-item: (image, coordinate) -> (scope depth,
    the C variable holding it). An image is read-only in a kernel, so a read texel is the
    same wherever it is read again (in the same or an inner C scope)."""
    lane_invariant: set[Operation] = field(default_factory=set[Operation])
    """The pure ops of the lane loop being written whose values do not depend on the lane
    (`opencl_control.lane_invariant_ops`); empty outside lane loops."""
    lane_leaf: str = ""
    """The index leaf of the lane loop being written ("" outside lane loops)."""
    lane_copy_values: tuple[tuple[str, Expr], ...] | None = None
    """The values of the loops unrolled inside the lane loop in the copy being written (the
    second part of `lane_value_key`), computed once per copy: None whenever
    `ControlFlowWriter.emit_copy` changes `substitution`."""
    lane_values: dict[tuple[Operation, tuple[tuple[str, Expr], ...]], tuple[int, str]] = field(
        default_factory=dict[tuple[Operation, tuple[tuple[str, Expr], ...]], tuple[int, str]]
    )
    """Lane-invariant values written by an earlier lane copy: (op, the values of the loops
    unrolled inside the lane loop) -> (scope depth, its C variable). The four copies of a
    lane loop's body compute these values alike, so later copies use the first one's."""
    pure_values: dict[tuple[str, str], tuple[int, str]] = field(
        default_factory=dict[tuple[str, str], tuple[int, str]]
    )
    """Pure values declared in scope: (C type, C expression) -> (scope depth, the C
    variable holding it) (`declare_pure`). The unrolled copies of a window or a tile
    compute the same clamped coordinates again (a 3x3 window's taps over a 4x4 tile: 144
    texel reads of 36 texels); naming each such value by the first variable lets `texels`
    see that the reads are the same."""

    @cached_property
    def where(self) -> str:
        """The function being written, `@name`, as diagnostics locate it."""
        return f"@{self.function.sym_name.data}"

    def at(self, op: Operation) -> str:
        """`op` located for a diagnostic: `@function: 'op.name'`."""
        return f"{self.where}: '{op.name}'"

    def walked(self, op: Operation) -> list[Operation]:
        """`op` and every op nested in it, in `Operation.walk` order, listed once (the writer
        never changes the IR; the checks of a function visit its ops several times, and a
        list is read much faster than the IR is walked). The function's list is its
        top-level ops' lists after it."""
        found = self.walks.get(op)
        if found is None:
            if op is not self.function:
                found = list(op.walk())
            else:
                found = [op]
                for block in (b for region in op.regions for b in region.blocks):
                    for top in block.ops:
                        found.extend(self.walked(top))
            self.walks[op] = found
        return found

    # Lines ------------------------------------------------------------------------------

    def line(self, text: str) -> None:
        """Append one line of C at the current nesting depth (two spaces per level)."""
        self.lines.append("  " * self.depth + text)

    def open(self, text: str) -> None:
        """Append `text {` and indent the following lines one level deeper."""
        self.line(text + " {")
        self.depth += 1

    def close(self) -> None:
        """End the innermost C block (`}`), forgetting the texels read and the values declared
        inside it (their variables go out of scope)."""
        self.depth -= 1
        self.forget_scope(self.depth + 1)
        self.line("}")

    def forget_reading(self, names: set[str]) -> None:
        """Drop the texels whose coordinates, and the pure values whose expressions, read one
        of the C variables `names` (carried variables about to be assigned)."""
        if not names:
            return
        for table in (self.texels, self.pure_values):
            for key in [k for k in table if not names.isdisjoint(c_words(k[1]))]:
                del table[key]

    def forget_scope(self, depth: int) -> None:
        """Drop the texels read, and the lane-invariant and pure values declared, in scopes
        at `depth` or deeper (they are out of C scope). Scopes close often (every unrolled
        `if`): the tables are rebuilt only when they hold such an entry."""
        if any(v[0] >= depth for v in self.texels.values()):
            self.texels = {k: v for k, v in self.texels.items() if v[0] < depth}
        if any(v[0] >= depth for v in self.lane_values.values()):
            self.lane_values = {k: v for k, v in self.lane_values.items() if v[0] < depth}
        if any(v[0] >= depth for v in self.pure_values.values()):
            self.pure_values = {k: v for k, v in self.pure_values.items() if v[0] < depth}

    def lane_value_key(self, op: Operation) -> tuple[Operation, tuple[tuple[str, Expr], ...]] | None:
        """The `lane_values` key of `op` in the current copy (None: `op` is not lane-invariant)."""
        if op not in self.lane_invariant:
            return None
        values = self.lane_copy_values
        if values is None:
            leaf = self.lane_leaf
            values = tuple((n, v) for n, v in self.substitution.items() if n != leaf)
            self.lane_copy_values = values
        return op, values

    def reuse_lane_value(self, op: Operation) -> bool:
        """Name `op`'s result by the C variable an earlier lane copy declared for it, when
        there is one in scope (nothing is written then)."""
        key = self.lane_value_key(op)
        known = self.lane_values.get(key) if key is not None else None
        if known is None:
            return False
        self.c_names[op.results[0]] = known[1]
        return True

    def keep_lane_value(self, op: Operation) -> None:
        """Remember the C variable just declared for `op` when it is lane-invariant."""
        key = self.lane_value_key(op)
        if key is not None:
            self.lane_values[key] = (self.depth, self.c_names[op.results[0]])

    # Values -----------------------------------------------------------------------------

    def name_of(self, value: SSAValue, fallback: str = "v") -> str:
        """The C name of `value`: the one it already has, else a fresh one from its SSA name hint
        (or `fallback` with a counter), kept for later uses."""
        name = self.c_names.get(value)
        if name is None:
            name = self.names.fresh(value.name_hint, fallback)
            self.c_names[value] = name
        return name

    def expr(self, value: SSAValue) -> str:
        """The C expression of an SSA value (constants inline, others by name; a constant
        never has a C name, so the names are looked up first, the common case)."""
        name = self.c_names.get(value)
        if name is not None:
            return name
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return constant_literal(owner.value, value.type, self.at(owner), self.f16)
        raise fail(self.where, f"internal: value {value} used before it was emitted")

    def leaf_names(self, expr: Expr) -> dict[str, str]:
        """The C expression of each leaf of `expr`."""
        leaves, unrolled = self.analysis.leaves, self.unrolled_leaves
        names = {n: self.expr(leaves[n]) for n in expr.dims() if n in leaves}
        names.update((n, unrolled[n]) for n in expr.dims() if n in unrolled)
        return names

    def index(self, expr: Expr) -> str:
        """The C expression (an `int`) of the quasi-affine index `expr`, its leaves by their C names;
        floor division and modulo of possibly negative values go through the `px_` helpers, which
        are recorded in `helpers`."""
        return index_c(expr, self.leaf_names(expr), self.analysis.bounds, self.helpers)

    def describe(self, expr: Expr) -> str:
        """`expr` with its leaves named as in the C code (for diagnostics)."""
        return str(expr.substitute({n: Dim(c) for n, c in self.leaf_names(expr).items()}))

    def substituted(self, expr: Expr) -> Expr:
        """`expr` in the current unrolled copy, simplified (`substituted_memo`)."""
        substitution = self.substitution
        values: tuple[tuple[str, Expr], ...] = ()
        if substitution:
            dims = expr.dims()
            values = tuple((n, v) for n, v in substitution.items() if n in dims)
        key = (expr, values)
        found = self.substituted_memo.get(key)
        if found is None:
            found = expr.substitute(dict(values)) if values else expr
            found = simplify(found, self.analysis.bounds)
            self.substituted_memo[key] = found
        return found

    def index_exprs(self, op: LoadOp | StoreOp) -> list[Expr]:
        """The indices of a `layout.load`/`layout.store` as quasi-affine expressions, with the current
        unrolled copy's loop values substituted and simplified."""
        exprs = self.access_exprs.get(op)
        if exprs is None:
            exprs = self.access_exprs[op] = [self.analysis.expr_of(i) for i in op.indices]
        return [self.substituted(e) for e in exprs]

    # Parameters -------------------------------------------------------------------------

    @property
    def f16(self) -> str:
        """The C type of f16 values in registers: `half` with half arithmetic, else `float`."""
        return "half" if self.fp16 else "float"

    def c_type(self, type_: Attribute, where: str) -> str:
        """`opencl_c.c_type` of a value's type, f16 spelled as `f16` (`type_names`)."""
        found = self.type_names.get(id(type_))
        if found is None or found[0] is not type_:
            found = self.type_names[id(type_)] = (type_, c_type(type_, where, self.f16))
        return found[1]

    def refuse_extension_types(self, type_: Attribute, where: str) -> None:
        """f64 needs cl_khr_fp64: a diagnostic when the device lacks the extension (f16 needs
        no extension: without half arithmetic it is storage only)."""
        if isinstance(type_, BufferType):
            type_ = type_.element_type
        if isinstance(type_, VectorType):
            type_ = type_.get_element_type()
        if not self.fp64 and isinstance(type_, Float64Type):
            raise fail(
                where,
                "type f64 needs the OpenCL extension cl_khr_fp64 (double), which the device "
                "does not report (target option fp64=false says so)",
            )

    def parameters(self) -> list[tuple[BlockArgument, str]]:
        """Check and name the function's parameters, in order: (block argument, C name) pairs. Buffer
        parameters are recorded in `buffers` (a texture's image shape checked against the limits).
        Raises a located `DiagnosticException` for an f64 value on a device without
        cl_khr_fp64,
        a pending transform, a buffer of vectors, more than 2^31 - 1 elements, a texture a call may
        bind at an offset, or a `!layout.ptr`, vector or `i1` parameter."""
        entry = self.function.body.blocks[0]
        params: list[tuple[BlockArgument, str]] = []
        for arg in entry.args:
            self.refuse_extension_types(
                arg.type, f"{self.where}: parameter %{arg.name_hint or arg.index}"
            )
        for op in self.walked(self.function)[1:]:
            for result in op.results:
                self.refuse_extension_types(result.type, self.at(op))
        for arg in entry.args:
            where = f"{self.where}: parameter %{arg.name_hint or arg.index}"
            name = self.name_of(arg, "arg")
            params.append((arg, name))
            if isinstance(arg.type, BufferType):
                self._buffer_param(arg, name, where)
            elif isinstance(arg.type, MemRefType):
                raise fail(
                    where,
                    f"{arg.type}: the OpenCL target takes buffer-level IR (!layout.buffer), "
                    "so use it instead of lower-layout, not after it",
                )
            elif isinstance(arg.type, TensorType):
                raise fail(
                    where,
                    f"{arg.type}: graph-level IR (tensors) must first become buffer-level "
                    "kernels (e.g. -p physlayout-adreno)",
                )
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
        self.buffers[arg] = BufferArg(
            arg.index, arg, buffer_type, name, texture, flat, offset_name
        )

    # Segments ---------------------------------------------------------------------------

    def segments(self) -> tuple[list[Operation], list[Segment]]:
        """Cut the function body into launches: (setup, segments). Setup ops (pure ops of setup
        values, and top-level loads no later store can change) are re-emitted in every launch
        that needs them; each top-level loop is a segment of its own, and consecutive other
        ops share one (a pure op of a value a segment computes joins that segment: a load of
        what the segment stored before, in one work item). Refuses
        (a `DiagnosticException`) allocations, calls, returned values, and any SSA value used
        outside the launch that computes it (launches share only buffers)."""
        entry = self.function.body.blocks[0]
        for op in self.walked(self.function):
            if isinstance(op, AllocateOp):
                raise fail(
                    self.at(op),
                    "allocations inside kernels are not supported; allocate in the host "
                    "function and pass the buffer",
                )
        setup: list[Operation] = []
        segments: list[Segment] = []
        stored_later = roots_stored_after(list(entry.ops))
        in_segments: set[Operation] = set()  # top-level ops of segments
        for op in entry.ops:
            if isinstance(op, func.ReturnOp):
                if op.operands:
                    raise fail(self.at(op), "kernels return nothing (write results to buffers)")
                continue
            if isinstance(op, func.CallOp):
                raise fail(self.at(op), "calls are not supported inside kernels")
            open_segment = segments[-1] if segments and not segments[-1].loop else None
            if isinstance(op, LOOPS):
                segments.append(Segment([op], loop=True))
            elif (is_pure_op(op) and not any(v.owner in in_segments for v in op.operands)) or (
                isinstance(op, LoadOp)
                and is_invariant_load(op, stored_later[op], open_segment)
            ):
                setup.append(op)
                continue
            elif open_segment is not None:
                segments[-1].ops.append(op)
            else:
                segments.append(Segment([op], loop=False))
            in_segments.add(op)
        self._check_separate(segments)
        return setup, segments

    def _check_separate(self, segments: list[Segment]) -> None:
        """Launches only share buffers: no SSA value flows out of a launch."""
        entry = self.function.body.blocks[0]
        for segment in segments:
            for top in segment.ops:
                for op in self.walked(top):
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
        """The SSA values `op` reads in the generated C: for loads and stores the leaves of their
        index expressions (and the stored value); for index ops the leaves of their expression;
        else the operands."""
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
        """Add to `emitted` every op `roots` transitively depend on (through `deps`, not through
        loop or `scf.if` results, which their regions produce); ops not marked are not written."""
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

    def roots(self, ops: Sequence[Operation]) -> list[Operation]:
        """The ops of `ops` (nested ops included) a launch must execute for their effects: every op
        except loads and pure ops; yields are roots (they assign carried values)."""
        found: list[Operation] = []
        for top in ops:
            for op in self.walked(top):
                if isinstance(op, LoadOp) or (
                    is_pure_op(op) and not isinstance(op, scf.YieldOp | affine.YieldOp)
                ):
                    continue
                found.append(op)
        return found

    # Kernels ----------------------------------------------------------------------------

    def write(self) -> tuple[list[str], KernelInfo]:
        """Write every kernel of the function: its C lines and its `KernelInfo` (arguments with their
        access modes, one launch per segment, kernels named `@name` or `@name_K` when there are
        several). Raises a located `DiagnosticException` for anything this target refuses."""
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
        written = {a: prod(b.flat_shape) for a, b in self.buffers.items() if a in self.writes}
        self.covered = covered_parameters(self.function, written, self.walked(self.function))
        args = tuple(self.kernel_arg(arg, name) for arg, name in params)
        return kernel_lines, KernelInfo(base, args, tuple(launches))

    def kernel_arg(self, arg: BlockArgument, name: str) -> KernelArg:
        """The `KernelArg` the runtime binds for parameter `arg`: a scalar, or a global/texture
        buffer with its flat shape, whether any launch reads or writes it, and whether it takes
        an element-offset argument, and whether its stores write every element of it."""
        buffer = self.buffers.get(arg)
        if buffer is None:
            return KernelArg(name, "scalar", arg.type, self.c_type(arg.type, self.where))
        assert isinstance(arg.type, BufferType)
        return KernelArg(
            name,
            "texture" if buffer.texture and not self.texture_buffers else "global",
            arg.type,
            storage_c_type(arg.type.element_type, self.where),
            buffer.flat_shape,
            arg in self.reads,
            arg in self.writes,
            buffer.offset_name is not None,
            arg in self.covered,
        )

    def write_segment(
        self,
        kernel: str,
        params: list[tuple[BlockArgument, str]],
        setup: list[Operation],
        segment: Segment,
    ) -> tuple[list[str], Launch]:
        """Write one launch as the kernel `kernel`: its signature, the work-item indices (the
        innermost up to three band dimensions with more than one iteration, innermost as
        `get_global_id(0)`), the setup ops it needs and its body; returns the lines and its
        `Launch` (global size 1 without a band). Refuses a texture both read and written by the
        launch (an OpenCL 1.2 image is read-only or write-only in a kernel)."""
        self.lines, self.depth, self.emitted, self.texels = [], 1, set(), {}
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
        local = self.scheduled_work_group(list(reversed(gids)))
        return text, Launch(kernel, size, tuple(gid_names), local)

    def scheduled_work_group(self, gids: list[BandDim]) -> tuple[int, ...]:
        """The work-group shape of the work-item dimensions `gids` (dimension 0 first) that
        the function's `#layout.schedule` asks for: per dimension, the largest divisor of its
        work-items within the schedule's `workgroup` extent of that loop axis (empty: no
        schedule, no `workgroup`, or a dimension that is not an axis of the scheduled loop)."""
        attrs = self.function.attributes
        schedule = attrs.get(SCHEDULED) or attrs.get(SCHEDULE)
        if not isinstance(schedule, ScheduleAttr) or not schedule.workgroup or not gids:
            return ()
        local: list[int] = []
        for dim in gids:
            args = list[SSAValue](dim.loop.regions[0].blocks[0].args)
            if dim.iv not in args or len(args) != len(schedule.workgroup):
                return ()
            wanted = min(schedule.workgroup[args.index(dim.iv)], dim.trip_count)
            local.append(max(k for k in range(1, wanted + 1) if dim.trip_count % k == 0))
        return tuple(local)

    def header(self, kernel: str, params: list[tuple[BlockArgument, str]]) -> list[str]:
        """The `__kernel void NAME(...) {` line(s) of a launch: scalars by value, textures
        `__read_only`/`__write_only image2d_t` by this launch's use, global buffers
        `__global [const] T*` (const when this launch does not write them) followed by their
        `int` offset argument when they take one; wrapped one parameter a line past 100 columns."""
        parts: list[str] = []
        for arg, name in params:
            buffer = self.buffers.get(arg)
            if buffer is None:
                parts.append(f"{self.c_type(arg.type, self.where)} {name}")
            elif buffer.texture and self.texture_buffers:
                half = isinstance(buffer.type.element_type, Float16Type)
                const = "" if arg in self.launch_writes else "const "
                parts.append(f"__global {const}{'half' if half else 'float4'}* {name}")
            elif buffer.texture:
                qualifier = "__write_only" if arg in self.launch_writes else "__read_only"
                parts.append(f"{qualifier} image2d_t {name}")
            else:
                element = storage_c_type(buffer.type.element_type, self.where)
                const = "" if arg in self.launch_writes else "const "
                parts.append(f"__global {const}{element}* {name}")
                if buffer.offset_name is not None:
                    parts.append(f"int {buffer.offset_name}")
        one_line = f"__kernel void {kernel}({', '.join(parts)}) {{"
        if len(one_line) <= 100:
            return [one_line]
        return [f"__kernel void {kernel}(", *[f"    {p}," for p in parts[:-1]], f"    {parts[-1]}) {{"]

    def write_band(self, band: list[BandDim], gids: list[BandDim]) -> None:
        """Write a parallel band's loops: dimensions mapped to work-items are dropped, one-iteration
        dimensions become a constant `int`, the others C `for` loops; the ops between the band's
        loops are emitted at their depth."""
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
        """Write every op of `block`, in order (`emit` skips the ones the launch does not need)."""
        for op in block.ops:
            self.emit(op)

    def emit(self, op: Operation) -> None:
        """Write `op` (when the current launch needs it) into the kernel."""
        raise NotImplementedError

    def stored_to_global(self, user: Operation, value: SSAValue) -> bool:
        """Whether `user` is a `layout.store` of `value` into a global (not texture) buffer
        parameter or a view of one."""
        if not isinstance(user, StoreOp) or user.value is not value or user.buffer is value:
            return False
        root, _ = trace_declarations(user.buffer)
        buffer = self.buffers.get(root) if isinstance(root, BlockArgument) else None
        return buffer is not None and not buffer.texture

    def texture_lane(self, load: LoadOp) -> Expr | None:
        """The lane expression of a scalar load from a texture parameter (None for other
        loads)."""
        raise NotImplementedError

    def declare(self, value: SSAValue, text: str, where: str) -> None:
        """Declare `value` as a new C variable of its type initialized to `text`."""
        name = self.name_of(value)
        self.line(f"{self.c_type(value.type, where)} {name} = {text};")

    def declare_pure(self, value: SSAValue, text: str, where: str) -> None:
        """`declare`, for the value of a pure op (`text` reads no memory and has no
        effect): when a variable in scope already holds the same C expression of the same
        type, `value` is named by it and nothing is written (`pure_values`)."""
        key = (self.c_type(value.type, where), text)
        known = self.pure_values.get(key)
        if known is not None:
            self.c_names[value] = known[1]
            return
        name = self.name_of(value)
        self.line(f"{key[0]} {name} = {text};")
        self.pure_values[key] = (self.depth, name)

    def affine_expr(
        self, expr: AffineExpr, operands: list[SSAValue], num_dims: int, op: Operation
    ) -> str:
        """The C index expression of an affine map result `expr` applied to `operands` (the first
        `num_dims` are its dimensions, the rest its symbols). Raises a located
        `DiagnosticException` when the expression is not quasi-affine in them."""
        values = [self.analysis.expr_of(v) for v in operands]
        converted = affine_to_expr(expr, values[:num_dims], values[num_dims:])
        if converted is None:
            raise fail(self.at(op), f"unsupported affine expression {expr}")
        return self.index(self.substituted(converted))
