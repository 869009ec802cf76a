"""Value-range analysis of the scalars a `linalg.generic` body computes (the index
arithmetic of gathers: nearest and bilinear resizes, weight flips, adaptive-pool windows).

`ValueBounds.of(value)` is an inclusive interval ``(lo, hi)`` that contains every value
`value` takes, or None when the analysis cannot bound it. Integers (`index`, ``iN``) are
Python ints, floats Python floats; an ``i1`` is ``(0, 1)`` or decided (``(0, 0)``, ``(1,
1)``). It reads:

- `linalg.index` (``[0, extent - 1]`` of its loop, the extents read off the generic's
  operands), scalar `arith.constant`s, and a generic's input block argument as the bounds of
  every element of the input tensor (`tensor_bounds`): a dense constant's min and max, the
  value a `linalg.generic` yields (over that generic's own loops), through reshapes,
  transposes, broadcasts, scope copies and transforms without padding (they move elements,
  they do not change them), a `layout.fused` group's yielded value, and a graph function's
  argument that carries `layout.bounds = [lo, hi]` (`BOUNDS_ATTR`: what
  `lift-transform-params` proved of a prepared index tensor before moving its producer);
- integer `addi`, `subi`, `muli`, `divsi`, `floordivsi`, `remsi` (of a non-negative value by
  a positive constant), `minsi`, `maxsi`, `index_cast`, `extsi`;
  `sitofp`, `fptosi`, `truncf`, `extf`, float `addf`, `subf`, `mulf`, `divf`, `maximumf`, `minimumf`,
  `math.floor`; `cmpi`/`cmpf` (decided when the operands' intervals decide them) and
  `select` (the chosen operand when its condition is decided; for a comparison of a value
  with a constant, each operand under the part of that value's interval where it is
  chosen; else the union): so the negative-index wraparound ``select(i < 0, i + n, i)`` is
  ``i`` for an ``i`` proven non-negative, and inside ``[0, n)`` for ``i`` in ``[-n, n)``.

Soundness: integer intervals are exact interval arithmetic and must fit the type (else
None: wraparound is not modelled). Float results of rounded operations (add, sub, mul, div,
and `sitofp` of integers beyond the mantissa) are widened by one unit of their type's
relative precision (half an ulp is the most rounding to nearest moves a result), so the true
rounded value lies inside; every float interval is finite (an operation that could reach an
infinity or NaN is unbounded), so the ordered and unordered comparisons agree on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, tensor
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    ContainerType,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ShapedType,
)
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, IndexOp, TransposeOp, YieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

from physlayout.dialects.layout_fused import FusedOp
from physlayout.dialects.layout_graph import TransformOp, static_shape
from physlayout.dialects.layout_scopes import CopyOp
from physlayout.indexing.index_map import IndexMap
from physlayout.transforms.flow_plan import loop_extents, loop_names

Bounds = tuple[float, float] | tuple[int, int]
"""An inclusive interval of a value."""

BOUNDS_ATTR = "layout.bounds"
"""The argument attribute of a graph function, ``[lo, hi]``, that promises every element of
the tensor argument lies in that interval (`lift-transform-params` writes it on the
prepared values whose bounds it proved in the function they were computed in)."""


def bounds_attr(bounds: Bounds) -> ArrayAttr[Attribute]:
    """`BOUNDS_ATTR`'s value for `bounds` (i64 integers, or f64 floats)."""
    lo, hi = bounds
    if isinstance(lo, float) or isinstance(hi, float):
        return ArrayAttr([FloatAttr(float(lo), Float64Type()), FloatAttr(float(hi), Float64Type())])
    return ArrayAttr([IntegerAttr(int(lo), 64), IntegerAttr(int(hi), 64)])


def argument_bounds(function: func.FuncOp, index: int) -> Bounds | None:
    """The interval `BOUNDS_ATTR` states for argument `index` of `function`, or None."""
    if function.arg_attrs is None or index >= len(function.arg_attrs.data):
        return None
    found = function.arg_attrs.data[index].data.get(BOUNDS_ATTR)
    if not isinstance(found, ArrayAttr) or len(found.data) != 2:
        return None
    lo, hi = (_constant(a) for a in found.data)
    if lo is None or hi is None:
        return None
    argument = function.body.blocks[0].args[index]
    return _typed(argument.type, lo[0], hi[1])

