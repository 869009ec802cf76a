"""equal_kernels.kernel_key: equal keys exactly when two functions print the same once their
names (symbol and SSA names) are taken away; on the kernels of real legalized models and on
random straight-line functions (hypothesis). legalize-layout's use of it (one kernel per
key) is checked by test/graph/legalize-layout.mlir (FileCheck) and numerically by
test_legalize_layout.py and the model tests."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.parser import Parser

from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.transforms.equal_kernels import kernel_key
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def anonymous(function: func.FuncOp) -> str:
    """`function` printed without its symbol name and SSA names."""
    copy = function.clone()
    copy.sym_name = StringAttr("k")
    for op in copy.walk():
        for value in op.results:
            value.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return str(copy)


def assert_key_is_exact(functions: list[func.FuncOp]) -> None:
    keys = [kernel_key(f) for f in functions]
    texts = [anonymous(f) for f in functions]
    for i, j in combinations(range(len(functions)), 2):
        assert (keys[i] == keys[j]) == (texts[i] == texts[j]), (
            functions[i].sym_name.data,
            functions[j].sym_name.data,
        )


def kernels_of(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data != "main"]


@pytest.mark.parametrize(
    ("example", "repeats"),
    [("examples/models/bottleneck.mlir", True), ("examples/rfc_conv_relu_conv.mlir", False)],
)
def test_key_on_lowered_kernels(example: str, repeats: bool) -> None:
    """Right after legalize-layout no two kernels are equal (it kept one of each, and the
    model's repeats are fewer kernels than calls); after the whole pipeline, every pair of
    kernels has the same key exactly when the same text."""
    ctx = make_context()
    module = parse((ROOT / example).read_text())
    passes = PhyslayoutAdrenoPass().passes()
    split = next(k for k, p in enumerate(passes) if p.name == "legalize-layout") + 1
    for one in passes[:split]:
        one.apply(ctx, module)
    kernels = kernels_of(module)
    texts = [anonymous(f) for f in kernels]
    assert len(set(texts)) == len(texts), "legalize-layout kept two equal kernels"
    calls = [op for op in module.walk() if isinstance(op, func.CallOp)]
    assert (len(kernels) < len(calls)) == repeats
    for one in passes[split:]:
        one.apply(ctx, module)
    assert_key_is_exact(kernels_of(module))


def test_key_sees_result_types_and_operand_order() -> None:
    """What xDSL's is_structurally_equivalent does not compare (result types) and what a
    multiset of ops would miss (which value each operand is)."""
    def function(name: str, to: str = "f32", operands: str = "%x, %y", names: str = "") -> str:
        """`%f` converts to `to` (unused); the result subtracts `operands`; `names` renames
        every value (the same function when nothing else changes)."""
        return f"""
func.func @{name}(%i{names}: i32, %x{names}: f32, %y{names}: f32) -> f32 {{
  %f{names} = arith.sitofp %i{names} : i32 to {to}
  %s{names} = arith.subf {operands.replace("%x", f"%x{names}").replace("%y", f"%y{names}")} : f32
  func.return %s{names} : f32
}}"""

    module = parse(
        function("a")
        + function("b", to="f64")
        + function("c", operands="%y, %x")
        + function("d", names="_renamed")
    )
    a, b, c, d = [kernel_key(f) for f in module.ops if isinstance(f, func.FuncOp)]
    assert a == d
    assert len({a, b, c}) == 3


OPS = ("arith.addf", "arith.mulf", "arith.subf")


@st.composite
def straight_line(draw: st.DrawFn) -> str:
    """A function of two f32 (or f16) arguments: a few binary ops on earlier values."""
    element = draw(st.sampled_from(["f32", "f16"]))
    lines: list[str] = []
    count = 2
    for k in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(OPS))
        lhs, rhs = draw(st.integers(0, count - 1)), draw(st.integers(0, count - 1))
        lines.append(f"  %v{count} = {op} %v{lhs}, %v{rhs} : {element}")
        count += 1
        del k
    body = "\n".join(lines)
    return (
        f"func.func @NAME(%v0: {element}, %v1: {element}) -> {element} {{\n{body}\n"
        f"  func.return %v{count - 1} : {element}\n}}"
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(straight_line(), min_size=2, max_size=5))
def test_key_is_exact_on_random_functions(bodies: list[str]) -> None:
    text = "\n".join(b.replace("@NAME", f"@f{k}") for k, b in enumerate(bodies))
    module = parse(text)
    assert_key_is_exact([f for f in module.ops if isinstance(f, func.FuncOp)])
