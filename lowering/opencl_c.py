"""OpenCL C spelling of MLIR types, constants, index expressions and scalar/vector ops.

Everything here is pure text generation, deterministic (same input, same text), used by
the `-t opencl` target (`lowering/opencl.py`). Unsupported types and ops are reported
with `DiagnosticException`s naming them.

Semantics kept exact: `index` is `int` (buffers above 2^31 elements are refused by the
target), but `index` buffer elements are `long` (64 bits, as the evaluator's); `uiN` is
`uchar`/`ushort`/`uint`/`ulong` and ops that read signed numbers (`divsi`, `cmpi slt`,
`extsi`, `sitofp`, ...) cast such operands to the signed type of their width;
`arith.divsi`/`arith.remsi` are C's truncating `/`/`%`; floor/ceil divisions and floor modulo of possibly negative values go through the `px_floordiv`/`px_ceildiv`/
`px_mod` helpers; `arith.maximumf`/`minimumf` are `(a >= b || a != a) ? a : b` (NaN
propagates, as numpy's `maximum`, which the evaluator uses; the comparison form also
vectorizes well on CPUs, unlike `fmax`) and `maxnumf`/`minnumf` are `fmax`/`fmin` (IEEE
maxNum: a NaN operand is ignored). The program disables floating-point contraction (`#pragma
OPENCL FP_CONTRACT OFF`), so `a * b + c` rounds twice as in the numpy evaluator.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache

import numpy as np
from xdsl.dialects import vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    VectorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException

from physlayout.indexing.bridges.c_text import expr_to_c
from physlayout.indexing.quasi_affine import Expr


def _half_rte_helper(width: str) -> str:
    """`floatN px_half_rteN(floatN x)`: `x` rounded to the nearest f16 value, ties to even,
    in float arithmetic (no cl_khr_fp16): magnitudes from 65520 on become infinity (65520
    is the tie between 65504, the largest half, and 2^16), NaN stays NaN, the sign is kept
    (-0 too). Below 2^-14 (half subnormals, spacing 2^-24) adding and subtracting 0.75
    rounds to a multiple of 2^-24 (the float spacing in [0.5, 1)); above, the 13 low
    mantissa bits are rounded away on the bit pattern (add 0xFFF plus the lowest kept bit,
    clear them). Exact for every float input: float has 24 >= 2 * 11 + 2 significand bits,
    so rounding a float sum, product, quotient or square root of halves to half this way is
    the correctly rounded half result."""
    t, u = f"float{width}", f"uint{width}"
    return (
        f"static inline {t} px_half_rte{width}({t} x) {{\n"
        f"  {t} a = fabs(x);\n"
        f"  {u} u = as_{u}(a);\n"
        f"  {t} normal = as_{t}((u + 0x0FFFu + ((u >> 13) & 1u)) & 0xFFFFE000u);\n"
        f"  {t} r = select(normal, (a + 0.75f) - 0.75f, a < 6.103515625e-05f);\n"
        f"  r = select(r, ({t})(INFINITY), a >= 65520.0f);\n"
        f"  return select(copysign(r, x), x, isnan(x));\n"
        "}"
    )


_ERF_NEAR = (
    0.12837916612625122, -0.376125693321228, 0.11282607913017273, -0.026796305552124977,
    0.005038737785071135, -0.0006235155742615461,
)
"""erf(x) = x + x * P(x^2) for |x| < 0.875: P's coefficients from the constant term (a
weighted least-squares fit of erf(x)/x - 1 at Chebyshev nodes, rounded to float)."""
_ERF_FAR = (
    0.00034773274092003703, 0.5577563643455505, 0.05099499970674515, -0.5061267018318176,
    0.576555073261261, -0.35534781217575073, 0.12146361917257309, -0.018059713765978813,
)
"""erf(x) = 1 - exp(-x^2) * R(1/x) for 0.875 <= x < 4 (erfc(x) exp(x^2) fitted the same
way); from 4 on, erf(x) rounds to 1 in float."""


def _horner(coefficients: tuple[float, ...], t: str, v: str) -> str:
    """C statements evaluating the polynomial of `coefficients` (constant term first) at `t`
    into the declared variable `v`, one rounding per operation (FP_CONTRACT is off)."""
    lines = [f"  {v} = {coefficients[-1]!r}f;"]
    lines += [f"  {v} = {v} * {t} + {c!r}f;" for c in reversed(coefficients[:-1])]
    return "\n".join(lines) + "\n"


def _erf_helper(width: str) -> str:
    """`floatN px_erfN(floatN x)`: erf in float, within 2 ulp of the correctly rounded value
    on PoCL (test/python/test_opencl_erf.py), branch-free so that it vectorizes: the
    device's `erf` ran at 50 ns per element on PoCL, 45x its `exp`. Odd (the sign, -0 too,
    copied from `x`), 1 for |x| >= 4 and infinities, NaN for NaN."""
    t, i = f"float{width}", f"int{width}" if width else "int"
    return (
        f"static inline {t} px_erf{width}({t} x) {{\n"
        f"  {t} a = fabs(x);\n"
        f"  {t} t = a * a;\n"
        f"  {t} p, r;\n"
        + _horner(_ERF_NEAR, "t", "p")
        + f"  {t} near = a + a * p;\n"
        f"  {t} s = 1.0f / a;\n"
        + _horner(_ERF_FAR, "s", "r")
        + f"  {t} far = 1.0f - exp(-t) * r;\n"
        f"  {t} y = select(far, near, ({i})(a < 0.875f));\n"
        f"  y = select(y, ({t})(1.0f), ({i})(a >= 4.0f));\n"
        "  return copysign(y, x);\n"
        "}"
    )


HELPERS: dict[str, str] = {
    "px_floordiv": (
        "static inline int px_floordiv(int a, int b) {\n"
        "  int q = a / b;\n"
        "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
        "}"
    ),
    "px_ceildiv": (
        "static inline int px_ceildiv(int a, int b) {\n"
        "  int q = a / b;\n"
        "  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;\n"
        "}"
    ),
    "px_mod": (
        "static inline int px_mod(int a, int b) {\n"
        "  int r = a % b;\n"
        "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
        "}"
    ),
    "px_floordiv_long": (
        "static inline long px_floordiv_long(long a, long b) {\n"
        "  long q = a / b;\n"
        "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
        "}"
    ),
    "px_ceildiv_long": (
        "static inline long px_ceildiv_long(long a, long b) {\n"
        "  long q = a / b;\n"
        "  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;\n"
        "}"
    ),
    "px_lane": (
        "static inline float px_lane(float4 v, int l) {\n"
        "  return l == 0 ? v.s0 : l == 1 ? v.s1 : l == 2 ? v.s2 : v.s3;\n"
        "}"
    ),
    "px_lane_half": (
        "static inline half px_lane_half(half4 v, int l) {\n"
        "  return l == 0 ? v.s0 : l == 1 ? v.s1 : l == 2 ? v.s2 : v.s3;\n"
        "}"
    ),
    **{f"px_half_rte{n}": _half_rte_helper(n) for n in ("", "2", "3", "4", "8", "16")},
    **{f"px_erf{n}": _erf_helper(n) for n in ("", "2", "3", "4", "8", "16")},
    # textures stored as buffers (`texture-storage=buffer`): a texel read that the kernel
    # cannot prove inside the image reads (0, 0, 0, 0), as CLK_ADDRESS_CLAMP's border does
    "px_texel": (
        "static inline float4 px_texel(__global const float4* p, int x, int y, int w, int h) {\n"
        "  return ((uint)x < (uint)w && (uint)y < (uint)h) ? p[y * w + x] : (float4)(0.0f);\n"
        "}"
    ),
    "px_texel_half": (
        "static inline float4 px_texel_half(__global const half* p, int x, int y, int w,"
        " int h) {\n"
        "  return ((uint)x < (uint)w && (uint)y < (uint)h) ? vload_half4(y * w + x, p)"
        " : (float4)(0.0f);\n"
        "}"
    ),
    "px_texel_h": (
        "static inline half4 px_texel_h(__global const half* p, int x, int y, int w, int h) {\n"
        "  return ((uint)x < (uint)w && (uint)y < (uint)h) ? vload4(y * w + x, p)"
        " : (half4)(0.0h);\n"
        "}"
    ),
}
"""Helper functions, emitted (in this order) when a kernel uses them."""

_KEYWORDS = frozenset(
    {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
        "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
        "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
        "union", "unsigned", "void", "volatile", "while", "bool", "half", "uint", "uchar",
        "ushort", "ulong", "size_t", "true", "false", "kernel", "global", "local", "constant",
        "private", "image2d_t", "sampler_t", "read_only", "write_only", "read_write", "event_t",
        "ptrdiff_t", "intptr_t", "uintptr_t",
    }
)
_VECTOR_NAME = re.compile(
    r"^(float|double|half|int|uint|char|uchar|short|ushort|long|ulong|bool)\d+$"
)
_HINT = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class NameTable:
    """Unique, valid OpenCL C identifiers, from SSA name hints (or symbol names) where
    possible. Hints with underscores are only taken when `allow_underscores` (generated
    names are `hint_N`, so SSA-derived names never collide with them)."""

    def __init__(self, reserved: set[str] | None = None, allow_underscores: bool = False):
        self.used: set[str] = set(reserved or ())
        self.counter = 0
        self.pattern = _IDENTIFIER if allow_underscores else _HINT

    def fresh(self, hint: str | None, fallback: str = "v") -> str:
        """A new identifier, reserved from then on: `hint` itself when it is a valid name here, no C
        keyword or vector type name, not taken and not starting with `px_`/`get_` (the runtime
        helpers' and builtins' prefixes); else `hint_N` (a valid but taken hint) or `fallbackN`
        (no usable hint), with the smallest counter value not taken."""
        if (
            hint
            and self.pattern.match(hint)
            and hint not in _KEYWORDS
            and not _VECTOR_NAME.match(hint)
        ):
            base = hint
        else:
            base = None
        if base is not None and base not in self.used and not base.startswith(("px_", "get_")):
            self.used.add(base)
            return base
        stem = base or fallback
        while True:
            self.counter += 1
            name = f"{stem}_{self.counter}" if base else f"{stem}{self.counter}"
            if name not in self.used:
                self.used.add(name)
                return name


# Types ------------------------------------------------------------------------------------

_VECTOR_WIDTHS = (2, 3, 4, 8, 16)


_SIGNED_NAMES = {1: "bool", 8: "char", 16: "short", 32: "int", 64: "long"}
_UNSIGNED_NAMES = {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}


def scalar_c_type(type_: Attribute, f16: str = "half") -> str | None:
    """The OpenCL C name of a scalar type, or None when unsupported: `iN`/`siN` are the
    signed C integers, `uiN` the unsigned ones (the host moves them as numpy's unsigned
    dtypes), `index` is `int`, `f16` is `f16` (`half` with half arithmetic, `float` where
    f16 is storage only and its values live in `float` registers)."""
    if isinstance(type_, IndexType):
        return "int"
    if isinstance(type_, Float32Type):
        return "float"
    if isinstance(type_, Float64Type):
        return "double"
    if isinstance(type_, Float16Type):
        return f16
    if isinstance(type_, IntegerType):
        width = type_.width.data
        if width > 1 and type_.signedness.data == Signedness.UNSIGNED:
            return _UNSIGNED_NAMES.get(width)
        return _SIGNED_NAMES.get(width)
    return None


def storage_c_type(type_: Attribute, where: str) -> str:
    """The C type of a buffer's elements in memory: `c_type`, but `index` elements are
    `long`, 64 bits like the evaluator's (and the host's int64) index values, `i1` elements
    are `uchar` (0 or 1, one byte like numpy's bool: OpenCL C forbids bool in kernel
    arguments), and `f16` elements are always `half` (a `__global half*` needs no
    extension)."""
    if isinstance(type_, IndexType):
        return "long"
    if type_ == IntegerType(1):
        return "uchar"
    return c_type(type_, where)


def c_type(type_: Attribute, where: str, f16: str = "half") -> str:
    """The OpenCL C name of a scalar or 1-D vector type (`f16` spells f16: `half`, or
    `float` where f16 is storage only); a diagnostic naming `where` otherwise."""
    if isinstance(type_, VectorType):
        shape = type_.get_shape()
        inner = scalar_c_type(type_.get_element_type(), f16)
        if len(shape) == 1 and shape[0] in _VECTOR_WIDTHS and inner not in (None, "bool"):
            return f"{inner}{shape[0]}"
        raise DiagnosticException(
            f"opencl: {where}: type {type_} has no OpenCL C vector type (1-D vectors of "
            f"{list(_VECTOR_WIDTHS)} numbers only)"
        )
    name = scalar_c_type(type_, f16)
    if name is None:
        raise DiagnosticException(f"opencl: {where}: type {type_} is not supported")
    return name


def is_float_type(type_: Attribute) -> bool:
    """True for `f16`, `f32` and `f64` and for vectors of them; False for integers and `index`."""
    if isinstance(type_, VectorType):
        type_ = type_.get_element_type()
    return isinstance(type_, Float16Type | Float32Type | Float64Type)


def is_unsigned_capable(type_: Attribute) -> bool:
    """True for the types that have an unsigned reading in C (integers of any width and `index`),
    False for floats and vectors."""
    return isinstance(type_, IntegerType | IndexType)


# Literals ---------------------------------------------------------------------------------


def float_literal(value: float, type_: Attribute, f16: str = "half") -> str:
    """An exact C literal of `value` in `type_` (f32 values get the `f` suffix; f16 values
    are an f32 literal, cast to `half` when `f16` is `half`: exact, an f16 value is an f32
    value). Memoized by the value's exact text (`repr`, which tells -0.0 from 0.0, as the
    float itself as a key would not): an unrolled kernel spells its constants again in
    every copy."""
    return _float_literal(repr(float(value)), type_, f16)


@lru_cache(maxsize=8192)
def _float_literal(text: str, type_: Attribute, f16: str) -> str:
    return _spell_float(float(text), type_, f16)


def _spell_float(value: float, type_: Attribute, f16: str = "half") -> str:
    if isinstance(type_, Float16Type):
        literal = float_literal(value, Float32Type())
        return f"((half){literal})" if f16 == "half" else literal
    if np.isnan(value):
        return "NAN"
    if np.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    if isinstance(type_, Float64Type):
        text = repr(float(value))
        suffix = ""
    else:
        text = str(np.float32(value))
        suffix = "f"
    if not any(c in text for c in ".e"):
        text += ".0"
    literal = text + suffix
    return f"({literal})" if literal.startswith("-") else literal


def int_literal(value: int, type_: Attribute) -> str:
    """The C literal of the integer `value` in `type_`: `true`/`false` for `i1` (lowest bit),
    an `L` suffix for `i64`, parenthesized when negative (so `-x` never meets another `-`)."""
    if isinstance(type_, IntegerType) and type_.width.data == 1:
        return "true" if value & 1 else "false"
    suffix = "L" if isinstance(type_, IntegerType) and type_.width.data == 64 else ""
    literal = f"{value}{suffix}"
    return f"({literal})" if value < 0 else literal


def constant_literal(attr: Attribute, type_: Attribute, where: str, f16: str = "half") -> str:
    """The C expression of an `arith.constant` value (scalars and splat/dense vectors; `f16`
    spells f16 as in `c_type`)."""
    if isinstance(attr, FloatAttr):
        return float_literal(attr.value.data, type_, f16)
    if isinstance(attr, IntegerAttr):
        return int_literal(attr.value.data, type_)
    if isinstance(attr, DenseIntOrFPElementsAttr) and isinstance(type_, VectorType):
        element = type_.get_element_type()
        values = list(attr.get_values())
        spell: Callable[[object], str] = (
            (lambda v: float_literal(float(v), element, f16))  # type: ignore[arg-type]
            if is_float_type(element)
            else (lambda v: int_literal(int(v), element))  # type: ignore[arg-type]
        )
        vec = c_type(type_, where, f16)
        if len(set(values)) == 1:
            return f"(({vec})({spell(values[0])}))"
        return f"(({vec})({', '.join(spell(v) for v in values)}))"
    raise DiagnosticException(f"opencl: {where}: unsupported constant {attr}")


# Index expressions ------------------------------------------------------------------------


def index_c(
    expr: Expr, leaves: Mapping[str, str], bounds: Mapping[str, tuple[int, int]], helpers: set[str]
) -> str:
    """`expr` as a C `int` expression (`physlayout.indexing.bridges.c_text.expr_to_c`);
    `leaves` spells each dimension, the floor helpers it calls are added to `helpers`."""
    try:
        return expr_to_c(expr, leaves, bounds, helpers)
    except ValueError as err:
        raise DiagnosticException(f"opencl: {err}") from None


# Ops --------------------------------------------------------------------------------------

_BINARY: dict[str, str] = {
    "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/",
    "arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.divsi": "/",
    "arith.remsi": "%", "arith.andi": "&", "arith.ori": "|", "arith.xori": "^",
    "arith.shli": "<<", "arith.shrsi": ">>",
}  # fmt: skip

_UNSIGNED_BINARY: dict[str, str] = {
    "arith.divui": "/", "arith.remui": "%", "arith.shrui": ">>",
}  # fmt: skip

_CALLS: dict[str, str] = {
    "arith.maxnumf": "fmax", "arith.minnumf": "fmin", "arith.remf": "fmod", "arith.maxsi": "max", "arith.minsi": "min",
    "math.exp": "exp", "math.exp2": "exp2", "math.expm1": "expm1", "math.log": "log",
    "math.log2": "log2", "math.log10": "log10", "math.log1p": "log1p", "math.sqrt": "sqrt",
    "math.rsqrt": "rsqrt", "math.cbrt": "cbrt", "math.tanh": "tanh", "math.sinh": "sinh",
    "math.cosh": "cosh", "math.sin": "sin", "math.cos": "cos", "math.tan": "tan",
    "math.asin": "asin", "math.acos": "acos", "math.atan": "atan", "math.atan2": "atan2",
    "math.absf": "fabs", "math.copysign": "copysign", "math.fma": "fma", "math.powf": "pow",
    "math.floor": "floor", "math.ceil": "ceil", "math.trunc": "trunc", "math.round": "round",
    "math.roundeven": "rint", "math.erf": "erf", "math.absi": "abs", "vector.fma": "fma",
}  # fmt: skip

_CASTS = frozenset(
    {
        "arith.index_cast", "arith.extsi", "arith.trunci", "arith.sitofp", "arith.fptosi",
        "arith.extf", "arith.truncf",
    }
)  # fmt: skip

_UNSIGNED_CASTS = frozenset({"arith.index_castui", "arith.extui", "arith.uitofp", "arith.fptoui"})

_SIGNED_READS = frozenset(
    {
        "arith.divsi", "arith.remsi", "arith.shrsi", "arith.maxsi", "arith.minsi", "math.absi",
        "arith.extsi", "arith.sitofp", "arith.index_cast",
    }
)  # fmt: skip
"""Ops that read their operands as signed numbers (`uiN` operands are cast to signed C)."""

_CMPI: dict[str, str] = {
    "eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
    "ult": "<", "ule": "<=", "ugt": ">", "uge": ">=",
}  # fmt: skip

_CMPF_ORDERED: dict[str, str] = {
    "oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<=",
}  # fmt: skip

_CMPF_UNORDERED: dict[str, str] = {
    "ueq": "{a} == {b} || isnan({a}) || isnan({b})",
    "ugt": "!({a} <= {b})", "uge": "!({a} < {b})", "ult": "!({a} >= {b})",
    "ule": "!({a} > {b})", "une": "{a} != {b}",
    "one": "({a} < {b} || {a} > {b})", "ord": "!isnan({a}) && !isnan({b})",
    "uno": "isnan({a}) || isnan({b})", "true": "true", "false": "false",
}  # fmt: skip

_LANES = "0123456789abcdef"


def lane_suffix(position: int) -> str:
    """`.s0` .. `.sf`: the component selector of lane `position`."""
    return f".s{_LANES[position]}"


def _unsigned(type_: Attribute, where: str) -> str:
    name = c_type(type_, where)
    if name.startswith("u") or name == "bool":
        return name
    return "unsigned int" if name == "int" else f"u{name}"


def _signed(type_: Attribute, where: str) -> str:
    """The signed C type of `type_`'s width (`uchar` -> `char`): what signed ops read."""
    name = c_type(type_, where)
    return name[1:] if name.startswith("u") else name