_RELATIVE_PRECISION: dict[type, float] = {
    Float16Type: 2.0**-10,
    Float32Type: 2.0**-23,
    Float64Type: 2.0**-52,
}


def generic_extents(op: GenericOp) -> tuple[int, ...] | None:
    """The loop extents of a static generic, read off its operands (None when unknown)."""
    names = loop_names(len(op.iterator_types.data))
    try:
        maps = [IndexMap.from_affine_map(m.data, names) for m in op.indexing_maps.data]
    except ValueError:
        return None
    shapes: list[tuple[int, ...]] = []
    for value in op.operands:
        shape = static_shape(value) if isinstance(value.type, ShapedType) else ()
        if shape is None:
            return None
        shapes.append(shape)
    extents = loop_extents(maps, shapes, len(names))
    return None if extents is None else tuple(extents)


@dataclass
class ValueBounds:
    """Bounds of scalar values and of tensors' elements, memoized (module docstring)."""

    _values: dict[SSAValue, Bounds | None] = field(default_factory=dict[SSAValue, "Bounds | None"])
    _extents: dict[GenericOp, tuple[int, ...] | None] = field(
        default_factory=dict[GenericOp, "tuple[int, ...] | None"]
    )

    def of(self, value: SSAValue) -> Bounds | None:
        """The interval of the scalar `value`, or None."""
        if value in self._values:
            return self._values[value]
        self._values[value] = None  # a cycle (none in SSA bodies) stays unbounded
        found = self._compute(value)
        self._values[value] = found
        return found

    def tensor_bounds(self, value: SSAValue) -> Bounds | None:
        """An interval containing every element of the tensor `value`, or None."""
        if value in self._values:
            return self._values[value]
        self._values[value] = None
        found = self._tensor(value)
        self._values[value] = found
        return found

    def _tensor(self, value: SSAValue) -> Bounds | None:
        owner = value.owner
        if isinstance(owner, Block):
            return self._region_argument(value)
        match owner:
            case arith.ConstantOp(value=DenseIntOrFPElementsAttr() as attr):
                from physlayout.semantics.graph_evaluator import dense_array  # numpy: when used

                array = dense_array(attr, value.type)
                if array.size == 0 or not bool(_all_finite(array)):
                    return None
                return _typed(value.type, array.min().item(), array.max().item())
            case GenericOp():
                index = next(k for k, r in enumerate(owner.res) if r is value)
                yielded = owner.body.blocks[0].last_op
                if not isinstance(yielded, YieldOp):
                    return None
                return self.of(yielded.operands[index])
            case tensor.ExpandShapeOp() | tensor.CollapseShapeOp():
                return self.tensor_bounds(owner.operands[0])
            case CopyOp():
                return self.tensor_bounds(owner.input)
            case TransformOp() if not owner.pads():
                return self.tensor_bounds(owner.input)
            case BroadcastOp() | TransposeOp():
                return self.tensor_bounds(owner.operands[0])
            case FusedOp():
                return self.tensor_bounds(owner.yielded())
            case _:
                return None

    def _region_argument(self, value: SSAValue) -> Bounds | None:
        """A tensor block argument of a region that binds it to an operand of its op
        (`layout.fused`: argument k is operand k), or of a graph function whose argument
        states its bounds (`BOUNDS_ATTR`)."""
        assert isinstance(value, BlockArgument)
        parent = value.block.parent_op()
        if isinstance(parent, func.FuncOp) and value.block is parent.body.blocks[0]:
            return argument_bounds(parent, value.index)
        if not isinstance(parent, FusedOp) or value.block is not parent.block:
            return None
        return self.tensor_bounds(parent.inputs[value.index])

    def _loop_extent(self, op: GenericOp, dim: int) -> int | None:
        if op not in self._extents:
            self._extents[op] = generic_extents(op)
        extents = self._extents[op]
        return None if extents is None or dim >= len(extents) else extents[dim]

    def _compute(self, value: SSAValue) -> Bounds | None:
        if isinstance(value.type, ShapedType):
            return self.tensor_bounds(value)
        owner = value.owner
        if isinstance(owner, Block):
            return self._body_argument(value)
        if isinstance(owner, IndexOp):
            generic = owner.parent_op()
            if not isinstance(generic, GenericOp):
                return None
            extent = self._loop_extent(generic, owner.dim.value.data)
            return None if extent is None else (0, extent - 1)
        if isinstance(owner, arith.ConstantOp):
            return _constant(owner.value)
        rule = _RULES.get(type(owner))
        if rule is None:
            return None
        operands = [self.of(v) for v in owner.operands]
        if isinstance(owner, arith.SelectOp):
            if operands[0] not in ((0, 0), (1, 1)):
                refined = self._refined_select(owner)
                if refined is not None:
                    return refined
            return _select(operands)
        if any(b is None for b in operands):
            return None
        found = rule(owner, [b for b in operands if b is not None])
        return None if found is None else _fit(owner.results[0].type, found)

    def _refined_select(self, op: arith.SelectOp) -> Bounds | None:
        """``select(a PRED k, t, f)`` with a constant ``k`` and a signed predicate: the union
        of ``t``'s bounds where ``a`` satisfies the predicate and ``f``'s where it does not
        (each with ``a`` narrowed to that part of its interval; a part that is empty is not
        taken). So torch's wraparound ``select(i < 0, i + n, i)`` of ``i`` in ``[-n, n)`` is
        in ``[0, n)``."""
        condition = op.cond.owner
        if not isinstance(condition, arith.CmpiOp):
            return None
        predicate = condition.predicate.value.data
        a, k = self.of(condition.lhs), self.of(condition.rhs)
        if a is None or k is None or k[0] != k[1] or predicate not in (2, 3, 4, 5):
            return None
        lo, hi, c = int(a[0]), int(a[1]), int(k[0])
        below = {2: c - 1, 3: c, 4: c, 5: c - 1}[predicate]  # the largest `a` on the low side
        low_side, high_side = (lo, min(hi, below)), (max(lo, below + 1), hi)
        sides = (low_side, high_side) if predicate in (2, 3) else (high_side, low_side)
        found: list[Bounds] = []
        for branch, side in zip((op.lhs, op.rhs), sides, strict=True):
            if side[0] > side[1]:
                continue
            bounds = self._assuming(condition.lhs, side).of(branch)
            if bounds is None:
                return None
            found.append(bounds)
        if not found:
            return None
        return (min(b[0] for b in found), max(b[1] for b in found))  # type: ignore[return-value]

    def _assuming(self, value: SSAValue, bounds: Bounds) -> ValueBounds:
        """An analysis where `value` lies in `bounds`: the tensors' bounds known so far are
        kept, the scalars (which may depend on `value`) are computed again."""
        known = {v: b for v, b in self._values.items() if isinstance(v.type, ShapedType)}
        known[value] = bounds
        return ValueBounds(known, self._extents)

    def _body_argument(self, value: SSAValue) -> Bounds | None:
        """An input block argument of a generic: the bounds of its input's elements."""
        assert isinstance(value, BlockArgument)
        generic = value.block.parent_op()
        if not isinstance(generic, GenericOp) or value.index >= len(generic.inputs):
            return None
        operand = generic.inputs[value.index]
        if isinstance(operand.type, ShapedType):
            return self.tensor_bounds(operand)
        return self.of(operand)


