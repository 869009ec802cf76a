"""A numpy reference evaluator for graph-level IR: tensors, `linalg.generic` and the graph
layout rewrites (`layout.transform`, `layout.pad`, `layout.crop`).

Usage:

```python
from physlayout.semantics.graph_evaluator import run_graph
outputs = run_graph(module, "main", [x, w])   # numpy arrays in, numpy arrays out
```

Supported IR
------------
- `func.func` / `func.return` / `func.call`;
- `arith.constant` (scalars, dense and splat tensors), scalar `arith`/`math` ops (the
  semantics of `physlayout.semantics.evaluator_arith`);
- `tensor.empty`: its contents are undefined; the evaluator fills it with NaN (floats) or
  the smallest value of the type (integers), so reading undefined contents shows up in the
  results;
- `linalg.generic` with static tensor operands and any quasi-affine indexing maps,
  `linalg.fill`, and the other named linalg ops (e.g. `linalg.conv_2d_nchw_fchw`) through
  their generic form (indexing maps, iterator types and body of the named op);
- `layout.copy` (a change of memory scope: the value is unchanged);
- `layout.fused` (the value of its region on its operands, `layout.yield`'s operand);
- the upstream relayout ops `linalg.pack`/`unpack`/`transpose`, `tensor.expand_shape`/
  `collapse_shape`/`pad`/`extract_slice`/`extract` (static shapes; semantics in
  `physlayout.semantics.graph_upstream`), `tensor.extract` also in `linalg.generic` bodies;
- `layout.transform` (`IndexMap.map_ndarray`), `layout.pad` (`numpy.pad`), `layout.crop`
  (slicing). With `check_hints=True` (the default) a crop's concrete `cropped_value` is
  checked: every cropped-away element must equal it (NaN equals NaN), else
  `EvaluationError`.

`linalg.generic` semantics: the loop extents are read off the operand dimensions indexed
by a bare loop dimension; the body runs for every point of the iteration space in
lexicographic order, vectorized over the parallel loops: for each point of the other loops
(reductions), in lexicographic order, every operand is gathered at its indexing map, the
body is evaluated, and the yielded values are scattered into the outputs at theirs (so a
reduction accumulates in the same order as a scalar loop nest). Every index is bounds
checked: an access outside an operand is an `EvaluationError`, not numpy wrap-around.

Each op's meaning is an `@impl` of the interpreter functions in `GRAPH_FUNCTIONS`
(`GraphFunctions`, `LinalgFunctions`, `TensorFunctions`, `GraphArithFunctions`, `math`,
`GraphFuncFunctions`), run on an `xdsl.interpreter.Interpreter` by the block runner of
`evaluator_frame` (without lanes). Any other op raises an `EvaluationError` naming it.

Arguments are numpy arrays of the tensor's shape and dtype (f16/f32/f64, iN as intN, i1 as
bool, index as int64) or Python/numpy scalars; results are numpy arrays (tensors) or
Python scalars.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, cf, scf, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    ShapedType,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg_ops
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.ops import FillOp, GenericOp, IndexOp, TransposeOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from physlayout.dialects.layout_check import CheckOp
from physlayout.dialects.layout_fused import FusedOp
from physlayout.dialects.layout_fused import YieldOp as FusedYieldOp
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp, scalar_value
from physlayout.dialects.layout_scopes import CopyOp
from physlayout.dialects.linalg_generic import GenericOp as ParsedGenericOp
from physlayout.dialects.linalg_generic import generic_form
from physlayout.dialects.linalg_named import (
    BatchMatmulOp,
    DepthwiseConv2DNchwChwOp,
    PoolingNchwMaxOp,
    PoolingNchwSumOp,
)
from physlayout.dialects.linalg_pack import PackOp, UnPackOp
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim
from physlayout.semantics.evaluator_arith import (
    ArithFunctions,
    MathFunctions,
    constant_value,
    evaluate_value_op,
    has_value_semantics,
)
from physlayout.semantics.evaluator_frame import lookup, run_region, simt
from physlayout.semantics.evaluator_scf import FuncFunctions
from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    View,
    check_flags,
    dtype_of,
)
from physlayout.semantics.graph_upstream import (
    UpstreamFn,
    broadcast,
    concat,
    extract,
    extract_op,
    extract_slice,
    insert_slice,
    pack,
    pad,
    padded,
    reshape,
    transpose,
    unpack,
)

__all__ = [
    "EvaluationError",
    "GraphEvaluator",
    "apply_rewrite",
    "check_cropped_value",
    "evaluate_body",
    "run_graph",
]


# Values -----------------------------------------------------------------------------------


def _tensor_dtype(type_: Attribute) -> np.dtype[Any]:
    assert isinstance(type_, TensorType)
    return dtype_of(type_.get_element_type())


def _static_shape(op: Operation, type_: Attribute) -> tuple[int, ...]:
    if not isinstance(type_, TensorType):
        raise EvaluationError(f"'{op.name}': expected a tensor, got {type_}")
    shape = tuple(type_.get_shape())
    if any(extent < 0 for extent in shape):
        raise EvaluationError(f"'{op.name}': dynamic tensor {type_} is not supported")
    return shape


def undefined_array(shape: Sequence[int], dtype: np.dtype[Any]) -> Array:
    """The contents of a fresh `tensor.empty`: NaN for floats, the minimum for integers,
    True for i1."""
    if np.issubdtype(dtype, np.floating):
        return np.full(shape, np.nan, dtype=dtype)
    if dtype == np.bool_:
        return np.ones(shape, dtype=dtype)
    return np.full(shape, np.iinfo(dtype).min, dtype=dtype)


def dense_array(attr: DenseIntOrFPElementsAttr, type_: Attribute) -> Array:
    """The numpy array of a dense tensor constant of type `type_` (splats expanded)."""
    assert isinstance(type_, ShapedType)
    shape = tuple(type_.get_shape())
    values = np.asarray(attr.get_values()).astype(_tensor_dtype(type_))
    if values.size == 1:
        return np.full(shape, values.reshape(()), dtype=values.dtype)
    return values.reshape(shape)


def _scalar_of(attr: Attribute) -> float | int:
    assert isinstance(attr, FloatAttr | IntegerAttr)
    return scalar_value(attr)


# Bodies -----------------------------------------------------------------------------------


def evaluate_body(
    block: Block,
    args: Sequence[Array | None],
    loop_index: Callable[[int], Array] | None = None,
    outer: Callable[[SSAValue], Array | None] | None = None,
    strict: bool = True,
) -> list[Array | None]:
    """Evaluate the body of a `linalg.generic` (scalar ops and `scf.if`s of them, up to `linalg.yield`) on the
    arrays `args` (one per block argument, broadcast together) and return the yielded
    arrays.

    `loop_index(dim)` gives the value of `linalg.index dim`; `outer(value)` the value of
    a value defined outside the body. With `strict=False` an argument may be None
    (unknown): every value computed from an unknown one is None, as are `linalg.index`
    without `loop_index`, outer values without `outer` and unsupported ops (used to prove
    what a body yields on known inputs). With `strict=True` those raise `EvaluationError`.
    """
    env: dict[SSAValue, Array | None] = dict(zip(block.args, args, strict=True))

    def lookup(value: SSAValue) -> Array | None:
        if value in env:
            return env[value]
        found = None if outer is None else outer(value)
        if found is None and strict:
            raise EvaluationError("linalg.generic body uses a value it cannot evaluate")
        return found

    def run(ops: Block) -> list[Array | None]:
        for op in ops.ops:
            if op.name in ("linalg.yield", "scf.yield"):
                return [lookup(v) for v in op.operands]
            operands = [lookup(v) for v in op.operands]
            if isinstance(op, scf.IfOp):
                env.update(zip(op.results, _if(op, operands[0], run), strict=True))
                continue
            env.update(zip(op.results, _body_op(op, operands, loop_index, strict), strict=True))
        raise EvaluationError(f"a block of a linalg.generic body has no {'linalg' if ops is block else 'scf'}.yield")

    return run(block)


def _if(
    op: scf.IfOp, condition: Array | None, run: Callable[[Block], list[Array | None]]
) -> list[Array | None]:
    """An `scf.if` of a body, vectorized: both branches evaluated (a body computes values
    only), each result taken from the branch its point's condition selects."""
    if not op.false_region.blocks:
        run(op.true_region.block)
        return []
    taken = run(op.true_region.block)
    otherwise = run(op.false_region.block)
    if condition is None:
        return [None] * len(op.results)
    return [
        None if a is None or b is None else np.asarray(np.where(condition, a, b), dtype=np.result_type(a, b))
        for a, b in zip(taken, otherwise, strict=True)
    ]


