"""Test harness for graph-level IR: parse, run passes, and run every function before and
after on the same seeded random inputs with the numpy graph evaluator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.parser import Parser
from xdsl.passes import ModulePass

from physlayout.semantics.evaluator_values import dtype_of
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.universe import make_context


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def apply(module: ModuleOp, passes: Sequence[ModulePass]) -> ModuleOp:
    ctx = make_context()
    for one_pass in passes:
        one_pass.apply(ctx, module)
        module.verify()
    return module


def change_reports(passes: Sequence[ModulePass], module: ModuleOp) -> list[bool]:
    """Run `passes` on `module`; whether each said it changed the module
    (`PhyslayoutPass.apply_and_report`; a pass that cannot tell says it did)."""
    from physlayout.transforms.pass_options import apply_and_report

    return [apply_and_report(one_pass, make_context(), module) for one_pass in passes]


def verified_states(passes: Sequence[ModulePass], module: ModuleOp) -> int:
    """How many whole-module verifications a declared pipeline of `passes` makes on
    `module` (`VerifyingPipeline`: after the first pass and after each that changed it);
    runs the passes."""
    reports = change_reports(passes, module)
    return sum(1 for k, changed in enumerate(reports) if changed or k == 0)


def functions(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]


def random_inputs(function: func.FuncOp, seed: int = 0) -> list[Any]:
    """Seeded random arguments (integers in [-8, 8) for integer tensors)."""
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for arg_type in function.function_type.inputs.data:
        if isinstance(arg_type, TensorType):
            dtype = dtype_of(arg_type.get_element_type())
            shape: tuple[int, ...] = tuple(arg_type.get_shape())
        else:
            dtype, shape = dtype_of(arg_type), ()
        if np.issubdtype(dtype, np.floating):
            args.append(np.asarray(rng.standard_normal(shape)).astype(dtype))
        else:
            args.append(np.asarray(rng.integers(-8, 8, size=shape)).astype(dtype))
    return args


def compare_before_after(
    text: str, passes: Sequence[ModulePass], seed: int = 0, exact: bool = True
) -> tuple[ModuleOp, dict[str, tuple[list[Any], list[Any]]]]:
    """Run every function of `text` before and after `passes`; returns the transformed
    module and the results per function (asserting they agree)."""
    before = parse(text)
    after = apply(parse(text), passes)
    results: dict[str, tuple[list[Any], list[Any]]] = {}
    for function in functions(before):
        name = function.sym_name.data
        inputs = random_inputs(function, seed)
        first = run_graph(before, name, inputs)
        second = run_graph(after, name, inputs)
        assert len(first) == len(second), name
        for x, y in zip(first, second, strict=True):
            assert np.shape(x) == np.shape(y), name
            if exact:
                np.testing.assert_array_equal(x, y, err_msg=name)
            else:
                np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5, err_msg=name)
        results[name] = (first, second)
    return after, results


def count_ops(module: ModuleOp, name: str) -> int:
    return sum(1 for op in module.walk() if op.name == name)