def extract_proven_inside(op: tensor.ExtractOp) -> bool:
    """Whether every index of the gather `op` is proven inside its tensor's static box
    (`ValueBounds`). Reads moved through a layout rewrite are done only then: the index
    arithmetic they add is then exact in any width, and the kernel's 32-bit index math
    needs no clamp of an unknown value."""
    shape = static_shape(op.tensor)
    if shape is None:
        return False
    bounds = ValueBounds()
    for index, extent in zip(op.indices, shape, strict=True):
        found = bounds.of(index)
        if found is None or found[0] < 0 or found[1] > extent - 1:
            return False
    return True


def _all_finite(array: object) -> bool:
    import numpy as np

    values = np.asarray(array)
    return values.dtype.kind in "iub" or bool(np.isfinite(values).all())


def _typed(type_: Attribute, lo: float | int, hi: float | int) -> Bounds:
    element = type_.get_element_type() if isinstance(type_, ContainerType) else type_
    if isinstance(element, AnyFloat):
        return (float(lo), float(hi))
    return (int(lo), int(hi))


def _constant(attr: Attribute) -> Bounds | None:
    if isinstance(attr, IntegerAttr):
        v = int(attr.value.data)
        return (v, v)
    if isinstance(attr, FloatAttr):
        f = float(attr.value.data)
        return (f, f) if math.isfinite(f) else None
    return None


