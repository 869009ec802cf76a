"""physlayout's plugin for stock `xdsl-opt` (entry point group `xdsl.universe`).

Every factory imports lazily, so listing the universe costs nothing.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target


def _layout_dialect() -> Dialect:
    from physlayout.dialects.layout import Layout

    return Layout


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The physlayout passes by name."""

    def apply_layout() -> type[ModulePass]:
        from physlayout.transforms.apply_layout import ApplyLayoutPass

        return ApplyLayoutPass

    def flatten_buffers() -> type[ModulePass]:
        from physlayout.transforms.flatten_buffers import FlattenBuffersPass

        return FlattenBuffersPass

    return {
        "apply-layout": apply_layout,
        "flatten-buffers": flatten_buffers,
    }


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """The physlayout output targets by name."""
    return {}


UNIVERSE = Universe(
    all_dialects={"layout": _layout_dialect},
    all_passes=get_all_passes(),
    all_targets=get_all_targets(),
)