def signed_operands(op: Operation, operands: list[str], where: str) -> list[str]:
    """`operands` of an op that reads them as two's complement signed numbers, each cast to
    its signed C type when its type is spelled unsigned (`uiN` values); an `i1` true reads
    as -1."""
    texts: list[str] = []
    for value, text in zip(op.operands, operands, strict=True):
        if c_type(value.type, where) == "bool":
            text = f"(-(int){text})"
        elif c_type(value.type, where).startswith("u"):
            signed = _signed(value.type, where)
            vector = isinstance(value.type, VectorType)
            text = f"as_{signed}({text})" if vector else f"(({signed}){text})"
        texts.append(text)
    return texts


def _predicate_name(op: Operation, table: list[str]) -> str:
    attr = op.properties.get("predicate")
    value = attr.value.data if isinstance(attr, IntegerAttr) else -1
    if not 0 <= value < len(table):
        raise DiagnosticException(f"opencl: '{op.name}': unknown predicate {attr}")
    return table[value]


_CMPI_NAMES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_CMPF_NAMES = [
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
]  # fmt: skip


def _check_index_cast(op: Operation, where: str) -> None:
    """Refuse an index cast whose index result could exceed a 32-bit `int` (kernels compute
    index values as `int`): `index_cast` from integers wider than 32 bits, `index_castui`
    from 32 bits or more. Casts from index, and from narrower integers, are exact."""
    source, result = (
        t.get_element_type() if isinstance(t, VectorType) else t
        for t in (op.operands[0].type, op.results[0].type)
    )
    if not isinstance(result, IndexType) or not isinstance(source, IntegerType):
        return
    width = source.width.data
    if width > 32 or (op.name == "arith.index_castui" and width >= 32):
        raise DiagnosticException(
            f"opencl: {where}: {op.name} of {source} to index is not supported: kernels "
            f"compute index values as 32-bit int, so a value beyond 2^31 - 1 would be "
            f"truncated (arith.trunci to i32 first makes the wrap-around explicit)"
        )