def _body_op(
    op: Operation,
    operands: Sequence[Array | None],
    loop_index: Callable[[int], Array] | None,
    strict: bool,
) -> list[Array | None]:
    if isinstance(op, IndexOp):
        if loop_index is None:
            return [None]
        return [np.asarray(loop_index(op.dim.value.data), dtype=np.int64)]
    if op.name == "tensor.extract":
        if any(v is None for v in operands):
            return [None]
        source, *indices = _known(operands)
        return [extract(op, source, indices)]
    if isinstance(op, cf.AssertOp):
        if operands[0] is not None:
            check_flags(operands[0], op.msg.data)
        return []
    if op.name == "arith.constant" and len(op.results) == 1:
        value = op.properties.get("value")
        if isinstance(value, IntegerAttr | FloatAttr):
            return [constant_value(op, value)]
    if (
        not has_value_semantics(op)
        or len(op.results) != 1
        or any(isinstance(v.type, ShapedType) for v in op.operands)
    ):
        if strict:
            raise EvaluationError(f"'{op.name}' is not supported in a linalg.generic body")
        return [None] * len(op.results)
    known = [v for v in operands if v is not None]
    if len(known) != len(operands):
        return [None]
    return [np.asarray(evaluate_value_op(op, known))]


def _known(values: Sequence[Array | None]) -> list[Array]:
    return [v for v in values if v is not None]


