"""The declared pipelines (`lowering/pipelines.py`): registered, their passes and options,
`lower-layout` refusing what they prepare, and the device's image limits reaching a user's
`--pipeline` (`runtime.opencl.device_pipeline`, no device needed); the runtime takes
parameter layouts from the module it is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from graph_harness import verified_states
from xdsl.dialects.builtin import ModuleOp
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
from physlayout.runtime.device import DeviceLimits, OpenCLRuntime, OpenCLRuntimeError
from physlayout.runtime.opencl import compile_module, device_pipeline, parse_module
from physlayout.transforms.annotate_texture_scope import AnnotateTextureScopePass
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.fold_affine_params import FoldAffineParamsPass
from physlayout.transforms.fuse_transposed_conv import FuseTransposedConvPass
from physlayout.transforms.lift_transform_params import LiftTransformParamsPass
from physlayout.transforms.sink_layout_rewrites import SinkLayoutRewritesPass
from physlayout.transforms.verify_buffers import VerifyBuffersPass
from physlayout.universe import make_context
from physlayout.verification import PassedChecks

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
        "apply-layout", "flatten-buffers", "vectorize-texels", "dce"
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
        "normalize-graph", "raise-layout-rewrites", "fold-layout-rewrites", "convert-layout",
        "fuse-transposed-conv", "flow-layout-rewrites", "fold-layout-rewrites",
        "sink-layout-rewrites", "fold-layout-rewrites", "annotate-texture-scope", "realize-scopes", "fuse-elementwise", "legalize-layout",
        "merge-sibling-kernels", "apply-layout", "flatten-buffers", "vectorize-texels",
            "apply-schedules", "dce",
    ]
    assert AnnotateTextureScopePass(8, 16384, True) in adreno
    assert ApplyLayoutPass(rewrite_loops=True) in adreno
    unfused = PhyslayoutAdrenoPass(
        fuse=False, transposed_conv=False, lift_params=True, params="w"
    ).passes()
    assert names(unfused)[:13] == [
        "normalize-graph", "fold-affine-params", "raise-layout-rewrites", "fold-layout-rewrites", "convert-layout",
        "flow-layout-rewrites", "fold-layout-rewrites",
        "sink-layout-rewrites", "fold-layout-rewrites", "lift-transform-params",
        "annotate-texture-scope", "realize-scopes", "legalize-layout",
    ]
    assert LiftTransformParamsPass("w") in unfused
    assert FoldAffineParamsPass("w") in unfused
    assert SinkLayoutRewritesPass("w", prepared=True) in unfused
    assert SinkLayoutRewritesPass("", prepared=False) in adreno
    assert FuseTransposedConvPass() in adreno
    assert FuseTransposedConvPass(remarks=True) in PhyslayoutAdrenoPass(remarks=True).passes()


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


def test_device_fp16_does_not_change_the_graph_pipeline() -> None:
    """f16 textures are HALF_FLOAT images (core OpenCL), so whether the device has
    cl_khr_fp16 does not reach the scope choice: the pipeline is the same either way."""
    with_fp16 = device_pipeline("physlayout-adreno", DeviceLimits(True, 123, 456, True))
    without = device_pipeline("physlayout-adreno", DeviceLimits(True, 123, 456, False))
    assert with_fp16.passes == without.passes
    annotate = next(
        p for p in with_fp16.passes[0].passes() if isinstance(p, AnnotateTextureScopePass)  # type: ignore[attr-defined]
    )
    assert annotate == AnnotateTextureScopePass(123, 456, False)


@pytest.mark.parametrize("spec", ["nope", "physlayout-adreno{max-image-width=wide}", "dce{"])
def test_bad_pipeline_is_a_diagnostic(spec: str) -> None:
    with pytest.raises(OpenCLRuntimeError, match="pipeline"):
        device_pipeline(spec, LIMITS)


COPY_TRANSPOSED = """
func.func @copy(%a: !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>,
                %b: !layout.buffer<4x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c6 step %c1 {
      %v = layout.load %a[%i, %j] : !layout.buffer<4x6xf32, transform = #layout.index_map<(i, j) -> (j, i)>>, f32
      layout.store %v, %b[%i, %j] : !layout.buffer<4x6xf32>, f32
    }
  }
  func.return
}
"""


def test_runtime_reads_layouts_from_the_module_it_is_given(runtime: OpenCLRuntime) -> None:
    """`compile_module` lowers a copy (`physlayout-opencl`) and takes each parameter's
    layout from the module's own types; the module is left as given."""
    import numpy as np

    from physlayout.runtime.host import execute

    module = parse_module(COPY_TRANSPOSED)
    before = str(module)
    compiled = compile_module(module, runtime, keep_stages=True)
    assert str(module) == before and compiled.source is module
    assert [name for name, _ in compiled.stages] == names(PhyslayoutOpenCLPass().passes())
    transposed, plain = compiled.params["copy"]
    assert transposed is not None and transposed.layout is not None
    assert transposed.layout.shape == (6, 4) and plain is not None and plain.layout is None
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    b = np.zeros_like(a)
    result = execute(compiled, "copy", [a, b])
    np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(result.physical[0], a.T)


