"""to-mixed-precision{accumulate="conv,matmul,pooling,reduction" keep-io-f32=true
    keep-statistics-f32=false}: f32
tensors of graph-level functions become f16 storage, computed in f32 (TVM's
ToMixedPrecision, for linalg on tensors).

What it rewrites, in every graph-level function (one with tensor parameters or results):

- every linalg op with an f32 tensor operand or result (`linalg.generic`, and named ops
  such as `linalg.conv_2d_nchw_fchw`, `linalg.matmul`, `linalg.pooling_*` through their
  generic form), but `linalg.fill`, becomes a `linalg.generic` whose f32 results are f16
  tensors. Its body still computes in f32: each f16 input element is widened with
  `arith.extf` where the body reads it, each value yielded into an f16 output is rounded
  with `arith.truncf` (to nearest, ties to even). So an elementwise op reads and writes f16
  and rounds once per element, whatever its body (any `arith`/`math` ops);
- an *accumulating* op (one with reduction iterators, of a kind named in `accumulate`:
  `conv` (a 2-D convolution, named or generic as `convert-layout` recognizes it),
  `matmul` (named `*matmul*`, `*matvec*`, `*vecmat*`, `*dot*` ops), `pooling` (named
  `linalg.pooling_*`), `reduction` (any other op with a reduction iterator)) keeps an f32
  output: it accumulates in f32 from f16 inputs, and each rewritten op reading its result
  rounds it to f16 where it reads it (`arith.truncf` then `arith.extf` in its body), so
  no cast kernel follows it (the rounding fuses into its consumers; data movement between
  them moves f32). Its init (`linalg.fill`) stays f32;
- the outputs (`outs`) an op needs in another type are rebuilt in that type: a
  `tensor.empty` as an empty of the new type, a `linalg.fill` as a fill of the scalar
  converted (`arith.truncf`), a dense f32 constant as the f16 constant of its rounded
  values (one, right after the f32 constant, for all its readers); any other value
  through a cast generic; the f32 fills and empties no op reads any more are erased (a
  tensor fill read by nothing would otherwise be a launch of its own);
- dense f32 constants read as inputs of a rewritten op become f16 constants;
- data movement (`tensor.expand_shape`, `collapse_shape`, `extract_slice`,
  `insert_slice`, `pad`, `concat`, `reshape`, `cast`, `linalg.transpose`,
  `linalg.broadcast`) of an f16 tensor the pass made moves f16 (a pad's value becomes an
  f16 constant; another f32 operand, e.g. a parameter concatenated with it, is cast);
- function boundary: with `keep-io-f32=true` (the default) f32 tensor parameters stay
  f32 and no cast kernel is added at the entry (with `params-f16=true`, an argument but
  the first that every op reads rounded is instead rounded by one cast at the entry, for
  `lift-transform-params`): each rewritten op reading a parameter (or
  data movement of one, which stays f32) rounds it to f16 where it reads it, as for an
  accumulator's result; f16 results are widened back (`arith.extf`) before
  `func.return` (an f32 accumulator returned directly is returned unrounded). With
  `keep-io-f32=false` f32 tensor parameters and results become f16 (the function's type
  changes; callers are not rewritten, so use it on entry functions);
- `keep-statistics-f32=true`: the results of `reduction`-kind ops and of the elementwise
  ops that read only such statistics (or f64 tensors) stay f32 and are read unrounded
  (normalization and softmax statistics: a mean, a variance, rsqrt(var + eps), a max, an
  exp-sum);
- a `tensor.extract` of a tensor that became f16 (a gather in a generic body) reads the f16
  element and widens it with a scalar `arith.extf`;
- any other op (one this pass does not know to be type-agnostic) keeps its f32 types: its
  operands that became f16 are widened back by a cast generic before it.

A cast generic (identity maps, all parallel, a body of one `arith.extf`/`arith.truncf` and
the yield) is never rewritten, and a body that already rounds an argument is not rounded
again, so running the pass again changes nothing. Only f32 is
converted: f64, f16 and integer tensors, and scalars, are left alone. Refused (a
`PassFailedException`): an `accumulate` kind this pass does not know.

Rounding points (what `semantics/graph_evaluator.py` computes with numpy, and what the
OpenCL target reproduces): every f16 value is the f32 value rounded to nearest even
(`arith.truncf`) at the end of the op that produces it; arithmetic is f32 everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    FunctionType,
    ModuleOp,
    TensorType,
    f16,
    f32,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.linalg.ops import BroadcastOp, FillOp, GenericOp, TransposeOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue, Use
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.linalg_generic import generic_form
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker

KINDS = ("conv", "matmul", "pooling", "reduction")
"""The accumulating op kinds `accumulate` may name."""


def is_f32_tensor(type_: Attribute) -> bool:
    """A tensor of f32 elements."""
    return isinstance(type_, TensorType) and isinstance(type_.get_element_type(), Float32Type)


def with_element(type_: Attribute, element: Attribute) -> Attribute:
    """`type_` with its element type replaced (a tensor type), else `type_` itself."""
    if isinstance(type_, TensorType):
        return TensorType(element, type_.get_shape())
    return type_


def is_cast_generic(op: Operation) -> bool:
    """A cast generic between f16 and f32 (what this pass inserts): one input and one output
    with identity maps, parallel iterators, and a body of one `arith.extf` or `arith.truncf`
    of the input element, yielded, both sides f16 or f32 (a cast to or from f64, e.g. a
    LayerNorm's, is an ordinary op whose f32 input may have become f16)."""
    if not isinstance(op, GenericOp) or len(op.inputs) != 1 or len(op.outputs) != 1:
        return False
    if any(str(t.data) != "parallel" for t in op.iterator_types.data):
        return False
    if any(m.data != AffineMap.identity(m.data.num_dims) for m in op.indexing_maps.data):
        return False
    ops = list(op.body.blocks[0].ops)
    halves = (Float16Type, Float32Type)
    return (
        len(ops) == 2
        and isinstance(ops[0], arith.ExtFOp | arith.TruncFOp)
        and isinstance(ops[0].input.type, halves)
        and isinstance(ops[0].result.type, halves)
        and ops[0].input is op.body.blocks[0].args[0]
        and isinstance(ops[1], LinalgYieldOp)
        and list(ops[1].operands) == [ops[0].result]
    )


def cast_generic(value: SSAValue, element: Attribute) -> GenericOp:
    """An elementwise generic converting the tensor `value` to `element` (`arith.truncf` to
    a narrower float, `arith.extf` to a wider one), its output a new `tensor.empty` (not
    inserted: the caller inserts `[empty, cast]`, see `insert_cast`)."""
    source = value.type
    assert isinstance(source, TensorType)
    rank = len(source.get_shape())
    identity = AffineMapAttr(AffineMap.identity(rank))
    block = Block(arg_types=[source.get_element_type(), element])
    narrower = isinstance(element, Float16Type)
    convert = (
        arith.TruncFOp(block.args[0], element) if narrower else arith.ExtFOp(block.args[0], element)
    )
    block.add_ops([convert, LinalgYieldOp(convert.result)])
    empty = tensor.EmptyOp([], with_element(source, element))
    return GenericOp(
        [value],
        [empty.tensor],
        Region(block),
        [identity, identity],
        [IteratorTypeAttr(IteratorType.PARALLEL)] * rank,
        [with_element(source, element)],
    )


def insert_cast(
    rewriter: PatternRewriter, value: SSAValue, element: Attribute, where: InsertPoint
) -> SSAValue:
    """Insert a cast generic of `value` to `element` at `where`; its result."""
    cast = cast_generic(value, element)
    empty = cast.outputs[0].owner
    assert isinstance(empty, Operation)
    rewriter.insert([empty, cast], where)
    return cast.results[0]


def converted_constant(op: arith.ConstantOp) -> arith.ConstantOp | None:
    """The f16 constant of a dense f32 tensor constant (values rounded to nearest even), or
    None for any other constant."""
    value = op.value
    if not isinstance(value, DenseIntOrFPElementsAttr) or not is_f32_tensor(op.result.type):
        return None
    type_ = op.result.type
    assert isinstance(type_, TensorType)
    with np.errstate(over="ignore"):
        halves = np.asarray(value.get_values(), dtype=np.float32).astype(np.float16)
    new_type = TensorType(f16, type_.get_shape())
    return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(new_type, halves.tolist()))


