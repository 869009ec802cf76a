"""A numpy reference evaluator for buffer-level IR (`layout` + upstream dialects).

Every pass is tested numerically: run a function before and after the pass on the same
inputs and compare. Usage:

```python
from physlayout.runtime.evaluator import Evaluator, run_function
outputs = run_function(module, "relu", [a, b])   # a, b: numpy arrays, mutated in place
```

Arguments and results
---------------------
- A buffer argument (`!layout.buffer`, `memref`) is a C-contiguous numpy array whose shape is
  the type's shape followed by the vector shape of its element type (a
  `!layout.buffer<16xvector<4xf32>>` is a (16, 4) float32 array) and whose dtype is the
  scalar element type's (f16/f32/f64, i1 as bool, iN as intN, index as int64). Dynamic memref
  extents accept any extent. The evaluator writes into it in place and checks shape and
  dtype on entry. A pending `transform` on a buffer type is ignored: before `apply-layout`
  a buffer is accessed in its logical shape. Memref layout maps are ignored likewise (an
  argument is row-major over its type's shape).
- A data handle argument (`!layout.ptr`) is any C-contiguous array of the scalar dtype,
  used flat.
- Scalar arguments are Python/numpy numbers (integers wrap to the type's width); vector
  arguments are arrays of the vector's shape.
- Results: scalars come back as Python `int`/`float`/`bool`, vectors as arrays, buffers as
  arrays aliasing their storage.

Storage model
-------------
A data handle is a flat array of scalars. `layout.data %buf` is the handle `%buf` was declared
over (an argument buffer's own flat array); `layout.allocate [extents]` makes a zero-filled
handle of `prod(extents)` elements (times the vector lanes of the handle's element type);
`layout.decl_buffer %ptr offset K` views the handle row-major from scalar offset
`K * lanes(ptr element)` with the declared shape (a `vector<4xf32>` buffer over an `f32`
handle is legal: same scalars). Declarations over one handle alias. Memref ops build strided
views of the same kind. Views that leave their storage and accesses outside a view's shape
(checked per axis) raise `EvaluationError`, a `DiagnosticException` naming the buffer and the
index.

Execution model
---------------
SIMT-style vectorized execution (see `evaluator_values`): a parallel loop (`scf.parallel`,
`affine.parallel`) runs all its iterations at once as new lane axes; loads gather, stores
scatter at the active lanes. Sequential loops iterate in Python, vectorized over the
enclosing lanes; when their bounds differ between lanes they run to the largest trip count
with the finished lanes masked off. `scf.if`/`affine.if` run only the taken branch when the
condition is uniform over the active lanes, else both branches under complementary masks,
selecting yielded values with `np.where`. Inactive lanes never touch memory or raise errors.
Storage allocated inside a parallel loop is private to each lane.

With `vectorize_loops=True` (the default) an `scf.for`/`affine.for` that provably behaves like
a parallel loop is run as one (the rule is documented in `evaluator_analysis`); otherwise
it runs sequentially. Results are identical in both modes, up to the order in which float
reductions in `scf.parallel`/`affine.parallel` combine values.

Anything outside the supported op set raises a `DiagnosticException` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from math import prod
from typing import Any, TypeAlias

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AffineSetAttr,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.ir.affine.affine_set import AffineConstraintKind
from xdsl.utils.exceptions import DiagnosticException

from physlayout.dialects.layout import BufferType, PtrType
from physlayout.runtime.evaluator_analysis import (
    UNKNOWN,
    Root,
    external_memory_values,
    loop_is_parallelizable,
)
from physlayout.runtime.evaluator_arith import (
    REDUCTION_KINDS,
    VALUE_OPS,
    constant_value,
    float_reduction,
    int_reduction,
    is_float_kind,
)
from physlayout.runtime.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    Lanes,
    Storage,
    View,
    active_values,
    and_masks,
    any_active,
    check_view,
    dtype_of,
    element_offsets,
    gather,
    is_scalar_access,
    memory_element,
    new_storage,
    read_scalar,
    row_major_strides,
    scatter,
    to_depth,
    uniform_value,
    vector_shape,
    view_as_array,
    whole_view_offsets,
    with_trailing,
    wrap,
    write_scalar,
)

__all__ = ["ArgValue", "EvaluationError", "Evaluator", "ResultValue", "run_function"]

ArgValue: TypeAlias = "np.ndarray[Any, Any] | np.generic[Any] | int | float | bool"
"""A function argument on the Python side (numpy scalars are accepted for scalars)."""
ResultValue: TypeAlias = "np.ndarray[Any, Any] | int | float | bool"
"""A function result on the Python side."""

Memory: TypeAlias = View | Handle
Entry: TypeAlias = "Array | View | Handle"
"""A value during evaluation: a lane array (at the current depth) or a memory object."""

_TERMINATORS: frozenset[str] = frozenset(
    {"func.return", "scf.yield", "affine.yield", "scf.reduce", "scf.reduce.return"}
)


def _name(value: SSAValue) -> str:
    """How errors name a buffer: its SSA name, else the op that made it."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, BlockArgument):
        return f"block argument #{value.index}"
    owner = value.owner
    assert isinstance(owner, Operation)
    return f"result of '{owner.name}'"


