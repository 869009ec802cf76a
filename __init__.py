"""physlayout: buffer physical layouts for MLIR, on xDSL.

The public Python API is exported lazily (stock `xdsl-opt` imports this package to find
the plugin universe, and should not pay for islpy and numpy unless they are used):

    from physlayout import IndexMap, AXIS_SEPARATOR, flatten_shape, flatten_indices
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from physlayout.indexing.index_map import (
        AXIS_SEPARATOR,
        IndexMap,
        PaddingPredicate,
        flatten_indices,
        flatten_shape,
        transformed_shape,
    )

_EXPORTS = {
    "AXIS_SEPARATOR": "physlayout.indexing.index_map",
    "IndexMap": "physlayout.indexing.index_map",
    "PaddingPredicate": "physlayout.indexing.index_map",
    "flatten_indices": "physlayout.indexing.index_map",
    "flatten_shape": "physlayout.indexing.index_map",
    "transformed_shape": "physlayout.indexing.index_map",
}

__all__ = [
    "AXIS_SEPARATOR",
    "IndexMap",
    "PaddingPredicate",
    "flatten_indices",
    "flatten_shape",
    "transformed_shape",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'physlayout' has no attribute '{name}'")
    return getattr(import_module(module), name)
