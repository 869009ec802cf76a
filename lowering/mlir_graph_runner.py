"""Run graph-level upstream IR (tensors, `linalg`, `tensor`, `linalg.pack`/`unpack`, e.g. the
output of `lower-layout-rewrites`) with upstream MLIR: `mlir-opt` lowers pack/unpack with
upstream's transform ops (`lower-pack-unpack.mlir` beside this module), bufferizes
(one-shot, across function boundaries), lowers linalg to loops and then to LLVM
(`physlayout.lowering.mlir_runner.TO_LLVM`); `mlir-runner` runs the entry function.

```sh
xdsl-opt -p lower-layout-rewrites graph.mlir | python -m physlayout.lowering.mlir_graph_runner
python -m physlayout.lowering.mlir_graph_runner --print-pipeline
```

`run_graph_functions(text, [(name, inputs), ...])` adds a `@main` that passes the f32
arrays `inputs` as dense constants to each `@name`, prints every (f32 tensor) result with
`printMemrefF32` and returns the printed arrays, so tests compare upstream execution with
the numpy graph evaluator (use values that print exactly, e.g. small integers).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.parser import Parser

from physlayout.lowering.mlir_runner import (
    TO_LLVM,
    MlirRunError,
    MlirTools,
    _run,  # pyright: ignore[reportPrivateUsage]
    parse_printed_memrefs,
)
from physlayout.universe import make_context

TRANSFORM_LIBRARY = Path(__file__).with_name("lower-pack-unpack.mlir")
"""The transform library that lowers `linalg.pack`/`unpack` before bufferization."""

BUFFERIZE: tuple[str, ...] = (
    f"--transform-preload-library=transform-library-paths={TRANSFORM_LIBRARY}",
    "--transform-interpreter",
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--convert-linalg-to-loops",
)
"""`mlir-opt` passes from graph-level upstream IR to the buffer level `TO_LLVM` takes."""


def pipeline(tools: MlirTools) -> list[str]:
    """The `mlir-opt` command from graph-level IR to the LLVM dialect."""
    return [tools.opt, *BUFFERIZE, *TO_LLVM]


def run_graph_mlir(
    text: str, entry: str = "main", tools: MlirTools | None = None, timeout: float = 300
) -> str:
    """Bufferize and lower `text` (graph-level upstream MLIR) and run `entry`; return its
    stdout."""
    tools = tools or MlirTools.find()
    if tools is None:
        raise MlirRunError("mlir-opt not found")
    llvm = _run(pipeline(tools), text, "mlir-opt", timeout)
    return _run(tools.runner_command(entry), llvm, "mlir-runner", timeout)


def _tensor_text(type_: TensorType) -> str:
    return "tensor<" + "".join(f"{e}x" for e in type_.get_shape()) + "f32>"


def _memref_text(type_: TensorType) -> str:
    return "memref<" + "".join(f"{e}x" for e in type_.get_shape()) + "f32>"


def _nested(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"  # pyright: ignore[reportUnknownVariableType]
    return repr(float(values))


def _dense(values: np.ndarray[Any, Any]) -> str:
    """A dense literal of `values` (each f32 written as the exact decimal of its double)."""
    return f"dense<{_nested(values.tolist())}>"


Call = tuple[str, Sequence[np.ndarray[Any, Any]]]
"""A function to run and its arguments."""


def graph_harness(text: str, calls: Sequence[Call]) -> str:
    """`text` with a `@main` that calls each function on its arguments (dense constants)
    and prints every result, in order. Arguments and results must be static f32 tensors."""
    module = Parser(make_context(allow_unregistered=True), text).parse_module()
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    if "main" in functions:
        raise MlirRunError("the module already has a function @main")
    lines = ["func.func @main() attributes {llvm.emit_c_interface} {"]
    for index, (name, inputs) in enumerate(calls):
        callee = functions.get(name)
        if callee is None:
            raise MlirRunError(f"no function @{name} to run")
        lines += _call_lines(f"c{index}_", callee, inputs)
    lines += ["  func.return", "}"]
    if "printMemrefF32" not in functions:
        lines.append("func.func private @printMemrefF32(memref<*xf32>)")
    added = "\n".join(lines) + "\n"
    if not _explicit_module(text):
        return text + "\n" + added
    end = text.rstrip().rfind("}")
    return text[:end] + added + text[end:]


def _explicit_module(text: str) -> bool:
    """Whether `text` is one `builtin.module` op (else its ops are top level)."""
    code = [line.strip() for line in text.splitlines()]
    first = next((line for line in code if line and not line.startswith("//")), "")
    return first.startswith(("builtin.module", "module", '"builtin.module"'))


def _f32_tensor(type_: Any) -> TensorType:
    if not isinstance(type_, TensorType) or not isinstance(type_.get_element_type(), Float32Type):
        raise MlirRunError(f"the graph harness only passes f32 tensors, not {type_}")
    return type_


def _call_lines(
    prefix: str, callee: func.FuncOp, inputs: Sequence[np.ndarray[Any, Any]]
) -> list[str]:
    name = callee.sym_name.data
    arg_types = [_f32_tensor(t) for t in callee.function_type.inputs.data]
    result_types = [_f32_tensor(t) for t in callee.function_type.outputs.data]
    if len(inputs) != len(arg_types):
        raise MlirRunError(f"@{name} takes {len(arg_types)} arguments, got {len(inputs)}")
    lines: list[str] = []
    names: list[str] = []
    for k, (type_, value) in enumerate(zip(arg_types, inputs, strict=True)):
        array = np.asarray(value, dtype=np.float32).reshape(tuple(type_.get_shape()))
        lines.append(f"  %{prefix}a{k} = arith.constant {_dense(array)} : {_tensor_text(type_)}")
        names.append(f"%{prefix}a{k}")
    signature = ", ".join(_tensor_text(t) for t in arg_types)
    outputs = ", ".join(_tensor_text(t) for t in result_types)
    call = f"func.call @{name}({', '.join(names)}) : ({signature}) -> ({outputs})"
    if not result_types:
        return [*lines, f"  {call}"]
    count = len(result_types)
    lines.append(f"  %{prefix}r:{count} = {call}" if count > 1 else f"  %{prefix}r = {call}")
    for k, type_ in enumerate(result_types):
        value = f"%{prefix}r#{k}" if count > 1 else f"%{prefix}r"
        memref = _memref_text(type_)
        lines.append(
            f"  %{prefix}m{k} = bufferization.to_buffer {value} : {_tensor_text(type_)} to {memref}"
        )
        lines.append(f"  %{prefix}u{k} = memref.cast %{prefix}m{k} : {memref} to memref<*xf32>")
        lines.append(f"  func.call @printMemrefF32(%{prefix}u{k}) : (memref<*xf32>) -> ()")
    return lines


def run_graph_functions(
    text: str, calls: Sequence[Call], tools: MlirTools | None = None
) -> list[list[np.ndarray[Any, Any]]]:
    """Run each function of `text` on its arguments with upstream MLIR (one process);
    returns the printed results per call."""
    printed = parse_printed_memrefs(run_graph_mlir(graph_harness(text, calls), tools=tools))
    results: list[list[np.ndarray[Any, Any]]] = []
    position = 0
    module = Parser(make_context(allow_unregistered=True), text).parse_module()
    counts = {
        op.sym_name.data: len(op.function_type.outputs.data)
        for op in module.ops
        if isinstance(op, func.FuncOp)
    }
    for name, _ in calls:
        results.append(printed[position : position + counts[name]])
        position += counts[name]
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Bufferize graph-level upstream IR with mlir-opt and run it with mlir-runner."
    )
    parser.add_argument("file", nargs="?", help="graph-level MLIR (default: stdin)")
    parser.add_argument("--entry", default="main", help="function to run (default: main)")
    parser.add_argument("--print-pipeline", action="store_true", help="print the command")
    options = parser.parse_args(argv)
    tools = MlirTools.find()
    if tools is None:
        print("mlir-opt not found", file=sys.stderr)
        return 2
    if options.print_pipeline:
        print(" ".join(pipeline(tools)) + " | " + " ".join(tools.runner_command(options.entry)))
        return 0
    text = Path(options.file).read_text() if options.file else sys.stdin.read()
    try:
        print(run_graph_mlir(text, options.entry, tools), end="")
    except MlirRunError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
