"""The pass pipelines physlayout declares, each once, from source IR to a target.

    physlayout-buffers{rewrite-loops remarks}
        apply-layout{rewrite-loops remarks}, flatten-buffers
    physlayout-opencl{rewrite-loops remarks fp-contract}          (then `-t opencl`)
        physlayout-buffers, vectorize-texels, contract-fma (when fp-contract)
    physlayout-memref{rewrite-loops remarks affine-loops}   (then mlir-opt / mlir-runner)
        physlayout-buffers, lower-layout{affine-loops}
    physlayout-adreno{desired-layouts allow-padding max-image-width max-image-height
                      weights-in-global fuse transposed-conv lift-params params remarks verify-each
                      schedule compute-units max-work-group-size registers vector-items
                      schedules fp-contract vector-width}
                                                       (graph level, then `-t opencl`)
        normalize-graph, fold-affine-params{params} (when lift-params),
        raise-layout-rewrites, fold-layout-rewrites, convert-layout{desired-layouts allow-padding},
        fuse-transposed-conv{remarks} (when transposed-conv), flow-layout-rewrites, fold-layout-rewrites, sink-layout-rewrites{params prepared=lift-params},
        fold-layout-rewrites, lift-transform-params{params} (when
        lift-params), annotate-texture-scope{max-image-* weights-in-global remarks}, realize-scopes,
        fuse-elementwise{remarks} (when fuse), legalize-layout, merge-sibling-kernels (when fuse),
        physlayout-buffers{rewrite-loops=true remarks}, vectorize-texels{vector-width},
        apply-schedules{schedules default=schedule compute-units max-work-group-size registers
                        vector-items vector-width},
        contract-fma (when fp-contract), dce

Each is a registered `ModulePass` (`xdsl-opt -p 'physlayout-memref{rewrite-loops=false}'`)
whose options reach the passes that take them; from Python, `passes()` lists its passes and
`pipeline(callback)` gives the `PassPipeline` (the callback runs between passes, e.g. to
print each stage). The module is verified after every pass that changed it (as MLIR's pass
manager, a pass that says it changed nothing is not followed by a verification of the very
module verified before it; `VerifyingPipeline`), so a pass that produced invalid IR is
named (`physlayout-adreno{verify-each=false}` skips these verifications: the driver's own,
after the whole pipeline, remains; see docs/compile-time.md). While a declared pipeline
runs, the objects alive after each pass are frozen out of the garbage collector's scans
(`survivors_frozen`), so its collections scan only what the running pass made. The
pipelines live beside the lowerings because they end at a target; `physlayout run`, the
demo, the benchmarks and the tests all run these and no hand-made pass list.
"""

from __future__ import annotations

import gc
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.exceptions import PassFailedException, VerifyException

from physlayout.collector import spaced_young_collections
from physlayout.lowering.raise_layout_rewrites import RaiseLayoutRewritesPass
from physlayout.transforms.annotate_texture_scope import AnnotateTextureScopePass
from physlayout.transforms.apply_layout import ApplyLayoutPass
from physlayout.transforms.apply_schedules import ApplySchedulesPass
from physlayout.transforms.contract_fma import ContractFmaPass
from physlayout.transforms.convert_layout import DEFAULT_LAYOUTS, ConvertLayoutPass
from physlayout.transforms.dead_code import MemoizedDeadCodeElimination
from physlayout.transforms.flatten_buffers import FlattenBuffersPass
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_affine_params import FoldAffineParamsPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass
from physlayout.transforms.fuse_elementwise import FuseElementwisePass
from physlayout.transforms.fuse_transposed_conv import FuseTransposedConvPass
from physlayout.transforms.legalize_layout import LegalizeLayoutPass
from physlayout.transforms.lift_transform_params import LiftTransformParamsPass
from physlayout.transforms.merge_sibling_kernels import MergeSiblingKernelsPass
from physlayout.transforms.normalize_graph import NormalizeGraphPass
from physlayout.transforms.pass_options import PhyslayoutPass, apply_and_report
from physlayout.transforms.realize_scopes import RealizeScopesPass
from physlayout.transforms.sink_layout_rewrites import SinkLayoutRewritesPass
from physlayout.transforms.vectorize_texels import VectorizeTexelsPass
from physlayout.verification import PassedChecks, verify_module


