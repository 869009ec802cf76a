"""The inputs of the models shipped in `examples/models` as the tests use them: what its
`inputs.py` makes from `NAME.args.txt` (seed 0), by argument name."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def model_inputs(name: str) -> dict[str, np.ndarray]:
    """Every argument of model `name` (its input first, then its parameters), by name, as
    `examples/models/inputs.py` makes them with seed 0."""
    spec = importlib.util.spec_from_file_location("model_inputs", MODELS / "inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_inputs(str(MODELS / f"{name}.args.txt"), seed=0)
