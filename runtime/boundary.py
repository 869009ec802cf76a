"""Boundary kernels: the relayout of a host function's parameters between the caller's
LOGICAL layout and their physical layout, as buffer-level kernels compiled like any other.

A compiled artifact (`physlayout compile`) takes and gives parameters in the entry
function's logical layout by default, and a C host cannot run `PendingLayout.map_ndarray`
(the numpy relayout `physlayout run` uses on the host). So for every buffer parameter of the
entry function with pending transforms, `add_boundary_functions` adds two buffer-level
functions to the module before it is lowered:

- `@physlayout_in_P(%src: !layout.buffer<LOGICAL>, %dst: !layout.buffer<LOGICAL, transform =
  T, pad_value = V>)`: a loop nest over the logical box that copies `src[i]` to `dst[i]`;
- `@physlayout_out_P(%src: !layout.buffer<LOGICAL, transform = T, pad_value = V>,
  %dst: !layout.buffer<LOGICAL>)`: the copy back.

`T` and `V` are the parameter's own transforms and pad value, so `apply-layout` and
`flatten-buffers` lay `dst` (`src`) out exactly as the parameter: row-major over the
transformed shape, which is also the byte order of the parameter's image when it is a
texture (an image of [rows, cols] is the row-major flattening of the transformed shape).
The transformed side is always `global` scope (a kernel cannot write part of a texel of an
image); the plan copies it to the image (`clEnqueueCopyBufferToImage`) and back. The copy
kernels write only logical points: the plan fills the padding first (the buffer is filled
with the pad value before the `in` kernel runs).

Nothing here changes the entry function: the boundary functions are new kernels that no
function calls; the launch plan (`runtime/plan.py`) calls them around the entry's body.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from physlayout.dialects.layout import BufferType, LoadOp, MemoryScope, StoreOp


@dataclass(frozen=True)
class BoundaryFunctions:
    """The relayout functions of one entry parameter (`index` in the entry's signature)."""

    index: int
    to_physical: str
    to_logical: str


def needs_boundary(param_type: BufferType) -> bool:
    """Whether a parameter of this (source) type needs relayout kernels: it has pending
    transforms, so its physical layout is not the row-major logical one."""
    return bool(param_type.get_transforms())


def staged_type(param_type: BufferType) -> BufferType:
    """The global buffer a boundary kernel writes (reads) for a parameter of `param_type`:
    the same shape, element type, transforms and pad value, in `global` scope, flattened to
    one axis (the same element order as the parameter's physical layout)."""
    return BufferType(
        param_type.get_shape(),
        param_type.element_type,
        param_type.get_transforms(),
        (),
        MemoryScope.GLOBAL,
        param_type.get_pad_value(),
    )


def add_boundary_functions(module: ModuleOp, entry: func.FuncOp) -> list[BoundaryFunctions]:
    """Append to `module` the boundary functions of every parameter of `entry` (a function
    of `module`) that `needs_boundary`; return their names per parameter."""
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    result: list[BoundaryFunctions] = []
    for index, param_type in enumerate(entry.function_type.inputs.data):
        if not isinstance(param_type, BufferType) or not needs_boundary(param_type):
            continue
        arg = entry.body.blocks[0].args[index]
        label = _c_label(arg.name_hint or f"arg{index}")
        names: list[str] = []
        for direction in ("in", "out"):
            name = f"physlayout_{direction}_{label}"
            while name in taken:
                name += "_"
            taken.add(name)
            names.append(name)
        logical = BufferType(param_type.get_shape(), param_type.element_type)
        staged = staged_type(param_type)
        module.body.block.add_op(_copy_function(names[0], logical, staged))
        module.body.block.add_op(_copy_function(names[1], staged, logical))
        result.append(BoundaryFunctions(index, names[0], names[1]))
    return result


def _c_label(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _copy_function(name: str, src: BufferType, dst: BufferType) -> func.FuncOp:
    """`@name(%src, %dst)`: dst[i] = src[i] for every i of the logical box (an scf.for nest,
    outermost axis first)."""
    block = Block(arg_types=[src, dst])
    block.args[0].name_hint = "src"
    block.args[1].name_hint = "dst"
    zero = arith.ConstantOp.from_int_and_width(0, IndexType())
    one = arith.ConstantOp.from_int_and_width(1, IndexType())
    nest = _copy_nest(block.args[0], block.args[1], src.get_shape(), [], zero, one)
    block.add_ops([zero, one, *nest, func.ReturnOp()])
    return func.FuncOp(name, ([src, dst], []), Region(block))


def _copy_nest(
    src: SSAValue,
    dst: SSAValue,
    extents: tuple[int, ...],
    indices: list[SSAValue],
    zero: Operation,
    one: Operation,
) -> list[Operation]:
    """The loops over `extents[len(indices):]` around `dst[indices] = src[indices]`."""
    if len(indices) == len(extents):
        load = LoadOp(src, indices)
        return [load, StoreOp(load.result, dst, indices)]
    bound = arith.ConstantOp.from_int_and_width(extents[len(indices)], IndexType())
    body = Block(arg_types=[IndexType()])
    body.args[0].name_hint = f"i{len(indices)}"
    inner = _copy_nest(src, dst, extents, [*indices, body.args[0]], zero, one)
    body.add_ops([*inner, scf.YieldOp()])
    return [bound, scf.ForOp(zero, bound, one, [], body)]
