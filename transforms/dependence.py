"""Dependence analysis: may the iterations of a loop nest run in another order?

`reorder_hazard` decides whether running the iterations of a perfect loop nest in a new
order computes what the nest computes in its own order. The new order is given as a
quasi-affine function `S` of the iteration vector (over `iteration_dims`), injective on the
iteration box; iterations run in the lexicographic order of their `S` value. The answer is
None when the reordering is PROVEN to preserve every dependence, else a sentence naming the
reason (two iterations and the element they both touch, or what the analysis cannot see
through).

The rule. Every iteration runs the same body, in the same order within the iteration, so the
reordering is legal iff every pair of different iterations `x <lex y` that depend on each
other (both touch one element of one storage and at least one of them writes it: a flow,
anti or output dependence) still runs `x` first: `S(x) <lex S(y)`. A nest without any
dependence between different iterations may run in any order. isl decides the rule exactly
on these access relations:

- every `layout.load` / `layout.store` in the nest (at any depth) accesses, at iteration `x`,
  the element its index expressions name (read by `IndexAnalysis`; a vector access covers
  its lanes). Values defined inside the nest that are not its loop variables (inner loop
  variables, loaded or non-affine indices) range over their known bounds, else over all
  integers, independently in each iteration: an index that is not quasi-affine may touch
  anything. Values defined outside the nest are the same in every iteration (isl
  parameters: the proof holds for all of their values).
- conditions (`scf.if`) are ignored and inner loops taken whole, which can only add
  dependences; accesses are assumed within the bounds of their buffer (indices out of
  bounds are undefined behaviour: the evaluator and the runtimes reject them).
- storages come from `BufferAliases`. Accesses to one storage through one view (one buffer
  type at one offset) are compared in that type's logical index space: a pending transform
  is injective, so two logical indices name the same element iff they are equal. Through
  different views they are compared byte by byte, each view placed at its byte offset and
  laid out row-major in its transformed shape (the physical layout); an unknown offset or
  element width makes them incomparable and the nest is refused.
- distinct function parameters are distinct storages (RFC DeclBuffer, like C `restrict`)
  unless a call in the module passes one storage for both (`aliased_parameters`): accesses
  to such a pair cannot be compared, and a nest that writes either is refused.
- a storage allocated inside the nest is fresh in every iteration, so private to it.

Refused outright: a call, any op other than `layout.load`/`layout.store` that may touch
memory (effects unknown to xDSL, regions other than structured control flow), and, when the
reordered nest also stores the pad value on the padding of the buffer it re-iterates
(`writes_padding_of`), any access to that storage through another view (the padding stores run in between).
Loop-carried SSA values (`iter_args`) are the caller's business: `reorder_hazard` only sees
memory. The analysis solves one small isl problem per pair of accesses to a written
storage (quadratic in the accesses of one storage, independent of the loop extents), except
where the pair is decided without isl: two scalar accesses with the same index expressions
over the nest's loop variables alone, injective on the iteration box by
`structural.is_injective_structurally` (e.g. a store at the loop variables, the common nest),
never touch one element at two iterations, which is isl's answer too (tested against isl).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import prod

from xdsl.dialects import affine, func
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.traits import IsTerminator, RecursiveMemoryEffect, is_side_effect_free

from physlayout.dialects.buffer_layout import PendingLayout
from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    LoadOp,
    PtrType,
    StoreOp,
    element_byte_width,
)
from physlayout.indexing.bridges.arith import IndexAnalysis
from physlayout.indexing.bridges.isl import expr_to_isl, point_coordinates, val_to_int
from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Const, Dim, Expr
from physlayout.indexing.simplify import simplify
from physlayout.indexing.structural import is_injective_structurally
from physlayout.transforms.buffer_aliases import (
    BufferAliases,
    Storage,
)

LayoutOf = Callable[[Attribute], PendingLayout | None]
"""The pending layout of a buffer type (None without one)."""

PURE_OPS: frozenset[str] = frozenset(
    {"vector.broadcast", "vector.insert", "vector.extract", "vector.reduction", "vector.fma"}
    | {"affine.apply", "affine.min", "affine.max", "layout.data", "layout.decl_buffer"}
)
"""Side-effect-free ops (besides `arith`/`math`) that xDSL does not all mark as such."""


def is_pure_op(op: Operation) -> bool:
    """True for ops without regions that neither read nor write memory."""
    if op.regions or isinstance(op, LoadOp | StoreOp):
        return False
    if op.name.startswith(("arith.", "math.")) or op.name in PURE_OPS:
        return True
    return is_side_effect_free(op)


def access_lanes(op: LoadOp | StoreOp) -> int:
    """How many consecutive innermost elements an access covers (a `vector<N x T>` access
    on a buffer of `T` covers N; everything else 1)."""
    value_type = op.value.type if isinstance(op, StoreOp) else op.result.type
    buffer_type = op.buffer.type
    if not isinstance(value_type, VectorType) or not isinstance(buffer_type, BufferType):
        return 1
    if isinstance(buffer_type.element_type, VectorType):
        return 1
    return prod(value_type.get_shape())


def iteration_dims(count: int) -> list[Dim]:
    """The names a new order is written over: `x0, x1, ...` (nest loops, outermost first)."""
    return [Dim(f"x{k}") for k in range(count)]


# Accesses ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """One `layout.load` / `layout.store` of the nest, its index expressions over the leaves
    of the nest's `IndexAnalysis`."""

    op: LoadOp | StoreOp
    indices: tuple[Expr, ...]
    lanes: int

    @property
    def buffer(self) -> SSAValue:
        """The buffer value the access names (a view, not resolved to its storage)."""
        return self.op.buffer

    @property
    def is_store(self) -> bool:
        """True for a `layout.store`, False for a `layout.load`."""
        return isinstance(self.op, StoreOp)

    @property
    def kind(self) -> str:
        """`"store"` or `"load"`, as diagnostics and remarks name the access."""
        return "store" if self.is_store else "load"