DATA_MOVEMENT = (
    tensor.ExpandShapeOp,
    tensor.CollapseShapeOp,
    tensor.ExtractSliceOp,
    tensor.InsertSliceOp,
    tensor.PadOp,
    tensor.ConcatOp,
    tensor.ReshapeOp,
    tensor.CastOp,
    TransposeOp,
    BroadcastOp,
)
"""The ops that only move elements (any element type): they carry f16 where their data is
f16 (`linalg.transpose` and `linalg.broadcast` too, with their init)."""


def data_operands(op: Operation) -> list[SSAValue]:
    """The operands of a data-movement op whose elements it moves (not its indices/shapes)."""
    if isinstance(op, tensor.ConcatOp):
        return list(op.inputs)
    if isinstance(op, tensor.InsertSliceOp):
        return [op.source, op.dest]
    if isinstance(op, tensor.ExpandShapeOp | tensor.CollapseShapeOp):
        return [op.src]
    if isinstance(op, DATA_MOVEMENT):
        return [op.operands[0]]
    return []


def rounded_in_body(arg: SSAValue) -> bool:
    """A body argument (f32) every use of which rounds it to half: an input this pass
    already reads rounded (`StoreLinalgInHalf.read_rounded`)."""
    return all(
        isinstance(u.operation, arith.TruncFOp) and isinstance(u.operation.result.type, Float16Type)
        for u in arg.uses
    )