@contextmanager
def survivors_frozen() -> Iterator[Callable[[], None]]:
    """Within the block, the objects that exist when it starts, and those alive at each call
    of the function it yields (`freeze_survivors`, called after each pass), are left out of
    Python's cyclic garbage collections; at the end they are handed back to the collector.
    The young generation is also collected less often within the block
    (`collector.spaced_young_collections`); the thresholds are restored at the end.

    Why: a pass creates and drops many IR objects, so the collector runs often, and every
    full collection scans every object alive, the whole module (and the parsed input)
    included; on the large models those scans were about 1.2 of 12 CPU seconds. Freezing
    the survivors of each pass (`gc.freeze`) leaves each collection only the objects the
    running pass made. Most of those survive it too (the IR it builds), so a young
    collection every 700 allocations mostly scans live IR again: every 20,000 cut
    googlenet's collections in the pipeline and the writer from 0.9 to 0.23 s (+5 MB
    peak). Nothing else changes (the IR is the same): the garbage of a pass
    that is already frozen (cycles in ops erased by a later pass) waits until the block
    ends (efficientnet_b0: peak memory 80 MB -> 101 MB). Does nothing when the collector
    is disabled or something is already frozen (a caller's own `gc.freeze`, or an
    enclosing use of this block): `gc.unfreeze` would release that too."""
    active = gc.isenabled() and gc.get_freeze_count() == 0

    def freeze_survivors() -> None:
        if active:
            gc.freeze()

    freeze_survivors()
    try:
        with spaced_young_collections() if active else nullcontext():
            yield freeze_survivors
    finally:
        if active:
            gc.unfreeze()


def verify_after(
    previous: ModulePass | None,
    module: ModuleOp,
    _next: ModulePass | None,
    passed: PassedChecks | None = None,
) -> None:
    """A pipeline callback: verify the module after each pass, naming the pass on failure
    (`passed`: the signatures whose generic checks passed earlier in the run, see
    `verify_module`)."""
    if previous is None:
        return
    try:
        verify_module(module, passed)
    except VerifyException as err:
        raise PassFailedException(f"{previous.name} produced invalid IR: {err}") from None


@dataclass(frozen=True)
class PassTime:
    """One pass of a declared pipeline as `recorded_pass_times` saw it: wall seconds of the
    pass, whether it changed the module (as far as it can tell) and the seconds of the
    verification after it (None: not verified, as it changed nothing or `verify-each` is
    off)."""

    name: str
    seconds: float
    changed: bool
    verification: float | None


_RECORDED: ContextVar[list[PassTime] | None] = ContextVar("physlayout_pass_times", default=None)


@contextmanager
def recorded_pass_times() -> Iterator[list[PassTime]]:
    """Within the block, every `VerifyingPipeline` appends a `PassTime` for each of its
    passes to the list yielded (`physlayout-opt --time-passes` prints them under the
    pipeline's own line)."""
    times: list[PassTime] = []
    token = _RECORDED.set(times)
    try:
        yield times
    finally:
        _RECORDED.reset(token)


@dataclass(frozen=True)
class VerifyingPipeline(PassPipeline):
    """An xDSL `PassPipeline` that verifies the module after each pass (when `verify_each`),
    naming the pass on failure (`verify_after`), before calling `callback`. As MLIR's pass
    manager does, it skips the verification after a pass that changed nothing (a
    `PhyslayoutPass` whose `apply_and_report` says so): the module is then the one verified
    after the pass before. The module is always verified after the first pass, so the
    input of a run is verified once too. One memo of passed signatures (`PassedChecks`)
    serves all the verifications of a run."""

    verify_each: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        passes, callback = self.passes, self.callback
        if callback is not None:
            callback(None, op, passes[0] if passes else None)
        passed = PassedChecks()
        verified = False
        recorded = _RECORDED.get()
        for k, pass_ in enumerate(passes):
            following = passes[k + 1] if k + 1 < len(passes) else None
            start = time.perf_counter()
            changed = apply_and_report(pass_, ctx, op)
            done = time.perf_counter()
            verification: float | None = None
            if self.verify_each and (changed or not verified):
                verify_after(pass_, op, following, passed)
                verified = True
                verification = time.perf_counter() - done
            if recorded is not None:
                recorded.append(PassTime(pass_.name, done - start, changed, verification))
            if callback is not None:
                callback(pass_, op, following)