def _structured(op: Operation) -> bool:
    """Ops whose only memory effects are those of the ops in their regions."""
    return op.has_trait(RecursiveMemoryEffect) or isinstance(op, affine.ForOp | affine.ParallelOp)


def memory_effect_refusal(op: Operation) -> str | None:
    """Why the memory effects of `op` (not a `layout.load`/`layout.store`) cannot be described
    by the accesses around it: a call, a region that is not structured control flow, an op
    that may touch memory; None for ops that cannot (an allocation is fresh storage)."""
    if isinstance(op, func.CallOp):
        return f"its body calls @{op.callee.root_reference.data}"
    if op.regions and not _structured(op):
        return f"its body has '{op.name}', whose regions may touch memory"
    if not (
        op.regions or is_pure_op(op) or op.has_trait(IsTerminator) or isinstance(op, AllocateOp)
    ):
        return f"its body has '{op.name}', which may touch memory"
    return None


def collect_accesses(
    scope: Operation,
    analysis: IndexAnalysis,
    refusal: Callable[[Operation], str | None] = memory_effect_refusal,
) -> list[Access] | str:
    """Every buffer access inside `scope` (index expressions simplified on the bounds of
    `analysis`), or the first `refusal` of another op in it: why the memory effects of
    `scope` cannot be described by them (`memory_effect_refusal` unless a client models
    fewer ops)."""
    accesses: list[Access] = []
    for op in scope.walk():
        if op is scope:
            continue
        if isinstance(op, LoadOp | StoreOp):
            indices = tuple(simplify(analysis.expr_of(i), analysis.bounds) for i in op.indices)
            accesses.append(Access(op, indices, access_lanes(op)))
            continue
        reason = refusal(op)
        if reason is not None:
            return reason
    return accesses


def _name(buffer: SSAValue) -> str:
    """`%y`, or `the buffer of type T` for an unnamed one."""
    return f"%{buffer.name_hint}" if buffer.name_hint else f"the buffer of type {buffer.type}"


def _element(buffer: SSAValue, coordinates: Sequence[int]) -> str:
    """`%y[1, 2]`, or `[1, 2] of the buffer of type T`."""
    where = "[" + ", ".join(map(str, coordinates)) + "]"
    return f"%{buffer.name_hint}{where}" if buffer.name_hint else f"{where} of {_name(buffer)}"


def _defined_inside(value: SSAValue, scope: Operation) -> bool:
    if isinstance(value, BlockArgument):
        return scope.is_ancestor(value.block)
    owner = value.owner
    return isinstance(owner, Operation) and owner is not scope and scope.is_ancestor(owner)