@dataclass
class _Frame:
    """The values of one function activation: numbers with their lane depth, or memory.

    Keyed by `id(value)` (SSA values hash by identity anyway; this is faster)."""

    values: dict[int, tuple[Array, int] | View | Handle] = field(default_factory=lambda: {})

    def num(self, value: SSAValue, lanes: Lanes) -> Array:
        entry = self.values.get(id(value))
        if type(entry) is tuple:
            array, depth = entry
            return array if depth == lanes.depth else to_depth(array, depth, lanes.depth)
        raise EvaluationError(f"evaluator: {_name(value)} is not a number here")

    def mem(self, value: SSAValue, what: str) -> Memory:
        entry = self.values.get(id(value))
        if isinstance(entry, View | Handle):
            return entry
        raise EvaluationError(f"{what}: {_name(value)} is not a buffer here")

    def view(self, value: SSAValue, what: str) -> View:
        entry = self.mem(value, what)
        if isinstance(entry, View):
            return entry
        raise EvaluationError(f"{what}: {_name(value)} is a data handle, not a buffer")

    def lookup(self, value: SSAValue) -> tuple[Array, int] | View | Handle | None:
        """The raw entry of `value` (None when it has no value yet)."""
        return self.values.get(id(value))

    def get(self, value: SSAValue, lanes: Lanes) -> Entry:
        entry = self.values.get(id(value))
        if type(entry) is tuple:
            array, depth = entry
            return array if depth == lanes.depth else to_depth(array, depth, lanes.depth)
        if entry is None:
            raise EvaluationError(f"evaluator: {_name(value)} has no value")
        assert isinstance(entry, View | Handle)
        return entry

    def set(self, value: SSAValue, entry: Entry, depth: int) -> None:
        """Bind `value` (a number is stored with the lane depth it was computed at)."""
        if isinstance(entry, View | Handle):
            self.values[id(value)] = entry
            return
        array = entry if type(entry) is np.ndarray else np.asarray(entry)
        if array.ndim < depth:
            need = depth + len(vector_shape(value.type))
            array = array.reshape((1,) * (need - array.ndim) + array.shape)
        self.values[id(value)] = (array, depth)


@dataclass(slots=True)
class _Step:
    """An op prepared for execution: its operands and results cached, its handler chosen."""

    op: Operation
    operands: tuple[SSAValue, ...]
    results: tuple[SSAValue, ...]
    handler: Callable[[_Step, _Frame, Lanes], None]
    terminator: bool


_Handler = Callable[[_Step, _Frame, Lanes], None]


