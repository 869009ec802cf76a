"""physlayout's plugin for stock `xdsl-opt` (entry point group `xdsl.universe`).

Every factory imports lazily, so listing the universe costs nothing.

`linalg.pack` / `linalg.unpack` belong to the `linalg` dialect, which xDSL's own universe
registers (without them); a second `linalg` entry would be a "Duplicate definition" error,
so importing this module points xDSL's `linalg` factory at `linalg_dialect` (xDSL's ops plus
the two relayout ops) before `Universe.get_multiverse` merges the universes. Likewise its
`scf` factory at `scf_dialect` (xDSL's ops, with `scf.parallel` and `scf.reduce` in
upstream's custom syntax).
"""

from collections.abc import Callable
from functools import cache
from importlib import import_module

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import XDSL_UNIVERSE, Universe
from xdsl.utils.target import Target

from physlayout.lexer import install as install_linear_lexer

install_linear_lexer()


def layout_dialect() -> Dialect:
    """The `layout` dialect: buffer-level, graph-level and scope operations."""
    from physlayout.dialects.layout_dialect import Layout

    return Layout


def linalg_dialect() -> Dialect:
    """xDSL's `linalg` dialect plus `linalg.pack` and `linalg.unpack`."""
    from physlayout.dialects.linalg_dialect import LinalgWithRelayout

    return LinalgWithRelayout


def scf_dialect() -> Dialect:
    """xDSL's `scf` dialect with `scf.parallel`/`scf.reduce` in upstream's custom syntax."""
    from physlayout.dialects.scf_syntax import ScfWithCustomParallel

    return ScfWithCustomParallel


XDSL_UNIVERSE.all_dialects["linalg"] = linalg_dialect
XDSL_UNIVERSE.all_dialects["scf"] = scf_dialect


def _lazy(module: str, name: str) -> Callable[[], type]:
    def load() -> type:
        return getattr(import_module(f"physlayout.{module}"), name)

    return load


PASSES: dict[str, tuple[str, str]] = {
    "apply-layout": ("transforms.apply_layout", "ApplyLayoutPass"),
    "normalize-memref-layouts": ("transforms.normalize_memrefs", "NormalizeMemRefLayoutsPass"),
    "flatten-buffers": ("transforms.flatten_buffers", "FlattenBuffersPass"),
    "verify-buffers": ("transforms.verify_buffers", "VerifyBuffersPass"),
    "vectorize-texels": ("transforms.vectorize_texels", "VectorizeTexelsPass"),
    "lower-layout": ("lowering.lower_layout", "LowerLayoutPass"),
    "fold-layout-rewrites": ("transforms.fold_layout_rewrites", "FoldLayoutRewritesPass"),
    "sink-layout-rewrites": ("transforms.sink_layout_rewrites", "SinkLayoutRewritesPass"),
    "merge-sibling-kernels": ("transforms.merge_sibling_kernels", "MergeSiblingKernelsPass"),
    "fold-affine-params": ("transforms.fold_affine_params", "FoldAffineParamsPass"),
    "flow-layout-rewrites": ("transforms.flow_layout_rewrites", "FlowLayoutRewritesPass"),
    "lower-layout-rewrites": ("lowering.lower_layout_rewrites", "LowerLayoutRewritesPass"),
    "raise-layout-rewrites": ("lowering.raise_layout_rewrites", "RaiseLayoutRewritesPass"),
    "normalize-graph": ("transforms.normalize_graph", "NormalizeGraphPass"),
    "fuse-transposed-conv": ("transforms.fuse_transposed_conv", "FuseTransposedConvPass"),
    "convert-layout": ("transforms.convert_layout", "ConvertLayoutPass"),
    "annotate-texture-scope": ("transforms.annotate_texture_scope", "AnnotateTextureScopePass"),
    "realize-scopes": ("transforms.realize_scopes", "RealizeScopesPass"),
    "to-mixed-precision": ("transforms.to_mixed_precision", "ToMixedPrecisionPass"),
    "fuse-elementwise": ("transforms.fuse_elementwise", "FuseElementwisePass"),
    "lift-transform-params": ("transforms.lift_transform_params", "LiftTransformParamsPass"),
    "legalize-layout": ("transforms.legalize_layout", "LegalizeLayoutPass"),
    "apply-schedules": ("transforms.apply_schedules", "ApplySchedulesPass"),
    "contract-fma": ("transforms.contract_fma", "ContractFmaPass"),
    "physlayout-buffers": ("lowering.pipelines", "PhyslayoutBuffersPass"),
    "physlayout-opencl": ("lowering.pipelines", "PhyslayoutOpenCLPass"),
    "physlayout-memref": ("lowering.pipelines", "PhyslayoutMemrefPass"),
    "physlayout-adreno": ("lowering.pipelines", "PhyslayoutAdrenoPass"),
}
"""Pass name -> (module under physlayout, class name)."""

TARGETS: dict[str, tuple[str, str]] = {
    "opencl": ("lowering.opencl", "OpenCLTarget"),
}
"""Target name -> (module under physlayout, class name)."""


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The physlayout passes by name."""
    return {name: _lazy(module, cls) for name, (module, cls) in PASSES.items()}


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """The physlayout output targets by name."""
    return {name: _lazy(module, cls) for name, (module, cls) in TARGETS.items()}


UNIVERSE = Universe(
    all_dialects={"layout": layout_dialect},
    all_passes=get_all_passes(),
    all_targets=get_all_targets(),
)


@cache
def multiverse() -> Universe:
    """`Universe.get_multiverse()` (every installed `xdsl.universe` entry point merged), read
    once per process: xDSL reads the entry points of every installed distribution at each
    call (about 10 ms), and a compile asked for it four times."""
    return Universe.get_multiverse()


def make_context(allow_unregistered: bool = False) -> Context:
    """A context with every dialect stock `xdsl-opt` knows, physlayout's `layout` included
    (dialects load lazily, on first use)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx
