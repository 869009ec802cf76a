"""Loads and stores of `-t opencl`: global buffers (pointers, vector loads) and textures
(`read_imagef`/`write_imagef` of whole texels or one lane), by the rules in `opencl.py`."""

from __future__ import annotations

from typing import NamedTuple

from xdsl.dialects.builtin import Float16Type, IndexType, VectorType, i1
from xdsl.ir import Attribute, BlockArgument, SSAValue

from physlayout.dialects.buffer_layout import TEXEL_LANES, flattened_type, flattening_separators
from physlayout.dialects.layout import BufferType, LoadOp, StoreOp
from physlayout.indexing.expr_range import interval_of
from physlayout.indexing.quasi_affine import Const, Expr, FloorDiv, Mod
from physlayout.indexing.shapes import flatten_exprs
from physlayout.indexing.simplify import simplify
from physlayout.lowering.opencl_c import lane_suffix
from physlayout.lowering.opencl_kernels import BufferArg, KernelWriter, fail
from physlayout.transforms.buffer_aliases import trace_declarations


def trace_buffer(buffer: SSAValue, where: str) -> tuple[BlockArgument, int]:
    """The kernel parameter a buffer value is declared over, and the element offset."""
    root, offset = trace_declarations(buffer)
    if isinstance(root, BlockArgument) and isinstance(root.type, BufferType):
        return root, offset
    raise fail(
        where,
        "a buffer that is not declared over a kernel parameter (allocations inside kernels "
        "are not supported; allocate in the host function)",
    )



class TexelAccess(NamedTuple):
    """One texture access's texel (`MemoryWriter.texel`)."""

    coord: str
    """`(int2)(x, y)`, or the texel's index in a texture held as a buffer."""
    lane: Expr
    x: Expr
    row: Expr
    inside: bool = True
    """Proven inside the image (buffers only; an image's sampler needs no proof)."""
    width: int = 0
    height: int = 0


