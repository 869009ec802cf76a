"""Run lowered physlayout IR with upstream MLIR: `mlir-opt` to the LLVM dialect, then
`mlir-runner`. One driver for both levels:

- buffer level (what `lower-layout` / `physlayout-memref` emits: affine, memref views,
  vector accesses, scf, arith with floor division, func): `TO_LLVM`;
- graph level (tensors, `linalg`, `tensor`, `linalg.pack`/`unpack`, e.g. the output of
  `lower-layout-rewrites`): first `BUFFERIZE` (pack/unpack lowered by upstream's transform
  ops in `lowering/lower-pack-unpack.mlir`, one-shot bufferization across function
  boundaries, linalg to loops), then `TO_LLVM`.

```sh
xdsl-opt -p physlayout-memref examples/nhwc_relu_nchw4c.mlir \
  | python -m physlayout.runtime.mlir_runner             # runs @main, prints its output
xdsl-opt -p lower-layout-rewrites graph.mlir | python -m physlayout.runtime.mlir_runner --graph
python -m physlayout.runtime.mlir_runner [--graph] --print-pipeline   # the shell pipeline
```

`MlirTools.find()` locates `mlir-opt-22`/`mlir-runner-22` (or unversioned names) and the
runner's support libraries (`printMemrefF32` lives there; the caller declares it with
`llvm.emit_c_interface`); `run_mlir(text, entry, graph=...)` runs one module.

Harnesses: `add_harness(text, kernel)` adds a `@main` that fills every `f32` memref argument
of `kernel` with `harness_values(shape, k)`, passes `1` for `index` arguments, calls the
kernel and prints each memref argument; `run_graph_functions(text, [(name, inputs), ...])`
adds a `@main` that passes the f32 arrays `inputs` as dense constants to each `@name` and
prints every (f32 tensor) result. `parse_printed_memrefs` reads printed arrays back, so
tests compare upstream execution with the numpy evaluators exactly (use values that print
exactly, e.g. small integers).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from math import prod
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
    UnitAttr,
    UnrankedMemRefType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

from physlayout.universe import make_context

TO_LLVM: tuple[str, ...] = (
    "-expand-strided-metadata",
    "-lower-affine",
    "-convert-scf-to-cf",
    "-convert-vector-to-llvm",
    "-arith-expand",
    "-finalize-memref-to-llvm",
    "-convert-func-to-llvm",
    "-convert-arith-to-llvm",
    "-convert-index-to-llvm",
    "-convert-cf-to-llvm",
    "-reconcile-unrealized-casts",
)
"""`mlir-opt` passes from lowered physlayout IR to the LLVM dialect."""

TRANSFORM_LIBRARY = Path(str(resources.files("physlayout.lowering") / "lower-pack-unpack.mlir"))
"""The transform library that lowers `linalg.pack`/`unpack` before bufferization."""

BUFFERIZE: tuple[str, ...] = (
    f"--transform-preload-library=transform-library-paths={TRANSFORM_LIBRARY}",
    "--transform-interpreter",
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--convert-linalg-to-loops",
)
"""`mlir-opt` passes from graph-level upstream IR to the buffer level `TO_LLVM` takes."""

RUNNER_LIBS: tuple[str, ...] = ("libmlir_c_runner_utils", "libmlir_runner_utils")
"""Support libraries `mlir-runner` loads (`printMemrefF32` and friends)."""


class MlirRunError(DiagnosticException):
    """Upstream `mlir-opt` or `mlir-runner` rejected the input or failed."""


@dataclass(frozen=True)
class MlirTools:
    """Paths of the upstream tools and the runner's support libraries."""

    opt: str
    runner: str | None
    libs: tuple[str, ...]

    @staticmethod
    def find() -> MlirTools | None:
        """The installed tools (`mlir-opt-22` preferred), or None without `mlir-opt`."""
        opt = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
        if opt is None:
            return None
        runner = shutil.which("mlir-runner-22") or shutil.which("mlir-runner")
        libs = _find_libs(runner) if runner else ()
        return MlirTools(opt, runner if libs else None, libs)

    def opt_command(self, graph: bool = False) -> list[str]:
        """The `mlir-opt` command line that lowers memref/affine IR (`graph`: tensor IR,
        bufferized first) to the LLVM dialect."""
        return [self.opt, *(BUFFERIZE if graph else ()), *TO_LLVM]

    def runner_command(self, entry: str = "main") -> list[str]:
        """The `mlir-runner` command line that runs `@entry` with the runtime support libraries."""
        if self.runner is None:
            raise MlirRunError("mlir-runner (and its support libraries) not found")
        return [
            self.runner,
            "-e",
            entry,
            "-entry-point-result=void",
            "-shared-libs=" + ",".join(self.libs),
        ]

    def shell_pipeline(self, entry: str = "main", graph: bool = False) -> str:
        """The equivalent shell pipeline (reads lowered IR on stdin)."""
        return " ".join(self.opt_command(graph)) + " | " + " ".join(self.runner_command(entry))