def _fit(type_: Attribute, bounds: Bounds) -> Bounds | None:
    """`bounds` when every value in it is representable in `type_` (finite floats; integers
    within the signed range), else None."""
    lo, hi = bounds
    if isinstance(type_, AnyFloat):
        return bounds if math.isfinite(lo) and math.isfinite(hi) else None
    if isinstance(type_, IndexType):
        width = 64
    elif isinstance(type_, IntegerType):
        width = type_.width.data
    else:
        return None
    if width == 1:
        return bounds if 0 <= lo <= hi <= 1 else None
    low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    return bounds if low <= lo and hi <= high else None


def _widen(op: Operation, bounds: tuple[float, float]) -> Bounds | None:
    """A rounded float result: `bounds` of the exact results, widened by one unit of the
    result type's relative precision (module docstring)."""
    precision = _RELATIVE_PRECISION.get(type(op.results[0].type))
    if precision is None:
        return None
    lo, hi = bounds
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return (lo - abs(lo) * precision, hi + abs(hi) * precision)


def _corners(fn: Callable[[float, float], float], a: Bounds, b: Bounds) -> tuple[float, float]:
    values = [fn(x, y) for x in a for y in b]
    return (min(values), max(values))


def _select(operands: Sequence[Bounds | None]) -> Bounds | None:
    condition, a, b = operands
    if condition == (1, 1):
        return a
    if condition == (0, 0):
        return b
    if a is None or b is None:
        return None
    return (min(a[0], b[0]), max(a[1], b[1]))  # type: ignore[return-value]


def _trunc_div(x: int, y: int) -> int:
    quotient = abs(x) // abs(y)
    return quotient if (x >= 0) == (y > 0) else -quotient


def _divsi(op: Operation, args: list[Bounds]) -> Bounds | None:
    a, b = args
    if b[0] <= 0 <= b[1]:
        return None
    return _corners(_trunc_div, a, b)  # type: ignore[arg-type, return-value]