def test_a_module_lowered_by_the_graph_pipeline_is_not_lowered_again() -> None:
    """`lower_module(..., lowered_already=True)` (what `run_model` and the demo use after
    `physlayout-adreno`) skips `physlayout-opencl`, which the graph pipeline ended with: the
    same OpenCL C and parameter layouts as running it again (it is idempotent), no stages."""
    from physlayout.runtime.opencl import lower_module

    module = parse_module((ROOT / "examples" / "rfc_conv_relu_conv.mlir").read_text())
    limits = DeviceLimits(True, 16384, 16384)
    PhyslayoutAdrenoPass().apply(make_context(), module)
    again = lower_module(module, limits, keep_stages=True)
    once = lower_module(module, limits, keep_stages=True, lowered_already=True)
    assert once.program.source == again.program.source
    assert str(once.lowered) == str(again.lowered)
    assert once.params == again.params
    assert once.stages == [] and [n for n, _ in again.stages] == names(
        PhyslayoutOpenCLPass().passes()
    )
    # nothing runs on it, so it is not copied (issue 43: a clone of the whole lowered
    # module per compile); writing the OpenCL C leaves it as it was
    assert once.lowered is module and once.source is module
    assert str(module) == str(again.lowered)


@pytest.mark.parametrize("physical_io", [False, True])
def test_compile_artifact_does_not_lower_the_graph_pipelines_output_again(
    monkeypatch: pytest.MonkeyPatch, physical_io: bool
) -> None:
    """After `physlayout-adreno`, `compile_artifact` does not run `physlayout-opencl` again
    (the graph entry's tensors need no boundary kernels), and the artifact is the one that
    lowering the whole module again gives, byte for byte."""
    import physlayout.runtime.deploy as deploy
    from physlayout.runtime.plan_json import dumps

    source_text = (ROOT / "examples" / "rfc_conv_relu_conv.mlir").read_text()
    limits = DeviceLimits(True, 16384, 16384, False, True)
    runs: list[str] = []
    original = PhyslayoutOpenCLPass.passes

    def spied(self: PhyslayoutOpenCLPass) -> tuple[ModulePass, ...]:
        runs.append(self.name)
        return original(self)

    monkeypatch.setattr(PhyslayoutOpenCLPass, "passes", spied)
    once = deploy.compile_artifact(parse_module(source_text), "main", limits, physical_io=physical_io)
    assert runs == []
    monkeypatch.setattr(deploy, "ends_lowered_for_opencl", lambda _pipeline: False)
    again = deploy.compile_artifact(parse_module(source_text), "main", limits, physical_io=physical_io)
    assert runs == ["physlayout-opencl"]  # the whole module lowered again, as before
    assert once.kernels == again.kernels
    assert dumps(once.plan) == dumps(again.plan)