def _converted_scalar(scalar: SSAValue, element: Attribute) -> arith.ConstantOp | None:
    """The constant `scalar` (a float `arith.constant`) converted to `element` (f16: rounded
    to nearest even, as `arith.truncf`; f32: exact), or None when it is not a constant. A
    fill's scalar stays a constant: a host function computes nothing."""
    owner = scalar.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, FloatAttr):
        return None
    value = float(owner.value.value.data)
    rounded = float(np.float16(value)) if isinstance(element, Float16Type) else value
    return arith.ConstantOp(FloatAttr(rounded, element))  # type: ignore[arg-type]


def materialize(
    rewriter: PatternRewriter, value: SSAValue, element: Attribute, before: Operation
) -> SSAValue:
    """`value` (a tensor) with elements of type `element`, built before `before`: a new
    `tensor.empty`, a `linalg.fill` of the converted scalar, the converted dense constant,
    else a cast generic."""
    type_ = value.type
    assert isinstance(type_, TensorType)
    if type_.get_element_type() == element:
        return value
    owner = value.owner
    at = InsertPoint.before(before)
    if isinstance(owner, tensor.EmptyOp):
        empty = tensor.EmptyOp(list(owner.dynamic_sizes), with_element(type_, element))
        rewriter.insert(empty, at)
        return empty.tensor
    if isinstance(owner, FillOp) and len(owner.inputs) == 1:
        scalar = owner.inputs[0]
        if scalar.type != element:
            narrower = isinstance(element, Float16Type)
            convert = _converted_scalar(scalar, element)
            if convert is None:
                convert = arith.TruncFOp(scalar, element) if narrower else arith.ExtFOp(scalar, element)
            rewriter.insert(convert, at)
            scalar = convert.result
        outs = materialize(rewriter, owner.outputs[0], element, before)
        fill = FillOp([scalar], [outs], [with_element(type_, element)])
        rewriter.insert(fill, at)
        return fill.results[0]
    if isinstance(owner, arith.ConstantOp) and isinstance(element, Float16Type):
        constant = converted_constant(owner)
        if constant is not None:
            made = owner.next_op
            if isinstance(made, arith.ConstantOp) and made.value == constant.value:
                return made.result  # converted for an earlier reader: one constant for all
            rewriter.insert(constant, InsertPoint.after(owner))
            return constant.result
    return insert_cast(rewriter, value, element, at)


def accumulation_kind(op: LinalgStructuredOperation) -> str | None:
    """The accumulating kind of `op` (module docstring), or None without reductions."""
    kinds = [str(t.data) for t in op.get_iterator_types().data]
    if "reduction" not in kinds:
        return None
    from physlayout.transforms.convert_layout import match_conv

    name = op.name.removeprefix("linalg.")
    if "conv" in name or (isinstance(op, GenericOp) and match_conv(op) is not None):
        return "conv"
    if any(k in name for k in ("matmul", "matvec", "vecmat", "dot")):
        return "matmul"
    if name.startswith("pooling"):
        return "pooling"
    return "reduction"


