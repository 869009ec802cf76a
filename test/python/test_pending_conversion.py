"""apply-layout's memoized conversion of pending buffer types (`ConsumePendingTransforms`)
gives what xDSL's recursive `TypeConversionPattern` gives: the same attribute for random
nestings (hypothesis) of a module's buffer types, and the same IR on every lit input that
apply-layout runs on."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    i32,
)
from xdsl.ir import Attribute
from xdsl.pattern_rewriter import PatternRewriter

from physlayout.dialects.layout import BufferType
from physlayout.transforms.apply_layout import ApplyLayoutPass, ConsumePendingTransforms, Layouts
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
PASSES = ("apply-layout", "physlayout-buffers", "physlayout-opencl", "physlayout-memref")
INPUTS = [
    *sorted(
        path
        for folder in ("transforms", "lowering", "opencl")
        for path in (ROOT / "test" / folder).glob("*.mlir")
        if any(name in path.read_text() for name in PASSES)
    ),
    ROOT / "examples" / "relu_texture.mlir",
    ROOT / "examples" / "demo.mlir",
]


def _parse(text: str) -> ModuleOp:
    from xdsl.parser import Parser

    return Parser(make_context(), text).parse_module()


def _module_types() -> list[Attribute]:
    module = _parse((ROOT / "examples" / "relu_texture.mlir").read_text())
    found: dict[Attribute, None] = {}
    for op in module.walk():
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            if isinstance(value.type, BufferType):
                found[value.type] = None
    return [*found, i32]


MODULE = _parse((ROOT / "examples" / "relu_texture.mlir").read_text())
TYPES = _module_types()


@st.composite
def nested(draw: st.DrawFn, depth: int = 0) -> Attribute:
    kind = draw(st.integers(0, 3 if depth < 3 else 0))
    if kind == 0:
        return draw(st.sampled_from(TYPES))
    children = draw(st.lists(nested(depth + 1), max_size=3))
    if kind == 1:
        return ArrayAttr(children)
    if kind == 2:
        return DictionaryAttr({f"k{i}": c for i, c in enumerate(children)} | {"s": StringAttr("x")})
    return FunctionType.from_lists(children, children[:1])


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(st.lists(nested(), min_size=1, max_size=6))
def test_memoized_conversion_is_xdsls(attrs: list[Attribute]) -> None:
    assert any(isinstance(t, BufferType) for t in TYPES)
    pattern = ConsumePendingTransforms(Layouts.of(MODULE))
    assert pattern.layouts.by_type, "the example has pending layouts"
    for attr in attrs:  # twice: fresh, then from the memo
        for _ in range(2):
            xdsl = pattern.conversion._convert_type_rec(attr)  # pyright: ignore[reportPrivateUsage]
            assert pattern.converted(attr) == xdsl


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_apply_layout_ir_is_xdsls_conversion(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """apply-layout with the memoized conversion and with xDSL's: the same module."""
    chunks = path.read_text().split("// -----")
    outputs: list[list[str]] = []
    for xdsl in (False, True):
        if xdsl:

            def convert(self: ConsumePendingTransforms, op: object, rewriter: PatternRewriter) -> None:
                self.conversion.match_and_rewrite(op, rewriter)  # type: ignore[arg-type]

            monkeypatch.setattr(ConsumePendingTransforms, "_convert_op", convert)
        texts: list[str] = []
        for chunk in chunks:
            try:
                module = _parse(chunk)
                ApplyLayoutPass().apply(make_context(), module)
                texts.append(str(module))
            except Exception as err:  # inputs of diagnostics tests fail, the same way
                texts.append(f"{type(err).__name__}: {err}")
        outputs.append(texts)
    assert outputs[0] == outputs[1]
