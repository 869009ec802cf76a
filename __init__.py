"""physlayout: buffer physical layouts for MLIR, on xDSL.

The public Python API is exported lazily (stock `xdsl-opt` imports this package to find
the plugin universe, and should not pay for islpy and numpy unless they are used):

    from physlayout import IndexMap, AXIS_SEPARATOR, flatten_shape, flatten_indices
    from physlayout import compile, load          # compile a model once, call it many times
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from physlayout.api import CompiledModel, compile, load
    from physlayout.indexing.extents import PaddingPredicate, transformed_shape
    from physlayout.indexing.index_map import IndexMap
    from physlayout.indexing.shapes import AXIS_SEPARATOR, flatten_indices, flatten_shape

_EXPORTS = {
    "AXIS_SEPARATOR": "physlayout.indexing.shapes",
    "CompiledModel": "physlayout.api",
    "compile": "physlayout.api",
    "load": "physlayout.api",
    "IndexMap": "physlayout.indexing.index_map",
    "PaddingPredicate": "physlayout.indexing.extents",
    "flatten_indices": "physlayout.indexing.shapes",
    "flatten_shape": "physlayout.indexing.shapes",
    "from_torch": "physlayout.torch_frontend",
    "transformed_shape": "physlayout.indexing.extents",
}

__all__ = [
    "AXIS_SEPARATOR",
    "CompiledModel",
    "IndexMap",
    "PaddingPredicate",
    "compile",
    "flatten_indices",
    "flatten_shape",
    "load",
    "transformed_shape",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'physlayout' has no attribute '{name}'")
    return getattr(import_module(module), name)