# Patterns --------------------------------------------------------------------------------


@dataclass
class StoreLinalgInHalf(RewritePattern):
    """A linalg op (not a fill, not a cast generic) with f32 tensors -> a `linalg.generic`
    with f16 storage computing in f32 (module docstring); an accumulating one keeps its f32
    output, which its readers round (`read_rounded`); with `statistics` a reduction's
    output and the elementwise ops over such statistics stay f32 (`is_statistic`)."""

    accumulate: frozenset[str]
    statistics: bool = False

    def is_statistic(self, value: SSAValue) -> bool:
        """With `statistics`: an f32 tensor that is the result of a `reduction`-kind op
        accumulating in f32, of an elementwise generic that kept f32 because it reads only
        statistics (`keeps_statistic`), or of data movement of statistics."""
        if not self.statistics or not is_f32_tensor(value.type):
            return False
        owner = value.owner
        if isinstance(owner, DATA_MOVEMENT):
            operands = data_operands(owner)
            return bool(operands) and all(self.is_statistic(v) for v in operands)
        if not isinstance(owner, GenericOp):
            return False
        kind = accumulation_kind(owner)
        if kind is not None:
            return kind == "reduction" and kind in self.accumulate
        return self.keeps_statistic(owner)

    def keeps_statistic(self, op: Operation) -> bool:
        """With `statistics`: an elementwise linalg op (no reduction) whose tensor inputs
        are all statistics or tensors of other element types than f16/f32 (e.g. an f64
        variance), at least one of them: it computes a statistic (mean = sum / n, rstd =
        rsqrt(var + eps)) and keeps its f32 outputs."""
        if not self.statistics or not isinstance(op, LinalgStructuredOperation):
            return False
        if "reduction" in [str(t.data) for t in op.get_iterator_types().data]:
            return False
        tensors = [v for v in op.inputs if isinstance(v.type, TensorType)]
        others = [
            v
            for v in tensors
            if isinstance(v.type, TensorType)
            and not isinstance(v.type.get_element_type(), Float16Type | Float32Type)
        ]
        statistics = [v for v in tensors if self.is_statistic(v)]
        return bool(tensors) and len(others) + len(statistics) == len(tensors) and (
            bool(statistics) or bool(others)
        )

    def read_rounded(self, value: SSAValue) -> bool:
        """An f32 tensor that stands for f16 data but is kept f32, which each rewritten op
        rounds to half where it reads it (`arith.truncf`, `arith.extf` in its body): a graph
        function's parameter (`keep-io-f32`), the f32 result of an op accumulating in f32
        (rounded by its readers, so that no cast kernel follows it), or data movement of
        those (which keeps it f32). Not a statistic (`is_statistic`): read unrounded."""
        if not is_f32_tensor(value.type) or self.is_statistic(value):
            return False
        if isinstance(value, BlockArgument):
            owner = value.block.parent_op()
            return isinstance(owner, func.FuncOp) and value.block is owner.body.blocks[0]
        owner = value.owner
        if isinstance(owner, DATA_MOVEMENT):
            operands = data_operands(owner)
            return bool(operands) and all(self.read_rounded(v) for v in operands)
        if isinstance(owner, GenericOp) and not is_cast_generic(owner):
            kind = accumulation_kind(owner)
            return kind is not None and kind in self.accumulate
        return False

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp | NamedOperation) or isinstance(op, FillOp):
            return
        if is_cast_generic(op):
            return
        kind = accumulation_kind(op)
        keep_f32 = (kind is not None and kind in self.accumulate) or self.keeps_statistic(op)
        out_types = [
            with_element(t, f16) if is_f32_tensor(t) and not keep_f32 else t
            for t in op.results.types
        ]
        inputs = [self.half_input(v, rewriter, op) for v in op.inputs]
        generic = op if isinstance(op, GenericOp) else generic_form(op)
        block = generic.body.blocks[0]
        element_of = [
            v.type.get_element_type() if isinstance(v.type, TensorType) else v.type
            for v in [*inputs, *op.outputs]
        ]
        out_elements = [
            t.get_element_type() if isinstance(t, TensorType) else t for t in out_types
        ]
        element_of[len(inputs) :] = out_elements
        rounded = {k for k, v in enumerate(inputs) if self.read_rounded(v)}
        unchanged = (
            isinstance(op, GenericOp)
            and list(out_types) == list(op.results.types)
            and [v.type for v in op.outputs] == list(out_types)
            and [a.type for a in block.args] == element_of
            and all(a is b for a, b in zip(inputs, op.inputs, strict=True))
            and all(rounded_in_body(block.args[k]) for k in rounded)
        )
        if unchanged:
            return
        if not isinstance(op, GenericOp) and not any(
            is_f32_tensor(v.type) for v in [*op.operands, *op.results]
        ):
            generic.erase()
            return
        outputs = [
            materialize(rewriter, v, e, op) if isinstance(v.type, TensorType) else v
            for v, e in zip(op.outputs, out_elements, strict=True)
        ]
        body = self.body(generic, element_of, out_elements, rounded)
        new = GenericOp(
            inputs,
            outputs,
            body,
            list(generic.indexing_maps.data),
            list(generic.iterator_types.data),
            out_types,
        )
        new.attributes.update(op.attributes)
        if generic is not op:
            generic.erase()
        rewriter.insert(new, InsertPoint.before(op))
        results: list[SSAValue] = list(new.results)
        rewriter.replace(op, [], results)

    @staticmethod
    def half_input(value: SSAValue, rewriter: PatternRewriter, op: Operation) -> SSAValue:
        """An input as the rewritten op reads it: f32 dense constants, fills and empties
        as f16 (the body widens them), anything else as it is."""
        owner = value.owner
        if not is_f32_tensor(value.type):
            return value
        if isinstance(owner, tensor.EmptyOp | FillOp) or (
            isinstance(owner, arith.ConstantOp) and converted_constant(owner) is not None
        ):
            return materialize(rewriter, value, f16, op)
        return value

    @staticmethod
    def body(
        generic: GenericOp,
        element_of: Sequence[Attribute],
        out_elements: Sequence[Attribute],
        rounded: set[int] | frozenset[int] = frozenset(),
    ) -> Region:
        """The body of `generic` over block arguments of types `element_of`: an argument
        that became f16 where the body computes in f32 is widened (`arith.extf`) first; an
        f32 argument in `rounded` (see `StoreLinalgInHalf.read_rounded`) is rounded to half and
        widened back (`arith.truncf`, `arith.extf`) unless the body already does; a value
        yielded into an f16 output is rounded (`arith.truncf`) before the yield."""
        old = generic.body.blocks[0]
        block = Block(arg_types=element_of)
        mapping: dict[SSAValue, SSAValue] = {}
        for index, (old_arg, new_arg) in enumerate(zip(old.args, block.args, strict=True)):
            mapping[old_arg] = new_arg
            if old_arg.type != new_arg.type and isinstance(old_arg.type, Float32Type):
                widen = arith.ExtFOp(new_arg, f32)
                block.add_op(widen)
                mapping[old_arg] = widen.result
            elif index in rounded and old_arg.uses and not rounded_in_body(old_arg):
                narrow = arith.TruncFOp(new_arg, f16)
                widen = arith.ExtFOp(narrow.result, f32)
                block.add_ops([narrow, widen])
                mapping[old_arg] = widen.result
        for inner in old.ops:
            if isinstance(inner, LinalgYieldOp):
                values = [mapping.get(v, v) for v in inner.operands]
                for k, (v, element) in enumerate(zip(values, out_elements, strict=True)):
                    if v.type != element and isinstance(element, Float16Type):
                        narrow = arith.TruncFOp(v, element)
                        block.add_op(narrow)
                        values[k] = narrow.result
                block.add_op(LinalgYieldOp(*values))
                continue
            block.add_op(inner.clone(value_mapper=mapping))
        return Region(block)


