"""The declared pipelines (`lowering/pipelines.py`): registered, their passes and options,
`lower-layout` refusing what they prepare, and the device's image limits reaching a user's
`--pipeline` (`runtime.opencl.device_pipeline`, no device needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import PassFailedException

from physlayout.lowering.lower_layout import LowerLayoutPass
from physlayout.lowering.pipelines import (
    PhyslayoutAdrenoPass,
    PhyslayoutBuffersPass,
    PhyslayoutMemrefPass,
    PhyslayoutOpenCLPass,
)
from physlayout.runtime.opencl import (
    DeviceLimits,
    OpenCLRuntimeError,
    device_pipeline,
    parse_module,
)
from physlayout.transforms.annotate_texture_scope import AnnotateTextureScopePass
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.verify_buffers import VerifyBuffersPass
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
RFC = ROOT / "test/lowering/inputs/rfc0039_examples.mlir"


def names(passes: tuple[ModulePass, ...]) -> list[str]:
    return [p.name for p in passes]


def test_pipelines_are_registered() -> None:
    passes = Universe.get_multiverse().all_passes
    for cls in (PhyslayoutBuffersPass, PhyslayoutOpenCLPass, PhyslayoutMemrefPass, PhyslayoutAdrenoPass):
        assert passes[cls.name]() is cls


def test_pipeline_passes_and_options() -> None:
    assert names(PhyslayoutBuffersPass().passes()) == ["apply-layout", "flatten-buffers"]
    assert names(PhyslayoutOpenCLPass().passes()) == [
        "apply-layout", "flatten-buffers", "vectorize-texels"
    ]
    (spec,) = parse_pipeline("physlayout-memref{rewrite-loops=false affine-loops=false remarks=true}")
    memref = PhyslayoutMemrefPass.from_pass_spec(spec).passes()
    assert memref == (
        ApplyLayoutPass(rewrite_loops=False, remarks=True),
        FlattenBuffersPass(),
        LowerLayoutPass(affine_loops=False),
    )
    adreno = PhyslayoutAdrenoPass(max_image_width=8, weights_in_global=True).passes()
    assert names(adreno) == [
        "convert-layout", "flow-layout-rewrites", "fold-layout-rewrites",
        "annotate-texture-scope", "realize-scopes", "legalize-layout",
        "apply-layout", "flatten-buffers", "vectorize-texels", "dce",
    ]
    assert AnnotateTextureScopePass(8, 16384, True) in adreno
    assert ApplyLayoutPass(rewrite_loops=True) in adreno


def test_memref_pipeline_is_apply_flatten_lower() -> None:
    """`physlayout-memref{rewrite-loops=false}` == the three passes by hand."""
    by_hand = parse_module(RFC.read_text())
    ctx = make_context()
    for one_pass in (ApplyLayoutPass(), FlattenBuffersPass(), LowerLayoutPass()):
        one_pass.apply(ctx, by_hand)
    declared = parse_module(RFC.read_text())
    PhyslayoutMemrefPass(rewrite_loops=False).apply(ctx, declared)
    assert str(declared) == str(by_hand)


def test_lower_layout_lowers_only() -> None:
    """Pending transforms are refused, not applied behind the user's back."""
    module = parse_module(RFC.read_text())
    before = str(module)
    with pytest.raises(PassFailedException, match="pending transform; run physlayout-memref"):
        LowerLayoutPass().apply(make_context(), module)
    assert str(module) == before


LIMITS = DeviceLimits(True, 123, 456)


def _pass(spec: str, name: str) -> ModulePass:
    return next(p for p in device_pipeline(spec, LIMITS).passes if p.name == name)


def test_device_limits_reach_a_user_pipeline() -> None:
    """Every pass that takes image limits gets the device's, unless the spec gives them."""
    adreno = _pass("physlayout-adreno{max-image-width=8 weights-in-global=true}", "physlayout-adreno")
    assert adreno == PhyslayoutAdrenoPass(
        max_image_width=8, max_image_height=456, weights_in_global=True
    )
    assert _pass("physlayout-adreno", "physlayout-adreno") == PhyslayoutAdrenoPass(
        max_image_width=123, max_image_height=456
    )
    assert _pass("annotate-texture-scope,dce", "annotate-texture-scope") == (
        AnnotateTextureScopePass(123, 456)
    )
    verify = _pass("verify-buffers{max_image_height=7}", "verify-buffers")
    assert verify == VerifyBuffersPass(max_image_width=123, max_image_height=7)
    assert _pass("legalize-layout", "legalize-layout").name == "legalize-layout"
    no_images = device_pipeline("physlayout-adreno", DeviceLimits(False, 0, 0)).passes[0]
    assert no_images == PhyslayoutAdrenoPass(max_image_width=0, max_image_height=0)


@pytest.mark.parametrize("spec", ["nope", "physlayout-adreno{max-image-width=wide}", "dce{"])
def test_bad_pipeline_is_a_diagnostic(spec: str) -> None:
    with pytest.raises(OpenCLRuntimeError, match="pipeline"):
        device_pipeline(spec, LIMITS)
