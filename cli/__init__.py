"""The command line: `physlayout-opt` (`cli/opt.py`: stock `xdsl-opt` with MLIR-style
diagnostics) and `physlayout` (`cli/main.py`: `demo`, `run` in `cli/run.py`, `compile` and
`run OUT/` in `cli/deploy.py`, `viz`, `passes`). Each sub-command parses its arguments and
calls the Python API (`physlayout.api`) and the runtime; what they share lives in
`cli/common.py`, and reading MLIR with locations in `physlayout.located`. Imports run one
way: main -> deploy -> run -> common; nothing here is imported by the layers below.
`cli/opt.py` (and xDSL's `xdsl-opt` driver under it) loads only when `opt_main` runs or
`PhyslayoutOptMain` is asked for: `physlayout` itself never needs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from physlayout.cli.common import run_with_deep_stack
from physlayout.cli.main import main

if TYPE_CHECKING:
    from physlayout.cli.opt import PhyslayoutOptMain

__all__ = ["PhyslayoutOptMain", "main", "opt_main", "run_with_deep_stack"]


def opt_main(args: Sequence[str] | None = None) -> None:
    """Entry point of `physlayout-opt` (`cli/opt.py`'s `opt_main`)."""
    from physlayout.cli.opt import opt_main as run

    run(args)


def __getattr__(name: str) -> Any:
    if name == "PhyslayoutOptMain":
        from physlayout.cli.opt import PhyslayoutOptMain

        return PhyslayoutOptMain
    raise AttributeError(f"module 'physlayout.cli' has no attribute '{name}'")