class CarryHalfThroughDataMovement(RewritePattern):
    """A data-movement op (`DATA_MOVEMENT`) of an f16 tensor this pass made from an f32 one
    moves f16: its result becomes f16; its other f32 data operands are materialized in f16
    (a cast generic for a parameter); a pad's value becomes an f16 constant (or is rounded
    in its region)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, DATA_MOVEMENT) or not is_f32_tensor(op.results[0].type):
            return
        operands = data_operands(op)
        if not any(_was_f32(v) for v in operands):
            return
        if isinstance(op, TransposeOp | BroadcastOp):
            operands = [*operands, op.operands[1]]  # the init: an empty, rebuilt in f16
        for operand in operands:
            if is_f32_tensor(operand.type):
                index = next(k for k, o in enumerate(op.operands) if o is operand)
                op.operands[index] = materialize(rewriter, operand, f16, op)
        if isinstance(op, tensor.PadOp):
            self.pad_value_in_half(op, rewriter)
        result_type = with_element(op.results[0].type, f16)
        if isinstance(op, TransposeOp | BroadcastOp):
            # rebuilt: their (hidden) body's block arguments have the element types too
            new = (
                TransposeOp(op.operands[0], op.operands[1], op.permutation, result_type)
                if isinstance(op, TransposeOp)
                else BroadcastOp(op.operands[0], op.operands[1], op.dimensions, result_type)
            )
            new.attributes.update(op.attributes)
            rewriter.replace(op, new)
            return
        rewriter.replace_value_with_new_type(op.results[0], result_type)

    @staticmethod
    def pad_value_in_half(op: tensor.PadOp, rewriter: PatternRewriter) -> None:
        """The pad's yielded f32 value as f16: the f16 constant of a float constant, else
        rounded (`arith.truncf`) in the region."""
        yield_op = op.region.blocks[0].last_op
        assert yield_op is not None
        value = yield_op.operands[0]
        if not isinstance(value.type, Float32Type):
            return
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
            with np.errstate(over="ignore"):
                half_value = float(np.float16(np.float32(owner.value.value.data)))
            constant = arith.ConstantOp(FloatAttr(half_value, f16))
            rewriter.insert(constant, InsertPoint.before(op))
            yield_op.operands[0] = constant.result
        else:
            narrow = arith.TruncFOp(value, f16)
            rewriter.insert(narrow, InsertPoint.before(yield_op))
            yield_op.operands[0] = narrow.result


class WidenOperandsOfOtherOps(RewritePattern):
    """An op this pass does not rewrite keeps its f32 types: an f16 tensor operand that was
    f32 before (a result of a rewritten op) is widened back by a cast generic. Recognized by
    its producer: a rewritten generic or a truncf cast."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, GenericOp | NamedOperation | func.ReturnOp | tensor.EmptyOp):
            return  # the ops StoreLinalgInHalf rewrites (other linalg ops, e.g. a transpose, stay f32)
        if isinstance(op, DATA_MOVEMENT) and _was_f32(op.results[0]):
            return  # CarryHalfThroughDataMovement made it move f16
        if isinstance(op, arith.ConstantOp | LinalgYieldOp | tensor.ExtractOp):
            return  # WidenGatheredElements
        for index, operand in enumerate(op.operands):
            if not _was_f32(operand):
                continue
            widened = insert_cast(rewriter, operand, f32, InsertPoint.before(op))
            op.operands[index] = widened
            rewriter.notify_op_modified(op)