def _find_libs(runner: str) -> tuple[str, ...]:
    directories = [
        Path(os.path.realpath(runner)).parent.parent / "lib",
        Path("/usr/lib/llvm-22/lib"),
    ]
    found: list[str] = []
    for name in RUNNER_LIBS:
        candidates = [
            directory / f"{name}{suffix}"
            for directory in directories
            for suffix in (".so", ".so.22.1")
        ]
        existing = [c for c in candidates if c.is_file()]
        if not existing:
            return ()
        found.append(str(existing[0]))
    return tuple(found)


def _run(command: Sequence[str], text: str, what: str, timeout: float) -> str:
    done = subprocess.run(command, input=text, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise MlirRunError(f"{what} failed (exit {done.returncode}):\n{done.stderr.strip()}")
    return done.stdout


def run_mlir(
    text: str,
    entry: str = "main",
    tools: MlirTools | None = None,
    timeout: float = 300,
    graph: bool = False,
) -> str:
    """Lower `text` (upstream-parsable MLIR; `graph`: tensor IR, bufferized first) to LLVM
    and run `entry`; return its stdout."""
    tools = tools or MlirTools.find()
    if tools is None:
        raise MlirRunError("mlir-opt not found")
    llvm = _run(tools.opt_command(graph), text, "mlir-opt", timeout)
    return _run(tools.runner_command(entry), llvm, "mlir-runner", timeout)


# Printed memrefs --------------------------------------------------------------------------


def parse_printed_memrefs(output: str) -> list[np.ndarray[Any, Any]]:
    """The arrays printed by `printMemrefF32` in `output`, in order, with their shapes."""
    arrays: list[np.ndarray[Any, Any]] = []
    lines = output.splitlines()
    position = 0
    while position < len(lines):
        line = lines[position]
        position += 1
        if not line.startswith("Unranked Memref") and not line.startswith("Memref"):
            continue
        sizes_text = line.split("sizes = [", 1)[1].split("]", 1)[0]
        shape = [int(s) for s in sizes_text.split(",") if s.strip()]
        numbers: list[float] = []
        while len(numbers) < prod(shape) and position < len(lines):
            cleaned = lines[position].replace("[", " ").replace("]", " ").replace(",", " ")
            numbers.extend(float(token) for token in cleaned.split())
            position += 1
        arrays.append(np.array(numbers, dtype=np.float32).reshape(shape))
    return arrays


# Harness ----------------------------------------------------------------------------------


HARNESS_MODULUS = 23
"""`harness_values`: element i of argument k is `((7*i + 3*k) mod 23) - 11`."""


def harness_values(shape: Sequence[int], k: int) -> np.ndarray[Any, Any]:
    """The data `add_harness` stores into memref argument number `k` (row-major)."""
    flat = (7 * np.arange(prod(shape)) + 3 * k) % HARNESS_MODULUS - HARNESS_MODULUS // 2
    return flat.astype(np.float32).reshape(tuple(shape))


def _constant(value: int, ops: list[Operation]) -> SSAValue:
    op = arith.ConstantOp.from_int_and_width(value, IndexType())
    ops.append(op)
    return op.result


def _fill(target: SSAValue, k: int, ops: list[Operation]) -> None:
    """Store `harness_values` into `target` (a static f32 memref) through a 1-D view."""
    target_type = target.type
    assert isinstance(target_type, MemRefType)
    shape = list(target_type.get_shape())
    flat = target
    if len(shape) != 1:
        collapse = memref.CollapseShapeOp.build(
            operands=[target],
            result_types=[MemRefType(f32, [prod(shape)])],
            properties={
                "reassociation": ArrayAttr(
                    [ArrayAttr(IntegerAttr(axis, i64) for axis in range(len(shape)))]
                )
            },
        )
        ops.append(collapse)
        flat = collapse.results[0]
    zero, one, count = _constant(0, ops), _constant(1, ops), _constant(prod(shape), ops)
    seven, shift = _constant(7, ops), _constant(3 * k, ops)
    modulus, half = _constant(HARNESS_MODULUS, ops), _constant(HARNESS_MODULUS // 2, ops)
    body = Block(arg_types=[IndexType()])
    index = body.args[0]
    scaled = arith.MuliOp(index, seven)
    shifted = arith.AddiOp(scaled, shift)
    wrapped = arith.RemSIOp(shifted, modulus)
    centred = arith.SubiOp(wrapped, half)
    narrow = arith.IndexCastOp(centred, i32)
    value = arith.SIToFPOp(narrow, f32)
    store = memref.StoreOp.get(value, flat, [index])
    body.add_ops([scaled, shifted, wrapped, centred, narrow, value, store, scf.YieldOp()])
    ops.append(scf.ForOp(zero, count, one, [], Region(body)))


def harness_main(callee: func.FuncOp, entry: str = "main") -> func.FuncOp:
    """`@entry`: fill every memref argument of `callee`, call it, print the memrefs."""
    kernel = callee.sym_name.data
    ops: list[Operation] = []
    args: list[SSAValue] = []
    printed: list[SSAValue] = []
    for k, arg_type in enumerate(callee.function_type.inputs.data):
        if isinstance(arg_type, IndexType):
            args.append(_constant(1, ops))
            continue
        if (
            not isinstance(arg_type, MemRefType)
            or not isinstance(arg_type.get_element_type(), Float32Type)
            or arg_type.layout != builtin.NoneAttr()
        ):
            raise MlirRunError(
                f"the harness only passes f32 memrefs and index values, not {arg_type}"
            )
        alloc = memref.AllocOp.get(f32, shape=arg_type.get_shape())
        ops.append(alloc)
        _fill(alloc.memref, k, ops)
        args.append(alloc.memref)
        printed.append(alloc.memref)
    ops.append(func.CallOp(kernel, args, callee.function_type.outputs.data))
    unranked = UnrankedMemRefType.from_type(f32)
    for value in printed:
        cast = memref.CastOp.get(value, unranked)
        ops.extend([cast, func.CallOp("printMemrefF32", [cast.results[0]], [])])
    ops.extend(memref.DeallocOp.get(value) for value in printed)
    ops.append(func.ReturnOp())
    return func.FuncOp(entry, ([], []), Region(Block(ops)))


def add_harness(text: str, kernel: str, entry: str = "main") -> str:
    """`text` (one printed module) with `@entry` added: it fills every f32 memref argument
    of `kernel` with `harness_values`, calls it and prints each memref argument.

    The module is parsed only to read `kernel`'s signature; the new functions are spliced
    into `text` in generic form, so the rest is exactly what upstream is given."""
    module = Parser(make_context(allow_unregistered=True), text).parse_module()
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    callee = functions.get(kernel)
    if callee is None:
        raise MlirRunError(f"no function @{kernel} to run")
    if entry in functions:
        raise MlirRunError(f"the module already has a function @{entry}; pick another entry")
    added: list[Operation] = [harness_main(callee, entry)]
    if "printMemrefF32" not in functions:
        unranked = UnrankedMemRefType.from_type(f32)
        declaration = func.FuncOp.external("printMemrefF32", [unranked], [])
        declaration.attributes["llvm.emit_c_interface"] = UnitAttr()
        added.append(declaration)
    stream = io.StringIO()
    printer = Printer(stream=stream, print_generic_format=True)
    for op in added:
        printer.print_op(op)
        stream.write("\n")
    end = text.rstrip().rfind("}")
    if end < 0:
        raise MlirRunError("expected a printed builtin.module")
    return text[:end] + stream.getvalue() + text[end:]


# Graph harness ----------------------------------------------------------------------------


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
    printed = parse_printed_memrefs(run_mlir(graph_harness(text, calls), tools=tools, graph=True))
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
    """`python -m physlayout.runtime.mlir_runner`: run a lowered module's entry function with
    `mlir-runner-22` and print its output; returns the process exit status."""
    parser = argparse.ArgumentParser(description="Run lowered physlayout IR with mlir-runner.")
    parser.add_argument("file", nargs="?", help="lowered MLIR (default: stdin)")
    parser.add_argument("--entry", default="main", help="function to run (default: main)")
    parser.add_argument(
        "--graph", action="store_true", help="graph-level IR (tensors): bufferize it first"
    )
    parser.add_argument("--harness", metavar="KERNEL", help="add a @main that runs KERNEL")
    parser.add_argument("--print-pipeline", action="store_true", help="print the command")
    options = parser.parse_args(argv)
    tools = MlirTools.find()
    if tools is None:
        print("mlir-opt not found", file=sys.stderr)
        return 2
    if options.print_pipeline:
        print(tools.shell_pipeline(options.entry, options.graph))
        return 0
    text = Path(options.file).read_text() if options.file else sys.stdin.read()
    try:
        if options.harness:
            text = add_harness(text, options.harness, options.entry)
        print(run_mlir(text, options.entry, tools, graph=options.graph), end="")
    except DiagnosticException as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
