"""Values of `-t opencl`: `arith`/`math` ops (through `opencl_c.op_expression`), index ops
(printed from their quasi-affine expression), `affine.min/max` and the `vector` ops."""

from __future__ import annotations

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import Float32Type, Float64Type, VectorType
from xdsl.ir import Attribute, Operation

from physlayout.lowering.opencl_c import (
    c_type,
    is_f16,
    lane_suffix,
    op_expression,
    rounds_to_half,
    signed_operands,
)
from physlayout.lowering.opencl_kernels import KernelWriter, fail
from physlayout.lowering.opencl_parallel import is_pure_op


class ArithWriter(KernelWriter):
    """Writes side-effect-free ops without regions, one C declaration per result."""

    def emit_pure(self, op: Operation) -> None:
        """Declare the C value of `op`, a pure op without regions and with one result: an index op
        as its quasi-affine expression, `arith.floordivsi`/`ceildivsi` through the `px_` helpers
        (their `_long` forms for 64-bit integers), `math.erf` in float through `px_erfN`,
        `affine.min`/`max`, `vector.extract`/`insert`/`reduction`, else the C operator or builtin of
        `opencl_c.op_expression`. Raises a located `DiagnosticException` for anything else (ops with
        regions, side effects or several results, vector selects and comparisons). In the
        second to fourth copy of a lane loop's body, a lane-invariant op is not written again:
        its result is the first copy's C variable (`KernelWriter.lane_values`)."""
        if self.reuse_lane_value(op):
            return
        self.write_pure(op)
        self.keep_lane_value(op)

    def write_pure(self, op: Operation) -> None:
        """Declare the C value of `op` (`emit_pure`, without the lane copies' reuse)."""
        kind = self.pure_kinds.get(op)
        if kind is None:
            kind = self.pure_kinds[op] = self.pure_kind(op)
        where = self.at(op)
        result = op.results[0]
        if kind == "index":
            expr = self.index_expr(op)
            assert expr is not None
            self.declare_pure(result, self.index(self.substituted(expr)), where)
        elif kind == "divide":
            helper = "px_floordiv" if op.name == "arith.floordivsi" else "px_ceildiv"
            if c_type(result.type, where) in ("long", "ulong"):
                helper += "_long"
            self.helpers.add(helper)
            texts = signed_operands(op, [self.expr(v) for v in op.operands], where)
            operands = ", ".join(texts)
            self.declare_pure(result, f"{helper}({operands})", where)
        elif kind == "erf":
            width = result.type.get_shape()[0] if isinstance(result.type, VectorType) else ""
            helper = f"px_erf{width}"
            self.helpers.add(helper)
            self.declare_pure(result, self.half_value(op, f"{helper}({self.expr(op.operands[0])})"), where)
        elif kind == "bound":
            self.declare_pure(result, self.affine_bound(op, op.name == "affine.min"), where)
        elif kind == "vector":
            assert isinstance(op, vector.ExtractOp | vector.InsertOp | vector.ReductionOp)
            self.emit_vector(op, where)
        else:
            text = op_expression(op, [self.expr(v) for v in op.operands], where, self.f16)
            if text is None:
                raise fail(where, "operation is not supported by the OpenCL target")
            self.declare_pure(result, self.half_value(op, text), where)

    def pure_kind(self, op: Operation) -> str:
        """How `write_pure` writes `op`, decided by the op alone (`KernelWriter.pure_kinds`:
        once, not per unrolled copy): "index" (an index op printed from its quasi-affine
        expression), "divide" (floordivsi/ceildivsi through the `px_` helpers), "erf"
        (`px_erfN`), "bound" (affine.min/max), "vector" (extract/insert/reduction) or
        "plain" (`opencl_c.op_expression`). Raises a located `DiagnosticException` for an
        op the target refuses whatever its operands (regions, side effects, several
        results, f16 bitcasts without half arithmetic, vector selects and comparisons)."""
        where = self.at(op)
        if op.regions or not is_pure_op(op) or len(op.results) != 1:
            raise fail(where, "operation is not supported by the OpenCL target")
        if self.index_expr(op) is not None:
            return "index"
        if op.name in ("arith.floordivsi", "arith.ceildivsi"):
            return "divide"
        if op.name == "math.erf" and self.float_erf(op.results[0].type):
            return "erf"
        if op.name in ("affine.min", "affine.max"):
            return "bound"
        if isinstance(op, vector.ExtractOp | vector.InsertOp | vector.ReductionOp):
            return "vector"
        if not self.fp16:
            self.refuse_storage_only(op, where)
        if isinstance(op, arith.SelectOp) and isinstance(op.cond.type, VectorType):
            raise fail(where, "selects with a vector condition are not supported")
        compares = op.name in ("arith.cmpi", "arith.cmpf")
        if compares and isinstance(op.operands[0].type, VectorType):
            raise fail(where, "vector comparisons are not supported")
        return "plain"

    def float_erf(self, kind: Attribute) -> bool:
        """Whether an erf of type `kind` is computed in `float` (f32, and f16 where it is
        storage only): then `px_erfN` computes it, not the device's slow `erf`."""
        element = kind.get_element_type() if isinstance(kind, VectorType) else kind
        return isinstance(element, Float32Type) or (is_f16(element) and not self.fp16)

    def half_value(self, op: Operation, text: str) -> str:
        """`text`, the C value of `op`'s result, rounded to half where f16 is storage only and
        the op's f16 result needs it (`rounds_to_half`): `px_half_rteN(text)`. A `truncf` whose
        every use is a store to a global buffer is left unrounded: `vstore_half_rte` rounds
        it the same way (ties to even) when it is stored. Which helper, if any, is decided
        once per op (`KernelWriter.half_helpers`)."""
        helper = self.half_helpers.get(op)
        if helper is None:
            helper = self.half_helpers[op] = self.half_helper(op)
        if not helper:
            return text
        self.helpers.add(helper)
        return f"{helper}({text})"

    def half_helper(self, op: Operation) -> str:
        """The `px_half_rteN` helper that rounds `op`'s result (`half_value`), "" for none."""
        result = op.results[0]
        if self.fp16 or not is_f16(result.type) or not rounds_to_half(op):
            return ""
        if isinstance(op, arith.TruncFOp) and result.uses and all(
            self.stored_to_global(use.operation, result) for use in result.uses
        ):
            return ""
        width = result.type.get_shape()[0] if isinstance(result.type, VectorType) else ""
        return f"px_half_rte{width}"

    def refuse_storage_only(self, op: Operation, where: str) -> None:
        """Refuse what f16 as storage only cannot compute exactly: a bitcast from or to f16
        (its bits are not in a `float` register) and a truncf from f64 to f16 (rounding to
        float first could round twice)."""
        types = [v.type for v in (*op.operands, *op.results)]
        if isinstance(op, arith.BitcastOp) and any(is_f16(t) for t in types):
            raise fail(
                where,
                "arith.bitcast of f16 values needs half arithmetic (target option fp16=true, "
                "cl_khr_fp16): without it f16 values are float in registers",
            )
        if isinstance(op, arith.TruncFOp) and is_f16(op.result.type) and is_f64(op.input.type):
            raise fail(
                where,
                "arith.truncf from f64 to f16 needs half arithmetic (target option fp16=true, "
                "cl_khr_fp16): in float it would round twice (truncf to f32 first makes that "
                "explicit)",
            )

    def affine_bound(self, op: Operation, is_min: bool) -> str:
        """The C expression of an `affine.min` (`is_min`) or `affine.max`: its map's results nested
        in `min(...)` / `max(...)` calls, left to right; a one-result map is that result."""
        amap = op.properties["map"]
        results = amap.data.results  # type: ignore[attr-defined]
        num_dims = amap.data.num_dims  # type: ignore[attr-defined]
        texts = [self.affine_expr(e, list(op.operands), num_dims, op) for e in results]
        fn = "min" if is_min else "max"
        text = texts[0]
        for other in texts[1:]:
            text = f"{fn}({text}, {other})"
        return text
    def emit_vector(
        self, op: vector.ExtractOp | vector.InsertOp | vector.ReductionOp, where: str
    ) -> None:
        """Declare the result of a `vector.extract`/`insert` at one static position of a 1-D vector
        (a lane access, `.x`/`.s4` ...) or of a `vector.reduction`. Dynamic or multi-dimensional
        positions raise a located `DiagnosticException`."""
        if isinstance(op, vector.ReductionOp):
            self.declare(op.results[0], self.half_value(op, self.reduction(op, where)), where)
            return
        positions = list(op.static_position.get_values())
        if op.dynamic_position or len(positions) != 1:
            raise fail(where, "only static positions in 1-D vectors are supported")
        if isinstance(op, vector.ExtractOp):
            self.declare(op.result, f"{self.expr(op.vector)}{lane_suffix(positions[0])}", where)
            return
        name = self.name_of(op.result)
        self.line(f"{self.c_type(op.result.type, where)} {name} = {self.expr(op.dest)};")
        self.line(f"{name}{lane_suffix(positions[0])} = {self.expr(op.source)};")

    def reduction(self, op: vector.ReductionOp, where: str) -> str:
        """The C expression of a `vector.reduction` over every lane (and the accumulator, last, when
        there is one): `+`/`*` chains for `add`/`mul`, nested `fmax`/`fmin` for the float max/min
        kinds. Any other kind raises a located `DiagnosticException`."""
        kind = str(op.kind.data.value)
        source = op.vector
        assert isinstance(source.type, VectorType)
        lanes = [f"{self.expr(source)}{lane_suffix(k)}" for k in range(source.type.get_shape()[0])]
        if op.acc is not None:
            lanes.append(self.expr(op.acc))
        if kind in ("add", "mul"):
            return (" + " if kind == "add" else " * ").join(lanes)
        calls = {"maxnumf": "fmax", "maximumf": "fmax", "minnumf": "fmin", "minimumf": "fmin"}
        if kind not in calls:
            raise fail(where, f"unsupported reduction kind '{kind}'")
        text = lanes[0]
        for lane in lanes[1:]:
            text = f"{calls[kind]}({text}, {lane})"
        return text


def is_f64(type_: Attribute) -> bool:
    """True for `f64` and vectors of `f64`."""
    if isinstance(type_, VectorType):
        type_ = type_.get_element_type()
    return isinstance(type_, Float64Type)
