"""The `layout` dialect object, its memory-scope enum attribute and its canonicalization
traits."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import f32
from xdsl.parser import Parser
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.universe import Universe
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout import SCOPES, BufferType, MemoryScope, MemoryScopeAttr, PtrType
from physlayout.dialects.layout_dialect import Layout
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp
from physlayout.universe import make_context


def test_one_layout_dialect_in_the_universe() -> None:
    registered = Universe.get_multiverse().all_dialects["layout"]()
    assert registered is Layout
    names = {op.name for op in Layout.operations}
    assert {"layout.decl_buffer", "layout.transform", "layout.copy"} <= names


@pytest.mark.parametrize("scope", SCOPES)
def test_scope_text_round_trips(scope: str) -> None:
    suffix = "" if scope == "global" else f', scope = "{scope}"'
    for text in (f"!layout.buffer<2x4xf32{suffix}>", f"!layout.ptr<f32{suffix}>"):
        parsed = Parser(make_context(), text).parse_type()
        assert isinstance(parsed, BufferType | PtrType)
        assert parsed.get_scope() is MemoryScope(scope)
        assert isinstance(parsed.scope, MemoryScopeAttr)
        assert str(parsed) == text


def test_scope_constructors_refuse_unknown_names() -> None:
    assert BufferType([4], f32, scope="global.texture").get_scope().is_texture
    assert not PtrType(f32, "shared").get_scope().is_texture
    with pytest.raises(VerifyException, match="unknown memory scope 'texture'"):
        BufferType([4], f32, scope="texture")
    with pytest.raises(VerifyException, match="unknown memory scope 'gpu'"):
        PtrType(f32, "gpu")


@pytest.mark.parametrize("op", [TransformOp, PadOp, CropOp])
def test_graph_ops_carry_canonicalization_patterns(op: type) -> None:
    trait = op.get_trait(HasCanonicalizationPatternsTrait)
    assert trait is not None and trait.get_canonicalization_patterns()
