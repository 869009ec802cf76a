"""Affine access maps for `lower-layout`: when an index tuple may feed `affine.load`.

Upstream MLIR accepts an operand of an `affine.load`/`affine.store` map only when it is a
valid affine dimension or symbol of the access's affine scope (here: the enclosing
`func.func`, reached through loop/if ops only):

- induction variables of `affine.for` / `affine.parallel` (valid dimensions anywhere below
  the loop);
- values defined at the top level of the function body (its arguments and the results of
  its top-level ops) and constants (valid symbols, hence valid dimensions).

Induction variables of `scf.for`/`scf.parallel` and values computed inside loops are not
(the `lower-layout` pass first raises eligible `scf` loops to `affine`, see
`lower_layout_loops`).

`affine_access` turns index expressions (read by `IndexAnalysis`) into an `AffineMap` whose
operands are all *dimensions*: valid symbols are valid dimensions upstream, and xDSL 0.74
prints symbol operands of an affine access at the wrong position, so maps built here never
use symbols.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, arith, func
from xdsl.dialects.builtin import IndexType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Expr

NON_SCOPE_PARENTS: frozenset[str] = frozenset(
    {
        "scf.for",
        "scf.if",
        "scf.parallel",
        "scf.while",
        "scf.index_switch",
        "affine.for",
        "affine.if",
        "affine.parallel",
    }
)
"""Region-holding ops that are not affine scopes upstream: an access below only these ops
belongs to the affine scope of the enclosing function."""


def affine_scope(op: Operation) -> func.FuncOp | None:
    """The function whose body is the affine scope of `op`, or None when some enclosing op
    may start a scope of its own (then no affine op is emitted there)."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, func.FuncOp):
            return parent
        if parent.name not in NON_SCOPE_PARENTS:
            return None
        parent = parent.parent_op()
    return None


def is_valid_affine_symbol(value: SSAValue, function: func.FuncOp) -> bool:
    """True for an `index` value that is a valid affine symbol in `function`'s scope."""
    if not isinstance(value.type, IndexType):
        return False
    if isinstance(value, BlockArgument):
        return value.block.parent is function.body
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        return True
    block = owner.parent_block() if isinstance(owner, Operation) else None
    return block is not None and block.parent is function.body


def is_valid_affine_dim(value: SSAValue, function: func.FuncOp) -> bool:
    """True for an `index` value that is a valid affine dimension in `function`'s scope."""
    if isinstance(value, BlockArgument) and isinstance(value.type, IndexType):
        loop = value.block.parent_op()
        if isinstance(loop, affine.ForOp) and value.index == 0:
            return True
        if isinstance(loop, affine.ParallelOp):
            return True
    return is_valid_affine_symbol(value, function)


@dataclass(frozen=True)
class AffineAccess:
    """An access map over dimensions only, and its operands (one per dimension)."""

    map: AffineMap
    operands: tuple[SSAValue, ...]


def affine_access(
    access: Operation, indices: Sequence[Expr], leaves: Mapping[str, SSAValue]
) -> AffineAccess | None:
    """The dimension-only affine map of `indices` at `access`, or None when some leaf is not
    a valid affine dimension there. `leaves` binds the expressions' names to values (in the
    order their dimensions get their positions)."""
    function = affine_scope(access)
    if function is None:
        return None
    used: set[str] = set()
    for expr in indices:
        used |= expr.dims()
    names = [name for name in leaves if name in used]
    if any(not is_valid_affine_dim(leaves[name], function) for name in names):
        return None
    affine_map = IndexMap(tuple(names), tuple(indices)).to_affine_map()
    return AffineAccess(affine_map, tuple(leaves[name] for name in names))