def _floordivsi(op: Operation, args: list[Bounds]) -> Bounds | None:
    a, b = args
    if b[0] <= 0 <= b[1]:
        return None
    return _corners(lambda x, y: x // y, a, b)  # type: ignore[arg-type, return-value]


def _remsi(op: Operation, args: list[Bounds]) -> Bounds | None:
    """``a remsi k`` of a non-negative `a` by a positive constant `k`: within one period of
    `a` the remainders themselves, else ``[0, k - 1]``."""
    a, b = args
    if b[0] != b[1] or b[0] <= 0 or a[0] < 0:
        return None
    k = int(b[0])
    lo, hi = int(a[0]), int(a[1])
    return (lo % k, hi % k) if lo // k == hi // k else (0, k - 1)


def _divf(op: Operation, args: list[Bounds]) -> Bounds | None:
    a, b = args
    if b[0] <= 0 <= b[1]:
        return None
    return _widen(op, _corners(lambda x, y: x / y, a, b))


def _sitofp(op: Operation, args: list[Bounds]) -> Bounds | None:
    (a,) = args
    precision = _RELATIVE_PRECISION.get(type(op.results[0].type))
    if precision is None:
        return None
    exact = max(abs(a[0]), abs(a[1])) < 2 / precision
    return (float(a[0]), float(a[1])) if exact else _widen(op, (float(a[0]), float(a[1])))


def _convert_float(op: Operation, args: list[Bounds]) -> Bounds | None:
    """`truncf`/`extf`: the value in the result type (rounded when narrower)."""
    (a,) = args
    return _widen(op, (float(a[0]), float(a[1])))


def _fptosi(op: Operation, args: list[Bounds]) -> Bounds | None:
    (a,) = args
    return (math.trunc(a[0]), math.trunc(a[1]))


def _compare(predicate: str, a: Bounds, b: Bounds) -> Bounds:
    """The `i1` interval of ``a PRED b`` (predicates without their o/u/s prefix)."""
    always = {
        "lt": a[1] < b[0], "le": a[1] <= b[0], "gt": a[0] > b[1], "ge": a[0] >= b[1],
        "eq": a[0] == a[1] == b[0] == b[1], "ne": a[1] < b[0] or b[1] < a[0],
    }  # fmt: skip
    never = {
        "lt": a[0] >= b[1], "le": a[0] > b[1], "gt": a[1] <= b[0], "ge": a[1] < b[0],
        "eq": a[1] < b[0] or b[1] < a[0], "ne": a[0] == a[1] == b[0] == b[1],
    }  # fmt: skip
    if always.get(predicate, False):
        return (1, 1)
    if never.get(predicate, False):
        return (0, 0)
    return (0, 1)


_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge")
_CMPF = {1: "eq", 2: "gt", 3: "ge", 4: "lt", 5: "le", 6: "ne", 8: "eq", 9: "gt", 10: "ge",
         11: "lt", 12: "le", 13: "ne"}  # fmt: skip


def _cmpi(op: Operation, args: list[Bounds]) -> Bounds | None:
    assert isinstance(op, arith.CmpiOp)
    predicate = op.predicate.value.data
    if predicate >= len(_CMPI):
        return None  # unsigned predicates
    return _compare(_CMPI[predicate].removeprefix("s"), *args)


def _cmpf(op: Operation, args: list[Bounds]) -> Bounds | None:
    assert isinstance(op, arith.CmpfOp)
    name = _CMPF.get(op.predicate.value.data)
    return None if name is None else _compare(name, *args)


def _same(op: Operation, args: list[Bounds]) -> Bounds | None:
    return args[0]


def _interval(fn: Callable[[float, float], float], rounded: bool) -> Callable[
    [Operation, list[Bounds]], Bounds | None
]:
    def rule(op: Operation, args: list[Bounds]) -> Bounds | None:
        found = _corners(fn, args[0], args[1])
        return _widen(op, found) if rounded else found  # type: ignore[return-value]

    return rule


def _floor(op: Operation, args: list[Bounds]) -> Bounds | None:
    (a,) = args
    return (float(math.floor(a[0])), float(math.floor(a[1])))


_RULES: dict[type[Operation], Callable[[Operation, list[Bounds]], Bounds | None]] = {
    arith.AddiOp: _interval(lambda x, y: x + y, rounded=False),
    arith.SubiOp: _interval(lambda x, y: x - y, rounded=False),
    arith.MuliOp: _interval(lambda x, y: x * y, rounded=False),
    arith.DivSIOp: _divsi,
    arith.FloorDivSIOp: _floordivsi,
    arith.RemSIOp: _remsi,
    arith.MinSIOp: _interval(min, rounded=False),
    arith.MaxSIOp: _interval(max, rounded=False),
    arith.IndexCastOp: _same,
    arith.ExtSIOp: _same,
    arith.SIToFPOp: _sitofp,
    arith.FPToSIOp: _fptosi,
    arith.TruncFOp: _convert_float,
    arith.ExtFOp: _convert_float,
    arith.AddfOp: _interval(lambda x, y: x + y, rounded=True),
    arith.SubfOp: _interval(lambda x, y: x - y, rounded=True),
    arith.MulfOp: _interval(lambda x, y: x * y, rounded=True),
    arith.DivfOp: _divf,
    arith.MaximumfOp: _interval(max, rounded=False),
    arith.MinimumfOp: _interval(min, rounded=False),
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _same,  # decided in `ValueBounds._compute` (`_select`)
    math_dialect.FloorOp: _floor,
}
"""The interval of an op's result from its operands' intervals (module docstring)."""