class WidenGatheredElements(RewritePattern):
    """A `tensor.extract` (a gather in a generic body, or a scalar read) of an f16 tensor
    that was f32 reads the f16 element and widens that scalar (`arith.extf`): the value is
    the rounded one the tensor holds, as for any other reader, and no cast generic is put
    in front of it (which, in a body, would be a tensor op inside a kernel)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.ExtractOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.result.type, Float32Type) or not _was_f32(op.tensor):
            return
        narrow = tensor.ExtractOp(op.tensor, list(op.indices), f16)
        wide = arith.ExtFOp(narrow.result, f32)
        rewriter.replace(op, [narrow, wide], [wide.result])


def _was_f32(value: SSAValue) -> bool:
    """An f16 tensor this pass made from an f32 one: the result of a rewritten generic
    (its body rounds with truncf into that output) or of a truncf cast."""
    if not isinstance(value.type, TensorType) or not isinstance(
        value.type.get_element_type(), Float16Type
    ):
        return False
    owner = value.owner
    if isinstance(owner, DATA_MOVEMENT):
        return any(_was_f32(v) for v in data_operands(owner))
    if not isinstance(owner, GenericOp):
        return False
    yield_op = owner.body.blocks[0].last_op
    if not isinstance(yield_op, LinalgYieldOp):
        return False
    index = next((k for k, r in enumerate(owner.results) if r is value), -1)
    if index < 0:
        return False
    produced = yield_op.operands[index].owner
    return isinstance(produced, arith.TruncFOp) and isinstance(produced.input.type, Float32Type)


@dataclass
class CastFunctionBoundary(RewritePattern):
    """f32 tensor parameters and results of a graph function: with `keep_io` rounded to
    f16 by a cast at the entry (and results widened back before the return), else
    retyped to f16."""

    keep_io: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not op.body.blocks or not _is_graph_function(op):
            return
        entry = op.body.blocks[0]
        for arg in entry.args:
            if not is_f32_tensor(arg.type) or not arg.uses or self.keep_io:
                continue  # kept f32: each rewritten op rounds it where it reads it
            rewriter.replace_value_with_new_type(arg, with_element(arg.type, f16))
        self.retype(op, rewriter)

    def retype(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        """Keep the function type in step with its block arguments and returns."""
        entry = op.body.blocks[0]
        returns = [r for r in op.walk() if isinstance(r, func.ReturnOp)]
        outputs = list(op.function_type.outputs.data)
        if self.keep_io or not returns:
            inputs = [a.type for a in entry.args]
        else:
            inputs = [a.type for a in entry.args]
            outputs = [
                with_element(t, f16) if is_f32_tensor(t) else t for t in op.function_type.outputs.data
            ]
        new_type = FunctionType.from_lists(inputs, outputs)
        if new_type != op.function_type:
            op.function_type = new_type
            rewriter.has_done_action = True


@dataclass
class CastReturnedValues(RewritePattern):
    """`func.return` of a graph function: a value the function type declares f32 but that
    is now f16 is widened by a cast generic (`keep-io-f32`); with f16 results declared, an
    f32 value is rounded."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        function = op.parent_op()
        if not isinstance(function, func.FuncOp) or not _is_graph_function(function):
            return
        declared = function.function_type.outputs.data
        for index, (value, want) in enumerate(zip(op.operands, declared, strict=True)):
            if not isinstance(value.type, TensorType) or not isinstance(want, TensorType):
                continue
            if value.type.get_element_type() == want.get_element_type():
                continue
            cast = insert_cast(rewriter, value, want.get_element_type(), InsertPoint.before(op))
            op.operands[index] = cast
            rewriter.notify_op_modified(op)