# Parameters passed together ---------------------------------------------------------------


def aliased_parameters(
    module: Operation, aliases_of: Callable[[Operation], BufferAliases] = BufferAliases
) -> dict[str, set[frozenset[int]]]:
    """Per function name, the pairs of parameter positions that some call in `module` binds
    to storages that may overlap (directly, or through the caller's own such pairs).
    `aliases_of(function)` gives a function's `BufferAliases` (a caller that keeps them
    passes its cache)."""
    functions = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.body.blocks]
    aliases = {f: aliases_of(f) for f in functions}
    pairs: dict[str, set[frozenset[int]]] = {}
    changed = True
    while changed:
        changed = False
        for caller in functions:
            own = pairs.get(caller.sym_name.data, set())
            for call in [c for c in caller.walk() if isinstance(c, func.CallOp)]:
                found = _pairs_at_call(call, aliases[caller], own)
                known = pairs.setdefault(call.callee.root_reference.data, set())
                if not found <= known:
                    known |= found
                    changed = True
    return pairs


def _pairs_at_call(
    call: func.CallOp, aliases: BufferAliases, caller_pairs: set[frozenset[int]]
) -> set[frozenset[int]]:
    operands = list(call.arguments)
    found: set[frozenset[int]] = set()
    for j, first in enumerate(operands):
        for k in range(j + 1, len(operands)):
            if _may_share(first, operands[k], aliases, caller_pairs):
                found.add(frozenset((j, k)))
    return found


def _may_share(
    a: SSAValue, b: SSAValue, aliases: BufferAliases, caller_pairs: set[frozenset[int]]
) -> bool:
    if not _is_memory(a) or not _is_memory(b):
        return False
    storage_a, storage_b = _storage_of(a, aliases), _storage_of(b, aliases)
    if storage_a is None or storage_b is None:
        return True
    if storage_a is storage_b:
        both_buffers = isinstance(a.type, BufferType) and isinstance(b.type, BufferType)
        return not both_buffers or aliases.may_alias(a, b)
    index_a, index_b = _parameter_index(storage_a.handle), _parameter_index(storage_b.handle)
    return index_a is not None and index_b is not None and {index_a, index_b} in caller_pairs


def _is_memory(value: SSAValue) -> bool:
    return isinstance(value.type, BufferType | PtrType)


def _storage_of(value: SSAValue, aliases: BufferAliases) -> Storage | None:
    if isinstance(value.type, BufferType):
        return aliases.storage_of(value)
    return aliases.handle_storage(value)


def _parameter_index(handle: SSAValue) -> int | None:
    return handle.index if isinstance(handle, BlockArgument) else None


# The proof ---------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _injective_structurally(
    names: tuple[str, ...], indices: tuple[Expr, ...], extents: tuple[int, ...]
) -> bool:
    """`is_injective_structurally` of the map `names -> indices` on the box `extents`,
    memoized by its (immutable) arguments: a model repeats the same few nests."""
    return is_injective_structurally(IndexMap(names, indices), extents)


@dataclass
class _Side:
    """One access at one iteration, as isl text: names and constraints."""

    access: Access
    iteration: list[str]
    element: list[str]
    constraints: list[str]
    hidden: list[str]


