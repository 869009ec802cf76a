"""Which memref values `normalize-memref-layouts` normalizes: one walk, nothing rewritten.

`plan_normalization` registers every value and signature slot of a layout-mapped memref
type, connects those that must keep one type (call operands with the callee's parameters,
call results with the callee's results and returned values: union-find) and records every
reason to leave a class alone (rules in `normalize_memrefs`). The `NormalizationPlan` lists
the allocations, calls and functions whose types change, the normalized type of each value
and slot, and the classes left unnormalized, in the order their reasons were
found.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import affine, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnregisteredOp,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from physlayout.indexing.bridges.affine import affine_to_expr as from_affine_expr
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.transforms.memref_layout_maps import (
    NORMALIZE_MEMREF_LAYOUTS,
    MemRefNormalizations,
    access_dim,
    access_symbol,
    refusal_error,
)

# Which values are normalized (decided before any rewrite) -----------------------------------


_Slot = tuple[str, func.FuncOp, int]
"""``("in" | "out", function, position)``: a parameter or a result of a function's type."""

_Node = SSAValue | _Slot
"""What carries a memref type: an SSA value or a function signature slot."""


def _function_of(op: Operation) -> func.FuncOp | None:
    parent: Operation | None = op if isinstance(op, func.FuncOp) else op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def _function_name(op: Operation) -> str:
    function = _function_of(op)
    return "" if function is None else f" (in @{function.sym_name.data})"


def _op_name(op: Operation) -> str:
    """The name of `op` as written in the input (also for unregistered ops)."""
    name = op.attributes.get("op_name__")
    if isinstance(op, UnregisteredOp) and isinstance(name, StringAttr):
        return name.data
    return op.name


def _cannot_rewrite(op: Operation, how: str) -> str:
    return (
        f"it is {how} '{_op_name(op)}', which cannot be rewritten to the normalized layout"
        f"{_function_name(op)}"
    )


