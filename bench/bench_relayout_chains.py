"""Which chains of upstream relayout ops fold: upstream mlir-opt-22 vs physlayout, on the
same inputs (examples/relayout_chains.mlir), every output executed against numpy.

Columns:
- "mlir-opt -canonicalize": `mlir-opt-22 -canonicalize -cse`;
- "+ pack/unpack & reshape patterns": the test pattern sets upstream exposes for folding
  into and simplifying pack/unpack and for reassociating reshapes
  (`test-linalg-transform-patterns{test-fold-into-pack-and-unpack}`,
  `{test-simplify-pack-unpack-patterns}`,
  `test-tensor-transform-patterns{test-reassociative-reshape-folding test-expand-shape-bubbling
  test-fold-consecutive-insert-extract-slice}`), then `-canonicalize -cse`;
- "physlayout": `raise-layout-rewrites,fold-layout-rewrites,lower-layout-rewrites`.

A cell lists the relayout ops left in the function ("-": folded away). Every output
(upstream's two and physlayout's) is bufferized and run by mlir-opt-22 + mlir-runner-22 on
the same small-integer inputs and compared with the numpy graph evaluator on the original
chain: "ok" when all three agree exactly.

Writes the table into docs/interop.md (between the `relayout-chains` markers) and a section of
bench/RESULTS.md, and prints it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from results import write_section
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from physlayout.lowering.lower_layout_rewrites import LowerLayoutRewritesPass
from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
from physlayout.runtime.mlir_runner import MlirTools, run_graph_functions
from physlayout.semantics.evaluator_values import dtype_of
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[1]
CHAINS = ROOT / "examples/relayout_chains.mlir"
README = ROOT / "docs" / "interop.md"
BEGIN, END = "<!-- relayout-chains:begin -->", "<!-- relayout-chains:end -->"
TITLE = "## Relayout chains: upstream folding vs physlayout (bench_relayout_chains.py)"

CANONICALIZE = ("-canonicalize", "-cse")
PATTERNS = (
    "--pass-pipeline=builtin.module(func.func("
    "test-linalg-transform-patterns{test-fold-into-pack-and-unpack=true},"
    "test-linalg-transform-patterns{test-simplify-pack-unpack-patterns=true},"
    "test-tensor-transform-patterns{test-reassociative-reshape-folding=true "
    "test-expand-shape-bubbling=true test-fold-consecutive-insert-extract-slice=true}),"
    "canonicalize,cse)",
)
RELAYOUT = {
    "linalg.pack": "pack",
    "linalg.unpack": "unpack",
    "linalg.transpose": "transpose",
    "tensor.expand_shape": "expand",
    "tensor.collapse_shape": "collapse",
    "tensor.pad": "pad",
    "tensor.extract_slice": "slice",
    "linalg.generic": "generic",
    "linalg.copy": "copy",
}


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def upstream(tools: MlirTools, flags: tuple[str, ...], text: str) -> str:
    done = subprocess.run(
        [tools.opt, *flags, "--mlir-print-op-generic"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return done.stdout


def relayout_ops(module: ModuleOp) -> dict[str, list[str]]:
    """The relayout ops left in each function, in order."""
    return {
        f.sym_name.data: [RELAYOUT[op.name] for op in f.walk() if op.name in RELAYOUT]
        for f in module.ops
        if isinstance(f, func.FuncOp) and f.body.blocks
    }


def inputs_for(module: ModuleOp, name: str) -> list[np.ndarray]:
    function = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
    rng = np.random.default_rng(7)
    return [
        rng.integers(-50, 50, size=tuple(t.get_shape())).astype(dtype_of(t.get_element_type()))  # pyright: ignore
        for t in function.function_type.inputs.data
    ]


def cell(ops: list[str]) -> str:
    return " + ".join(ops) if ops else "-"


def main() -> int:
    tools = MlirTools.find()
    if tools is None or tools.runner is None:
        print("mlir-opt-22 / mlir-runner-22 not found: skipped")
        return 0
    text = CHAINS.read_text()
    original = parse(text)
    outputs = {
        "canonicalize": parse(upstream(tools, CANONICALIZE, text)),
        "patterns": parse(upstream(tools, PATTERNS, text)),
        "physlayout": parse(text),
    }
    ctx = make_context()
    for one_pass in (
        RaiseLayoutRewritesPass(),
        FoldLayoutRewritesPass(),
        LowerLayoutRewritesPass(),
    ):
        one_pass.apply(ctx, outputs["physlayout"])
    counts = {key: relayout_ops(module) for key, module in outputs.items()}
    before = relayout_ops(original)
    names = list(before)
    calls = [(name, inputs_for(original, name)) for name in names]
    runs = {key: run_graph_functions(str(module), calls) for key, module in outputs.items()}
    rows = [
        "| chain | before | mlir-opt -canonicalize | + pack/unpack & reshape patterns | physlayout | vs numpy |",
        "|---|---|---|---|---|---|",
    ]
    for index, (name, inputs) in enumerate(calls):
        (expected,) = run_graph(original, name, inputs)
        agree = all(
            np.array_equal(runs[key][index][0].reshape(expected.shape), expected) for key in runs
        )
        rows.append(
            f"| `{name}` | {cell(before[name])} | {cell(counts['canonicalize'][name])} | "
            f"{cell(counts['patterns'][name])} | {cell(counts['physlayout'][name])} | "
            f"{'ok' if agree else 'MISMATCH'} |"
        )
    table = "\n".join(rows)
    print(table)
    write_readme(table)
    folded = {
        "mlir-opt -canonicalize": sum(not counts["canonicalize"][n] for n in names),
        "+ patterns": sum(not counts["patterns"][n] for n in names),
        "physlayout": sum(not counts["physlayout"][n] for n in names),
    }
    write_results(table, folded, len(names))
    return 0 if "MISMATCH" not in table else 1


def write_readme(table: str) -> None:
    text = README.read_text()
    if BEGIN not in text or END not in text:
        return
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")


def write_results(table: str, folded: dict[str, int], chains: int) -> None:
    """Write this benchmark's section of RESULTS.md."""
    write_section(TITLE, [
        "Relayout ops left per chain of examples/relayout_chains.mlir (see the script's",
        "docstring for the flags); every output run by mlir-runner-22 against numpy.",
        "",
        table,
        "",
        "Chains folded away completely: "
        + ", ".join(f"{key} {count} of {chains}" for key, count in folded.items()) + ".",
    ])


if __name__ == "__main__":
    sys.exit(main())