def reorder_hazard(
    outer: Operation,
    ivs: Sequence[SSAValue],
    extents: Sequence[int],
    new_order: Sequence[Expr],
    layout_of: LayoutOf,
    parameter_pairs: Iterable[frozenset[int]] = (),
    writes_padding_of: SSAValue | None = None,
    aliases: BufferAliases | None = None,
) -> str | None:
    """None when running the iterations of the nest rooted at `outer` (loop variables `ivs`
    over `[0, extents)`) in the lexicographic order of `new_order` (over `iteration_dims`)
    provably computes what the nest computes; else why not (see the module docstring).

    `parameter_pairs` are the positions of parameters of the enclosing function that may
    be one storage (`aliased_parameters`). `writes_padding_of`: the reordered nest will also
    store to the padding of this buffer, which must then be touched by no other view.
    `aliases`: the `BufferAliases` of the enclosing function (or of `outer` outside any),
    when the caller already has them (a caller asking about many nests of one function
    builds them once, instead of walking the function again for every nest).
    """
    analysis = IndexAnalysis()
    accesses = collect_accesses(outer, analysis)
    if isinstance(accesses, str):
        return accesses
    if aliases is None:
        aliases = BufferAliases(enclosing_function(outer) or outer)
    groups: dict[Storage, list[Access]] = {}
    for access in accesses:
        view = aliases.view_of(access.buffer)
        if view is None:
            return f"the storage of {_name(access.buffer)} is unknown"
        if not _defined_inside(view.storage.handle, outer):
            groups.setdefault(view.storage, []).append(access)
    reason = _shared_parameters(groups, set(parameter_pairs))
    if reason is not None:
        return reason
    proof = _Proof(outer, list(ivs), list(extents), list(new_order), analysis, aliases, layout_of)
    for group in groups.values():
        if not any(a.is_store for a in group):
            continue
        reason = proof.group_hazard(group, writes_padding_of)
        if reason is not None:
            return reason
    return None


