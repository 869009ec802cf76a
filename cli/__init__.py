"""The command line: `physlayout-opt` (`cli/opt.py`: stock `xdsl-opt` with MLIR-style
diagnostics) and `physlayout` (`cli/main.py`: `demo`, `run` in `cli/run.py`, `compile` and
`run OUT/` in `cli/deploy.py`, `viz`, `passes`). Each sub-command parses its arguments and
calls the Python API (`physlayout.api`) and the runtime; what they share lives in
`cli/common.py`, and reading MLIR with locations in `physlayout.located`. Imports run one
way: main -> deploy -> run -> common; nothing here is imported by the layers below.
"""

from physlayout.cli.common import run_with_deep_stack
from physlayout.cli.main import main
from physlayout.cli.opt import PhyslayoutOptMain, opt_main

__all__ = ["PhyslayoutOptMain", "main", "opt_main", "run_with_deep_stack"]