class DeclaredPipeline(PhyslayoutPass):
    """A pass that runs a declared list of passes (its options configure them)."""

    @abstractmethod
    def passes(self) -> tuple[ModulePass, ...]:
        """The passes of the pipeline, in order."""

    def verifies_each_pass(self) -> bool:
        """Whether `pipeline()` verifies the module after each pass (true unless an option
        says otherwise)."""
        return True

    def pipeline(self, callback: PassPipelineCallbackType | None = None) -> PassPipeline:
        """The pipeline as a `VerifyingPipeline` that verifies the module after each pass
        that changed it (`verifies_each_pass`), then calls `callback(previous, module,
        next)` (if given)."""
        return VerifyingPipeline(self.passes(), callback, self.verifies_each_pass())

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Run the pipeline (`pipeline`), the survivors of each pass frozen out of the
        garbage collector's scans while it runs (`survivors_frozen`)."""
        with survivors_frozen() as freeze_survivors:
            self.pipeline(lambda *_: freeze_survivors()).apply(ctx, op)


@dataclass(frozen=True)
class BufferPipeline(DeclaredPipeline):
    """A pipeline that starts with `physlayout-buffers` (whose options it takes)."""

    rewrite_loops: bool = True
    """`apply-layout{rewrite-loops}`."""
    remarks: bool = False
    """`apply-layout{remarks}`."""

    def buffer_passes(self) -> tuple[ModulePass, ...]:
        """`apply-layout{rewrite-loops remarks}`, `flatten-buffers`."""
        return (
            ApplyLayoutPass(rewrite_loops=self.rewrite_loops, remarks=self.remarks),
            FlattenBuffersPass(),
        )


@dataclass(frozen=True)
class PhyslayoutBuffersPass(BufferPipeline):
    """RFC 0039's buffer pipeline: apply the pending layouts, then flatten every buffer to
    its physical rank.

    Options:
        rewrite-loops (bool, true): `apply-layout` re-iterates loop nests in physical order.
        remarks (bool, false): `apply-layout` says which nests it re-iterates, and why not.
    """

    name = "physlayout-buffers"

    def passes(self) -> tuple[ModulePass, ...]:
        return self.buffer_passes()


@dataclass(frozen=True)
class PhyslayoutOpenCLPass(BufferPipeline):
    """Buffer-level kernels ready for `-t opencl`: `physlayout-buffers`, then
    `vectorize-texels` (texel lane loops become `vector<4xT>` code), then `dce` (the lane
    loops' bounds and index constants left dead; without it a second run of the pipeline
    would remove them in `flatten-buffers`, and the pipeline would not be idempotent).

    Options:
        rewrite-loops (bool, true): `apply-layout` re-iterates loop nests in physical order.
        remarks (bool, false): `apply-layout` says which nests it re-iterates, and why not.
        fp-contract (bool, false): `contract-fma` fuses each f32 vector multiply whose only
            use is an add into one `math.fma` (faster; no longer bit-exact with the
            evaluator on the uncontracted IR).
    """

    name = "physlayout-opencl"

    fp_contract: bool = False
    """Run `contract-fma` after `vectorize-texels`."""

    def passes(self) -> tuple[ModulePass, ...]:
        contract = (ContractFmaPass(),) if self.fp_contract else ()
        return (
            *self.buffer_passes(),
            VectorizeTexelsPass(),
            *contract,
            MemoizedDeadCodeElimination(),
        )


