"""Named linalg ops in their `linalg.generic` form (no evaluator, no numpy: the graph passes
use it to read a named op's indexing maps and body)."""

from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.ops import GenericOp


def generic_form(op: NamedOperation) -> GenericOp:
    """A detached `linalg.generic` with the semantics of the named linalg op `op` (its
    indexing maps, iterator types and body). It uses `op`'s operands: erase it after use."""
    return GenericOp(
        op.inputs,
        op.outputs,
        op.body.clone(),
        op.get_indexing_maps(),
        op.get_iterator_types(),
        op.results.types,
    )
