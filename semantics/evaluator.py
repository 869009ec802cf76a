"""A numpy reference evaluator for buffer-level IR (`layout` + upstream dialects).

Every pass is tested numerically: run a function before and after the pass on the same
inputs and compare. Usage:

```python
from physlayout.semantics.evaluator import Evaluator, run_function
outputs = run_function(module, "relu", [a, b])   # a, b: numpy arrays, mutated in place
```

Arguments and results
---------------------
- A buffer argument (`!layout.buffer`, `memref`) is a C-contiguous numpy array whose shape is
  the type's shape followed by the vector shape of its element type (a
  `!layout.buffer<16xvector<4xf32>>` is a (16, 4) float32 array) and whose dtype is the
  scalar element type's (f16/f32/f64, i1 as bool, iN as intN, index as int64). Dynamic memref
  extents accept any extent. The evaluator writes into it in place and checks shape and
  dtype on entry. A buffer whose type has a pending `transform` is passed in its LOGICAL
  shape too: the evaluator copies it into physical storage (padding holds the pad value)
  and copies the logical values back when the call returns (see "Storage model"). Memref
  layout maps are ignored (an argument is row-major over its type's shape).
- A data handle argument (`!layout.ptr`) is any C-contiguous array of the scalar dtype,
  used flat.
- Scalar arguments are Python/numpy numbers (integers wrap to the type's width); vector
  arguments are arrays of the vector's shape.
- Results: scalars come back as Python `int`/`float`/`bool`, vectors as arrays, buffers as
  arrays aliasing their storage (a copy of the logical values for a buffer with a pending
  transform).

Storage model
-------------
A data handle is a flat array of scalars from a start offset, always in the physical layout
(the compiled program's meaning: RFC 0039, storage is physical once a transform is applied).
`layout.data %buf` is the handle `%buf` was declared over (an argument buffer's flat array);
inside a called function, the handle of a parameter starts at the parameter's first element
(the callee addresses its parameter from there, wherever the caller's buffer lies in its
storage, as compiled code does); `layout.allocate [extents]` makes a zero-filled handle of
`prod(extents)` elements (times the vector lanes of the handle's element type), or of the
transformed extents when `extents` is the logical shape of a buffer with a pending transform
declared over it (`apply-layout` resizes that allocation); `layout.decl_buffer %ptr offset K`
views the handle from `K * lanes(ptr element)` scalars after its start with the declared
shape (a `vector<4xf32>` buffer over an `f32` handle is legal: same scalars): row-major, or,
when the type has a pending transform, element `idx` at the row-major position of `map(idx)`
in the transformed shape (what `apply-layout` and `flatten-buffers` make of it). So a store
through a logical view with a transform and a load through a physical view (RFC DeclBuffer)
of the same handle meet, and declarations over one handle alias. As `apply-layout`
guarantees, the padding of a buffer with a padded transform that a function stores to
(directly, `layout.store`) is filled with the pad value: for a parameter on entry to the
function, for a `layout.decl_buffer` right after it. Memref ops build strided views. Views
that leave their storage and accesses outside a view's shape (checked per axis) raise
`EvaluationError`, a `DiagnosticException` naming the buffer and the index.

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
it runs sequentially. Results are identical in both modes. (Reductions of
`scf.parallel` (pairwise, with its `scf.reduce` region) and `affine.parallel` (numpy
reductions) may combine floats in another order than a sequential loop would.)

Supported ops
-------------
`func.func/call/return`; `scf.for` (iter_args), `scf.parallel` (+ `scf.reduce` with or without
reductions), `scf.if`, `scf.yield`; `affine.for/parallel` (bound maps, groups, steps,
reductions)/`if`/`apply`/`min`/`max`/`load`/`store`/`vector_load`/`vector_store`/`yield`;
`arith` and `math` as listed in `evaluator_arith.VALUE_OPS` plus `arith.constant` (scalars,
dense vectors); `vector.broadcast/extract/insert` (static positions), `vector.reduction`,
`vector.fma`, `vector.load/store` (1-D); `memref.alloc/alloca/dealloc/load/store/cast/
memory_space_cast/assume_alignment/reinterpret_cast/subview/collapse_shape/expand_shape/
copy/dim`; `layout.allocate/decl_buffer/data/load/store`. Anything else raises a
`DiagnosticException` naming the op when it is reached.

An `Evaluator` prepares each block once and caches loop decisions: build a new one (or call
`run_function`) after changing the module. Modules: `evaluator_values` (lanes, storage,
gathers/scatters), `evaluator_arith` (value semantics), `evaluator_memory` (memory ops,
argument conversion), `evaluator_analysis` (the vectorization rule), `evaluator_frame`.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    AffineSetAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine.affine_set import AffineConstraintKind
from xdsl.utils.exceptions import DiagnosticException

from physlayout.semantics.evaluator_analysis import (
    UNKNOWN,
    Root,
    external_memory_values,
    loop_is_parallelizable,
)
from physlayout.semantics.evaluator_arith import (
    REDUCTION_KINDS,
    VALUE_OPS,
    constant_value,
    float_reduction,
    int_reduction,
    is_float_kind,
)
from physlayout.semantics.evaluator_frame import (
    Entry,
    Frame,
    Handler,
    Step,
    apply_map,
    eval_expr,
    map_prop,
    reduce_bounds,
    segments,
)
from physlayout.semantics.evaluator_memory import (
    MEMORY_HANDLERS,
    ArgValue,
    ResultValue,
    convert_arg,
    convert_result,
    fill_padding,
    write_back,
)
from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    Handle,
    Lanes,
    View,
    active_values,
    and_masks,
    any_active,
    dtype_of,
    fills_padding,
    to_depth,
    uniform_value,
    with_trailing,
)

__all__ = ["ArgValue", "EvaluationError", "Evaluator", "ResultValue", "run_function"]

_TERMINATORS: frozenset[str] = frozenset(
    {"func.return", "scf.yield", "affine.yield", "scf.reduce", "scf.reduce.return"}
)


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
        self._handlers: dict[str, Handler] = self._make_handlers()
        self._blocks: dict[Block, list[Step]] = {}
        self._decisions: dict[Operation, tuple[tuple[object, ...], bool]] = {}
        self._externals: dict[Operation, list[SSAValue]] = {}
        self._padded_params: dict[Operation, list[int]] = {}

    # Public API ---------------------------------------------------------------------------

    def run(self, name: str, args: Sequence[ArgValue]) -> list[ResultValue]:
        """Call function `name` with `args`; returns its results (buffers alias storage)."""
        func = self._function(name)
        block = self._entry(func)
        if len(args) != len(block.args):
            raise EvaluationError(f"@{name} takes {len(block.args)} arguments, got {len(args)}")
        entries = [
            convert_arg(value, arg, i)
            for i, (value, arg) in enumerate(zip(args, block.args, strict=True))
        ]
        with np.errstate(all="ignore"):
            results = self._call(func, entries, Lanes((), None))
        for value, entry in zip(args, entries, strict=True):
            write_back(value, entry)
        return [convert_result(entry) for entry in results]

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
        block = self._entry(func)
        bound = [arg.as_parameter() if isinstance(arg, View) else arg for arg in args]
        filled = self._padded_params.get(func)
        if filled is None:
            filled = [i for i, arg in enumerate(block.args) if fills_padding(arg)]
            self._padded_params[func] = filled
        for index in filled:
            entry = bound[index] if index < len(bound) else None
            if isinstance(entry, View):
                fill_padding(entry, lanes, f"entry of {func.properties.get('sym_name')}")
        return self._run_block(block, Frame(), lanes, bound)

    # Blocks and ops -----------------------------------------------------------------------

    def _run_block(
        self, block: Block, frame: Frame, lanes: Lanes, args: Sequence[Entry]
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

    def _compile(self, block: Block) -> list[Step]:
        steps: list[Step] = []
        for op in block.ops:
            handler = self._handlers.get(op.name)
            if handler is None:
                handler = self._value_op if op.name in VALUE_OPS else self._unsupported
            steps.append(
                Step(op, tuple(op.operands), tuple(op.results), handler, op.name in _TERMINATORS)
            )
        self._blocks[block] = steps
        return steps

    def _run_region(
        self, region: Region, frame: Frame, lanes: Lanes, args: Sequence[Entry]
    ) -> list[Entry]:
        if not region.blocks:
            return []
        if len(region.blocks) > 1:
            raise EvaluationError("evaluator: regions with several blocks are not supported")
        return self._run_block(region.blocks[0], frame, lanes, args)

    def _value_op(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        """An op of `VALUE_OPS`: one result computed from the operand values."""
        args = [frame.num(v, lanes) for v in node.operands]
        result = VALUE_OPS[node.op.name](node.op, args, lanes.mask)
        frame.set(node.results[0], result, lanes.depth)

    def _unsupported(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        raise EvaluationError(f"evaluator: unsupported operation '{node.op.name}'")

    def _make_handlers(self) -> dict[str, Handler]:
        return {
            **MEMORY_HANDLERS,
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
        }

    # Simple ops ---------------------------------------------------------------------------

    def _constant(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        value = op.properties.get("value")
        if value is None:
            raise EvaluationError(f"'{op.name}': missing value")
        frame.set(node.results[0], constant_value(op, value), 0)

    def _func_call(self, node: Step, frame: Frame, lanes: Lanes) -> None:
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

    def _scf_for(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        lb, ub, step, *inits = node.operands
        bounds = (frame.num(lb, lanes), frame.num(ub, lanes), frame.num(step, lanes))
        init_values = [frame.get(v, lanes) for v in inits]
        results = self._loop(op, bounds, init_values, frame, lanes)
        for result, value in zip(node.results, results, strict=True):
            frame.set(result, value, lanes.depth)

    def _affine_for(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        lb_map = map_prop(op, "lowerBoundMap")
        ub_map = map_prop(op, "upperBoundMap")
        step_attr = op.properties.get("step")
        if not isinstance(step_attr, IntegerAttr):
            raise EvaluationError(f"'{op.name}': missing step")
        count_lb = lb_map.num_dims + lb_map.num_symbols
        count_ub = ub_map.num_dims + ub_map.num_symbols
        operands = [frame.num(v, lanes) for v in node.operands[: count_lb + count_ub]]
        lb = reduce_bounds(apply_map(lb_map, operands[:count_lb]), np.maximum)
        ub = reduce_bounds(apply_map(ub_map, operands[count_lb : count_lb + count_ub]), np.minimum)
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
        frame: Frame,
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
        frame: Frame,
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
        frame: Frame,
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

    def _parallelizable(self, op: Operation, frame: Frame) -> bool:
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
        frame: Frame,
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

    def _scf_parallel(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        count = segments(op)[0]
        values = [frame.num(v, lanes) for v in node.operands[: 3 * count]]
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
        frame: Frame,
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

    def _affine_parallel(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        lb_map = map_prop(op, "lowerBoundsMap")
        ub_map = map_prop(op, "upperBoundsMap")
        operands = [frame.num(v, lanes) for v in node.operands]
        count_lb = lb_map.num_dims + lb_map.num_symbols
        lbs = _grouped(
            apply_map(lb_map, operands[:count_lb]), _groups(op, "lowerBoundsGroups"), np.maximum
        )
        ubs = _grouped(
            apply_map(ub_map, operands[count_lb:]), _groups(op, "upperBoundsGroups"), np.minimum
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
        self, op: Operation, values: Sequence[Entry], frame: Frame, lanes: Lanes
    ) -> None:
        for result, value in zip(op.results, values, strict=True):
            frame.set(result, value, lanes.depth)

    def _scf_if(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        cond = frame.num(node.operands[0], lanes)
        self._branch(op, cond, op.regions[0], op.regions[1], frame, lanes)

    def _affine_if(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        attr = op.properties.get("condition")
        if not isinstance(attr, AffineSetAttr):
            raise EvaluationError(f"'{op.name}': missing condition")
        affine_set = attr.data
        operands = [frame.num(v, lanes) for v in node.operands]
        dims, syms = operands[: affine_set.num_dims], operands[affine_set.num_dims :]
        cond: Array = np.asarray(True)
        for constraint in affine_set.constraints:
            lhs = eval_expr(constraint.lhs, dims, syms)
            rhs = eval_expr(constraint.rhs, dims, syms)
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
        frame: Frame,
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

    def _affine_apply(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        amap = map_prop(op, "map")
        operands = [frame.num(v, lanes) for v in node.operands]
        (result,) = apply_map(amap, operands)
        frame.set(node.results[0], result.astype(np.int64), lanes.depth)

    def _affine_min_max(self, node: Step, frame: Frame, lanes: Lanes) -> None:
        op = node.op
        amap = map_prop(op, "map")
        operands = [frame.num(v, lanes) for v in node.operands]
        combine = np.minimum if op.name == "affine.min" else np.maximum
        frame.set(node.results[0], reduce_bounds(apply_map(amap, operands), combine), lanes.depth)


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
        result.append(reduce_bounds(values[start : start + size], combine))
        start += size
    return result