# Interpreter functions --------------------------------------------------------------------


def _outer(interpreter: Interpreter) -> Callable[[SSAValue], Array | None]:
    """Reads values defined outside the op being run (for linalg bodies)."""

    def read(value: SSAValue) -> Array | None:
        found = lookup(interpreter, value)
        return None if found is None or isinstance(found, View | Handle) else found

    return read


def _check_hints(interpreter: Interpreter) -> bool:
    return interpreter.get_data(GraphFunctions, "check_hints", lambda: True)


@register_impls
class GraphFunctions(InterpreterFunctions):
    """The graph layout rewrites `layout.transform/pad/crop` and `layout.copy`."""

    @impl(TransformOp)
    def run_transform(
        self, interpreter: Interpreter, op: TransformOp, args: PythonValues
    ) -> PythonValues:
        return (apply_rewrite(op, args[0]),)

    @impl(PadOp)
    def run_pad(self, interpreter: Interpreter, op: PadOp, args: PythonValues) -> PythonValues:
        return (apply_rewrite(op, args[0]),)

    @impl(CropOp)
    def run_crop(self, interpreter: Interpreter, op: CropOp, args: PythonValues) -> PythonValues:
        if _check_hints(interpreter):
            check_cropped_value(op, args[0])
        return (apply_rewrite(op, args[0]),)

    @impl(CopyOp)
    def run_copy(self, interpreter: Interpreter, op: CopyOp, args: PythonValues) -> PythonValues:
        return (np.array(args[0]),)

    @impl(cf.AssertOp)
    def run_assert(
        self, interpreter: Interpreter, op: cf.AssertOp, args: PythonValues
    ) -> PythonValues:
        check_flags(args[0], op.msg.data)
        return ()

    @impl(CheckOp)
    def run_check(self, interpreter: Interpreter, op: CheckOp, args: PythonValues) -> PythonValues:
        check_flags(args[0], op.message.data)
        return ()
    @impl(FusedOp)
    def run_fused(self, interpreter: Interpreter, op: FusedOp, args: PythonValues) -> PythonValues:
        return tuple(run_region(interpreter, op.body, args, simt(interpreter).lanes))

    @impl_terminator(FusedYieldOp)
    def run_fused_yield(
        self, interpreter: Interpreter, op: FusedYieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


def _named_impl(op_type: type[Operation]) -> Any:
    """The `@impl` of a named linalg op: its generic form."""

    def run(
        self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        assert isinstance(op, NamedOperation)
        generic = generic_form(op)
        try:
            return tuple(run_generic(generic, args, _outer(interpreter)))
        finally:
            generic.erase()

    return impl(op_type)(run)


def _upstream_impl(op_type: type[Operation], fn: UpstreamFn) -> Any:
    """The `@impl` of an upstream relayout op computed by `fn` (`graph_upstream`)."""

    def run(
        self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        return (fn(op, args, _outer(interpreter)),)

    return impl(op_type)(run)


@register_impls
class LinalgFunctions(InterpreterFunctions):
    """`linalg.generic`, `linalg.fill`, the other named ops (through their generic form),
    and the relayout ops `linalg.pack/unpack/transpose`."""

    @impl(GenericOp)
    def run_generic(
        self, interpreter: Interpreter, op: GenericOp, args: PythonValues
    ) -> PythonValues:
        return tuple(run_generic(op, args, _outer(interpreter)))

    @impl(ParsedGenericOp)
    def run_parsed_generic(
        self, interpreter: Interpreter, op: GenericOp, args: PythonValues
    ) -> PythonValues:
        """A parsed `linalg.generic` is physlayout's subclass (`dialects.linalg_generic`), and
        the interpreter looks implementations up by exact type."""
        return tuple(run_generic(op, args, _outer(interpreter)))

    @impl(FillOp)
    def run_fill(self, interpreter: Interpreter, op: FillOp, args: PythonValues) -> PythonValues:
        shape = _static_shape(op, op.res[0].type)
        return (np.full(shape, args[0], dtype=_tensor_dtype(op.res[0].type)),)

    run_pack = _upstream_impl(PackOp, pack)
    run_unpack = _upstream_impl(UnPackOp, unpack)
    run_transpose = _upstream_impl(TransposeOp, transpose)
    run_add = _named_impl(linalg_ops.AddOp)
    run_sub = _named_impl(linalg_ops.SubOp)
    run_mul = _named_impl(linalg_ops.MulOp)
    run_max = _named_impl(linalg_ops.MaxOp)
    run_min = _named_impl(linalg_ops.MinOp)
    run_exp = _named_impl(linalg_ops.ExpOp)
    run_log = _named_impl(linalg_ops.LogOp)
    run_sqrt = _named_impl(linalg_ops.SqrtOp)
    run_select = _named_impl(linalg_ops.SelectOp)
    run_copy = _named_impl(linalg_ops.CopyOp)
    run_matmul = _named_impl(linalg_ops.MatmulOp)
    run_quantized_matmul = _named_impl(linalg_ops.QuantizedMatmulOp)
    run_conv_2d_nchw_fchw = _named_impl(linalg_ops.Conv2DNchwFchwOp)
    run_conv_2d_ngchw_fgchw = _named_impl(linalg_ops.Conv2DNgchwFgchwOp)
    run_conv_2d_ngchw_gfchw = _named_impl(linalg_ops.Conv2DNgchwGfchwOp)
    run_conv_2d_nhwc_fhwc = _named_impl(linalg_ops.Conv2DNhwc_FhwcOp)
    run_conv_2d_nhwc_hwcf = _named_impl(linalg_ops.Conv2DNhwc_HwcfOp)
    run_conv_2d_nhwgc_gfhwc = _named_impl(linalg_ops.Conv2DNhwgcGfhwcOp)
    run_pooling_nchw_max = _named_impl(linalg_ops.PoolingNchwMaxOp)
    run_pooling_nchw_max_fixed = _named_impl(PoolingNchwMaxOp)
    run_pooling_nchw_sum = _named_impl(PoolingNchwSumOp)
    run_depthwise_conv_2d_nchw_chw = _named_impl(DepthwiseConv2DNchwChwOp)
    run_batch_matmul = _named_impl(BatchMatmulOp)
    run_broadcast = _upstream_impl(linalg_ops.BroadcastOp, broadcast)


@register_impls
class TensorFunctions(InterpreterFunctions):
    """`tensor.empty` (undefined contents: NaN or the minimum) and the relayout ops
    `tensor.expand_shape/collapse_shape/pad/extract_slice/extract`."""

    @impl(tensor.EmptyOp)
    def run_empty(
        self, interpreter: Interpreter, op: tensor.EmptyOp, args: PythonValues
    ) -> PythonValues:
        type_ = op.results[0].type
        return (undefined_array(_static_shape(op, type_), _tensor_dtype(type_)),)

    run_expand_shape = _upstream_impl(tensor.ExpandShapeOp, reshape)
    run_collapse_shape = _upstream_impl(tensor.CollapseShapeOp, reshape)
    run_pad = _upstream_impl(tensor.PadOp, pad)
    run_extract_slice = _upstream_impl(tensor.ExtractSliceOp, extract_slice)
    run_extract = _upstream_impl(tensor.ExtractOp, extract_op)
    run_concat = _upstream_impl(tensor.ConcatOp, concat)
    run_insert_slice = _upstream_impl(tensor.InsertSliceOp, insert_slice)


@register_impls
class GraphArithFunctions(ArithFunctions):
    """`arith` on scalars, with dense and splat tensor constants."""

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        value = op.value
        type_ = op.results[0].type
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(type_, TensorType):
            return (dense_array(value, type_),)
        if isinstance(value, IntegerAttr | FloatAttr):
            return (constant_value(op, value),)
        raise EvaluationError(f"'arith.constant': unsupported value {value}")


@register_impls
class GraphFuncFunctions(FuncFunctions):
    """`func` for graphs: a function is refused when it applies `arith`/`math` to tensors."""

    @impl_callable(FuncOp)
    def call_func(self, interpreter: Interpreter, op: FuncOp, args: PythonValues) -> PythonValues:
        _check_values(op)
        return FuncFunctions.call_func(self, interpreter, op, args)


GRAPH_FUNCTIONS: tuple[type[InterpreterFunctions], ...] = (
    GraphArithFunctions,
    MathFunctions,
    GraphFunctions,
    LinalgFunctions,
    TensorFunctions,
    GraphFuncFunctions,
)
"""The interpreter functions of the graph evaluator."""


# The evaluator ----------------------------------------------------------------------------


class GraphEvaluator:
    """Evaluates functions of a module of graph-level IR on numpy arrays."""

    def __init__(self, module: ModuleOp, check_hints: bool = True):
        self.module = module
        self.check_hints = check_hints
        self.functions: dict[str, FuncOp] = {
            op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)
        }
        self.interpreter = Interpreter(module)
        for functions in GRAPH_FUNCTIONS:
            self.interpreter.register_implementations(functions())
        self.interpreter.set_data(GraphFunctions, "check_hints", check_hints)

    def run(self, name: str, args: Sequence[Any]) -> list[Any]:
        """Evaluate function `name` on `args`; returns its results."""
        func = self.functions.get(name)
        if func is None:
            raise EvaluationError(f"no function named '{name}'")
        inputs = func.function_type.inputs.data
        if len(args) != len(inputs):
            raise EvaluationError(f"'{name}' takes {len(inputs)} arguments, got {len(args)}")
        values = [
            _argument(name, k, arg, t) for k, (arg, t) in enumerate(zip(args, inputs, strict=True))
        ]
        with np.errstate(all="ignore"):
            results = self.interpreter.call_op(func, tuple(values))
        return [
            r if r.ndim or isinstance(t, ShapedType) else r.item()
            for r, t in zip(results, func.function_type.outputs.data, strict=True)
        ]


def _check_values(func: FuncOp) -> None:
    """Scalar `arith`/`math` ops only: the graph evaluator does not run them on tensors."""
    for op in func.walk():
        if isinstance(op, arith.ConstantOp) or not has_value_semantics(op):
            continue
        tensors = any(isinstance(v.type, ShapedType) for v in (*op.operands, *op.results))
        if tensors and op.parent_op() is func:
            raise EvaluationError(f"'{op.name}' is not supported by the graph evaluator")


def run_generic(
    op: GenericOp, args: Sequence[Array], outer: Callable[[SSAValue], Array | None]
) -> list[Array]:
    """The results of `linalg.generic` `op` on `args` (see the module docstring); `outer`
    reads values defined outside its body."""
    maps = [
        IndexMap.from_affine_map(m.data) if isinstance(m, AffineMapAttr) else None
        for m in op.indexing_maps.data
    ]
    if any(m is None for m in maps) or len(maps) != len(args):
        raise EvaluationError("'linalg.generic': expected one indexing map per operand")
    imaps = [m for m in maps if m is not None]
    for operand in op.operands:
        if isinstance(operand.type, ShapedType):
            _static_shape(op, operand.type)
    extents = _loop_extents(op, imaps, args)
    kinds = [str(t.data) for t in op.iterator_types.data]
    parallel = [m for m, kind in enumerate(kinds) if kind == "parallel"]
    sequential = [m for m, kind in enumerate(kinds) if kind != "parallel"]
    space = tuple(extents[m] for m in parallel)
    grids = np.indices(space, dtype=np.int64, sparse=True) if space else ()
    loops: list[Array | int] = [0] * len(extents)
    for axis, m in enumerate(parallel):
        loops[m] = grids[axis]
    num_inputs = len(op.inputs)
    outputs = [np.array(a) for a in args[num_inputs:]]
    block = op.body.blocks[0]
    for point in itertools.product(*(range(extents[m]) for m in sequential)):
        for m, value in zip(sequential, point, strict=True):
            loops[m] = value
        values = [
            _gather(op, k, a, imaps[k], loops, space) for k, a in enumerate(args[:num_inputs])
        ]
        places = [
            _indices(op, num_inputs + k, imaps[num_inputs + k], loops, out.shape, space)
            for k, out in enumerate(outputs)
        ]
        values += [
            np.broadcast_to(out[idx], space) for out, idx in zip(outputs, places, strict=True)
        ]
        yielded = evaluate_body(block, values, lambda dim: np.asarray(loops[dim]), outer)
        for out, idx, value in zip(outputs, places, yielded, strict=True):
            assert value is not None
            out[idx] = np.broadcast_to(value, space)
    return outputs


# The layout rewrites ------------------------------------------------------------------------


def apply_rewrite(op: TransformOp | PadOp | CropOp, x: Array) -> Array:
    """The result of a graph layout rewrite on the array `x` (no hint check)."""
    match op:
        case TransformOp():
            pad = None if op.pad_value is None else _scalar_of(op.pad_value)
            try:
                return op.map.map_ndarray(x, pad_value=pad)
            except ValueError as err:
                raise EvaluationError(f"'layout.transform': {err}") from None
        case PadOp():
            return padded(x, op.get_low(), op.get_high(), _scalar_of(op.pad_value))
        case CropOp():
            return np.array(x[_window(op)])


def _window(op: CropOp) -> tuple[slice, ...]:
    return tuple(slice(s, s + n) for s, n in zip(op.get_start(), op.get_sizes(), strict=True))


def check_cropped_value(op: CropOp, x: Array) -> None:
    """Raise `EvaluationError` unless every element of `x` cropped away by `op` equals its
    concrete `cropped_value` (NaN equals NaN); nothing to check without one or for undef."""
    hint = op.cropped_value
    if not isinstance(hint, FloatAttr | IntegerAttr):
        return
    keep = np.zeros(x.shape, dtype=np.bool_)
    keep[_window(op)] = True
    dropped = x[~keep]
    expected = np.full(dropped.shape, scalar_value(hint), dtype=x.dtype)
    floating = bool(np.issubdtype(x.dtype, np.floating))
    if not np.array_equal(dropped, expected, equal_nan=floating):
        raise EvaluationError(
            f"'layout.crop': cropped-away elements differ from cropped_value {hint}"
        )


def _argument(name: str, k: int, arg: Any, type_: Attribute) -> Array:
    if isinstance(type_, TensorType):
        array = np.asarray(arg)
        shape = tuple(type_.get_shape())
        dtype = _tensor_dtype(type_)
        if array.shape != shape or array.dtype != dtype:
            raise EvaluationError(
                f"argument #{k} of '{name}' must be a {dtype} array of shape {list(shape)}, "
                f"got {array.dtype} {list(array.shape)}"
            )
        return np.array(array)
    return np.asarray(arg, dtype=dtype_of(type_))


def _loop_extents(op: GenericOp, maps: Sequence[IndexMap], args: Sequence[Array]) -> list[int]:
    """The extent of each loop: the operand dimension it indexes alone."""
    count = len(op.iterator_types.data)
    position = {f"d{m}": m for m in range(count)}
    extents: list[int | None] = [None] * count
    for imap, arg in zip(maps, args, strict=True):
        for dim, expr in enumerate(imap.final_indices):
            if isinstance(expr, Dim) and extents[position[expr.name]] is None:
                extents[position[expr.name]] = int(np.shape(arg)[dim])
    if any(e is None for e in extents):
        raise EvaluationError("'linalg.generic': a loop indexes no operand dimension alone")
    return [e for e in extents if e is not None]


def _indices(
    op: GenericOp,
    k: int,
    imap: IndexMap,
    loops: Sequence[Array | int],
    shape: tuple[int, ...],
    space: tuple[int, ...],
) -> tuple[Array, ...]:
    """The bounds-checked indices of operand `k` at every parallel point."""
    mapped = imap.map_indices(list(loops))
    result: list[Array] = []
    for dim, (index, extent) in enumerate(zip(mapped, shape, strict=True)):
        index = np.broadcast_to(np.asarray(index, dtype=np.int64), space)
        if index.size and (int(index.min()) < 0 or int(index.max()) >= extent):
            raise EvaluationError(
                f"'linalg.generic': operand #{k} is indexed out of bounds on dimension {dim} "
                f"(index range [{int(index.min())}, {int(index.max())}], extent {extent})"
            )
        result.append(index)
    return tuple(result)


def _gather(
    op: GenericOp,
    k: int,
    arg: Array,
    imap: IndexMap,
    loops: Sequence[Array | int],
    space: tuple[int, ...],
) -> Array:
    if not isinstance(op.operands[k].type, ShapedType):
        return np.broadcast_to(arg, space)
    return np.asarray(arg[_indices(op, k, imap, loops, arg.shape, space)])


def run_graph(
    module: ModuleOp, name: str, args: Sequence[Any], check_hints: bool = True
) -> list[Any]:
    """Evaluate function `name` of `module` on `args` (see the module docstring)."""
    return GraphEvaluator(module, check_hints=check_hints).run(name, args)