class RoundParametersOnce(RewritePattern):
    """`params-f16`: an f32 parameter (a graph function's argument but the first) that
    every reader rounds to half in its body -> one cast to f16 at the entry, read as f16
    (the body's rounding erased): the same values, rounded once, by a cast that
    `lift-transform-params` moves into `@main_prepare`. A parameter some op reads in f32
    (a bias broadcast into an accumulator's init, data movement) is left alone."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not op.body.blocks or not _is_graph_function(op):
            return
        for arg in op.body.blocks[0].args[1:]:
            uses = list(arg.uses)
            readers = [_rounding_reader(use) for use in uses]
            if not is_f32_tensor(arg.type) or not readers or None in readers:
                continue
            rounded = insert_cast(rewriter, arg, f16, InsertPoint.at_start(arg.block))
            for use, body_arg in zip(uses, readers, strict=True):
                assert body_arg is not None
                use.operation.operands[use.index] = rounded
                half = rewriter.replace_value_with_new_type(body_arg, f16)
                for truncation in [u.operation for u in half.uses]:
                    rewriter.replace(truncation, [], [half])
                rewriter.notify_op_modified(use.operation)


def _rounding_reader(use: Use) -> BlockArgument | None:
    """The body argument through which a `linalg.generic` input reads the used value, when
    the body rounds it to half at every use (`rounded_in_body`)."""
    generic = use.operation
    if not isinstance(generic, GenericOp) or is_cast_generic(generic):
        return None
    if use.index >= len(generic.inputs):
        return None
    body_arg = generic.body.blocks[0].args[use.index]
    return body_arg if body_arg.uses and rounded_in_body(body_arg) else None


def _is_graph_function(op: func.FuncOp) -> bool:
    from physlayout.transforms.legalize_layout import is_graph_function

    return is_graph_function(op)


class EraseUnreadFill(RewritePattern):
    """A `linalg.fill` of a tensor that nothing reads (an f32 init whose readers now read its
    f16 copy) -> erased. xDSL's dead-code check keeps it (the op declares no memory effects,
    as it may write a memref), so it would survive to a kernel of its own."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FillOp, rewriter: PatternRewriter) -> None:
        if all(isinstance(r.type, TensorType) and not r.uses for r in op.results):
            rewriter.erase(op)


