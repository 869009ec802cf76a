"""physlayout-adreno: the Adreno texture pipeline as one declared pass pipeline, from an
NCHW graph (functions over tensors) to buffer-level kernels ready for ``-t opencl``:

    convert-layout{desired-layouts, allow-padding}   conv2d -> frozen NCHW4c/OIHW4o generics
    flow-layout-rewrites, fold-layout-rewrites       propagate and cancel layout rewrites
    annotate-texture-scope{max-image-*, weights-in-global}   scopes by consumer demand
    realize-scopes                                   copies where scopes conflict
    legalize-layout                                  kernels + host function
    apply-layout{rewrite-loops=true}, flatten-buffers, vectorize-texels, dce

From the command line: ``xdsl-opt -p physlayout-adreno graph.mlir -t opencl`` (options as
above, e.g. ``-p 'physlayout-adreno{weights-in-global=true max-image-width=8192}'``); from
Python: `adreno_pipeline(...)` returns the `PassPipeline` (with an optional callback run
between passes, e.g. to print each stage). The module is verified after every pass, so a
pass that produced invalid IR is named.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import PassFailedException, VerifyException

from physlayout.transforms.annotate_texture_scope import AnnotateTextureScopePass
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.convert_layout import DEFAULT_LAYOUTS, ConvertLayoutPass
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.transforms.legalize_layout import LegalizeLayoutPass
from physlayout.transforms.realize_scopes import RealizeScopesPass
from physlayout.transforms.vectorize_texels import VectorizeTexelsPass


def adreno_passes(
    desired_layouts: str = DEFAULT_LAYOUTS,
    allow_padding: bool = True,
    max_image_width: int = 16384,
    max_image_height: int = 16384,
    weights_in_global: bool = False,
) -> tuple[ModulePass, ...]:
    """The passes of the pipeline, in order (module docstring)."""
    return (
        ConvertLayoutPass(desired_layouts, allow_padding),
        FlowLayoutRewritesPass(),
        FoldLayoutRewritesPass(),
        AnnotateTextureScopePass(max_image_width, max_image_height, weights_in_global),
        RealizeScopesPass(),
        LegalizeLayoutPass(),
        ApplyLayoutPass(rewrite_loops=True),
        FlattenBuffersPass(),
        VectorizeTexelsPass(),
        DeadCodeElimination(),
    )


def verify_after(previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None) -> None:
    """A pipeline callback: verify the module after each pass, naming the pass on failure."""
    if previous is None:
        return
    try:
        module.verify()
    except VerifyException as err:
        raise PassFailedException(f"{previous.name} produced invalid IR: {err}") from None


def adreno_pipeline(
    callback: PassPipelineCallbackType | None = None,
    desired_layouts: str = DEFAULT_LAYOUTS,
    allow_padding: bool = True,
    max_image_width: int = 16384,
    max_image_height: int = 16384,
    weights_in_global: bool = False,
) -> PassPipeline:
    """The pipeline as an xDSL `PassPipeline`; `options` are those of `adreno_passes`.
    `callback(previous, module, next)` runs between passes (after verification)."""

    def both(previous: ModulePass | None, module: ModuleOp, next_: ModulePass | None) -> None:
        verify_after(previous, module, next_)
        if callback is not None:
            callback(previous, module, next_)

    passes = adreno_passes(
        desired_layouts, allow_padding, max_image_width, max_image_height, weights_in_global
    )
    return PassPipeline(passes, both)


@dataclass(frozen=True)
class PhyslayoutAdrenoPass(ModulePass):
    """The Adreno texture pipeline: an NCHW graph to buffer-level texture kernels for
    `-t opencl`, from `convert-layout` to `vectorize-texels` (module docstring).

    Options (passed on to the passes that take them):
        desired-layouts (str, "conv2d=NCHW4c,OIHW4o,NCHW4c"): `convert-layout`'s
            `KIND=DATA,KERNEL,OUTPUT[;...]` layout strings per op kind.
        allow-padding (bool, true): `convert-layout` pads channel counts that are not a
            multiple of the block (else leaves the op, with a remark).
        max-image-width (int, 16384): widest 2-D image (texels) `annotate-texture-scope`
            lets a texture tensor need.
        max-image-height (int, 16384): tallest 2-D image (rows) `annotate-texture-scope`
            lets a texture tensor need.
        weights-in-global (bool, false): `annotate-texture-scope` keeps conv filters in
            `global` instead of `global.texture-weight`.
    """

    name = "physlayout-adreno"

    desired_layouts: str = DEFAULT_LAYOUTS
    """`convert-layout`'s `KIND=DATA,KERNEL,OUTPUT[;...]` layouts."""
    allow_padding: bool = True
    """`convert-layout` pads channel counts that are not a multiple of the block."""
    max_image_width: int = 16384
    """Image width limit (texels) of `annotate-texture-scope`."""
    max_image_height: int = 16384
    """Image height limit (rows) of `annotate-texture-scope`."""
    weights_in_global: bool = False
    """`annotate-texture-scope` keeps conv filters in `global`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        adreno_pipeline(
            None,
            desired_layouts=self.desired_layouts,
            allow_padding=self.allow_padding,
            max_image_width=self.max_image_width,
            max_image_height=self.max_image_height,
            weights_in_global=self.weights_in_global,
        ).apply(ctx, op)