class MemoryWriter(KernelWriter):
    """Writes `layout.load` / `layout.store`."""

    def access_target(self, op: LoadOp | StoreOp) -> tuple[BufferArg, BufferType, int]:
        """The kernel parameter a load/store reaches through its chain of declared views: (the
        parameter, the accessed view's type, the view's element offset in the parameter), and
        records the access in this launch's reads or writes. Raises a located
        `DiagnosticException` when the buffer is no parameter's view, changes the element type,
        runs past the parameter, or is a texture view that does not start at offset 0 or does not
        flatten to the parameter's image. Checked once per op (`access_memo`)."""
        found = self.access_memo.get(op)
        if found is None:
            found = self.access_memo[op] = self.checked_access(op)
        (self.launch_writes if isinstance(op, StoreOp) else self.launch_reads).add(found[0].value)
        return found

    def checked_access(self, op: LoadOp | StoreOp) -> tuple[BufferArg, BufferType, int]:
        """`access_target` without recording the access."""
        where = self.at(op)
        param, offset = trace_buffer(op.buffer, where)
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
        return buffer, accessed, offset

    @staticmethod
    def lanes_of(value_type: Attribute) -> int:
        """The number of elements one access moves: a 1-D vector's length, 1 for a scalar."""
        if isinstance(value_type, VectorType):
            return value_type.get_shape()[0]
        return 1

    def global_flat(self, op: LoadOp | StoreOp, accessed: BufferType, offset: int) -> Expr:
        """The element index, in its parameter, that a global-buffer access reaches: the access's
        indices flattened row-major over the accessed view's shape, plus the view's offset,
        simplified (`flat_memo`)."""
        key = (accessed, tuple(self.index_exprs(op)), offset)
        found = self.flat_memo.get(key)
        if found is None:
            bounds = self.analysis.bounds
            (flat,) = flatten_exprs(key[1], accessed.get_shape(), (), bounds)
            found = self.flat_memo[key] = simplify(flat + offset, bounds)
        return found

    def global_index(self, op: LoadOp | StoreOp, accessed: BufferType, offset: int) -> str:
        """`global_flat` as a C index expression."""
        return self.index(self.global_flat(op, accessed, offset))

    def aligned(self, flat: Expr, buffer: BufferArg, lanes: int) -> bool:
        """A vector access whose element index `flat` (`global_flat`) is a provable multiple
        of its lane count (power of two) is naturally aligned (device buffers start aligned;
        a parameter with an offset argument may not): it is a plain vector load/store, which
        compilers handle better than vloadN/vstoreN."""
        if lanes not in (2, 4, 8, 16) or buffer.offset_name is not None:
            return False
        return simplify(Mod(flat, lanes), self.analysis.bounds) == Const(0)

    def texel_exprs(self, op: LoadOp | StoreOp, accessed: BufferType) -> tuple[Expr, Expr, Expr]:
        """The accessed texel's column and row, and the lane (`texel_memo`)."""
        exprs = tuple(self.index_exprs(op))
        found = self.texel_memo.get((accessed, exprs))
        if found is not None:
            return found
        separators = flattening_separators(accessed)
        bounds = self.analysis.bounds
        row, col = flatten_exprs(exprs, accessed.get_shape(), separators, bounds)
        x = simplify(FloorDiv(col, TEXEL_LANES), bounds)
        lane = simplify(Mod(col, TEXEL_LANES), bounds)
        found = self.texel_memo[(accessed, exprs)] = x, simplify(row, bounds), lane
        return found

    def texel(
        self, op: LoadOp | StoreOp, buffer: BufferArg, accessed: BufferType
    ) -> TexelAccess:
        """The accessed texel: `(int2)(x, y)` (its element index `y * width + x` when
        textures are buffers), the lane expression, and (buffers) whether it is proven
        inside the image."""
        x, row, lane = self.texel_exprs(op, accessed)
        if not self.texture_buffers:
            return TexelAccess(f"(int2)({self.index(x)}, {self.index(row)})", lane, x, row)
        height, width = buffer.flat_shape[0], buffer.flat_shape[1] // TEXEL_LANES
        bounds = self.analysis.bounds
        (x_low, x_high), (y_low, y_high) = interval_of(x, bounds), interval_of(row, bounds)
        inside = (
            x_low is not None and x_low >= 0 and x_high is not None and x_high < width
            and y_low is not None and y_low >= 0 and y_high is not None and y_high < height
        )  # fmt: skip
        coord = self.index(simplify(row * width + x, bounds))
        return TexelAccess(coord, lane, x, row, inside, width, height)

    def outside_check(self, texel: TexelAccess) -> str:
        """The C condition that a texel not proven inside its image is inside."""
        return (
            f"(uint)({self.index(texel.x)}) < {texel.width}u && "
            f"(uint)({self.index(texel.row)}) < {texel.height}u"
        )

    def texel_read(
        self, buffer: BufferArg, accessed: BufferType, texel: TexelAccess, half: bool
    ) -> str:
        """The C expression reading `texel` (`half`: half arithmetic): `read_imagef`/
        `read_imageh` of the image, or the buffer's texel (`vload_half4` of f16 storage,
        `vload4` of halves), zero outside the image (see `texture_buffers`)."""
        coord = texel.coord
        if not self.texture_buffers:
            return f"read_image{'h' if half else 'f'}({buffer.name}, px_sampler, {coord})"
        storage_half = isinstance(accessed.element_type, Float16Type)
        if not texel.inside:
            helper = "px_texel_h" if half else "px_texel_half" if storage_half else "px_texel"
            self.helpers.add(helper)
            return (
                f"{helper}({buffer.name}, {self.index(texel.x)}, {self.index(texel.row)}, "
                f"{texel.width}, {texel.height})"
            )
        if half:
            return f"vload4({coord}, {buffer.name})"
        if storage_half:
            return f"vload_half4({coord}, {buffer.name})"
        return f"{buffer.name}[{coord}]"

    def emit_load(self, op: LoadOp) -> None:
        """Write a `layout.load`. Global buffers: an indexed read, an aligned vector read, or
        `vloadN`. Textures: a `vector<4xT>` load reads one whole texel (`read_imagef`/`read_imageh`,
        reused when the same texel was already read in scope); a scalar load reads one lane of it
        (inside an unrolled lane loop the texel is read once into a `float4` for the four copies).
        Raises a located `DiagnosticException` for a load of `index` elements (64-bit values, but
        the kernel's index arithmetic is 32-bit), a vector texture load not provably at lane 0 or
        a texture load of any other width."""
        where = self.at(op)
        buffer, accessed, offset = self.access_target(op)
        lanes = self.lanes_of(op.result.type)
        if isinstance(accessed.element_type, IndexType):
            raise fail(
                where,
                f"loads of index elements ({accessed}) are not supported: an element holds a "
                "64-bit index, but kernels compute index values as 32-bit int (store i32 "
                "elements and arith.index_cast them)",
            )
        boolean = accessed.element_type == i1
        if boolean and lanes != 1:
            raise fail(where, f"vector loads of i1 elements ({accessed}) are not supported")
        half = isinstance(accessed.element_type, Float16Type)
        if not buffer.texture and half and not self.fp16:
            # f16 storage only: vload_half(N) converts exactly to float
            index = self.global_index(op, accessed, offset)
            if lanes == 1:
                self.declare(op.result, f"vload_half({index}, {buffer.name})", where)
            else:
                self.declare(op.result, f"vload_half{lanes}(0, {buffer.name} + {index})", where)
            return
        if not buffer.texture:
            flat = self.global_flat(op, accessed, offset)
            index = self.index(flat)
            if lanes == 1:
                read = f"{buffer.name}[{index}]"
                self.declare(op.result, f"({read} != 0)" if boolean else read, where)
            elif self.aligned(flat, buffer, lanes):
                vector_type = self.c_type(op.result.type, where)
                pointer = f"(__global const {vector_type}*)({buffer.name} + {index})"
                self.declare(op.result, f"*{pointer}", where)
            else:
                self.declare(op.result, f"vload{lanes}(0, {buffer.name} + {index})", where)
            return
        texel = self.texel(op, buffer, accessed)
        coord, lane = texel.coord, texel.lane
        half = half and self.fp16  # HALF_FLOAT images read as float4 without half arithmetic
        read = self.texel_read(buffer, accessed, texel, half)
        cached = self.texels.get((buffer.name, coord))
        if lanes == TEXEL_LANES:
            if lane != Const(0):
                raise fail(
                    where,
                    f"a vector<4xf32> texture load must read one whole texel, but its column "
                    f"is not provably a multiple of {TEXEL_LANES} (lane {self.describe(lane)})",
                )
            if cached is not None:
                self.c_names[op.result] = cached[1]
                return
            self.declare(op.result, read, where)
            self.texels[(buffer.name, coord)] = (self.depth, self.c_names[op.result])
            return
        if lanes != 1:
            raise fail(
                where,
                f"texture loads read one lane or one whole texel (vector<4xf32>), not "
                f"{op.result.type}",
            )
        if cached is None and self.unrolling:
            # inside an unrolled lane loop the other lanes of this texel are read next
            texel = self.names.fresh(None, "texel")
            self.line(f"{'half4' if half else 'float4'} {texel} = {read};")
            cached = (self.depth, texel)
            self.texels[(buffer.name, coord)] = cached
        # a lane of a texel variable is a pure value (`declare_pure`); a lane of a read is not
        declare = self.declare if cached is None else self.declare_pure
        if cached is not None:
            read = cached[1]
        if isinstance(lane, Const):
            declare(op.result, f"{read}{lane_suffix(lane.value)}", where)
        else:
            helper = "px_lane_half" if half else "px_lane"
            self.helpers.add(helper)
            declare(op.result, f"{helper}({read}, {self.index(lane)})", where)

    def texture_lane(self, load: LoadOp) -> Expr | None:
        if self.lanes_of(load.result.type) != 1:
            return None
        param, offset = trace_buffer(load.buffer, self.at(load))
        buffer = self.buffers.get(param)
        accessed = load.buffer.type
        if buffer is None or not buffer.texture or offset or not isinstance(accessed, BufferType):
            return None
        if flattened_type(accessed).get_shape() != buffer.flat_shape:
            return None
        return self.texel_exprs(load, accessed)[2]

    def emit_store(self, op: StoreOp) -> None:
        """Write a `layout.store`. Global buffers: an indexed write, an aligned vector write, or
        `vstoreN` (`index` values widen to the buffer's `long` elements). Textures: only a `vector<4xT>` store of one whole texel (`write_imagef`/
        `write_imageh`); a narrower store, or one not provably at lane 0, raises a located
        `DiagnosticException` (a texture store writes all four channels)."""
        where = self.at(op)
        buffer, accessed, offset = self.access_target(op)
        lanes = self.lanes_of(op.value.type)
        value = self.expr(op.value)
        if accessed.element_type == i1:
            if lanes != 1 or buffer.texture:
                raise fail(where, "only scalar stores of i1 elements into global buffers are supported")
            value = f"(uchar)({value})"
        half = isinstance(accessed.element_type, Float16Type)
        if not buffer.texture and half and not self.fp16:
            # f16 storage only: vstore_half_rte rounds to the nearest half, ties to even (a
            # no-op for f16 values, which are halves already, except a truncf left unrounded
            # for this store: see ArithWriter.half_value)
            index = self.global_index(op, accessed, offset)
            if lanes == 1:
                self.line(f"vstore_half_rte({value}, {index}, {buffer.name});")
            else:
                self.line(f"vstore_half{lanes}_rte({value}, 0, {buffer.name} + {index});")
            return
        if not buffer.texture:
            flat = self.global_flat(op, accessed, offset)
            index = self.index(flat)
            if lanes == 1:
                self.line(f"{buffer.name}[{index}] = {value};")
            elif isinstance(accessed.element_type, IndexType):
                # `long` elements: the `int` lanes widen exactly
                self.line(f"vstore{lanes}(convert_long{lanes}({value}), 0, {buffer.name} + {index});")
            elif self.aligned(flat, buffer, lanes):
                vector_type = self.c_type(op.value.type, where)
                self.line(f"*(__global {vector_type}*)({buffer.name} + {index}) = {value};")
            else:
                self.line(f"vstore{lanes}({value}, 0, {buffer.name} + {index});")
            return
        texel = self.texel(op, buffer, accessed)
        coord, lane = texel.coord, texel.lane
        if lanes != TEXEL_LANES:
            hint = (
                "vectorize-texels, which ran, vectorizes only a loop `0 to 4 step 1` over the "
                "lanes of a texel: write all four lanes of each texel in such a loop, or "
                "store a vector<4xf32> texel"
                if self.vectorized
                else "store a vector<4xf32> texel, e.g. after vectorize-texels"
            )
            raise fail(
                where,
                f"texture store of {op.value.type} into %{buffer.name} would write part of a "
                f"texel; a texture store writes all four channels ({hint})",
            )
        if lane != Const(0):
            raise fail(
                where,
                f"texture store into %{buffer.name} must write one whole texel, but its "
                f"column is not provably a multiple of {TEXEL_LANES} (lane {self.describe(lane)})",
            )
        # without half arithmetic an f16 texel is a float4 of half values (every f16 value
        # is rounded where it is computed), so write_imagef's conversion is exact whatever
        # rounding the device's HALF_FLOAT conversion uses
        half = half and self.fp16
        if not self.texture_buffers:
            self.line(f"write_image{'h' if half else 'f'}({buffer.name}, {coord}, {value});")
            return
        if half:
            write = f"vstore4({value}, {coord}, {buffer.name});"
        elif isinstance(accessed.element_type, Float16Type):
            write = f"vstore_half4_rte({value}, {coord}, {buffer.name});"
        else:
            write = f"{buffer.name}[{coord}] = {value};"
        self.line(write if texel.inside else f"if ({self.outside_check(texel)}) {write}")