class Evaluator:
    """Evaluates the functions of `module` on numpy arrays (see the module docstring)."""

    def __init__(self, module: ModuleOp, vectorize_loops: bool = True):
        self.module = module
        self.vectorize_loops = vectorize_loops
        self._functions: dict[str, Operation] = {}
        for op in module.ops:
            name = op.properties.get("sym_name")
            if op.name == "func.func" and name is not None:
                self._functions[getattr(name, "data", "")] = op
        self._handlers: dict[str, _Handler] = self._make_handlers()
        self._blocks: dict[Block, list[_Step]] = {}
        self._decisions: dict[Operation, tuple[tuple[object, ...], bool]] = {}
        self._externals: dict[Operation, list[SSAValue]] = {}

    # Public API ---------------------------------------------------------------------------

    def run(self, name: str, args: Sequence[ArgValue]) -> list[ResultValue]:
        """Call function `name` with `args`; returns its results (buffers alias storage)."""
        func = self._function(name)
        block = self._entry(func)
        if len(args) != len(block.args):
            raise EvaluationError(f"@{name} takes {len(block.args)} arguments, got {len(args)}")
        entries = [
            _convert_arg(value, arg, i)
            for i, (value, arg) in enumerate(zip(args, block.args, strict=True))
        ]
        with np.errstate(all="ignore"):
            results = self._call(func, entries, Lanes((), None))
        return [_convert_result(entry) for entry in results]

    # Functions ----------------------------------------------------------------------------

    def _function(self, name: str) -> Operation:
        func = self._functions.get(name)
        if func is None:
            raise EvaluationError(f"evaluator: no function @{name} in the module")
        return func

    def _entry(self, func: Operation) -> Block:
        blocks = func.regions[0].blocks
        if not blocks:
            raise EvaluationError(
                f"evaluator: function {func.properties.get('sym_name')} has no body"
            )
        if len(blocks) > 1:
            raise EvaluationError("evaluator: functions with several blocks are not supported")
        return blocks[0]

    def _call(self, func: Operation, args: Sequence[Entry], lanes: Lanes) -> list[Entry]:
        return self._run_block(self._entry(func), _Frame(), lanes, args)

    # Blocks and ops -----------------------------------------------------------------------

    def _run_block(
        self, block: Block, frame: _Frame, lanes: Lanes, args: Sequence[Entry]
    ) -> list[Entry]:
        """Run `block` with `args` bound; returns the operands of its terminator."""
        for arg, value in zip(block.args, args, strict=True):
            frame.set(arg, value, lanes.depth)
        steps = self._blocks.get(block)
        if steps is None:
            steps = self._compile(block)
        for node in steps:
            if node.terminator:
                return [frame.get(v, lanes) for v in node.operands]
            try:
                node.handler(node, frame, lanes)
            except DiagnosticException:
                raise
            except Exception as err:
                raise EvaluationError(f"'{node.op.name}': {type(err).__name__}: {err}") from err
        return []

    def _compile(self, block: Block) -> list[_Step]:
        steps: list[_Step] = []
        for op in block.ops:
            handler = self._handlers.get(op.name)
            if handler is None:
                handler = self._value_op if op.name in VALUE_OPS else self._unsupported
            steps.append(
                _Step(op, tuple(op.operands), tuple(op.results), handler, op.name in _TERMINATORS)
            )
        self._blocks[block] = steps
        return steps

    def _run_region(
        self, region: Region, frame: _Frame, lanes: Lanes, args: Sequence[Entry]
    ) -> list[Entry]:
        if not region.blocks:
            return []
        if len(region.blocks) > 1:
            raise EvaluationError("evaluator: regions with several blocks are not supported")
        return self._run_block(region.blocks[0], frame, lanes, args)

    def _value_op(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        """An op of `VALUE_OPS`: one result computed from the operand values."""
        args = [frame.num(v, lanes) for v in node.operands]
        result = VALUE_OPS[node.op.name](node.op, args, lanes.mask)
        frame.set(node.results[0], result, lanes.depth)

    def _unsupported(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        raise EvaluationError(f"evaluator: unsupported operation '{node.op.name}'")

    def _make_handlers(self) -> dict[str, _Handler]:
        return {
            "arith.constant": self._constant,
            "func.call": self._func_call,
            "scf.for": self._scf_for,
            "scf.parallel": self._scf_parallel,
            "scf.if": self._scf_if,
            "affine.for": self._affine_for,
            "affine.parallel": self._affine_parallel,
            "affine.if": self._affine_if,
            "affine.apply": self._affine_apply,
            "affine.min": self._affine_min_max,
            "affine.max": self._affine_min_max,
            "affine.load": self._affine_load,
            "affine.vector_load": self._affine_load,
            "affine.store": self._affine_store,
            "affine.vector_store": self._affine_store,
            "layout.allocate": self._layout_allocate,
            "layout.decl_buffer": self._layout_decl_buffer,
            "layout.data": self._layout_data,
            "layout.load": self._load,
            "layout.store": self._store,
            "memref.load": self._load,
            "memref.store": self._store,
            "vector.load": self._load,
            "vector.store": self._store,
            "memref.alloc": self._memref_alloc,
            "memref.alloca": self._memref_alloc,
            "memref.dealloc": lambda node, frame, lanes: None,
            "memref.cast": self._memref_same_view,
            "memref.memory_space_cast": self._memref_same_view,
            "memref.assume_alignment": self._memref_same_view,
            "memref.reinterpret_cast": self._memref_reinterpret_cast,
            "memref.subview": self._memref_subview,
            "memref.collapse_shape": self._memref_collapse_shape,
            "memref.expand_shape": self._memref_expand_shape,
            "memref.copy": self._memref_copy,
            "memref.dim": self._memref_dim,
        }

    # Simple ops ---------------------------------------------------------------------------

    def _constant(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        value = op.properties.get("value")
        if value is None:
            raise EvaluationError(f"'{op.name}': missing value")
        frame.set(node.results[0], constant_value(op, value), 0)

    def _func_call(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        callee = op.properties.get("callee")
        reference = getattr(callee, "root_reference", None)
        if reference is None:
            raise EvaluationError(f"'{op.name}': missing callee")
        func = self._function(reference.data)
        args = [frame.get(v, lanes) for v in node.operands]
        results = self._call(func, args, lanes)
        for result, value in zip(node.results, results, strict=True):
            frame.set(result, value, lanes.depth)

    # Control flow -------------------------------------------------------------------------

    def _scf_for(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        lb, ub, step, *inits = node.operands
        bounds = (frame.num(lb, lanes), frame.num(ub, lanes), frame.num(step, lanes))
        init_values = [frame.get(v, lanes) for v in inits]
        results = self._loop(op, bounds, init_values, frame, lanes)
        for result, value in zip(node.results, results, strict=True):
            frame.set(result, value, lanes.depth)

    def _affine_for(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        lb_map = _map_prop(op, "lowerBoundMap")
        ub_map = _map_prop(op, "upperBoundMap")
        step_attr = op.properties.get("step")
        if not isinstance(step_attr, IntegerAttr):
            raise EvaluationError(f"'{op.name}': missing step")
        operands = [frame.num(v, lanes) for v in node.operands]
        count_lb = lb_map.num_dims + lb_map.num_symbols
        count_ub = ub_map.num_dims + ub_map.num_symbols
        lb = _reduce_bounds(_apply_map(lb_map, operands[:count_lb]), np.maximum)
        ub = _reduce_bounds(
            _apply_map(ub_map, operands[count_lb : count_lb + count_ub]), np.minimum
        )
        step = np.asarray(step_attr.value.data, dtype=np.int64)
        init_values = [frame.get(v, lanes) for v in node.operands[count_lb + count_ub :]]
        results = self._loop(op, (lb, ub, step), init_values, frame, lanes)
        for result, value in zip(node.results, results, strict=True):
            frame.set(result, value, lanes.depth)

    def _loop(
        self,
        op: Operation,
        bounds: tuple[Array, Array, Array],
        inits: list[Entry],
        frame: _Frame,
        lanes: Lanes,
    ) -> list[Entry]:
        """Run a sequential loop (scf.for / affine.for) and return its results."""
        if not any_active(lanes):
            return inits
        lb, ub, step = (to_depth(b, b.ndim, lanes.depth) if b.ndim == 0 else b for b in bounds)
        _check_steps(op, step, lanes)
        block = op.regions[0].blocks[0]
        iv_dtype = dtype_of(block.args[0].type)
        if not inits and self.vectorize_loops and self._parallelizable(op, frame):
            self._parallel(block, [(lb, ub, step)], [iv_dtype], frame, lanes)
            return []
        low, high, stride = (uniform_value(b, lanes) for b in (lb, ub, step))
        if low is not None and high is not None and stride is not None:
            return self._uniform_loop(
                block, range(low, high, stride), iv_dtype, inits, frame, lanes
            )
        return self._masked_loop(op, block, (lb, ub, step), iv_dtype, inits, frame, lanes)

    def _uniform_loop(
        self,
        block: Block,
        iterations: range,
        iv_dtype: np.dtype[Any],
        inits: list[Entry],
        frame: _Frame,
        lanes: Lanes,
    ) -> list[Entry]:
        carried = inits
        shape = (1,) * lanes.depth
        for i in iterations:
            iv = np.full(shape, i, dtype=iv_dtype)
            carried = self._run_block(block, frame, lanes, [iv, *carried])
        return carried

    def _masked_loop(
        self,
        op: Operation,
        block: Block,
        bounds: tuple[Array, Array, Array],
        iv_dtype: np.dtype[Any],
        inits: list[Entry],
        frame: _Frame,
        lanes: Lanes,
    ) -> list[Entry]:
        """A loop whose bounds differ between lanes: lanes drop out as they finish."""
        lb, ub, step = bounds
        iv = lb.astype(iv_dtype)
        carried = inits
        while True:
            active = and_masks(lanes.mask, iv < ub)
            assert active is not None
            if not bool(np.any(active)):
                return carried
            inner = Lanes(lanes.shape, active)
            new = self._run_block(block, frame, inner, [iv, *carried])
            carried = [_select(op, active, n, c) for n, c in zip(new, carried, strict=True)]
            iv = (iv + step).astype(iv_dtype)

    def _parallelizable(self, op: Operation, frame: _Frame) -> bool:
        """The `vectorize_loops` rule for `op`, cached on the storages it depends on."""
        externals = self._externals.get(op)
        if externals is None:
            externals = external_memory_values(op)
            self._externals[op] = externals
        key = tuple(frame.lookup(v) for v in externals)
        cached = self._decisions.get(op)
        if (
            cached is not None
            and len(cached[0]) == len(key)
            and all(a is b for a, b in zip(cached[0], key, strict=True))
        ):
            return cached[1]

        def outside(value: SSAValue) -> Root:
            entry = frame.lookup(value)
            if isinstance(entry, View | Handle):
                return entry.storage
            return UNKNOWN

        def injective(value: SSAValue) -> bool:
            entry = frame.lookup(value)
            return isinstance(entry, View) and entry.is_injective()

        decision = loop_is_parallelizable(op, outside, injective, self._functions.get)
        self._decisions[op] = (key, decision)
        return decision

    def _parallel(
        self,
        block: Block,
        bounds: Sequence[tuple[Array, Array, Array]],
        dtypes: Sequence[np.dtype[Any]],
        frame: _Frame,
        lanes: Lanes,
    ) -> tuple[Lanes, list[Entry]] | None:
        """Run `block` once with one new lane axis per bound triple (all iterations at once).

        Returns the inner lanes and the terminator's operands, or None when some axis has
        no iteration.
        """
        count = len(bounds)
        depth = lanes.depth
        ivs: list[Array] = []
        extents: list[int] = []
        mask: Array | None = None
        for axis, (lb, ub, step) in enumerate(bounds):
            shape = (1,) * (depth + axis), (1,) * (count - axis - 1)
            low, high, stride = (uniform_value(b, lanes) for b in (lb, ub, step))
            if low is not None and high is not None and stride is not None:
                trip = max(0, -(-(high - low) // stride))
                iv = low + np.arange(trip, dtype=np.int64) * stride
                iv = iv.reshape(shape[0] + (trip,) + shape[1])
            else:
                trips = active_values(-(-(ub - lb) // step), lanes)
                trip = max(0, int(trips.max())) if trips.size else 0
                ramp = np.arange(trip, dtype=np.int64).reshape(shape[0] + (trip,) + shape[1])
                iv = with_trailing(lb, count) + ramp * with_trailing(step, count)
                mask = and_masks(mask, iv < with_trailing(ub, count))
            if trip == 0:
                return None
            ivs.append(iv.astype(dtypes[axis]))
            extents.append(trip)
        inner = lanes.expand(extents, mask)
        if not any_active(inner):
            return None
        return inner, self._run_block(block, frame, inner, ivs)

    def _scf_parallel(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        segments = _segments(op)
        values = [frame.num(v, lanes) for v in node.operands[: 3 * segments[0]]]
        count = segments[0]
        bounds = [(values[i], values[count + i], values[2 * count + i]) for i in range(count)]
        inits = [frame.get(v, lanes) for v in node.operands[3 * count :]]
        if not any_active(lanes):
            self._set_results(op, inits, frame, lanes)
            return
        for _, _, step in bounds:
            _check_steps(op, step, lanes)
        block = op.regions[0].blocks[0]
        out = self._parallel(block, bounds, [np.dtype(np.int64)] * count, frame, lanes)
        if not inits:
            return
        if out is None:
            self._set_results(op, inits, frame, lanes)
            return
        inner, partials = out
        reduce_op = block.last_op
        assert reduce_op is not None
        results: list[Entry] = []
        for region, partial, init in zip(reduce_op.regions, partials, inits, strict=True):
            results.append(
                self._tree_reduce(
                    op, region, _array(op, partial), _array(op, init), inner, frame, lanes
                )
            )
        self._set_results(op, results, frame, lanes)

    def _tree_reduce(
        self,
        op: Operation,
        region: Region,
        value: Array,
        init: Array,
        inner: Lanes,
        frame: _Frame,
        lanes: Lanes,
    ) -> Array:
        """Combine `value` over the new lane axes of `inner` with the `scf.reduce` region,
        pairwise, then with `init`; inactive lanes do not take part."""
        depth = lanes.depth
        outer, new = inner.shape[:depth], inner.shape[depth:]
        tail = value.shape[len(inner.shape) :]
        count = prod(new)
        value = np.broadcast_to(value, inner.shape + tail).reshape((*outer, count, *tail))
        valid = (
            np.ones(inner.shape, dtype=np.bool_)
            if inner.mask is None
            else (np.broadcast_to(inner.mask, inner.shape))
        )
        valid = valid.reshape((*outer, count))
        pick = (slice(None),) * depth
        while count > 1:
            if count % 2:
                value = np.concatenate([value, value[(*pick, slice(-1, None))]], axis=depth)
                valid = np.concatenate([valid, np.zeros((*outer, 1), dtype=np.bool_)], axis=depth)
                count += 1
            a, b = value[(*pick, slice(0, None, 2))], value[(*pick, slice(1, None, 2))]
            va, vb = valid[(*pick, slice(0, None, 2))], valid[(*pick, slice(1, None, 2))]
            both = va & vb
            half = Lanes((*outer, count // 2), both)
            combined = _array(op, self._run_region(region, frame, half, [a, b])[0])
            extra = len(tail)
            value = np.where(
                with_trailing(both, extra), combined, np.where(with_trailing(va, extra), a, b)
            )
            valid = va | vb
            count //= 2
        value = value.reshape(outer + tail)
        valid = valid.reshape(outer)
        final = Lanes(lanes.shape, valid)
        combined = _array(op, self._run_region(region, frame, final, [init, value])[0])
        return np.where(with_trailing(valid, len(tail)), combined, init)

    def _affine_parallel(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        lb_map = _map_prop(op, "lowerBoundsMap")
        ub_map = _map_prop(op, "upperBoundsMap")
        operands = [frame.num(v, lanes) for v in node.operands]
        count_lb = lb_map.num_dims + lb_map.num_symbols
        lbs = _grouped(
            _apply_map(lb_map, operands[:count_lb]), _groups(op, "lowerBoundsGroups"), np.maximum
        )
        ubs = _grouped(
            _apply_map(ub_map, operands[count_lb:]), _groups(op, "upperBoundsGroups"), np.minimum
        )
        steps_attr = op.properties.get("steps")
        steps = [
            np.asarray(s.value.data, dtype=np.int64)
            for s in (steps_attr.data if isinstance(steps_attr, ArrayAttr) else ())
            if isinstance(s, IntegerAttr)
        ]
        if not (len(lbs) == len(ubs) == len(steps)):
            raise EvaluationError(f"'{op.name}': inconsistent bounds and steps")
        kinds = _reduction_kinds(op)
        identity_results = [
            _identity(kind, r.type) for kind, r in zip(kinds, node.results, strict=True)
        ]
        if not any_active(lanes):
            self._set_results(op, identity_results, frame, lanes)
            return
        for step in steps:
            _check_steps(op, step, lanes)
        block = op.regions[0].blocks[0]
        bounds = list(zip(lbs, ubs, steps, strict=True))
        out = self._parallel(block, bounds, [np.dtype(np.int64)] * len(bounds), frame, lanes)
        if not kinds:
            return
        if out is None:
            self._set_results(op, identity_results, frame, lanes)
            return
        inner, partials = out
        depth = lanes.depth
        axes = tuple(range(depth, len(inner.shape)))
        valid = (
            np.ones(inner.shape, np.bool_)
            if inner.mask is None
            else np.broadcast_to(inner.mask, inner.shape)
        )
        results: list[Entry] = []
        for kind, partial, result in zip(kinds, partials, node.results, strict=True):
            value = np.broadcast_to(_array(op, partial), inner.shape)
            if is_float_kind(kind):
                results.append(float_reduction(kind, value, valid, axes))
            else:
                results.append(int_reduction(kind, value, valid, axes, result.type))
        self._set_results(op, results, frame, lanes)

    def _set_results(
        self, op: Operation, values: Sequence[Entry], frame: _Frame, lanes: Lanes
    ) -> None:
        for result, value in zip(op.results, values, strict=True):
            frame.set(result, value, lanes.depth)

    def _scf_if(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        cond = frame.num(node.operands[0], lanes)
        self._branch(op, cond, op.regions[0], op.regions[1], frame, lanes)

    def _affine_if(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        attr = op.properties.get("condition")
        if not isinstance(attr, AffineSetAttr):
            raise EvaluationError(f"'{op.name}': missing condition")
        affine_set = attr.data
        operands = [frame.num(v, lanes) for v in node.operands]
        dims, syms = operands[: affine_set.num_dims], operands[affine_set.num_dims :]
        cond: Array = np.asarray(True)
        for constraint in affine_set.constraints:
            lhs = _eval_expr(constraint.lhs, dims, syms)
            rhs = _eval_expr(constraint.rhs, dims, syms)
            if constraint.kind == AffineConstraintKind.eq:
                cond = cond & (lhs == rhs)
            elif constraint.kind == AffineConstraintKind.ge:
                cond = cond & (lhs >= rhs)
            else:
                cond = cond & (lhs <= rhs)
        cond = np.asarray(cond).reshape((1,) * max(lanes.depth - np.ndim(cond), 0) + np.shape(cond))
        self._branch(op, cond, op.regions[0], op.regions[1], frame, lanes)

    def _branch(
        self,
        op: Operation,
        cond: Array,
        then: Region,
        otherwise: Region,
        frame: _Frame,
        lanes: Lanes,
    ) -> None:
        """Run an if: only the taken branch when `cond` is uniform, else both under masks."""
        if not any_active(lanes):
            return
        uniform = uniform_value(cond, lanes)
        if uniform is not None:
            region = then if uniform else otherwise
            results = self._run_region(region, frame, lanes, [])
            self._set_results(op, results, frame, lanes)
            return
        taken = self._run_region(then, frame, lanes.with_mask(cond), [])
        skipped = self._run_region(otherwise, frame, lanes.with_mask(~cond), [])
        merged = [_select(op, cond, t, e) for t, e in zip(taken, skipped, strict=True)]
        self._set_results(op, merged, frame, lanes)

    # Affine value ops ---------------------------------------------------------------------

    def _affine_apply(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        amap = _map_prop(op, "map")
        operands = [frame.num(v, lanes) for v in node.operands]
        (result,) = _apply_map(amap, operands)
        frame.set(node.results[0], result.astype(np.int64), lanes.depth)

    def _affine_min_max(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        amap = _map_prop(op, "map")
        operands = [frame.num(v, lanes) for v in node.operands]
        combine = np.minimum if op.name == "affine.min" else np.maximum
        frame.set(node.results[0], _reduce_bounds(_apply_map(amap, operands), combine), lanes.depth)

    # Memory access ------------------------------------------------------------------------

    def _access_width(self, value_type: Attribute, view: View) -> int:
        """Elements an access of `value_type` touches along the innermost axis."""
        if view.vshape or not isinstance(value_type, VectorType):
            return 1
        shape = value_type.get_shape()
        return shape[-1] if shape else 1

    def _read(self, op: Operation, view: View, indices: Sequence[Array], lanes: Lanes) -> Array:
        width = self._access_width(op.results[0].type, view)
        if is_scalar_access(view, indices, lanes):
            return read_scalar(view, indices, width, f"'{op.name}'")
        flat, tail = element_offsets(view, indices, width, lanes, f"'{op.name}'")
        return gather(view.storage, flat, lanes, tail, view.dtype)

    def _write(
        self,
        op: Operation,
        value_ssa: SSAValue,
        view: View,
        indices: Sequence[Array],
        frame: _Frame,
        lanes: Lanes,
    ) -> None:
        if not any_active(lanes):
            return
        value = frame.num(value_ssa, lanes)
        width = self._access_width(value_ssa.type, view)
        if is_scalar_access(view, indices, lanes):
            write_scalar(view, indices, width, value.astype(view.dtype), f"'{op.name}'")
            return
        flat, tail = element_offsets(view, indices, width, lanes, f"'{op.name}'")
        scatter(
            view.storage, flat, value.astype(view.dtype), lanes, tail, view.dtype, f"'{op.name}'"
        )

    def _load(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        view = frame.view(node.operands[0], f"'{op.name}'")
        indices = [frame.num(v, lanes) for v in node.operands[1:]]
        frame.set(node.results[0], self._read(op, view, indices, lanes), lanes.depth)

    def _store(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        view = frame.view(node.operands[1], f"'{op.name}'")
        indices = [frame.num(v, lanes) for v in node.operands[2:]]
        self._write(op, node.operands[0], view, indices, frame, lanes)

    def _affine_load(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        view = frame.view(node.operands[0], f"'{op.name}'")
        operands = [frame.num(v, lanes) for v in node.operands[1:]]
        indices = _apply_map(_map_prop(op, "map"), operands)
        frame.set(node.results[0], self._read(op, view, indices, lanes), lanes.depth)

    def _affine_store(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        view = frame.view(node.operands[1], f"'{op.name}'")
        operands = [frame.num(v, lanes) for v in node.operands[2:]]
        indices = _apply_map(_map_prop(op, "map"), operands)
        self._write(op, node.operands[0], view, indices, frame, lanes)

    # layout ops ---------------------------------------------------------------------------

    def _layout_allocate(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        ptr_type = node.results[0].type
        if not isinstance(ptr_type, PtrType):
            raise EvaluationError(f"'{op.name}': expected a !layout.ptr result")
        extents_attr = op.properties.get("extents")
        extents = [getattr(e, "data", 0) for e in getattr(extents_attr, "data", ())]
        lanes_per = prod(vector_shape(ptr_type.element_type))
        storage = new_storage(
            prod(extents) * lanes_per,
            dtype_of(ptr_type.element_type),
            lanes,
            _name(node.results[0]),
        )
        frame.set(node.results[0], Handle(storage, lanes_per), lanes.depth)

    def _layout_decl_buffer(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        handle = frame.mem(node.operands[0], f"'{op.name}'")
        if not isinstance(handle, Handle):
            raise EvaluationError(f"'{op.name}': operand is not a data handle")
        buffer_type = node.results[0].type
        if not isinstance(buffer_type, BufferType):
            raise EvaluationError(f"'{op.name}': expected a !layout.buffer result")
        offset_attr = op.properties.get("elem_offset")
        offset = getattr(offset_attr, "data", 0)
        vshape = vector_shape(buffer_type.element_type)
        shape = buffer_type.get_shape()
        view = View(
            handle.storage,
            offset * handle.lanes,
            shape,
            row_major_strides(shape, prod(vshape)),
            vshape,
            dtype_of(buffer_type.element_type),
            _name(node.results[0]),
        )
        frame.set(node.results[0], check_view(view, f"'{op.name}'"), lanes.depth)

    def _layout_data(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        view = frame.view(node.operands[0], f"'{op.name}'")
        ptr_type = node.results[0].type
        element = memory_element(ptr_type)
        lanes_per = prod(vector_shape(element)) if element is not None else 1
        frame.set(node.results[0], Handle(view.storage, lanes_per), lanes.depth)

    # memref ops ---------------------------------------------------------------------------

    def _memref_alloc(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        memref_type = node.results[0].type
        if not isinstance(memref_type, MemRefType):
            raise EvaluationError(f"'{op.name}': expected a memref result")
        dynamic = iter(node.operands)
        shape: list[int] = []
        for extent in memref_type.get_shape():
            if extent >= 0:
                shape.append(extent)
                continue
            size = next(dynamic, None)
            if size is None:
                raise EvaluationError(f"'{op.name}': missing dynamic size")
            shape.append(_uniform_int(op, frame.num(size, lanes), lanes, "dynamic size"))
        element = memref_type.get_element_type()
        vshape = vector_shape(element)
        name = _name(node.results[0])
        storage = new_storage(prod(shape) * prod(vshape), dtype_of(element), lanes, name)
        view = View(
            storage,
            0,
            tuple(shape),
            row_major_strides(shape, prod(vshape)),
            vshape,
            dtype_of(element),
            name,
        )
        frame.set(node.results[0], view, lanes.depth)

    def _memref_same_view(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        if node.results:
            frame.set(node.results[0], frame.view(node.operands[0], f"'{op.name}'"), lanes.depth)

    def _mixed(
        self,
        op: Operation,
        prop: str,
        operands: Sequence[SSAValue],
        frame: _Frame,
        lanes: Lanes,
    ) -> list[int]:
        """Static values of `prop` with DYNAMIC_INDEX entries taken from `operands`."""
        attr = op.properties.get(prop)
        if not isinstance(attr, DenseArrayBase):
            raise EvaluationError(f"'{op.name}': missing {prop}")
        dynamic = iter(operands)
        values: list[int] = []
        for value in attr.get_values():
            if int(value) != DYNAMIC_INDEX:
                values.append(int(value))
                continue
            operand = next(dynamic, None)
            if operand is None:
                raise EvaluationError(f"'{op.name}': missing dynamic operand for {prop}")
            values.append(_uniform_int(op, frame.num(operand, lanes), lanes, prop))
        return values

    def _offsets_sizes_strides(
        self, op: Operation, frame: _Frame, lanes: Lanes
    ) -> tuple[list[int], list[int], list[int]]:
        counts = _segments(op)
        operands = list(op.operands[1:])
        groups = [
            operands[: counts[1]],
            operands[counts[1] : counts[1] + counts[2]],
            operands[counts[1] + counts[2] :],
        ]
        return (
            self._mixed(op, "static_offsets", groups[0], frame, lanes),
            self._mixed(op, "static_sizes", groups[1], frame, lanes),
            self._mixed(op, "static_strides", groups[2], frame, lanes),
        )

    def _memref_reinterpret_cast(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        source = frame.view(node.operands[0], f"'{op.name}'")
        offsets, sizes, strides = self._offsets_sizes_strides(op, frame, lanes)
        lanes_per = source.lanes
        view = View(
            source.storage,
            offsets[0] * lanes_per,
            tuple(sizes),
            tuple(s * lanes_per for s in strides),
            source.vshape,
            source.dtype,
            _name(node.results[0]),
        )
        frame.set(node.results[0], check_view(view, f"'{op.name}'"), lanes.depth)

    def _memref_subview(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        source = frame.view(node.operands[0], f"'{op.name}'")
        offsets, sizes, steps = self._offsets_sizes_strides(op, frame, lanes)
        for axis, (start, size, step) in enumerate(zip(offsets, sizes, steps, strict=True)):
            last = start + (size - 1) * step if size > 0 else start
            if start < 0 or (size > 0 and last >= source.shape[axis]):
                raise EvaluationError(
                    f"'{op.name}': subview [{start} +{size} *{step}] leaves axis {axis} of "
                    f"{source.name} (extent {source.shape[axis]})"
                )
        offset = source.offset + sum(o * s for o, s in zip(offsets, source.strides, strict=True))
        shape = list(sizes)
        strides = [s * t for s, t in zip(source.strides, steps, strict=True)]
        result_type = node.results[0].type
        rank = len(result_type.get_shape()) if isinstance(result_type, MemRefType) else len(shape)
        while len(shape) > rank and 1 in shape:
            drop = shape.index(1)
            del shape[drop]
            del strides[drop]
        view = View(
            source.storage,
            offset,
            tuple(shape),
            tuple(strides),
            source.vshape,
            source.dtype,
            _name(node.results[0]),
        )
        frame.set(node.results[0], view, lanes.depth)

    def _memref_collapse_shape(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        source = frame.view(node.operands[0], f"'{op.name}'")
        shape: list[int] = []
        strides: list[int] = []
        for group in _reassociation(op):
            dims = [d for d in group if source.shape[d] != 1]
            for outer, inner in pairwise(dims):
                if source.strides[outer] != source.strides[inner] * source.shape[inner]:
                    raise EvaluationError(
                        f"'{op.name}': axes {list(group)} of {source.name} are not contiguous"
                    )
            shape.append(prod(source.shape[d] for d in group))
            strides.append(source.strides[dims[-1]] if dims else source.lanes)
        view = View(
            source.storage,
            source.offset,
            tuple(shape),
            tuple(strides),
            source.vshape,
            source.dtype,
            _name(node.results[0]),
        )
        frame.set(node.results[0], view, lanes.depth)

    def _memref_expand_shape(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        source = frame.view(node.operands[0], f"'{op.name}'")
        output = self._mixed(op, "static_output_shape", node.operands[1:], frame, lanes)
        strides = [0] * len(output)
        for axis, group in enumerate(_reassociation(op)):
            if prod(output[d] for d in group) != source.shape[axis]:
                raise EvaluationError(
                    f"'{op.name}': output extents {[output[d] for d in group]} do not "
                    f"multiply to extent {source.shape[axis]} of {source.name}"
                )
            step = source.strides[axis]
            for d in reversed(group):
                strides[d] = step
                step *= output[d]
        view = View(
            source.storage,
            source.offset,
            tuple(output),
            tuple(strides),
            source.vshape,
            source.dtype,
            _name(node.results[0]),
        )
        frame.set(node.results[0], view, lanes.depth)

    def _memref_copy(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        source = frame.view(node.operands[0], f"'{op.name}'")
        target = frame.view(node.operands[1], f"'{op.name}'")
        if source.shape != target.shape or source.vshape != target.vshape:
            raise EvaluationError(
                f"'{op.name}': shapes {list(source.shape)} and {list(target.shape)} differ"
            )
        if not any_active(lanes):
            return
        flat, tail = whole_view_offsets(source, lanes)
        values = gather(source.storage, flat, lanes, tail, source.dtype)
        flat, tail = whole_view_offsets(target, lanes)
        scatter(
            target.storage,
            flat,
            values.astype(target.dtype),
            lanes,
            tail,
            target.dtype,
            f"'{op.name}'",
        )

    def _memref_dim(self, node: _Step, frame: _Frame, lanes: Lanes) -> None:
        op = node.op
        source = frame.view(node.operands[0], f"'{op.name}'")
        axis = _uniform_int(op, frame.num(node.operands[1], lanes), lanes, "dimension")
        if not 0 <= axis < source.rank:
            raise EvaluationError(f"'{op.name}': no axis {axis} in {source.name}")
        frame.set(node.results[0], np.asarray(source.shape[axis], dtype=np.int64), 0)


# Helpers ----------------------------------------------------------------------------------


def run_function(
    module: ModuleOp,
    name: str,
    args: Sequence[ArgValue],
    vectorize_loops: bool = True,
) -> list[ResultValue]:
    """Evaluate function `name` of `module` on `args` (buffers are mutated in place)."""
    return Evaluator(module, vectorize_loops=vectorize_loops).run(name, args)


def _array(op: Operation, entry: Entry) -> Array:
    if isinstance(entry, View | Handle):
        raise EvaluationError(f"'{op.name}': expected a number, got a buffer")
    return entry


def _select(op: Operation, cond: Array, a: Entry, b: Entry) -> Entry:
    """`a` where `cond` (a lane mask) holds, else `b`."""
    if isinstance(a, View | Handle) or isinstance(b, View | Handle):
        if a is b:
            return a
        raise EvaluationError(f"'{op.name}': a buffer value that differs between lanes")
    return np.where(with_trailing(cond, max(np.ndim(a), np.ndim(b)) - cond.ndim), a, b)


def _check_steps(op: Operation, step: Array, lanes: Lanes) -> None:
    steps = active_values(step, lanes)
    if steps.size and int(steps.min()) <= 0:
        raise EvaluationError(f"'{op.name}': loop step must be positive, got {int(steps.min())}")


def _uniform_int(op: Operation, value: Array, lanes: Lanes, what: str) -> int:
    uniform = uniform_value(value, lanes)
    if uniform is None:
        raise EvaluationError(f"'{op.name}': {what} must be the same in all lanes")
    return int(uniform)


def _segments(op: Operation) -> list[int]:
    attr = op.properties.get("operandSegmentSizes")
    if not isinstance(attr, DenseArrayBase):
        raise EvaluationError(f"'{op.name}': missing operandSegmentSizes")
    return [int(v) for v in attr.get_values()]


def _reassociation(op: Operation) -> list[list[int]]:
    attr = op.properties.get("reassociation")
    if not isinstance(attr, ArrayAttr):
        raise EvaluationError(f"'{op.name}': missing reassociation")
    groups: list[list[int]] = []
    for group in attr.data:
        members = getattr(group, "data", ())
        groups.append([int(m.value.data) for m in members if isinstance(m, IntegerAttr)])
    return groups


def _map_prop(op: Operation, name: str) -> AffineMap:
    attr = op.properties.get(name)
    if not isinstance(attr, AffineMapAttr):
        raise EvaluationError(f"'{op.name}': missing affine map '{name}'")
    return attr.data


def _groups(op: Operation, name: str) -> list[int]:
    attr = op.properties.get(name)
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        raise EvaluationError(f"'{op.name}': missing '{name}'")
    values = np.broadcast_to(np.asarray(attr.get_values()), attr.get_shape())
    return [int(v) for v in values.reshape(-1)]


def _reduction_kinds(op: Operation) -> list[str]:
    attr = op.properties.get("reductions")
    kinds = [getattr(k, "data", "") for k in getattr(attr, "data", ())]
    for kind in kinds:
        if kind not in REDUCTION_KINDS:
            raise EvaluationError(f"'{op.name}': unsupported reduction '{kind}'")
    return kinds


def _identity(kind: str, type_: Attribute) -> Array:
    """The identity of an affine.parallel reduction kind (the result of zero iterations)."""
    dtype = dtype_of(type_)
    if is_float_kind(kind):
        table = {
            "addf": 0.0,
            "mulf": 1.0,
            "maximumf": -np.inf,
            "minimumf": np.inf,
            "maxnumf": -np.inf,
            "minnumf": np.inf,
        }
        return np.asarray(table[kind], dtype=dtype)
    empty = np.zeros((0,), dtype=dtype)
    return int_reduction(kind, empty, np.zeros((0,), np.bool_), (0,), type_)


def _grouped(values: list[Array], groups: list[int], combine: Any) -> list[Array]:
    result: list[Array] = []
    start = 0
    for size in groups:
        result.append(_reduce_bounds(values[start : start + size], combine))
        start += size
    return result


def _reduce_bounds(values: list[Array], combine: Any) -> Array:
    if not values:
        raise EvaluationError("evaluator: an affine bound map has no result")
    result = values[0]
    for value in values[1:]:
        result = combine(result, value)
    return np.asarray(result)


def _apply_map(amap: AffineMap, operands: Sequence[Array]) -> list[Array]:
    """Evaluate `amap` on `operands` (dims first, then symbols) over the lanes."""
    dims, syms = operands[: amap.num_dims], operands[amap.num_dims :]
    depth = max((np.ndim(o) for o in operands), default=0)
    return [
        _pad(np.asarray(_eval_expr(e, dims, syms), dtype=np.int64), depth) for e in amap.results
    ]


def _pad_shape(shape: tuple[int, ...], depth: int) -> tuple[int, ...]:
    return (1,) * max(depth - len(shape), 0) + shape


def _pad(value: Array, depth: int) -> Array:
    return value.reshape(_pad_shape(value.shape, depth))


def _eval_expr(expr: AffineExpr, dims: Sequence[Array], syms: Sequence[Array]) -> Any:
    """Evaluate an affine expression with numpy integer semantics (floordiv rounds down,
    mod is non-negative for positive divisors)."""
    if isinstance(expr, AffineConstantExpr):
        return np.int64(expr.value)
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineSymExpr):
        return syms[expr.position]
    if not isinstance(expr, AffineBinaryOpExpr):
        raise EvaluationError(f"evaluator: unsupported affine expression {expr}")
    lhs = _eval_expr(expr.lhs, dims, syms)
    rhs = _eval_expr(expr.rhs, dims, syms)
    if expr.kind == AffineBinaryOpKind.Add:
        return lhs + rhs
    if expr.kind == AffineBinaryOpKind.Mul:
        return lhs * rhs
    if np.any(np.asarray(rhs) == 0):
        raise EvaluationError(f"evaluator: division by zero in affine expression {expr}")
    if expr.kind == AffineBinaryOpKind.FloorDiv:
        return lhs // rhs
    if expr.kind == AffineBinaryOpKind.CeilDiv:
        return -((-lhs) // rhs)
    return lhs % rhs


def _convert_arg(value: Any, arg: SSAValue, index: int) -> Entry:
    """The evaluator value of a Python argument for block argument `arg`."""
    type_ = arg.type
    label = f"%{arg.name_hint}" if arg.name_hint else f"argument #{index}"
    if isinstance(type_, BufferType | MemRefType):
        return _buffer_arg(value, type_, label)
    if isinstance(type_, PtrType):
        array = _contiguous(value, dtype_of(type_.element_type), label)
        storage = Storage(array.reshape(-1), label)
        return Handle(storage, prod(vector_shape(type_.element_type)))
    return _scalar_arg(value, type_, label)


def _contiguous(value: Any, dtype: np.dtype[Any], label: str) -> Array:
    if not isinstance(value, np.ndarray):
        raise EvaluationError(f"{label}: expected a numpy array, got {type(value).__name__}")
    array: Array = value
    if array.dtype != dtype:
        raise EvaluationError(f"{label}: expected dtype {dtype}, got {array.dtype}")
    if not array.flags.c_contiguous:
        raise EvaluationError(f"{label}: the array must be C-contiguous")
    return array


def _buffer_arg(value: Any, type_: BufferType | MemRefType, label: str) -> View:
    element = type_.element_type if isinstance(type_, BufferType) else type_.get_element_type()
    shape = type_.get_shape()
    vshape = vector_shape(element)
    array = _contiguous(value, dtype_of(element), label)
    expected = tuple("?" if e < 0 else e for e in shape) + vshape
    actual = array.shape
    if len(actual) != len(expected) or any(
        e != "?" and e != a for e, a in zip(expected, actual, strict=True)
    ):
        raise EvaluationError(
            f"{label}: expected an array of shape {expected} for {type_}, got {actual}"
        )
    logical = tuple(actual[: len(shape)])
    storage = Storage(array.reshape(-1), label)
    return View(
        storage, 0, logical, row_major_strides(logical, prod(vshape)), vshape, array.dtype, label
    )


def _scalar_arg(value: Any, type_: Attribute, label: str) -> Array:
    dtype = dtype_of(type_)
    array = np.asarray(value)
    if array.shape != vector_shape(type_):
        raise EvaluationError(
            f"{label}: expected shape {vector_shape(type_)} for {type_}, got {array.shape}"
        )
    if dtype.kind in "biu":
        if array.dtype.kind not in "biu":
            raise EvaluationError(f"{label}: expected an integer for {type_}, got {value!r}")
        return wrap(array.astype(np.int64) if array.dtype != np.uint64 else array, type_)
    if array.dtype.kind not in "biuf":
        raise EvaluationError(f"{label}: expected a number for {type_}, got {value!r}")
    return array.astype(dtype)


def _convert_result(entry: Entry) -> ResultValue:
    if isinstance(entry, View):
        return view_as_array(entry)
    if isinstance(entry, Handle):
        return entry.storage.data
    if entry.ndim == 0:
        return entry.item()
    return np.array(entry)