_EXACT_IN_HALF = frozenset(
    {
        "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.negf",
        "arith.select", "arith.remf", "arith.constant", "math.absf", "math.copysign",
        "math.floor", "math.ceil", "math.trunc", "math.round", "math.roundeven",
        "vector.broadcast", "vector.extract", "vector.insert",
    }
)  # fmt: skip
"""Ops whose f16 result computed in float from f16 operands is already an f16 value: one
of the operands (possibly negated), an integer no larger than an operand, or `fmod`'s
remainder (exact in the operands' format)."""


def rounds_to_half(op: Operation) -> bool:
    """Whether the f16 result of `op`, computed in `float` where f16 is storage only, must be
    rounded to half (`px_half_rte`) to be the f16 value MLIR defines: arithmetic (+, -, *, /,
    fma, math functions), conversions to f16 (`truncf`, `sitofp`, `uitofp`) and
    `vector.reduction` `add`/`mul`; not the ops of `_EXACT_IN_HALF` nor max/min reductions."""
    if isinstance(op, vector.ReductionOp):
        return str(op.kind.data.value) in ("add", "mul")
    return op.name not in _EXACT_IN_HALF


def is_f16(type_: Attribute) -> bool:
    """True for `f16` and vectors of `f16`."""
    if isinstance(type_, VectorType):
        type_ = type_.get_element_type()
    return isinstance(type_, Float16Type)