def test_a_compile_reads_the_installed_universes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile_artifact` (its pipeline, contexts and pass lookups) reads xDSL's entry
    points once (`physlayout.universe.multiverse`; issue 43: each read scans every installed
    distribution, and a compile asked four times), and a second compile not at all."""
    import physlayout.runtime.deploy as deploy
    from physlayout.universe import multiverse

    reads: list[int] = []
    original = Universe.get_multiverse

    def counted() -> Universe:
        reads.append(1)
        return original()

    monkeypatch.setattr(Universe, "get_multiverse", staticmethod(counted))
    multiverse.cache_clear()
    try:
        source_text = (ROOT / "examples" / "rfc_conv_relu_conv.mlir").read_text()
        limits = DeviceLimits(True, 16384, 16384, False, True)
        first = deploy.compile_artifact(parse_module(source_text), "main", limits)
        assert len(reads) == 1
        again = deploy.compile_artifact(parse_module(source_text), "main", limits)
        assert len(reads) == 1 and again.kernels == first.kernels
    finally:
        multiverse.cache_clear()


def test_verify_each_false_skips_only_the_verifications(monkeypatch: pytest.MonkeyPatch) -> None:
    """`physlayout-adreno{verify-each=false}`: the same IR, without the verification after
    each pass (on by default: once per pass that changed the module, and after the
    first)."""
    from physlayout.lowering import pipelines

    calls: list[str] = []
    original = pipelines.verify_module

    def counted(module: ModuleOp, passed: PassedChecks | None = None) -> None:
        calls.append("verify")
        original(module, passed)

    monkeypatch.setattr(pipelines, "verify_module", counted)
    text = (ROOT / "examples" / "rfc_conv_relu_conv.mlir").read_text()
    outputs: list[str] = []
    for spec in ("physlayout-adreno", "physlayout-adreno{verify-each=false}"):
        module = parse_module(text)
        calls.clear()
        (adreno,) = device_pipeline(spec, DeviceLimits(True, 16384, 16384)).passes
        assert isinstance(adreno, PhyslayoutAdrenoPass)
        adreno.apply(make_context(), module)
        outputs.append(str(module))
        states = verified_states(adreno.passes(), parse_module(text))
        assert states < len(adreno.passes())  # some pass changes nothing: no verification
        expected = states if adreno.verify_each else 0
        assert len(calls) == expected
    assert outputs[0] == outputs[1]


@pytest.fixture
def nothing_frozen() -> Any:
    """The collector with no frozen objects during the test, as in a plain interpreter: some
    interpreters freeze objects at start-up (one image's `python3` had 375 frozen), and
    `survivors_frozen` rightly does nothing under a caller's freeze. Those objects are
    frozen again (with whatever else is alive) after the test."""
    import gc

    already = gc.get_freeze_count()
    if already:
        gc.unfreeze()
    yield
    if already:
        gc.freeze()


def test_survivors_of_each_pass_are_frozen_only_while_the_pipeline_runs(
    monkeypatch: pytest.MonkeyPatch, nothing_frozen: None
) -> None:
    """`DeclaredPipeline.apply` freezes the objects alive after each pass out of the garbage
    collector's scans (`survivors_frozen`) and hands them back at the end; the IR is the one
    the unfrozen `pipeline()` gives. A caller's own frozen objects stay frozen (the block
    then does nothing), and so does a disabled collector."""
    import gc

    from physlayout.lowering import pipelines

    frozen: list[int] = []
    original = pipelines.verify_module

    def counted(module: ModuleOp, passed: PassedChecks | None = None) -> None:
        frozen.append(gc.get_freeze_count())
        original(module, passed)

    monkeypatch.setattr(pipelines, "verify_module", counted)
    text = (ROOT / "examples" / "rfc_conv_relu_conv.mlir").read_text()
    plain = parse_module(text)
    PhyslayoutAdrenoPass().pipeline().apply(make_context(), plain)
    assert gc.get_freeze_count() == 0
    frozen.clear()
    module = parse_module(text)
    PhyslayoutAdrenoPass().apply(make_context(), module)
    assert str(module) == str(plain)
    assert frozen and all(count > 0 for count in frozen)
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        already = gc.get_freeze_count()
        with pipelines.survivors_frozen() as freeze_survivors:
            freeze_survivors()
            assert gc.get_freeze_count() == already
        assert gc.get_freeze_count() == already
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with pipelines.survivors_frozen() as freeze_survivors:
            freeze_survivors()
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_the_modules_are_frozen_only_while_the_writer_runs(
    monkeypatch: pytest.MonkeyPatch, nothing_frozen: None
) -> None:
    """`generate_opencl` (as `lower_module` calls it) writes with the modules frozen out of
    the garbage collector's scans (`survivors_frozen`), hands them back after it, and
    writes the C that an unfrozen run writes (with the collector disabled the block does
    nothing)."""
    import gc

    from physlayout.lowering import opencl as writer
    from physlayout.runtime import opencl

    seen: list[int] = []
    original = writer._generate  # pyright: ignore[reportPrivateUsage]

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_freeze_count())
        return original(*args, **kwargs)

    monkeypatch.setattr(writer, "_generate", counted)
    text = (ROOT / "examples" / "relu_texture.mlir").read_text()
    limits = DeviceLimits(True, 16384, 16384)
    frozen = opencl.lower_module(text, limits).program.source
    assert seen[-1] > 0 and gc.get_freeze_count() == 0
    gc.disable()
    try:
        plain = opencl.lower_module(text, limits).program.source
    finally:
        gc.enable()
    assert seen[-1] == 0 and plain == frozen


def test_young_collections_are_rarer_only_inside_the_frozen_block(nothing_frozen: None) -> None:
    """`survivors_frozen` collects the young generation every
    `collector.YOUNG_COLLECTION_THRESHOLD` allocations within the block and restores the caller's thresholds after it, also when
    the block raises; when it does nothing (a caller's freeze) the thresholds stay."""
    import gc

    from physlayout.collector import YOUNG_COLLECTION_THRESHOLD
    from physlayout.lowering import pipelines

    before = gc.get_threshold()
    with pipelines.survivors_frozen():
        inside = gc.get_threshold()
    assert inside == (max(YOUNG_COLLECTION_THRESHOLD, before[0]), *before[1:])
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), pipelines.survivors_frozen():
        raise RuntimeError("a failing pass")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        with pipelines.survivors_frozen():
            assert gc.get_threshold() == before
    finally:
        gc.unfreeze()


def test_the_compile_command_runs_with_spaced_young_collections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`physlayout compile` (its imports, parse, passes and writer) runs within
    `collector.spaced_young_collections`; the caller's thresholds are back after it."""
    import gc
    import importlib

    from physlayout.cli import deploy
    from physlayout.collector import YOUNG_COLLECTION_THRESHOLD

    cli_main = importlib.import_module("physlayout.cli.main")
    seen: list[tuple[int, ...]] = []

    def command(args: Any) -> int:
        seen.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(deploy, "compile_command", command)
    before = gc.get_threshold()
    with pytest.raises(SystemExit) as exited:
        cli_main.main(["compile", str(ROOT / "examples" / "relu_texture.mlir"), "-o", "unused"])
    assert exited.value.code == 0
    assert seen == [(max(YOUNG_COLLECTION_THRESHOLD, before[0]), *before[1:])]
    assert gc.get_threshold() == before
