"""Value semantics of `arith`, `math` and the register-level `vector` ops for the evaluator.

Every function here maps the operand arrays of one op (lane axes first, then the vector axes
of its type) to its result array. Integers are held in the signed numpy dtype of their width
(`index` as int64, `i1` as bool) and wrap around; unsigned ops reinterpret the bits. Floats
keep their width (f32 stays float32). Results of undefined behaviour (shift amounts of at
least the bit width, float-to-int conversions out of range) are deterministic but arbitrary;
integer division by zero on an active lane is an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
)
from xdsl.ir import Attribute, Operation

from physlayout.semantics.evaluator_values import (
    Array,
    EvaluationError,
    as_signed,
    as_unsigned,
    bit_width,
    dtype_of,
    is_integer_like,
    vector_shape,
    with_trailing,
    wrap,
)

ValueFn = Callable[[Operation, list[Array], Array | None], Array]
"""Computes the single result of an op from its operand arrays and the active-lane mask."""


def _operand_type(op: Operation, index: int = 0) -> Attribute:
    return op.operands[index].type


def _result_type(op: Operation) -> Attribute:
    return op.results[0].type


# Constants --------------------------------------------------------------------------------


def constant_value(op: Operation, value: Attribute) -> Array:
    """The array of an `arith.constant` with attribute `value` (vector dims only)."""
    type_ = _result_type(op)
    if isinstance(value, IntegerAttr):
        bits = value.value.data & ((1 << 64) - 1)
        return wrap(np.asarray(bits, dtype=np.uint64), type_)
    if isinstance(value, FloatAttr):
        return np.asarray(value.value.data, dtype=dtype_of(type_))
    if isinstance(value, DenseIntOrFPElementsAttr):
        shape = vector_shape(type_)
        raw = np.asarray(value.get_values())
        values = wrap(raw, type_) if is_integer_like(type_) else raw.astype(dtype_of(type_))
        if values.size == 1:
            return np.broadcast_to(values.reshape(()), shape)
        return values.reshape(shape)
    raise EvaluationError(f"'{op.name}': unsupported constant {value}")


# Integer arithmetic -----------------------------------------------------------------------


def _check_divisor(op: Operation, divisor: Array, mask: Array | None) -> Array:
    """The divisor with zeros replaced by one; an error if an active lane divides by zero."""
    zero = divisor == 0
    if not bool(np.any(zero)):
        return divisor
    hit = zero if mask is None else zero & _mask_for(mask, divisor.ndim)
    if bool(np.any(hit)):
        raise EvaluationError(f"'{op.name}': integer division by zero")
    return np.where(zero, np.ones_like(divisor), divisor)


def _mask_for(mask: Array, ndim: int) -> Array:
    return with_trailing(mask, max(ndim - mask.ndim, 0))


def _bits_op(fn: Callable[[Array, Array], Array]) -> ValueFn:
    """A sign-agnostic integer op computed on the unsigned reading of the operands."""

    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        type_ = _result_type(op)
        return wrap(fn(as_unsigned(args[0], type_), as_unsigned(args[1], type_)), type_)

    return run


def _signed_op(fn: Callable[[Array, Array], Array], divides: bool = False) -> ValueFn:
    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        type_ = _result_type(op)
        lhs, rhs = as_signed(args[0], type_), as_signed(args[1], type_)
        if divides:
            rhs = _check_divisor(op, rhs, mask)
        return wrap(fn(lhs, rhs), type_)

    return run


def _unsigned_op(fn: Callable[[Array, Array], Array], divides: bool = False) -> ValueFn:
    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        type_ = _result_type(op)
        lhs, rhs = as_unsigned(args[0], type_), as_unsigned(args[1], type_)
        if divides:
            rhs = _check_divisor(op, rhs, mask)
        return wrap(fn(lhs, rhs), type_)

    return run


def _trunc_div(a: Array, b: Array) -> Array:
    """Division rounding toward zero (C semantics)."""
    quotient = a // b
    inexact = (a % b != 0) & ((a < 0) != (b < 0))
    return quotient + inexact.astype(quotient.dtype)


def _ceil_div(a: Array, b: Array) -> Array:
    quotient = a // b
    return quotient + (a % b != 0).astype(quotient.dtype)


def _shift(kind: str) -> ValueFn:
    """`shli`, `shrsi` or `shrui`; amounts of at least the bit width give 0 (or the sign)."""

    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        type_ = _result_type(op)
        width = bit_width(type_)
        amount = as_unsigned(args[1], type_).astype(np.uint64)
        big = amount >= width
        amount = np.where(big, 0, amount)
        if kind == "shrsi":
            value = as_signed(args[0], type_).astype(np.int64)
            shifted = np.right_shift(value, amount.astype(np.int64))
            filled = np.where(value < 0, -1, 0)
            return wrap(np.where(big, filled, shifted), type_)
        value = as_unsigned(args[0], type_).astype(np.uint64)
        fn = np.left_shift if kind == "shli" else np.right_shift
        return wrap(np.where(big, np.uint64(0), fn(value, amount)), type_)

    return run


_CMPI: dict[int, tuple[bool, Callable[[Array, Array], Array]]] = {
    0: (True, np.equal),
    1: (True, np.not_equal),
    2: (True, np.less),
    3: (True, np.less_equal),
    4: (True, np.greater),
    5: (True, np.greater_equal),
    6: (False, np.less),
    7: (False, np.less_equal),
    8: (False, np.greater),
    9: (False, np.greater_equal),
}
"""arith.cmpi predicates: number -> (signed, comparison)."""


def _predicate(op: Operation) -> int:
    attr = op.properties.get("predicate", op.attributes.get("predicate"))
    if not isinstance(attr, IntegerAttr):
        raise EvaluationError(f"'{op.name}': missing predicate")
    return attr.value.data


def _cmpi(op: Operation, args: list[Array], mask: Array | None) -> Array:
    predicate = _predicate(op)
    if predicate not in _CMPI:
        raise EvaluationError(f"'{op.name}': unknown predicate {predicate}")
    signed, compare = _CMPI[predicate]
    type_ = _operand_type(op)
    read = as_signed if signed else as_unsigned
    return np.asarray(compare(read(args[0], type_), read(args[1], type_)))


def _cmpf(op: Operation, args: list[Array], mask: Array | None) -> Array:
    a, b = args
    predicate = _predicate(op)
    unordered = np.isnan(a) | np.isnan(b)
    base: dict[int, Array] = {
        1: a == b,
        2: a > b,
        3: a >= b,
        4: a < b,
        5: a <= b,
        6: a != b,
    }
    if predicate == 0:
        return np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=np.bool_)
    if predicate == 15:
        return np.ones(np.broadcast_shapes(a.shape, b.shape), dtype=np.bool_)
    if predicate == 7:
        return ~unordered
    if predicate == 14:
        return unordered
    if 1 <= predicate <= 6:
        return base[predicate] & ~unordered
    if 8 <= predicate <= 13:
        return base[predicate - 7] | unordered
    raise EvaluationError(f"'{op.name}': unknown predicate {predicate}")


def _select(op: Operation, args: list[Array], mask: Array | None) -> Array:
    cond, a, b = args
    extra = len(vector_shape(_result_type(op))) - len(vector_shape(_operand_type(op)))
    return np.where(with_trailing(cond, extra), a, b)


# Floats -----------------------------------------------------------------------------------


def _float_op(fn: Callable[..., Any]) -> ValueFn:
    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        return np.asarray(fn(*args)).astype(dtype_of(_result_type(op)), copy=False)

    return run


def _signed_zero_fix(pick_negative: bool) -> Callable[[Array, Array, Array], Array]:
    """Order -0.0 below +0.0 in a max (pick_negative False) or min (True) result."""

    def fix(a: Array, b: Array, result: Array) -> Array:
        if a.ndim == 0 and b.ndim == 0 and not (a == 0 and b == 0):
            return result
        both_zero = (a == 0) & (b == 0)
        if not bool(np.any(both_zero)):
            return result
        negative = (
            np.signbit(a) & np.signbit(b) if not pick_negative else (np.signbit(a) | np.signbit(b))
        )
        zero = np.where(negative, -np.zeros_like(result), np.zeros_like(result))
        return np.where(both_zero, zero, result)

    return fix


def _extremum(fn: Callable[[Array, Array], Array], minimum: bool) -> ValueFn:
    fix = _signed_zero_fix(minimum)

    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        a, b = args
        return np.asarray(fix(a, b, fn(a, b))).astype(dtype_of(_result_type(op)), copy=False)

    return run


def _fma(a: Array, b: Array, c: Array) -> Array:
    """Fused multiply-add: f16/f32 computed exactly in float64, then rounded once."""
    if a.dtype.itemsize < 8:
        wide = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
        return wide.astype(a.dtype)
    return a * b + c


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _round_half_away(a: Array) -> Array:
    whole = np.trunc(a)
    return np.where(np.abs(a - whole) >= 0.5, whole + np.sign(a), whole)


def _rsqrt(a: Array) -> Array:
    return np.reciprocal(np.sqrt(a))


# Conversions ------------------------------------------------------------------------------


def _int_to_int(signed: bool) -> ValueFn:
    """extsi/extui/trunci/index_cast(ui): read the source (un)signed, wrap to the result."""

    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        source = _operand_type(op)
        if signed:
            return wrap(as_signed(args[0], source).astype(np.int64), _result_type(op))
        return wrap(as_unsigned(args[0], source).astype(np.uint64), _result_type(op))

    return run


def _int_to_float(signed: bool) -> ValueFn:
    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        read = as_signed if signed else as_unsigned
        return read(args[0], _operand_type(op)).astype(dtype_of(_result_type(op)))

    return run


def _float_to_int(signed: bool) -> ValueFn:
    def run(op: Operation, args: list[Array], mask: Array | None) -> Array:
        value = np.trunc(args[0].astype(np.float64))
        value = np.where(np.isfinite(value), value, 0)
        as_int = value.astype(np.int64) if signed else value.astype(np.uint64)
        return wrap(as_int, _result_type(op))

    return run


def _cast_float(op: Operation, args: list[Array], mask: Array | None) -> Array:
    return args[0].astype(dtype_of(_result_type(op)))


def _bitcast(op: Operation, args: list[Array], mask: Array | None) -> Array:
    source, result = dtype_of(_operand_type(op)), dtype_of(_result_type(op))
    if source.itemsize != result.itemsize or np.bool_ in (source.type, result.type):
        if source == result:
            return args[0]
        raise EvaluationError(f"'{op.name}': unsupported bitcast {source} -> {result}")
    return np.ascontiguousarray(args[0]).view(result)


# Vector register ops ----------------------------------------------------------------------


def _static_positions(op: Operation) -> tuple[int, ...]:
    attr = op.properties.get("static_position")
    if not isinstance(attr, DenseArrayBase):
        raise EvaluationError(f"'{op.name}': missing static_position")
    positions = tuple(int(p) for p in attr.get_values())
    if any(p == DYNAMIC_INDEX for p in positions):
        raise EvaluationError(f"'{op.name}': dynamic positions are not supported")
    return positions


def _vector_broadcast(op: Operation, args: list[Array], mask: Array | None) -> Array:
    source = vector_shape(_operand_type(op))
    result = vector_shape(_result_type(op))
    value = args[0]
    lane_shape = value.shape[: value.ndim - len(source)]
    value = value.reshape(lane_shape + (1,) * (len(result) - len(source)) + source)
    return np.broadcast_to(value, lane_shape + result)


def _vector_extract(op: Operation, args: list[Array], mask: Array | None) -> Array:
    positions = _static_positions(op)
    rank = len(vector_shape(_operand_type(op)))
    return args[0][(Ellipsis, *positions) + (slice(None),) * (rank - len(positions))]


def _vector_insert(op: Operation, args: list[Array], mask: Array | None) -> Array:
    source, dest = args
    positions = _static_positions(op)
    dest_shape = vector_shape(_result_type(op))
    source_rank = len(vector_shape(_operand_type(op)))
    lanes = np.broadcast_shapes(
        dest.shape[: dest.ndim - len(dest_shape)], source.shape[: source.ndim - source_rank]
    )
    result = np.broadcast_to(dest, lanes + dest_shape).copy()
    result[(Ellipsis, *positions) + (slice(None),) * source_rank] = source
    return result


def _reduce_all(
    kind: str, value: Array, type_: Attribute, axes: tuple[int, ...], op_name: str
) -> Array:
    """Reduce `value` over `axes` with a `vector.kind` combining kind."""
    if kind == "add":
        return (
            wrap(np.sum(value, axis=axes), type_)
            if is_integer_like(type_)
            else np.sum(value, axis=axes, dtype=value.dtype)
        )
    if kind == "mul":
        return (
            wrap(np.prod(value, axis=axes), type_)
            if is_integer_like(type_)
            else np.prod(value, axis=axes, dtype=value.dtype)
        )
    signed_kinds: dict[str, Callable[..., Any]] = {
        "minsi": np.min,
        "maxsi": np.max,
    }
    if kind in signed_kinds:
        return wrap(signed_kinds[kind](as_signed(value, type_), axis=axes), type_)
    if kind in ("minui", "maxui"):
        fn = np.min if kind == "minui" else np.max
        return wrap(fn(as_unsigned(value, type_), axis=axes), type_)
    float_kinds: dict[str, Callable[..., Any]] = {
        "minnumf": np.fmin.reduce,
        "maxnumf": np.fmax.reduce,
        "minimumf": np.minimum.reduce,
        "maximumf": np.maximum.reduce,
    }
    if kind in float_kinds:
        return np.asarray(float_kinds[kind](value, axis=axes))
    bit_kinds: dict[str, Callable[..., Any]] = {
        "and": np.bitwise_and.reduce,
        "or": np.bitwise_or.reduce,
        "xor": np.bitwise_xor.reduce,
    }
    if kind in bit_kinds:
        return wrap(bit_kinds[kind](as_unsigned(value, type_), axis=axes), type_)
    raise EvaluationError(f"'{op_name}': unsupported combining kind '{kind}'")


def _vector_reduction(op: Operation, args: list[Array], mask: Array | None) -> Array:
    kind_attr = op.properties.get("kind")
    kind = str(getattr(kind_attr, "data", ""))
    rank = len(vector_shape(_operand_type(op)))
    type_ = _result_type(op)
    axes = tuple(range(-rank, 0))
    result = _reduce_all(kind, args[0], type_, axes, op.name)
    if len(args) == 1:
        return result
    pair = np.stack(np.broadcast_arrays(result, args[1]), axis=-1)
    return _reduce_all(kind, pair, type_, (-1,), op.name)


# The table --------------------------------------------------------------------------------

VALUE_OPS: dict[str, ValueFn] = {
    # integer arithmetic
    "arith.addi": _bits_op(np.add),
    "arith.subi": _bits_op(np.subtract),
    "arith.muli": _bits_op(np.multiply),
    "arith.andi": _bits_op(np.bitwise_and),
    "arith.ori": _bits_op(np.bitwise_or),
    "arith.xori": _bits_op(np.bitwise_xor),
    "arith.divsi": _signed_op(_trunc_div, divides=True),
    "arith.remsi": _signed_op(np.fmod, divides=True),
    "arith.floordivsi": _signed_op(np.floor_divide, divides=True),
    "arith.ceildivsi": _signed_op(_ceil_div, divides=True),
    "arith.divui": _unsigned_op(np.floor_divide, divides=True),
    "arith.remui": _unsigned_op(np.remainder, divides=True),
    "arith.ceildivui": _unsigned_op(_ceil_div, divides=True),
    "arith.minsi": _signed_op(np.minimum),
    "arith.maxsi": _signed_op(np.maximum),
    "arith.minui": _unsigned_op(np.minimum),
    "arith.maxui": _unsigned_op(np.maximum),
    "arith.shli": _shift("shli"),
    "arith.shrsi": _shift("shrsi"),
    "arith.shrui": _shift("shrui"),
    "arith.cmpi": _cmpi,
    "arith.cmpf": _cmpf,
    "arith.select": _select,
    # floats
    "arith.addf": _float_op(np.add),
    "arith.subf": _float_op(np.subtract),
    "arith.mulf": _float_op(np.multiply),
    "arith.divf": _float_op(np.divide),
    "arith.remf": _float_op(np.fmod),
    "arith.negf": _float_op(np.negative),
    "arith.maximumf": _extremum(np.maximum, minimum=False),
    "arith.minimumf": _extremum(np.minimum, minimum=True),
    "arith.maxnumf": _extremum(np.fmax, minimum=False),
    "arith.minnumf": _extremum(np.fmin, minimum=True),
    # conversions
    "arith.index_cast": _int_to_int(signed=True),
    "arith.index_castui": _int_to_int(signed=False),
    "arith.extsi": _int_to_int(signed=True),
    "arith.extui": _int_to_int(signed=False),
    "arith.trunci": _int_to_int(signed=True),
    "arith.sitofp": _int_to_float(signed=True),
    "arith.uitofp": _int_to_float(signed=False),
    "arith.fptosi": _float_to_int(signed=True),
    "arith.fptoui": _float_to_int(signed=False),
    "arith.extf": _cast_float,
    "arith.truncf": _cast_float,
    "arith.bitcast": _bitcast,
    # math
    "math.exp": _float_op(np.exp),
    "math.exp2": _float_op(np.exp2),
    "math.expm1": _float_op(np.expm1),
    "math.log": _float_op(np.log),
    "math.log2": _float_op(np.log2),
    "math.log10": _float_op(np.log10),
    "math.log1p": _float_op(np.log1p),
    "math.sqrt": _float_op(np.sqrt),
    "math.rsqrt": _float_op(_rsqrt),
    "math.cbrt": _float_op(np.cbrt),
    "math.tanh": _float_op(np.tanh),
    "math.sinh": _float_op(np.sinh),
    "math.cosh": _float_op(np.cosh),
    "math.sin": _float_op(np.sin),
    "math.cos": _float_op(np.cos),
    "math.tan": _float_op(np.tan),
    "math.asin": _float_op(np.arcsin),
    "math.acos": _float_op(np.arccos),
    "math.atan": _float_op(np.arctan),
    "math.atan2": _float_op(np.arctan2),
    "math.absf": _float_op(np.abs),
    "math.copysign": _float_op(np.copysign),
    "math.fma": _float_op(_fma),
    "math.powf": _float_op(np.power),
    "math.floor": _float_op(np.floor),
    "math.ceil": _float_op(np.ceil),
    "math.trunc": _float_op(np.trunc),
    "math.round": _float_op(_round_half_away),
    "math.roundeven": _float_op(np.rint),
    "math.erf": _float_op(_erf),
    "math.absi": lambda op, args, mask: wrap(
        np.abs(as_signed(args[0], _result_type(op))), _result_type(op)
    ),
    # vector registers
    "vector.broadcast": _vector_broadcast,
    "vector.extract": _vector_extract,
    "vector.insert": _vector_insert,
    "vector.reduction": _vector_reduction,
    "vector.fma": _float_op(_fma),
}
"""Ops computed elementwise (or per vector) from their operand values: op name -> function."""


def float_reduction(kind: str, value: Array, valid: Array, axes: tuple[int, ...]) -> Array:
    """Reduce `value` over `axes` for an `affine.parallel` reduction kind, skipping the lanes
    where `valid` is false (they contribute the kind's identity)."""
    table: dict[str, tuple[Any, Any]] = {
        "addf": (np.add, 0.0),
        "mulf": (np.multiply, 1.0),
        "maximumf": (np.maximum, -np.inf),
        "minimumf": (np.minimum, np.inf),
        "maxnumf": (np.fmax, -np.inf),
        "minnumf": (np.fmin, np.inf),
    }
    ufunc, identity = table[kind]
    start = np.asarray(identity, dtype=value.dtype)
    filled = np.where(valid, value, start)
    return np.asarray(ufunc.reduce(filled, axis=axes, initial=start)).astype(value.dtype)


def int_reduction(
    kind: str, value: Array, valid: Array, axes: tuple[int, ...], type_: Attribute
) -> Array:
    """Like `float_reduction` for the integer kinds (addi, muli, maxs, mins, maxu, minu,
    andi, ori, xori)."""
    width = bit_width(type_)
    unsigned = as_unsigned(value, type_).astype(np.uint64)
    signed = as_signed(value, type_).astype(np.int64)
    top = np.uint64((1 << width) - 1)
    table: dict[str, tuple[Any, Array, Any]] = {
        "addi": (np.add, unsigned, np.uint64(0)),
        "muli": (np.multiply, unsigned, np.uint64(1)),
        "andi": (np.bitwise_and, unsigned, top),
        "ori": (np.bitwise_or, unsigned, np.uint64(0)),
        "xori": (np.bitwise_xor, unsigned, np.uint64(0)),
        "maxu": (np.maximum, unsigned, np.uint64(0)),
        "minu": (np.minimum, unsigned, top),
        "maxs": (np.maximum, signed, np.int64(-(1 << (width - 1)))),
        "mins": (np.minimum, signed, np.int64((1 << (width - 1)) - 1)),
    }
    ufunc, data, identity = table[kind]
    filled = np.where(valid, data, identity).astype(data.dtype)
    return wrap(ufunc.reduce(filled, axis=axes, initial=identity), type_)


REDUCTION_KINDS: frozenset[str] = frozenset(
    {"addf", "mulf", "maximumf", "minimumf", "maxnumf", "minnumf"}
    | {"addi", "muli", "andi", "ori", "xori", "maxu", "minu", "maxs", "mins"}
)
"""The `affine.parallel` reduction kinds the evaluator supports."""


def is_float_kind(kind: str) -> bool:
    return kind.endswith("f")