def _fpowi(op: Operation, operands: list[str], result_type: Attribute) -> str:
    """`math.fpowi` as OpenCL's `pown` (an `int` exponent of the base's width)."""
    base, power = operands
    if not isinstance(result_type, VectorType):
        return f"pown({base}, (int){power})"
    width = result_type.get_shape()[0]
    if isinstance(op.operands[1].type, VectorType):
        return f"pown({base}, convert_int{width}({power}))"
    return f"pown({base}, (int{width})((int){power}))"


def op_expression(op: Operation, operands: list[str], where: str, f16: str = "half") -> str | None:
    """The C expression computing the single result of a pure op from its operands'
    C expressions (`f16` spells f16 as in `c_type`); None when the op is not in the
    supported table. Where f16 is storage only, the expression of an op with an f16 result
    is its value in `float`, not yet rounded to half (the writer rounds it, see
    `rounds_to_half`)."""
    name = op.name
    result_type = op.results[0].type if op.results else None
    if name in ("arith.index_cast", "arith.index_castui"):
        _check_index_cast(op, where)
    signed_cmpi = name == "arith.cmpi" and _predicate_name(op, _CMPI_NAMES).startswith("s")
    if name in _SIGNED_READS or signed_cmpi:
        operands = signed_operands(op, operands, where)
    if name in _BINARY:
        return f"{operands[0]} {_BINARY[name]} {operands[1]}"
    if name in _UNSIGNED_BINARY and result_type is not None:
        unsigned = _unsigned(result_type, where)
        return (
            f"({c_type(result_type, where)})(({unsigned}){operands[0]} "
            f"{_UNSIGNED_BINARY[name]} ({unsigned}){operands[1]})"
        )
    if name in ("arith.maxui", "arith.minui") and result_type is not None:
        unsigned = _unsigned(result_type, where)
        fn = "max" if name == "arith.maxui" else "min"
        return f"({c_type(result_type, where)}){fn}(({unsigned}){operands[0]}, ({unsigned}){operands[1]})"
    if name in _CALLS:
        return f"{_CALLS[name]}({', '.join(operands)})"
    if name in ("arith.maximumf", "arith.minimumf"):
        a, b = operands
        keep = ">=" if name == "arith.maximumf" else "<="
        return f"({a} {keep} {b} || {a} != {a}) ? {a} : {b}"
    if name == "arith.negf":
        return f"-{operands[0]}"
    if name == "math.fpowi" and result_type is not None:
        return _fpowi(op, operands, result_type)
    if name in _CASTS and result_type is not None:
        result = c_type(result_type, where, f16)
        if name == "arith.fptosi" and result.startswith("u"):
            return f"({result})({_signed(result_type, where)}){operands[0]}"
        if isinstance(result_type, VectorType):
            # OpenCL C has no casts between vector types: convert_T (float results round
            # to nearest even, integer results truncate toward zero, as the casts do)
            return f"convert_{result}({operands[0]})"
        return f"({result}){operands[0]}"
    if name in _UNSIGNED_CASTS and result_type is not None:
        source = op.operands[0].type
        if name in ("arith.uitofp", "arith.extui", "arith.index_castui"):
            return f"({c_type(result_type, where, f16)})({_unsigned(source, where)}){operands[0]}"
        return f"({c_type(result_type, where, f16)})({_unsigned(result_type, where)}){operands[0]}"
    if name == "arith.select":
        return f"{operands[0]} ? {operands[1]} : {operands[2]}"
    if name == "arith.cmpi":
        predicate = _predicate_name(op, _CMPI_NAMES)
        a, b = operands
        if predicate.startswith("u"):
            unsigned = _unsigned(op.operands[0].type, where)
            a, b = f"({unsigned}){a}", f"({unsigned}){b}"
        return f"{a} {_CMPI[predicate]} {b}"
    if name == "arith.cmpf":
        predicate = _predicate_name(op, _CMPF_NAMES)
        a, b = operands
        if predicate in _CMPF_ORDERED:
            return f"{a} {_CMPF_ORDERED[predicate]} {b}"
        return _CMPF_UNORDERED[predicate].format(a=a, b=b)
    if name == "arith.bitcast" and result_type is not None:
        return f"as_{c_type(result_type, where, f16)}({operands[0]})"
    if name == "vector.broadcast" and result_type is not None:
        return f"({c_type(result_type, where, f16)})({operands[0]})"
    return None
