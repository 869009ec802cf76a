"""lift-transform-params{params="" function="main"}: prepare the parameters once (Relax's
LiftTransformParams).

What it rewrites: in the graph function `function` (`func.func` over tensors), every
top-level op whose operands depend only on *parameters* (and on constants, `tensor.empty`,
scalars defined in the function from constants) is moved to a new function
``@FUNCTION_prepare(PARAMS) -> (PREPARED)``; ``@FUNCTION`` then takes its other arguments
followed by the prepared values. Work on no argument at all moves too, except a
`linalg.fill` (an accumulator's start, which `fuse-elementwise` folds into the kernel that
reduces into it): torch-mlir's index tensors of a bilinear upsampling (`linalg.index`
arithmetic, `fptosi`, clamps, interpolation weights) are the same on every call, so they are
computed once instead of being small kernels of every inference (its integer-only aranges
`normalize-graph` has already moved into the gathers that read them). A *prepared value* is a value computed in (or passed
through) the prepare function that the rest of ``@FUNCTION`` still reads: a weight's layout
transform (OIHW -> OIHW4o), batch-norm arithmetic on the statistics (``1 / sqrt(var +
eps)``), a transpose of a linear weight, or a parameter read as it is. A `layout.check` of
flags computed from parameters (torch-mlir's asserts on batch-norm statistics) moves too: it
fails on every call or on none, so it is checked once, when the parameters are prepared,
and no inference waits for its flags. Calling
``@FUNCTION_prepare`` once and then ``@FUNCTION`` on its results computes what the original
``@FUNCTION`` computed, without re-doing the parameter work on every call.

Which arguments are parameters: ``params`` names them (comma-separated, without ``%``);
empty means every argument but the first (torch-mlir exports: the input, then the
`state_dict`). A function with no parameter (`params` naming none) still has its work on no
argument lifted. A prepared value whose elements `ValueBounds` bounds (an index tensor)
keeps that interval as its argument's `layout.bounds` attribute, so the kernels that read it
still prove its indices inside the tensors they index. Constant parameters (`arith.constant dense<...>`) need no pass: their layout
rewrites fold into constants at compile time (`fold-layout-rewrites`).

Refused (`PassFailedException`): a `params` name that is not an argument of the function.
A function with no parameter-only work is left as it is (no prepare function). Guarantees:
values are unchanged; a second run finds nothing to lift in ``@FUNCTION`` (its parameters are
now prepared values) and changes nothing; run it before `annotate-texture-scope`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, TensorType
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout_check import CheckOp
from physlayout.transforms.legalize_layout import is_graph_function
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.value_bounds import BOUNDS_ATTR, ValueBounds, bounds_attr


def values_read(op: Operation) -> list[SSAValue]:
    """The values `op` reads: its operands and those its regions use from above."""
    read: list[SSAValue] = []
    for inner in op.walk():
        for value in inner.operands:
            owner = value.owner
            parent = owner.parent_op() if isinstance(owner, Block) else owner
            if parent is None or not op.is_ancestor(parent):
                read.append(value)
    return read


def pure_on_tensors(op: Operation) -> bool:
    """Side-effect free, counting linalg ops on tensors (value semantics) as such."""
    if isinstance(op, GenericOp | NamedOperation):
        return all(isinstance(r.type, TensorType) for r in op.results) and bool(op.results)
    return is_side_effect_free(op)


def _is_constant_work(op: Operation) -> bool:
    """Whether `op`, reading no argument, is lifted anyway: it computes a tensor (an index
    tensor, its layout transform) that is no `linalg.fill` (kept for the kernel that
    accumulates into it)."""
    return not isinstance(op, FillOp) and any(isinstance(r.type, TensorType) for r in op.results)


def _is_free(op: Operation) -> bool:
    """An op with no operands worth keeping in both functions (a constant, an empty)."""
    return not op.operands and not op.regions and is_side_effect_free(op)


@dataclass(frozen=True)
class Split:
    """What moves to the prepare function."""

    lifted: list[Operation]
    """Ops that do parameter work, in order."""
    prepared: list[SSAValue]
    """The values the rest of the function reads (parameters or lifted results)."""


def split(function: func.FuncOp, params: Sequence[SSAValue]) -> Split:
    """The parameter-only work of `function` (module docstring)."""
    block = function.body.blocks[0]
    known: set[SSAValue] = set(params)
    derived: set[SSAValue] = set(params)
    """Values computed from a parameter, or lifted work on no argument."""
    lifted: list[Operation] = []
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            continue
        if _is_free(op):
            known.update(op.results)
            continue
        read = values_read(op)
        if not all(v in known for v in read):
            continue
        if isinstance(op, CheckOp) and any(v in derived for v in read):
            lifted.append(op)  # it fails on every call or on none: checked once, in prepare
            continue
        if not pure_on_tensors(op):
            continue
        known.update(op.results)
        if any(v in derived for v in read) or _is_constant_work(op):
            derived.update(op.results)
            if any(isinstance(r.type, TensorType) for r in op.results):
                lifted.append(op)
    lifted_set = set(lifted)
    prepared: list[SSAValue] = []
    sources = [*params, *(r for op in lifted for r in op.results)]
    for value in sources:
        if not isinstance(value.type, TensorType):
            continue
        if any(_user_outside(use.operation, lifted_set) for use in value.uses):
            prepared.append(value)
    return Split(lifted, prepared)


def _user_outside(user: Operation, lifted: set[Operation]) -> bool:
    while user.parent_op() is not None and not isinstance(user.parent_op(), func.FuncOp):
        user = user.parent_op()  # type: ignore[assignment]
    return user not in lifted


def prepare_function(function: func.FuncOp, params: Sequence[SSAValue], plan: Split) -> func.FuncOp:
    """`@NAME_prepare`: the lifted ops (and the constants and scalars they read), cloned
    over the parameters, returning the prepared values (a detached new function)."""
    block = function.body.blocks[0]
    prepare = Block(arg_types=[p.type for p in params])
    mapper: dict[SSAValue, SSAValue] = {}
    for old, new in zip(params, prepare.args, strict=True):
        new.name_hint = old.name_hint
        mapper[old] = new
    clones: list[Operation] = []
    for op in block.ops:
        if op in plan.lifted or (
            all(v in mapper for v in values_read(op)) and not isinstance(op, func.ReturnOp)
        ):
            clones.append(op.clone(value_mapper=mapper))
    lifted = {id(mapper[r]) for op in plan.lifted for r in op.results}
    kept: list[Operation] = []
    for clone in reversed(clones):
        if (
            isinstance(clone, CheckOp)
            or any(id(r) in lifted for r in clone.results)
            or any(r.uses for r in clone.results)
        ):
            kept.append(clone)
        else:
            clone.erase()
    for clone in reversed(kept):
        prepare.add_op(clone)
    prepare.add_op(func.ReturnOp(*(mapper[v] for v in plan.prepared)))
    return func.FuncOp(
        f"{function.sym_name.data}_prepare",
        FunctionType.from_lists([p.type for p in params], [v.type for v in plan.prepared]),
        Region(prepare),
        function.sym_visibility,
    )


def _argument_attrs(
    function: func.FuncOp, params: Sequence[SSAValue], plan: Split
) -> ArrayAttr[DictionaryAttr] | None:
    """The argument attributes of `function` once split: those of its arguments that stay,
    then, per prepared value, `value_bounds.BOUNDS_ATTR` where `ValueBounds` proves an
    interval for a lifted result's elements (an index tensor and its clamps: the kernels
    that read it in `function` still know it is inside the tensor it indexes, as they did
    when it was computed there). None when no argument has an attribute."""
    block = function.body.blocks[0]
    old = function.arg_attrs.data if function.arg_attrs is not None else ()
    kept = [
        old[k] if k < len(old) else DictionaryAttr({})
        for k, arg in enumerate(block.args)
        if arg not in params
    ]
    bounds = ValueBounds()
    new: list[DictionaryAttr] = []
    for value in plan.prepared:
        found = None if isinstance(value, BlockArgument) else bounds.tensor_bounds(value)
        new.append(DictionaryAttr({BOUNDS_ATTR: bounds_attr(found)} if found else {}))
    every = [*kept, *new]
    return ArrayAttr(every) if any(d.data for d in every) else None


def parameters(function: func.FuncOp, names: str) -> list[BlockArgument]:
    """The parameter arguments named in `names` (comma-separated; empty: all but the
    first). Raises `PassFailedException` for a name that is not an argument."""
    args = list(function.body.blocks[0].args)
    if not names:
        return args[1:]
    wanted = [n.strip().lstrip("%") for n in names.split(",") if n.strip()]
    by_name = {a.name_hint: a for a in args}
    missing = [n for n in wanted if n not in by_name]
    if missing:
        raise PassFailedException(
            f"lift-transform-params: @{function.sym_name.data} has no argument %{missing[0]} "
            f"(arguments: {', '.join('%' + str(a.name_hint) for a in args)})"
        )
    return [by_name[n] for n in wanted]


@dataclass
class LiftParameterWork(RewritePattern):
    """The graph function `function` -> `@function_prepare` + `@function` over the
    prepared values (module docstring)."""

    function: str
    params: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if op.sym_name.data != self.function or not is_graph_function(op):
            return
        module = op.parent_op()
        siblings = module.walk() if module is not None else ()
        prepare_name = f"{self.function}_prepare"
        if any(isinstance(f, func.FuncOp) and f.sym_name.data == prepare_name for f in siblings):
            return
        params = parameters(op, self.params)
        plan = split(op, params)
        if not plan.lifted:
            return
        rewriter.insert(prepare_function(op, params, plan), InsertPoint.before(op))
        block = op.body.blocks[0]
        lifted = set(plan.lifted)
        attrs = _argument_attrs(op, params, plan)
        for value in plan.prepared:
            arg = rewriter.insert_block_argument(block, len(block.args), value.type)
            arg.name_hint = value.name_hint
            rewriter.replace_uses_with_if(value, arg, lambda use: _user_outside(use.operation, lifted))
        for lifted_op in reversed(plan.lifted):
            rewriter.erase(lifted_op)
        for dead in reversed(list(block.ops)):
            unused = dead.results and not any(r.uses for r in dead.results)
            if unused and is_side_effect_free(dead) and not dead.regions:
                rewriter.erase(dead)
        for param in params:
            rewriter.erase_block_argument(param)
        inputs = [a.type for a in block.args]
        op.function_type = FunctionType.from_lists(inputs, op.function_type.outputs.data)
        op.arg_attrs = attrs
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class LiftTransformParamsPass(PhyslayoutPass):
    """Move the work on parameters into `@FUNCTION_prepare` (module docstring).

    Options:
        params (str, ""): the parameter arguments, comma-separated names without `%`
            (empty: every argument but the first).
        function (str, "main"): the graph function to split.
    """

    name = "lift-transform-params"

    params: str = ""
    """Comma-separated parameter names (empty: all arguments but the first)."""
    function: str = "main"
    """The graph function to split."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        RootedWalker(
            LiftParameterWork(self.function, self.params), apply_recursively=False
        ).rewrite_module(op)