@dataclass(frozen=True)
class ToMixedPrecisionPass(PhyslayoutPass):
    """f32 tensors of graph-level functions -> f16 storage, f32 arithmetic (module
    docstring).

    Options:
        accumulate (str, "conv,matmul,pooling,reduction"): the op kinds that accumulate
            in f32 (their output stays f32 and is rounded to f16 once, after them); a kind
            left out accumulates in f16 storage like an elementwise op (each partial
            result rounded: for testing how much that loses).
        keep-io-f32 (bool, true): f32 tensor parameters and results stay f32 (the ops
            reading a parameter round it where they read it; results are widened back by
            a cast); false retypes them to f16.
        keep-statistics-f32 (bool, false): normalization and softmax statistics stay f32:
            the outputs of `reduction`-kind ops (a mean's or variance's sum, a softmax's
            max and exp-sum) are not rounded to f16, nor are the elementwise ops that read
            only such statistics or f64 tensors (mean = sum / n, rstd = rsqrt(var + eps)):
            they compute and store f32, and the ops combining them with f16 data
            (x - mean, e / sum) read them unrounded. Needs `reduction` in `accumulate`.
        params-f16 (bool, false): with `keep-io-f32`, an f32 tensor argument but the
            first (the parameters of a torch-mlir export, as `lift-transform-params`
            counts them by default) that every op reads rounded is rounded by one cast
            at the entry instead (the same values): `lift-transform-params` then moves
            the casts into `@main_prepare`, so inference reads f16 weights. Without it
            the casts are kernels of every inference.
    """

    name = "to-mixed-precision"

    accumulate: str = ",".join(KINDS)
    """The op kinds accumulating in f32 (comma-separated: conv, matmul, pooling, reduction)."""
    keep_io_f32: bool = True
    """f32 function parameters and results stay f32 (rounded where read, results widened)."""
    keep_statistics_f32: bool = False
    """Reductions' results (normalization/softmax statistics) and the elementwise ops over
    them only stay f32."""
    params_f16: bool = False
    """With `keep-io-f32`: each f32 argument but the first that every op reads rounded is
    rounded once by a cast at the entry (which `lift-transform-params` moves into
    `@main_prepare`)."""

    def kinds(self) -> frozenset[str]:
        """The `accumulate` kinds; a `PassFailedException` for an unknown one."""
        names = [k.strip() for k in self.accumulate.split(",") if k.strip()]
        unknown = [k for k in names if k not in KINDS]
        if unknown:
            raise PassFailedException(
                f"to-mixed-precision: unknown accumulate kind(s) {unknown}; the kinds are "
                f"{', '.join(KINDS)}"
            )
        return frozenset(names)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kinds = self.kinds()
        RootedWalker(CastFunctionBoundary(self.keep_io_f32), apply_recursively=False).rewrite_module(op)
        RootedWalker(
            GreedyRewritePatternApplier(
                [
                    StoreLinalgInHalf(kinds, self.keep_statistics_f32),
                    CarryHalfThroughDataMovement(),
                ]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        RootedWalker(
            GreedyRewritePatternApplier([WidenOperandsOfOtherOps(), WidenGatheredElements()]),
            apply_recursively=False,
        ).rewrite_module(op)
        RootedWalker(CastReturnedValues(), apply_recursively=False).rewrite_module(op)
        if self.params_f16 and self.keep_io_f32:
            RootedWalker(RoundParametersOnce(), apply_recursively=False).rewrite_module(op)
        # the f32 fills and empties the rewritten ops no longer use
        RootedWalker(
            GreedyRewritePatternApplier([EraseUnreadFill()], dce_enabled=True), walk_reverse=True
        ).rewrite_module(op)