@dataclass(frozen=True)
class PhyslayoutMemrefPass(BufferPipeline):
    """Buffer-level IR to upstream memref/affine IR: `physlayout-buffers`, then
    `lower-layout`.

    Options:
        rewrite-loops (bool, true): `apply-layout` re-iterates loop nests in physical order.
        remarks (bool, false): `apply-layout` says which nests it re-iterates, and why not.
        affine-loops (bool, true): `lower-layout` raises `scf` loops around accesses to
            `affine` loops.
    """

    name = "physlayout-memref"

    affine_loops: bool = True
    """`lower-layout{affine-loops}`."""

    def passes(self) -> tuple[ModulePass, ...]:
        from physlayout.lowering.lower_layout import LowerLayoutPass  # only this pipeline's

        return (*self.buffer_passes(), LowerLayoutPass(self.affine_loops))


@dataclass(frozen=True)
class PhyslayoutAdrenoPass(DeclaredPipeline):
    """The Adreno texture pipeline, from an NCHW graph (functions over tensors, as
    frontends such as torch-mlir print them) to buffer-level kernels and a host function
    ready for `-t opencl`, from `normalize-graph` and `raise-layout-rewrites` to
    `vectorize-texels`.

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
        fuse (bool, true): `fuse-elementwise` groups each producer with its elementwise
            consumers (one kernel per group) and `merge-sibling-kernels` merges independent
            launches over one grid; false keeps one kernel per graph op.
        transposed-conv (bool, true): `fuse-transposed-conv` runs each transposed
            convolution over its contributing taps only (false: the zero-spread input and
            the stride-1 conv the frontend printed, for comparisons).
        lift-params (bool, false): `lift-transform-params` moves the work on parameters
            (weight layout transforms, batch-norm statistics) into `@main_prepare`, run once;
            `fold-affine-params` first folds each batch norm into one multiply-add by two
            prepared values.
        params (str, ""): the parameters of `fold-affine-params`, `sink-layout-rewrites` and
            `lift-transform-params` (comma-separated names; empty: every argument but the
            first).
        remarks (bool, false): `apply-layout` says which nests it re-iterates, and why not;
            `fuse-elementwise` says which fusions it refused, and why;
            `annotate-texture-scope` why a tensor stays in `global`; `fuse-transposed-conv`
            why a conv reading a `tensor.insert_slice` was left alone.
        verify-each (bool, true): verify the module after each pass that changed it
            (naming a pass that produced invalid IR); false leaves verification to the driver (`xdsl-opt` and
            `physlayout-opt` verify after the whole pipeline unless `--disable-verify`).
        schedule (bool, true): `apply-schedules` gives each kernel without a
            `#layout.schedule` the heuristic's register tile and work-group (false: one
            iteration per work-item, the runtime's work-groups).
        compute-units (int, 2): `apply-schedules`' heuristic plans for this many compute
            units (`physlayout run` and `compile` give the device's).
        max-work-group-size (int, 256): the largest work-group the heuristic plans
            (`physlayout run` and `compile` give the device's).
        registers (int, 128): the heuristic's register budget per work-item (32-bit values
            for a tile's accumulators).
        vector-items (bool, false): the heuristic plans for a driver that runs neighbouring
            work-items as SIMD lanes (a CPU device holding textures as buffers; `physlayout
            run` and `compile` give it there).
        schedules (str, ""): `apply-schedules`' given schedules by kernel signature
            (`SIG=TILE[/WORKGROUP][/uN];...`; `physlayout run` and `compile` give the tuning
            cache's for the device, docs/schedules.md), applied before the heuristic.
        fp-contract (bool, false): `contract-fma` after `apply-schedules` fuses each f32
            vector multiply whose only use is an add into one `math.fma` (`physlayout run`
            and `compile` give `--fp-contract`; not bit-exact with the uncontracted IR).
        vector-width (int, 4): `vectorize-texels{vector-width}`: the lanes of a block of
            output columns of a kernel reducing over plain buffers, and `apply-schedules`'
            SIMD register width (`physlayout run` and `compile` give the device's preferred
            float vector width on a CPU device).
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
    fuse: bool = True
    """Run `fuse-elementwise` (false: one kernel per graph op, for comparisons)."""
    transposed_conv: bool = True
    """Run `fuse-transposed-conv` (false: the frontend's zero-spread transposed convs)."""
    lift_params: bool = False
    """Run `lift-transform-params{params}` (parameter work into `@main_prepare`)."""
    params: str = ""
    """`lift-transform-params{params}`: the parameter arguments (empty: all but the first)."""
    remarks: bool = False
    """`apply-layout{remarks}`, `fuse-elementwise{remarks}`, `annotate-texture-scope{remarks}`."""
    verify_each: bool = True
    """Verify the module after each pass that changed it (false: only the driver verifies,
    at the end)."""
    schedule: bool = True
    """`apply-schedules{default}`: kernels without a schedule get the heuristic's."""
    compute_units: int = 2
    """`apply-schedules{compute-units}`."""
    max_work_group_size: int = 256
    """`apply-schedules{max-work-group-size}`."""
    registers: int = 128
    """`apply-schedules{registers}`."""
    vector_items: bool = False
    """`apply-schedules{vector-items}`."""
    schedules: str = ""
    """`apply-schedules{schedules}`: given schedules by kernel signature (the tuner's)."""
    fp_contract: bool = False
    """Run `contract-fma` after `apply-schedules`."""
    vector_width: int = 4
    """`vectorize-texels{vector-width}`, `apply-schedules{vector-width}`."""

    def verifies_each_pass(self) -> bool:
        return self.verify_each

    def passes(self) -> tuple[ModulePass, ...]:
        return (
            NormalizeGraphPass(),
            *((FoldAffineParamsPass(self.params),) if self.lift_params else ()),
            RaiseLayoutRewritesPass(),
            FoldLayoutRewritesPass(),  # compose a reshape chain (a channel shuffle) first
            ConvertLayoutPass(self.desired_layouts, self.allow_padding),
            *((FuseTransposedConvPass(self.remarks),) if self.transposed_conv else ()),
            FlowLayoutRewritesPass(),
            FoldLayoutRewritesPass(),
            SinkLayoutRewritesPass(self.params, prepared=self.lift_params),
            FoldLayoutRewritesPass(),
            *((LiftTransformParamsPass(self.params),) if self.lift_params else ()),
            AnnotateTextureScopePass(
                self.max_image_width, self.max_image_height, self.weights_in_global, self.remarks
            ),
            RealizeScopesPass(),
            *((FuseElementwisePass(self.remarks),) if self.fuse else ()),
            LegalizeLayoutPass(),
            *((MergeSiblingKernelsPass(),) if self.fuse else ()),
            *PhyslayoutOpenCLPass(rewrite_loops=True, remarks=self.remarks).buffer_passes(),
            VectorizeTexelsPass(self.vector_width),
            ApplySchedulesPass(
                schedules=self.schedules,
                default=self.schedule,
                compute_units=self.compute_units,
                max_work_group_size=self.max_work_group_size,
                registers=self.registers,
                vector_items=self.vector_items,
                vector_width=self.vector_width,
            ),
            *((ContractFmaPass(),) if self.fp_contract else ()),
            MemoizedDeadCodeElimination(),
        )



def ends_lowered_for_opencl(pipeline: PassPipeline) -> bool:
    """Whether `pipeline` ends with `physlayout-adreno` or `physlayout-opencl`: its output is
    ready for `-t opencl`, running `physlayout-opencl` on it again would change nothing
    (`runtime.opencl.lower_module`'s `lowered_already`)."""
    return bool(pipeline.passes) and isinstance(
        pipeline.passes[-1], PhyslayoutAdrenoPass | PhyslayoutOpenCLPass
    )


def lifts_params(pipeline: PassPipeline) -> bool:
    """Whether `pipeline` runs `lift-transform-params`, alone or in a declared pipeline (the
    work on parameters then runs once, in `@main_prepare`)."""
    for one in pipeline.passes:
        inner = one.passes() if isinstance(one, DeclaredPipeline) else (one,)
        if any(isinstance(p, LiftTransformParamsPass) for p in inner):
            return True
    return False
