"""to-mixed-precision{accumulate="conv,matmul,pooling,reduction" keep-io-f32=true}: f32
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
  output: it accumulates in f32 from f16 inputs and its f32 result is rounded to f16 once,
  by an elementwise cast generic (`arith.truncf`) right after it, which its users read;
- the outputs (`outs`) an op needs in another type are rebuilt in that type: a
  `tensor.empty` as an empty of the new type, a `linalg.fill` as a fill of the scalar
  converted (`arith.truncf`), a dense f32 constant as the f16 constant of its rounded
  values; any other value through a cast generic;
- dense f32 constants read as inputs of a rewritten op become f16 constants;
- function boundary: with `keep-io-f32=true` (the default) f32 tensor parameters stay f32
  and are rounded to f16 by a cast generic at the function's entry; f16 results are
  widened back (`arith.extf`) before `func.return`. With `keep-io-f32=false` f32 tensor
  parameters and results become f16 (the function's type changes; callers are not
  rewritten, so use it on entry functions);
- any other op (one this pass does not know to be type-agnostic) keeps its f32 types: its
  operands that became f16 are widened back by a cast generic before it.

A cast generic (identity maps, all parallel, a body of one `arith.extf`/`arith.truncf` and
the yield) is never rewritten, so running the pass again changes nothing. Only f32 is
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
    FunctionType,
    ModuleOp,
    TensorType,
    f16,
    f32,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.linalg_generic import generic_form
from physlayout.transforms.pass_options import PhyslayoutPass

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
            rewriter.insert(constant, at)
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
    output and is followed by a truncf cast generic."""

    accumulate: frozenset[str]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp | NamedOperation) or isinstance(op, FillOp):
            return
        if is_cast_generic(op):
            return
        kind = accumulation_kind(op)
        keep_f32 = kind is not None and kind in self.accumulate
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
        unchanged = (
            isinstance(op, GenericOp)
            and list(out_types) == list(op.results.types)
            and [a.type for a in block.args] == element_of
            and all(a is b for a, b in zip(inputs, op.inputs, strict=True))
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
        body = self.body(generic, element_of, out_elements)
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
        if keep_f32:
            after = InsertPoint.after(new)
            results = [
                insert_cast(rewriter, r, f16, after) if is_f32_tensor(r.type) else r
                for r in new.results
            ]
            # insert_cast placed the casts after `new` in reverse; order does not matter
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
        generic: GenericOp, element_of: Sequence[Attribute], out_elements: Sequence[Attribute]
    ) -> Region:
        """The body of `generic` over block arguments of types `element_of`: an argument
        that became f16 where the body computes in f32 is widened (`arith.extf`) first; a
        value yielded into an f16 output is rounded (`arith.truncf`) before the yield."""
        old = generic.body.blocks[0]
        block = Block(arg_types=element_of)
        mapping: dict[SSAValue, SSAValue] = {}
        for old_arg, new_arg in zip(old.args, block.args, strict=True):
            mapping[old_arg] = new_arg
            if old_arg.type != new_arg.type and isinstance(old_arg.type, Float32Type):
                widen = arith.ExtFOp(new_arg, f32)
                block.add_op(widen)
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


class WidenOperandsOfOtherOps(RewritePattern):
    """An op this pass does not rewrite keeps its f32 types: an f16 tensor operand that was
    f32 before (a result of a rewritten op) is widened back by a cast generic. Recognized by
    its producer: a rewritten generic or a truncf cast."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, GenericOp | NamedOperation | func.ReturnOp | tensor.EmptyOp):
            return  # the ops StoreLinalgInHalf rewrites (other linalg ops, e.g. a transpose, stay f32)
        if isinstance(op, arith.ConstantOp | LinalgYieldOp):
            return
        for index, operand in enumerate(op.operands):
            if not _was_f32(operand):
                continue
            widened = insert_cast(rewriter, operand, f32, InsertPoint.before(op))
            op.operands[index] = widened
            rewriter.notify_op_modified(op)


def _was_f32(value: SSAValue) -> bool:
    """An f16 tensor this pass made from an f32 one: the result of a rewritten generic
    (its body rounds with truncf into that output) or of a truncf cast."""
    if not isinstance(value.type, TensorType) or not isinstance(
        value.type.get_element_type(), Float16Type
    ):
        return False
    owner = value.owner
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
            if not is_f32_tensor(arg.type) or not arg.uses:
                continue
            if all(is_cast_generic(u.operation) for u in arg.uses):
                continue
            if self.keep_io:
                first = entry.first_op
                assert first is not None
                cast = insert_cast(rewriter, arg, f16, InsertPoint.before(first))
                rewriter.replace_uses_with_if(
                    arg, cast, lambda use, caster=cast.owner: use.operation is not caster
                )
            else:
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


def _is_graph_function(op: func.FuncOp) -> bool:
    from physlayout.transforms.legalize_layout import is_graph_function

    return is_graph_function(op)


@dataclass(frozen=True)
class ToMixedPrecisionPass(PhyslayoutPass):
    """f32 tensors of graph-level functions -> f16 storage, f32 arithmetic (module
    docstring).

    Options:
        accumulate (str, "conv,matmul,pooling,reduction"): the op kinds that accumulate
            in f32 (their output stays f32 and is rounded to f16 once, after them); a kind
            left out accumulates in f16 storage like an elementwise op (each partial
            result rounded: for testing how much that loses).
        keep-io-f32 (bool, true): f32 tensor parameters and results stay f32, with a cast
            at the boundary; false retypes them to f16.
    """

    name = "to-mixed-precision"

    accumulate: str = ",".join(KINDS)
    """The op kinds accumulating in f32 (comma-separated: conv, matmul, pooling, reduction)."""
    keep_io_f32: bool = True
    """f32 function parameters and results stay f32 (casts at the boundary)."""

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
        PatternRewriteWalker(CastFunctionBoundary(self.keep_io_f32), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(StoreLinalgInHalf(kinds), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(WidenOperandsOfOtherOps(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(CastReturnedValues(), apply_recursively=False).rewrite_module(op)
        # the f32 fills and empties the rewritten ops no longer use
        PatternRewriteWalker(
            GreedyRewritePatternApplier([], dce_enabled=True), walk_reverse=True
        ).rewrite_module(op)
