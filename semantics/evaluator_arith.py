"""Reference semantics of `arith` and `math` (`ArithFunctions`, `MathFunctions`).

Each op's value function maps the operand arrays of one op (lane axes first, then the vector axes
of its type) to its result array. Integers are held in the signed numpy dtype of their width
(`index` as int64, `i1` as bool) and wrap around; unsigned ops reinterpret the bits. Floats
keep their width (f32 stays float32). Results of undefined behaviour (shift amounts of at
least the bit width, float-to-int conversions out of range) are deterministic but arbitrary;
integer division by zero on an active lane is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from math import erf
from typing import Any

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from physlayout.semantics.evaluator_frame import impl_of, simt
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

ValueFn = Callable[[Operation, Sequence[Array], Array | None], Array]
"""Computes the single result of an op from its operand arrays and the active-lane mask."""


def operand_type(op: Operation, index: int = 0) -> Attribute:
    """The type of operand `index` of `op`."""
    return op.operands[index].type


def result_type(op: Operation) -> Attribute:
    """The type of the (first) result of `op`."""
    return op.results[0].type


# Constants --------------------------------------------------------------------------------


def constant_value(op: Operation, value: Attribute) -> Array:
    """The array of an `arith.constant` with attribute `value` (vector dims only)."""
    type_ = result_type(op)
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


IntegerReading = Callable[[Array, Attribute], Array]
"""How an integer op reads its operands: `as_signed` or `as_unsigned`."""


def _integer_op(
    read: IntegerReading, fn: Callable[[Array, Array], Array], divides: bool = False
) -> ValueFn:
    """A binary integer op computed on the `read` of both operands (sign-agnostic ops use
    `as_unsigned`), wrapped to the result type; with `divides`, a zero divisor on an active
    lane is an error."""

    def run(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
        type_ = result_type(op)
        lhs, rhs = read(args[0], type_), read(args[1], type_)
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

    def run(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
        type_ = result_type(op)
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


def _cmpi(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    predicate = _predicate(op)
    if predicate not in _CMPI:
        raise EvaluationError(f"'{op.name}': unknown predicate {predicate}")
    signed, compare = _CMPI[predicate]
    type_ = operand_type(op)
    read = as_signed if signed else as_unsigned
    return np.asarray(compare(read(args[0], type_), read(args[1], type_)))


def _cmpf(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
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


def _select(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    cond, a, b = args
    extra = len(vector_shape(result_type(op))) - len(vector_shape(operand_type(op)))
    return np.where(with_trailing(cond, extra), a, b)


# Floats -----------------------------------------------------------------------------------


def float_op(fn: Callable[..., Any]) -> ValueFn:
    """An op's meaning from the numpy function `fn` of its operands, the result cast to the
    op's result dtype (floating-point ops and math functions)."""
    def run(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
        return np.asarray(fn(*args)).astype(dtype_of(result_type(op)), copy=False)

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

    def run(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
        a, b = args
        return np.asarray(fix(a, b, fn(a, b))).astype(dtype_of(result_type(op)), copy=False)

    return run


def fused_multiply_add(a: Array, b: Array, c: Array) -> Array:
    """Fused multiply-add: f16/f32 computed exactly in float64, then rounded once."""
    if a.dtype.itemsize < 8:
        wide = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
        return wide.astype(a.dtype)
    return a * b + c


_erf = np.vectorize(erf, otypes=[np.float64])


def _round_half_away(a: Array) -> Array:
    whole = np.trunc(a)
    return np.where(np.abs(a - whole) >= 0.5, whole + np.sign(a), whole)


def _power_int(a: Array, n: Array) -> Array:
    """`math.fpowi`: the float `a` to the integer power `n`, in `a`'s type, computed as
    upstream MLIR lowers it (`convert-math-to-funcs`), every multiply rounded to the type:
    ``1`` for ``n = 0``; else binary exponentiation of ``|n|`` (``result *= b`` for each set
    bit from the lowest, ``b *= b`` between them; the most negative ``n`` takes the largest
    positive power and one more ``* a``), and ``1 / result`` for a negative ``n``."""
    base, power = np.broadcast_arrays(np.asarray(a), np.asarray(n))
    kind = base.dtype
    limits = np.iinfo(power.dtype)
    is_min = power == limits.min if limits.min < 0 else np.zeros(power.shape, bool)
    left = np.where(is_min, limits.max, np.abs(power)).astype(np.uint64)
    result = np.ones(base.shape, kind)
    square = base.astype(kind, copy=True)
    with np.errstate(all="ignore"):
        while True:
            result = np.where((left & np.uint64(1)) != 0, result * square, result).astype(kind)
            left = left >> np.uint64(1)
            if not left.any():
                break
            square = (square * square).astype(kind)
        result = np.where(is_min, result * base, result).astype(kind)
        return np.where(power < 0, np.asarray(1, kind) / result, result).astype(kind)


def _rsqrt(a: Array) -> Array:
    return np.reciprocal(np.sqrt(a))


# Conversions ------------------------------------------------------------------------------


def _int_to_int(signed: bool) -> ValueFn:
    """extsi/extui/trunci/index_cast(ui): read the source (un)signed, wrap to the result."""

    def run(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
        source = operand_type(op)
        if signed:
            return wrap(as_signed(args[0], source).astype(np.int64), result_type(op))
        return wrap(as_unsigned(args[0], source).astype(np.uint64), result_type(op))

    return run


def _int_to_float(signed: bool) -> ValueFn:
    def run(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
        read = as_signed if signed else as_unsigned
        return read(args[0], operand_type(op)).astype(dtype_of(result_type(op)))

    return run


def _float_to_int(signed: bool) -> ValueFn:
    def run(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
        value = np.trunc(args[0].astype(np.float64))
        value = np.where(np.isfinite(value), value, 0)
        as_int = value.astype(np.int64) if signed else value.astype(np.uint64)
        return wrap(as_int, result_type(op))

    return run


def _cast_float(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    return args[0].astype(dtype_of(result_type(op)))


def _bitcast(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    source, result = dtype_of(operand_type(op)), dtype_of(result_type(op))
    if source.itemsize != result.itemsize or np.bool_ in (source.type, result.type):
        if source == result:
            return args[0]
        raise EvaluationError(f"'{op.name}': unsupported bitcast {source} -> {result}")
    return np.ascontiguousarray(args[0]).view(result)


def _abs_int(op: Operation, args: Sequence[Array], mask: Array | None) -> Array:
    return wrap(np.abs(as_signed(args[0], result_type(op))), result_type(op))


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
    """Whether a reduction kind names a floating-point combiner (`addf`, `maximumf`, ...)."""
    return kind.endswith("f")


# Interpreter functions --------------------------------------------------------------------


def value_impl(op_type: type[Operation], fn: ValueFn, masked: bool = False) -> Any:
    """The `@impl` of `op_type` whose single result is `fn` of the operands over the
    current lanes; `masked` hands `fn` the mask of the active lanes (division uses it to
    report division by zero on active lanes only), else None."""

    def run(
        self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        return (fn(op, args, None),)

    def run_masked(
        self: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        return (fn(op, args, simt(interpreter).lanes.mask),)

    return impl(op_type)(run_masked if masked else run)


def _division_impl(
    op_type: type[Operation], read: IntegerReading, fn: Callable[[Array, Array], Array]
) -> Any:
    """The `@impl` of integer division or remainder `op_type`: `fn` of the `read` of its
    operands, a zero divisor on an active lane an error."""
    return value_impl(op_type, _integer_op(read, fn, divides=True), masked=True)


@register_impls
class ArithFunctions(InterpreterFunctions):
    """`arith`: integers wrap to their width, floats keep it (see the module docstring)."""

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        return (constant_value(op, op.value),)

    run_addi = value_impl(arith.AddiOp, _integer_op(as_unsigned, np.add))
    run_subi = value_impl(arith.SubiOp, _integer_op(as_unsigned, np.subtract))
    run_muli = value_impl(arith.MuliOp, _integer_op(as_unsigned, np.multiply))
    run_andi = value_impl(arith.AndIOp, _integer_op(as_unsigned, np.bitwise_and))
    run_ori = value_impl(arith.OrIOp, _integer_op(as_unsigned, np.bitwise_or))
    run_xori = value_impl(arith.XOrIOp, _integer_op(as_unsigned, np.bitwise_xor))
    run_divsi = _division_impl(arith.DivSIOp, as_signed, _trunc_div)
    run_remsi = _division_impl(arith.RemSIOp, as_signed, np.fmod)
    run_floordivsi = _division_impl(arith.FloorDivSIOp, as_signed, np.floor_divide)
    run_ceildivsi = _division_impl(arith.CeilDivSIOp, as_signed, _ceil_div)
    run_divui = _division_impl(arith.DivUIOp, as_unsigned, np.floor_divide)
    run_remui = _division_impl(arith.RemUIOp, as_unsigned, np.remainder)
    run_ceildivui = _division_impl(arith.CeilDivUIOp, as_unsigned, _ceil_div)
    run_minsi = value_impl(arith.MinSIOp, _integer_op(as_signed, np.minimum))
    run_maxsi = value_impl(arith.MaxSIOp, _integer_op(as_signed, np.maximum))
    run_minui = value_impl(arith.MinUIOp, _integer_op(as_unsigned, np.minimum))
    run_maxui = value_impl(arith.MaxUIOp, _integer_op(as_unsigned, np.maximum))
    run_shli = value_impl(arith.ShLIOp, _shift("shli"))
    run_shrsi = value_impl(arith.ShRSIOp, _shift("shrsi"))
    run_shrui = value_impl(arith.ShRUIOp, _shift("shrui"))
    run_cmpi = value_impl(arith.CmpiOp, _cmpi)
    run_cmpf = value_impl(arith.CmpfOp, _cmpf)
    run_select = value_impl(arith.SelectOp, _select)
    run_addf = value_impl(arith.AddfOp, float_op(np.add))
    run_subf = value_impl(arith.SubfOp, float_op(np.subtract))
    run_mulf = value_impl(arith.MulfOp, float_op(np.multiply))
    run_divf = value_impl(arith.DivfOp, float_op(np.divide))
    run_negf = value_impl(arith.NegfOp, float_op(np.negative))
    run_maximumf = value_impl(arith.MaximumfOp, _extremum(np.maximum, minimum=False))
    run_minimumf = value_impl(arith.MinimumfOp, _extremum(np.minimum, minimum=True))
    run_maxnumf = value_impl(arith.MaxnumfOp, _extremum(np.fmax, minimum=False))
    run_minnumf = value_impl(arith.MinnumfOp, _extremum(np.fmin, minimum=True))
    run_index_cast = value_impl(arith.IndexCastOp, _int_to_int(signed=True))
    run_extsi = value_impl(arith.ExtSIOp, _int_to_int(signed=True))
    run_extui = value_impl(arith.ExtUIOp, _int_to_int(signed=False))
    run_trunci = value_impl(arith.TruncIOp, _int_to_int(signed=True))
    run_sitofp = value_impl(arith.SIToFPOp, _int_to_float(signed=True))
    run_uitofp = value_impl(arith.UIToFPOp, _int_to_float(signed=False))
    run_fptosi = value_impl(arith.FPToSIOp, _float_to_int(signed=True))
    run_fptoui = value_impl(arith.FPToUIOp, _float_to_int(signed=False))
    run_extf = value_impl(arith.ExtFOp, _cast_float)
    run_truncf = value_impl(arith.TruncFOp, _cast_float)
    run_bitcast = value_impl(arith.BitcastOp, _bitcast)


@register_impls
class MathFunctions(InterpreterFunctions):
    """`math`: elementwise numpy functions in the operand's float type."""

    run_exp = value_impl(math.ExpOp, float_op(np.exp))
    run_exp2 = value_impl(math.Exp2Op, float_op(np.exp2))
    run_expm1 = value_impl(math.ExpM1Op, float_op(np.expm1))
    run_log = value_impl(math.LogOp, float_op(np.log))
    run_log2 = value_impl(math.Log2Op, float_op(np.log2))
    run_log10 = value_impl(math.Log10Op, float_op(np.log10))
    run_log1p = value_impl(math.Log1pOp, float_op(np.log1p))
    run_sqrt = value_impl(math.SqrtOp, float_op(np.sqrt))
    run_rsqrt = value_impl(math.RsqrtOp, float_op(_rsqrt))
    run_cbrt = value_impl(math.CbrtOp, float_op(np.cbrt))
    run_tanh = value_impl(math.TanhOp, float_op(np.tanh))
    run_sinh = value_impl(math.SinhOp, float_op(np.sinh))
    run_cosh = value_impl(math.CoshOp, float_op(np.cosh))
    run_sin = value_impl(math.SinOp, float_op(np.sin))
    run_cos = value_impl(math.CosOp, float_op(np.cos))
    run_tan = value_impl(math.TanOp, float_op(np.tan))
    run_asin = value_impl(math.AsinOp, float_op(np.arcsin))
    run_acos = value_impl(math.AcosOp, float_op(np.arccos))
    run_atan = value_impl(math.AtanOp, float_op(np.arctan))
    run_atan2 = value_impl(math.Atan2Op, float_op(np.arctan2))
    run_absf = value_impl(math.AbsFOp, float_op(np.abs))
    run_copysign = value_impl(math.CopySignOp, float_op(np.copysign))
    run_fma = value_impl(math.FmaOp, float_op(fused_multiply_add))
    run_powf = value_impl(math.PowFOp, float_op(np.power))
    run_fpowi = value_impl(math.FPowIOp, float_op(_power_int))
    run_floor = value_impl(math.FloorOp, float_op(np.floor))
    run_ceil = value_impl(math.CeilOp, float_op(np.ceil))
    run_trunc = value_impl(math.TruncOp, float_op(np.trunc))
    run_round = value_impl(math.RoundOp, float_op(_round_half_away))
    run_roundeven = value_impl(math.RoundEvenOp, float_op(np.rint))
    run_erf = value_impl(math.ErfOp, float_op(_erf))
    run_absi = value_impl(math.AbsIOp, _abs_int)


@cache
def _scalar_interpreter() -> Interpreter:
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(ArithFunctions())
    interpreter.register_implementations(MathFunctions())
    return interpreter


def has_value_semantics(op: Operation) -> bool:
    """True when `ArithFunctions`/`MathFunctions` compute `op`'s result from its operands."""
    return not isinstance(op, arith.ConstantOp) and impl_of(_scalar_interpreter(), op) is not None


def evaluate_value_op(op: Operation, args: Sequence[Array]) -> Array:
    """The single result of `op` (see `has_value_semantics`) on `args`, outside any lanes."""
    interpreter = _scalar_interpreter()
    found = impl_of(interpreter, op)
    if found is None:
        raise EvaluationError(f"'{op.name}' has no value semantics")
    functions, run = found
    return run(functions, interpreter, op, tuple(args)).values[0]