def enclosing_function(op: Operation) -> func.FuncOp | None:
    """The `func.func` that contains `op`, if any."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def _shared_parameters(
    groups: Mapping[Storage, list[Access]], pairs: set[frozenset[int]]
) -> str | None:
    if not pairs:
        return None
    by_index: dict[int, list[Access]] = {}
    for storage, group in groups.items():
        index = _parameter_index(storage.handle)
        if storage.kind == "parameter" and index is not None:
            by_index[index] = group
    for pair in sorted(pairs, key=sorted):
        j, k = sorted(pair)
        if j not in by_index or k not in by_index:
            continue
        first, second = by_index[j], by_index[k]
        if any(a.is_store for a in first + second):
            return (
                f"{_name(first[0].buffer)} and {_name(second[0].buffer)} may be one storage "
                "(a call passes the same storage for both)"
            )
    return None


@dataclass
class _Proof:
    outer: Operation
    ivs: list[SSAValue]
    extents: list[int]
    new_order: list[Expr]
    analysis: IndexAnalysis
    aliases: BufferAliases
    layout_of: LayoutOf

    def group_hazard(self, group: list[Access], padded: SSAValue | None) -> str | None:
        """Why the accesses to one written storage forbid the new order (None: they don't)."""
        views = {a.buffer: self.aliases.view_of(a.buffer) for a in group}
        keys = {(v.buffer.type, v.byte_offset) for v in views.values() if v is not None}
        logical = len(keys) == 1 and (None not in {k[1] for k in keys} or len(views) == 1)
        if not logical:
            reason = self._flat_reason(group, padded)
            if reason is not None:
                return reason
        for first in group:
            for second in group:
                if not (first.is_store or second.is_store):
                    continue
                witness = self._reordered_dependence(first, second, logical)
                if witness is not None:
                    return witness
        return None

    def _flat_reason(self, group: list[Access], padded: SSAValue | None) -> str | None:
        names = ", ".join(sorted({_name(a.buffer) for a in group}))
        for access in group:
            view = self.aliases.view_of(access.buffer)
            buffer_type = access.buffer.type
            assert view is not None and isinstance(buffer_type, BufferType)
            if view.byte_offset is None or element_byte_width(buffer_type.element_type) is None:
                return f"{names} share {view.storage.describe()} at offsets that cannot be compared"
        if padded is not None and any(a.buffer is padded for a in group):
            return (
                f"{names} are views of one storage and the physical order would also write "
                f"the padding of {_name(padded)}"
            )
        return None

    # isl ------------------------------------------------------------------------------

    def _reordered_dependence(self, first: Access, second: Access, logical: bool) -> str | None:
        """A pair of iterations `x <lex y` (first at x, second at y) that touch one element
        and that the new order swaps, described; None when there is none (`_never_meet`
        decides the common case without isl, else `_reordered_dependence_isl`)."""
        if self._never_meet(first, second, logical):
            return None
        return self._reordered_dependence_isl(first, second, logical)

    def _never_meet(self, first: Access, second: Access, logical: bool) -> bool:
        """True when two different iterations cannot touch one element through `first` and
        `second` (so there is no dependence to swap; False: not proven here). Proven
        structurally for scalar accesses with the same index expressions, in the logical
        index space of one view, over the nest's loop variables only: when those
        expressions are injective on the iteration box (`is_injective_structurally`: the
        loop variables follow from the element), one element means one iteration. isl
        would find the same: its set (element equal at `x <lex y`) is empty then."""
        if not logical or first.lanes != 1 or second.lanes != 1:
            return False
        if first.indices != second.indices:
            return False
        names = tuple(self.analysis.leaf(iv).name for iv in self.ivs)
        if any(not e.dims() <= set(names) for e in first.indices):
            return False
        return _injective_structurally(names, first.indices, tuple(self.extents))

    def _reordered_dependence_isl(self, first: Access, second: Access, logical: bool) -> str | None:
        """`_reordered_dependence`, decided by isl (exact)."""
        fixed: dict[str, str] = {}
        a = self._side(first, "x", "a", "e", fixed)
        b = self._side(second, "y", "b", "g", fixed)
        constraints = [*a.constraints, *b.constraints]
        if logical:
            constraints += [f"{p} = {q}" for p, q in zip(a.element, b.element, strict=True)]
        else:
            constraints.append(f"{self._byte(a, 'ta')} = {self._byte(b, 'tb')}")
            constraints += [f"0 <= {t} <= {self._width(s) - 1}" for t, s in (("ta", a), ("tb", b))]
        sx = self._order_names("sx", "x", constraints)
        sy = self._order_names("sy", "y", constraints)
        constraints += [_lex_less(a.iteration, b.iteration), _lex_less(sy, sx)]
        hidden = [*a.hidden, *b.hidden, *sx, *sy] + ([] if logical else ["ta", "tb"])
        for name, leaf in fixed.items():
            bounds = self.analysis.bounds.get(leaf)
            if bounds is not None:
                constraints.append(f"{bounds[0]} <= {name} <= {bounds[1]}")
        dims = [*a.iteration, *b.iteration, *a.element, *b.element]
        text = (
            f"[{', '.join(fixed)}] -> {{ [{', '.join(dims)}] : exists ({', '.join(hidden)} : "
            f"{' and '.join(constraints)}) }}"
        )
        found = lexmin_sample(text, len(dims), len(fixed))
        if found is None:
            return None
        if isinstance(found, str):
            return f"isl could not decide the dependences of the nest ({found})"
        point, values = found
        when = [
            f"{_name(self.analysis.leaves[leaf])} = {value}"
            for leaf, value in zip(fixed.values(), values, strict=True)
        ]
        return self._describe(first, second, list(point)) + (f" (when {', '.join(when)})" if when else "")

    def _side(
        self, access: Access, iteration: str, hidden: str, element: str, fixed: dict[str, str]
    ) -> _Side:
        rename: dict[str, str] = {}
        iteration_names = [f"{iteration}{k}" for k in range(len(self.ivs))]
        for k, iv in enumerate(self.ivs):
            rename[self.analysis.leaf(iv).name] = iteration_names[k]
        side = _Side(access, iteration_names, [], [], [])
        used = sorted({name for e in access.indices for name in e.dims()} - set(rename))
        parameters = {leaf: name for name, leaf in fixed.items()}
        for name in used:
            if not _defined_inside(self.analysis.leaves[name], self.outer):
                if name not in parameters:
                    parameters[name] = f"f{len(parameters)}"
                    fixed[parameters[name]] = name
                rename[name] = parameters[name]
                continue
            rename[name] = f"{hidden}{len(side.hidden)}"
            side.hidden.append(rename[name])
            bounds = self.analysis.bounds.get(name)
            if bounds is not None:
                side.constraints.append(f"{bounds[0]} <= {rename[name]} <= {bounds[1]}")
        side.constraints += [
            f"0 <= {n} <= {e - 1}" for n, e in zip(iteration_names, self.extents, strict=True)
        ]
        buffer_type = access.buffer.type
        assert isinstance(buffer_type, BufferType)
        shape = buffer_type.get_shape()
        lane = f"l{hidden}"
        for k, (index, extent) in enumerate(zip(access.indices, shape, strict=True)):
            name = f"{element}{k}"
            side.element.append(name)
            value = expr_to_isl(index, rename)
            if access.lanes > 1 and k == len(shape) - 1:
                value = f"{value} + {lane}"
            side.constraints += [f"{name} = {value}", f"0 <= {name} <= {extent - 1}"]
        if access.lanes > 1:
            side.hidden.append(lane)
            side.constraints.append(f"0 <= {lane} <= {access.lanes - 1}")
        return side

    @staticmethod
    def _width(side: _Side) -> int:
        buffer_type = side.access.buffer.type
        assert isinstance(buffer_type, BufferType)
        width = element_byte_width(buffer_type.element_type)
        assert width is not None
        return width

    def _byte(self, side: _Side, within: str) -> str:
        """The isl expression of a byte of the element `side` touches, in its storage, with
        `within` the byte's position in the element (an existential of the caller)."""
        buffer_type = side.access.buffer.type
        view = self.aliases.view_of(side.access.buffer)
        assert isinstance(buffer_type, BufferType) and view is not None
        assert view.byte_offset is not None
        coords: list[Expr] = [Dim(n) for n in side.element]
        shape = list(buffer_type.get_shape())
        layout = self.layout_of(buffer_type)
        if layout is not None:
            point = dict(zip(layout.index_map.initial_indices, coords, strict=True))
            coords = [e.substitute(point) for e in layout.index_map.final_indices]
            shape = list(layout.shape)
        linear: Expr = Const(0)
        for coord, extent in zip(coords, shape, strict=True):
            linear = linear * extent + coord
        identity = {n: n for n in side.element}
        width = self._width(side)
        return f"{view.byte_offset} + {width} * ({expr_to_isl(linear, identity)}) + {within}"

    def _order_names(self, prefix: str, iteration: str, constraints: list[str]) -> list[str]:
        rename = {f"x{k}": f"{iteration}{k}" for k in range(len(self.ivs))}
        names = [f"{prefix}{k}" for k in range(len(self.new_order))]
        constraints += [
            f"{n} = {expr_to_isl(e, rename)}" for n, e in zip(names, self.new_order, strict=True)
        ]
        return names

    def _describe(self, first: Access, second: Access, point: list[int]) -> str:
        count = len(self.ivs)
        x, y = point[:count], point[count : 2 * count]
        rank = len(first.indices)
        e, g = point[2 * count : 2 * count + rank], point[2 * count + rank :]
        where = _element(first.buffer, e)
        if first.buffer is second.buffer and e == g:
            touched = f"both access {where} ({first.kind}, then {second.kind})"
        else:
            touched = (
                f"access one element, {where} ({first.kind}) and "
                f"{_element(second.buffer, g)} ({second.kind})"
            )
        return (
            f"iterations {self._iteration(x)} and {self._iteration(y)} {touched}; "
            f"the new order runs {self._iteration(y)} first"
        )

    def _iteration(self, coords: Sequence[int]) -> str:
        names = [iv.name_hint or f"d{k}" for k, iv in enumerate(self.ivs)]
        return "(" + ", ".join(f"{n}={c}" for n, c in zip(names, coords, strict=True)) + ")"


def _lex_less(lhs: Sequence[str], rhs: Sequence[str]) -> str:
    """isl text of `lhs <lex rhs`."""
    clauses: list[str] = []
    for k in range(len(lhs)):
        equal = [f"{lhs[j]} = {rhs[j]}" for j in range(k)]
        clauses.append("(" + " and ".join([*equal, f"{lhs[k]} < {rhs[k]}"]) + ")")
    return "(" + " or ".join(clauses) + ")"


@lru_cache(maxsize=1024)
def lexmin_sample(
    text: str, dims: int, params: int
) -> tuple[tuple[int, ...], tuple[int, ...]] | str | None:
    """The lexicographically smallest point of the isl set `text` (its first `dims`
    coordinates and its first `params` parameters' values); None when the set is empty;
    isl's error message when isl fails. Memoized by text: a model's kernels repeat the same
    few nests (regnet_x_400mf: 413 dependence questions, 40 distinct)."""
    import islpy as isl

    try:
        found = isl.Set(text)
        if found.is_empty():
            return None
        sample = found.lexmin().sample_point()
        point = point_coordinates(sample, dims)
        values = [
            val_to_int(sample.get_coordinate_val(isl.dim_type.param, k)) for k in range(params)
        ]
    except isl.Error as err:
        return str(err)
    return tuple(point), tuple(values)
