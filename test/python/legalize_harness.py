"""Test harness for legalize-layout: run each graph function with the graph evaluator and
its legalized host function with the buffer evaluator, on the same seeded inputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from graph_harness import apply, functions, parse, random_inputs
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass

from physlayout.lowering.pipelines import PhyslayoutOpenCLPass
from physlayout.semantics.evaluator import run_function
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.legalize_layout import LegalizeLayoutPass

BUFFER_STAGES: list[ModulePass] = list(PhyslayoutOpenCLPass().passes())
"""The buffer-level passes after legalization (`physlayout-opencl`); the host is evaluated
after each of them."""


def host_inputs(function: func.FuncOp, inputs: Sequence[Any]) -> list[Any]:
    """The graph function's arguments as its host function takes them (a rank-0 tensor is
    a buffer of shape [1])."""
    types = function.function_type.inputs.data
    return [
        np.array(x).reshape(np.shape(x) or (1,)) if isinstance(t, TensorType) else x
        for x, t in zip(inputs, types, strict=True)
    ]


def run_host(module: ModuleOp, name: str, inputs: Sequence[Any], results: Sequence[Any]) -> list[Any]:
    """Run the host function `name` on `inputs` (as `host_inputs` makes them); returns its
    out-parameters, shaped like the graph `results`."""
    outs = [np.zeros(np.shape(r) or (1,), dtype=np.asarray(r).dtype) for r in results]
    run_function(module, name, [np.array(x) for x in inputs] + outs)
    return [o.reshape(np.shape(r)) for o, r in zip(outs, results, strict=True)]


def check_legalized(
    text: str,
    graph_passes: Sequence[ModulePass] = (),
    seed: int = 0,
    exact: bool = True,
) -> ModuleOp:
    """Graph evaluator on every function of `text` == buffer evaluator on its host
    function after `graph_passes`, legalize-layout and each buffer stage. Returns the
    legalized module (before the buffer stages)."""
    source = parse(text)
    expected: dict[str, tuple[list[Any], list[Any]]] = {}
    for function in functions(source):
        inputs = random_inputs(function, seed)
        results = run_graph(source, function.sym_name.data, inputs)
        expected[function.sym_name.data] = (host_inputs(function, inputs), results)
    module = apply(parse(text), [*graph_passes, LegalizeLayoutPass()])
    legalized = module.clone()
    for stage in BUFFER_STAGES:
        apply(module, [stage])
        for name, (inputs, results) in expected.items():
            got = run_host(module, name, inputs, results)
            for want, have in zip(results, got, strict=True):
                message = f"@{name} after {stage.name}"
                if exact:
                    np.testing.assert_array_equal(have, want, err_msg=message)
                else:
                    np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5, err_msg=message)
    return legalized