def _symbol_table_of(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not parent.has_trait(SymbolTable):
        parent = parent.parent_op()
    return parent


def _symbol_refs(attr: Attribute) -> Iterator[SymbolRefAttr]:
    """The symbol references in `attr`, also inside arrays and dictionaries."""
    if isinstance(attr, SymbolRefAttr):
        yield attr
    elif isinstance(attr, ArrayAttr):
        for element in attr.data:
            yield from _symbol_refs(element)
    elif isinstance(attr, DictionaryAttr):
        for element in attr.data.values():
            yield from _symbol_refs(element)


def _is_access_or_dealloc(op: Operation, index: int) -> bool:
    """Whether operand `index` of `op` is the memref of an access or of a dealloc."""
    match op:
        case affine.LoadOp() | memref.LoadOp() | memref.DeallocOp():
            return index == 0
        case affine.StoreOp() | memref.StoreOp():
            return index == 1
        case _:
            return False


def _access_map_problem(op: Operation) -> str | None:
    """Why the access map of an `affine.load`/`affine.store` cannot be composed with a
    layout map (None when it can)."""
    if not isinstance(op, affine.LoadOp | affine.StoreOp):
        return None
    access = op.map.data
    dims: list[Expr] = [Dim(access_dim(k)) for k in range(access.num_dims)]
    symbols: list[Expr] = [Dim(access_symbol(k)) for k in range(access.num_symbols)]
    expected = access.num_dims + access.num_symbols
    if len(op.indices) == expected and all(
        from_affine_expr(result, dims, symbols) is not None for result in access.results
    ):
        return None
    return (
        f"it is accessed by '{op.name}' with the access map {access}, which is not "
        f"quasi-affine{_function_name(op)}"
    )


@dataclass(frozen=True)
class LeftUnnormalized:
    """A class of connected values of layout-mapped memref type `typ` that is left as it
    is, and why (the first reason found; `op` is where it was found)."""

    typ: Attribute
    reason: str
    op: Operation | None
    also_in: tuple[str, ...] = ()
    """The other functions with memrefs in the class (connected through calls/returns)."""
    pass_name: str = NORMALIZE_MEMREF_LAYOUTS
    """The pass the diagnostics name."""

    @property
    def message(self) -> str:
        """``PASS: left TYPE unnormalized: REASON`` (and where else it applies)."""
        text = f"{self.pass_name}: left {self.typ} unnormalized: {self.reason}"
        if self.also_in:
            functions = ", ".join(f"@{name}" for name in self.also_in)
            text += f"; so are the memrefs connected to it through calls and returns in {functions}"
        return text

    def error(self) -> PassFailedException:
        """The strict-mode error: ``PASS: cannot normalize TYPE: REASON``."""
        return refusal_error(self.pass_name, self.typ, self.reason)


@dataclass(frozen=True)
class _Problem:
    """A reason to leave the class of `node` unnormalized (`node` None: every value and
    slot of type `typ`)."""

    node: _Node | None
    typ: Attribute
    reason: str
    op: Operation


@dataclass
class NormalizationPlan:
    """What to rewrite: the ops whose types change (allocations, calls, functions), the
    values and slots that take their normalized type, and the classes left unnormalized
    (in the order their reasons were found)."""

    normalizations: MemRefNormalizations
    typed: list[Operation] = field(default_factory=list[Operation])
    normalized: dict[_Node, MemRefType] = field(default_factory=dict[_Node, MemRefType])
    left: list[LeftUnnormalized] = field(default_factory=list[LeftUnnormalized])
    first_problem: LeftUnnormalized | None = None

    def target_of(self, node: _Node) -> MemRefType | None:
        """The normalized type of `node`, or None when it keeps its type."""
        return self.normalized.get(node)


@dataclass
class _Planner:
    """One walk over the module: registers every value and signature slot of a
    layout-mapped type, connects those that must share a type (union-find), and records
    the reasons to leave classes alone."""

    normalizations: MemRefNormalizations
    pass_name: str
    functions: dict[tuple[Operation | None, str], func.FuncOp] = field(
        default_factory=dict[tuple[Operation | None, str], func.FuncOp]
    )
    functions_by_name: dict[str, list[func.FuncOp]] = field(
        default_factory=dict[str, list[func.FuncOp]]
    )
    types: dict[_Node, Attribute] = field(default_factory=dict[_Node, Attribute])
    parent: dict[_Node, _Node] = field(default_factory=dict[_Node, _Node])
    problems: list[_Problem] = field(default_factory=list[_Problem])

    # Union-find --------------------------------------------------------------------------

    def find(self, node: _Node) -> _Node:
        root = node
        while root in self.parent:
            root = self.parent[root]
        while node in self.parent:
            up = self.parent[node]
            self.parent[node] = root
            node = up
        return root

    def union(self, a: _Node, b: _Node) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[root_a] = root_b

    def register(self, node: _Node, typ: Attribute, op: Operation) -> None:
        """Record that `node` has the layout-mapped type `typ` (seen at `op`)."""
        if node in self.types:
            return
        self.types[node] = typ
        refusal = self.normalizations.refusal(typ)
        if refusal is not None:
            self.problems.append(_Problem(node, typ, refusal, op))

    def refuse(self, node: _Node, op: Operation, reason: str) -> None:
        self.problems.append(_Problem(node, self.types[node], reason, op))

    # The walk ------------------------------------------------------------------------------

    def collect_functions(self, module: ModuleOp) -> None:
        for op in module.walk():
            if isinstance(op, func.FuncOp):
                self.functions[(_symbol_table_of(op), op.sym_name.data)] = op
                self.functions_by_name.setdefault(op.sym_name.data, []).append(op)

    def visit(self, op: Operation) -> None:
        self._operands(op)
        self._signature_or_held_types(op)
        self._results(op)
        self._region_arguments(op)
        self._symbol_uses(op)

    def _callee(self, call: func.CallOp) -> func.FuncOp | None:
        if call.callee.nested_references.data:
            return None
        return self.functions.get((_symbol_table_of(call), call.callee.root_reference.data))

    def _connect_to_slot(
        self, value: SSAValue, function: func.FuncOp | None, kind: str, index: int
    ) -> bool:
        """Connect `value` with slot `index` of `function`'s inputs or outputs; False when
        there is no such slot of the same type (so every class has one type)."""
        if function is None:
            return False
        signature = function.function_type
        types = signature.inputs.data if kind == "in" else signature.outputs.data
        if index >= len(types) or types[index] != value.type:
            return False
        slot: _Slot = (kind, function, index)
        self.register(slot, types[index], function)
        self.union(value, slot)
        return True

    def _operands(self, op: Operation) -> None:
        for index, operand in enumerate(op.operands):
            if not self.normalizations.is_mapped(operand.type):
                continue
            self.register(operand, operand.type, op)
            if _is_access_or_dealloc(op, index):
                problem = _access_map_problem(op)
                if problem is not None:
                    self.refuse(operand, op, problem)
            elif isinstance(op, func.CallOp):
                if not self._connect_to_slot(operand, self._callee(op), "in", index):
                    self.refuse(operand, op, self._unresolved(op))
            elif isinstance(op, func.ReturnOp):
                if not self._connect_to_slot(operand, _function_of(op), "out", index):
                    self.refuse(operand, op, _cannot_rewrite(op, "returned by"))
            else:
                self.refuse(operand, op, _cannot_rewrite(op, "used by"))

    def _unresolved(self, call: func.CallOp) -> str:
        return (
            f"it is passed to or returned from {call.callee}, which is not a function of "
            f"this module with that type{_function_name(call)}"
        )

    def _signature_or_held_types(self, op: Operation) -> None:
        """Register the signature slots of a `func.func`; any other op holding a
        layout-mapped type in a property or attribute leaves every value of that type."""
        if isinstance(op, func.FuncOp):
            signature = op.function_type
            slots = [("in", k, t) for k, t in enumerate(signature.inputs.data)]
            slots += [("out", k, t) for k, t in enumerate(signature.outputs.data)]
            for kind, index, typ in slots:
                if self.normalizations.is_mapped(typ):
                    self.register((kind, op, index), typ, op)
            return
        for attr in (*op.properties.values(), *op.attributes.values()):
            held = (
                (*attr.inputs.data, *attr.outputs.data)
                if isinstance(attr, FunctionType)
                else (attr,)
            )
            for typ in held:
                if self.normalizations.is_mapped(typ):
                    self.problems.append(_Problem(None, typ, _cannot_rewrite(op, "held by"), op))

    def _results(self, op: Operation) -> None:
        for index, result in enumerate(op.results):
            if not self.normalizations.is_mapped(result.type):
                continue
            self.register(result, result.type, op)
            if isinstance(op, memref.AllocOp | memref.AllocaOp):
                continue
            if isinstance(op, func.CallOp):
                if not self._connect_to_slot(result, self._callee(op), "out", index):
                    self.refuse(result, op, self._unresolved(op))
                continue
            self.refuse(result, op, _cannot_rewrite(op, "produced by"))

    def _region_arguments(self, op: Operation) -> None:
        """Only the entry block of a `func.func` may have arguments of a layout-mapped type
        (they are its parameters)."""
        entry = op.body.blocks.first if isinstance(op, func.FuncOp) else None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if not self.normalizations.is_mapped(arg.type):
                        continue
                    self.register(arg, arg.type, op)
                    function = op if block is entry and isinstance(op, func.FuncOp) else None
                    if not self._connect_to_slot(arg, function, "in", arg.index):
                        self.refuse(arg, op, _cannot_rewrite(op, "a region argument of"))

    def _symbol_uses(self, op: Operation) -> None:
        """A function referenced other than as the callee of a `func.call` (e.g. by
        `func.constant`) keeps its signature: its uses cannot be followed."""
        for name, attr in (*op.properties.items(), *op.attributes.items()):
            if isinstance(op, func.CallOp) and name == "callee":
                continue
            for ref in _symbol_refs(attr):
                for function in self.functions_by_name.get(ref.root_reference.data, []):
                    self._refuse_signature(function, op)

    def _refuse_signature(self, function: func.FuncOp, op: Operation) -> None:
        signature = function.function_type
        reason = (
            f"its function @{function.sym_name.data} is referenced by '{_op_name(op)}', "
            f"which cannot be rewritten to the normalized layout{_function_name(op)}"
        )
        for kind, types in (("in", signature.inputs.data), ("out", signature.outputs.data)):
            for index, typ in enumerate(types):
                if self.normalizations.is_mapped(typ):
                    slot: _Slot = (kind, function, index)
                    self.register(slot, typ, function)
                    self.refuse(slot, op, reason)

    # The plan ------------------------------------------------------------------------------

    def plan(self) -> NormalizationPlan:
        """Decide every class: normalized unless some problem concerns one of its nodes."""
        classes: dict[_Node, list[_Node]] = {}
        for node in self.types:
            classes.setdefault(self.find(node), []).append(node)
        by_type: dict[Attribute, list[_Node]] = {}
        if any(problem.node is None for problem in self.problems):
            for node, typ in self.types.items():
                by_type.setdefault(typ, []).append(node)
        first: dict[_Node, _Problem] = {}
        for problem in self.problems:
            nodes = by_type.get(problem.typ, []) if problem.node is None else [problem.node]
            for node in nodes:
                first.setdefault(self.find(node), problem)
        plan = NormalizationPlan(self.normalizations)
        for root, members in classes.items():
            if root in first:
                continue
            for member in members:
                norm = self.normalizations.get(self.types[member])
                assert norm is not None
                plan.normalized[member] = norm.target
        order = {id(p): k for k, p in enumerate(self.problems)}
        left = sorted(first.items(), key=lambda item: order.get(id(item[1]), len(order)))
        for root, problem in left:
            plan.left.append(_left(problem, classes[root], self.pass_name))
        if self.problems:
            plan.first_problem = _left(self.problems[0], [], self.pass_name)
        plan.typed = [op for op in self._typed_ops() if _changes_type(op, plan)]
        return plan

    def _typed_ops(self) -> Iterator[Operation]:
        """The ops that own a registered node: allocations, calls and functions (each once)."""
        seen: set[Operation] = set()
        for node in self.types:
            op = _owner(node)
            if op not in seen and isinstance(op, _TYPED):
                seen.add(op)
                yield op


_TYPED = (memref.AllocOp, memref.AllocaOp, func.CallOp, func.FuncOp)
"""Ops whose types change when a value they define is normalized."""


def _owner(node: _Node) -> Operation:
    """The op that defines `node`'s type: the value's defining op, the function of an
    entry block argument or of a slot."""
    if isinstance(node, tuple):
        return node[1]
    if isinstance(node, BlockArgument):
        parent = node.block.parent_op()
        assert parent is not None
        return parent
    owner = node.owner
    assert isinstance(owner, Operation)
    return owner


def _changes_type(op: Operation, plan: NormalizationPlan) -> bool:
    if isinstance(op, func.FuncOp):
        signature = op.function_type
        return any(
            (kind, op, index) in plan.normalized
            for kind, types in (("in", signature.inputs.data), ("out", signature.outputs.data))
            for index in range(len(types))
        )
    return any(result in plan.normalized for result in op.results)


def _left(problem: _Problem, members: Sequence[_Node], pass_name: str) -> LeftUnnormalized:
    """The report of a class left because of `problem` (naming the other functions that
    hold its `members`)."""
    where = _function_of(problem.op)
    functions = {_function_of(_owner(member)) for member in members} - {where, None}
    names = sorted(f.sym_name.data for f in functions if f is not None)
    return LeftUnnormalized(problem.typ, problem.reason, problem.op, tuple(names), pass_name)


def plan_normalization(
    module: ModuleOp,
    normalizations: MemRefNormalizations,
    pass_name: str = NORMALIZE_MEMREF_LAYOUTS,
) -> NormalizationPlan:
    """Decide (one walk, nothing rewritten) which memref values of `module` are normalized
    and which are left, and why."""
    planner = _Planner(normalizations, pass_name)
    planner.collect_functions(module)
    for op in module.walk():
        planner.visit(op)
    return planner.plan()
