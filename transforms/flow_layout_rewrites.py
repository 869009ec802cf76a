"""flow-layout-rewrites: move a `layout.transform` from the result of a `linalg.generic` to
its operands (backward flow, choice F1 of the Relax layout-transformation design), reading
the access patterns from the generic's indexing maps (the design's "block signatures").

What it rewrites: ``%r = layout.transform %g {M, pad_value = v}`` where ``%g`` is the only
use of the single result of a `linalg.generic` whose output indexing map is a projected
permutation of its parallel loops (elementwise, broadcast and reduction generics). The
generic is rebuilt over the transformed result:

- new loops: one parallel loop per dimension of the transformed result (extents
  ``M.map_shape``), then the generic's other loops (reductions) in their order;
- every old output loop becomes the matching output of ``M``'s inverse over the new loops;
- each tensor input ``X`` with indexing map ``I`` gets an operand transform ``T_X`` (below)
  and the new indexing map ``T_X . I`` (with the substitution above), simplified on the new
  iteration box; the output map is the identity on the transformed result;
- the init tensor is ``M`` of the old one (with ``v``), or a fresh `tensor.empty` when the
  body does not read it.

The operand transform, from the access pattern (the design's "mapping the axes"): an
operand dimension indexed by the bare output loop of result dimension ``r`` is *tied* to
``r``. Each output ``e`` of ``M`` over tied dimensions only becomes ``e`` over the operand
dimensions; an output over none of them is a broadcast: a unit dimension (``0``), dropped
when it comes before or after every other output, or when the result dimensions it reads
are read by the operand through its own compound indices (a window: a pool's or depthwise
conv's ``x[n, c, oh * 2 + kh, ...]`` gets ``(n, c, a2, a3) -> (n, c floordiv 4, a2, a3, c
mod 4)``, its spatial dimensions standing where the result's were); an output that mixes tied and untied
dimensions cannot be mapped, and the generic is left alone. Untied operand dimensions
(reduction axes, constant or compound indices; of extent 1 only when a bare loop indexes
them) stay as they are, placed before the first output of the next tied dimension, else
after the first output of the previous one. With ``M = (n, c, h, w) -> (n, c floordiv 4, h,
w, c mod 4)``, ``bias[c, 0, 0]`` gets ``(c, a1, a2) -> (c floordiv 4, 0, 0, c mod 4)`` (the
seed's ``(i // 4, 0, 0, i % 4)``); the sum over ``h, w`` of ``x[n, c, h, w]`` into ``(n, c)
-> (n, c floordiv 4, c mod 4)`` gives ``x`` the map ``(n, c, d2, d3) -> (n, c floordiv 4,
d2, d3, c mod 4)``; the sum over ``h`` into NCW transformed to NWC makes ``x`` NHWC. An
operand transform that is the identity is not materialized (the layout change then lives
in the indexing map, as for a transposed matmul). The Python API (`flow_layout_rewrites`)
accepts a callback that supplies the operand transforms instead (the design's fallback for
ops the analysis cannot handle).

Soundness: for every point ``M(i)`` of the transformed result the new generic reads exactly
the operand elements the old one read at ``i`` (by construction: ``T_X(I(M^-1(M(i))))`` is
where ``T_X`` put ``X[I(i)]``), so it computes ``M(result)`` there. When ``M`` pads, the
padding points must hold ``v``: the flow is done only when it is proven that (1) on every
padding point (and every reduction point) each tensor input is read inside its transformed
box, and on the padding of its transform, which is filled with ``v`` (isl), and (2) the body
maps those pad values (and ``v`` for the accumulator) to exactly ``v`` (bit for bit,
evaluated with the reference semantics). An input whose padding is not proven read
is unknown, so a body that uses it fails (2). ``add(0, 0) == 0`` flows; ``exp(0) = 1`` and
``add(1, 1) = 2`` with ``v = 1`` do not. An input transform that pads gets ``v`` when its
element type is the result's, else zero; the proof uses the value it got. A scalar input is
known only when it is an `arith.constant`.

Refused (left alone): generics marked with the unit attribute ``layout.frozen`` (frozen
layouts stop the flow), generics with several results, a result with other uses,
`linalg.index` in the body of a generic whose transform pads (a padding point has no old
loop to read; without padding each `linalg.index` becomes its old loop's expression over
the new loops, the exact inverse of ``M``: a nearest upsample flows), output maps that are not projected
permutations of the parallel loops, dynamic shapes, maps that cannot be mapped or inverted,
padded transforms whose padding cannot be proven, and rebuilt generics that would not
verify. A callback that returns a bad operand transform is an error
(`PassFailedException`).

The same pass also moves transforms through `layout.pad` and `tensor.insert_slice`
(`flow_through_windows`: spatial pads and channel concatenations of real graphs).

Guarantees: results are unchanged; each flow moves a transform strictly closer to the
function's inputs, so the pass terminates. Run `fold-layout-rewrites` afterwards to fold the
moved transforms into their neighbours and into constants.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from physlayout.dialects.layout_graph import TransformOp
from physlayout.transforms.flow_plan import (
    FROZEN,
    OperandTransformCallback,
    derive_operand_transform,
    flow_refusal,
    loop_extents,
    loop_names,
    rebuild_over_transformed_result,
)
from physlayout.transforms.flow_through_windows import (
    CropThroughBlockedForm,
    FlowTransformThroughCrop,
    FlowTransformThroughInsertSlice,
    FlowTransformThroughPad,
    MergeEqualTransforms,
    ReadGathersThroughBlockedForm,
)
from physlayout.transforms.pass_options import PhyslayoutPass
from physlayout.transforms.rooted_walker import RootedWalker
from physlayout.transforms.verify_buffers import refuse_invalid_buffers

__all__ = [
    "FROZEN",
    "FlowLayoutRewritesPass",
    "FlowTransformThroughGeneric",
    "OperandTransformCallback",
    "derive_operand_transform",
    "flow_layout_rewrites",
    "loop_extents",
    "loop_names",
]
"""The analysis names other modules import from here are those of `flow_plan`."""


@dataclass
class FlowTransformThroughGeneric(RewritePattern):
    """``transform(generic(...))`` -> ``generic(transform(...), ...)`` (backward flow; the
    new generic and operand transforms come from `flow_plan`)."""

    callback: OperandTransformCallback | None = None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransformOp, rewriter: PatternRewriter) -> None:
        generic = op.input.owner
        if not isinstance(generic, GenericOp) or flow_refusal(generic) is not None:
            return
        created = rebuild_over_transformed_result(generic, op, self.callback)
        if created is None:
            return
        rewriter.replace(op, created)
        rewriter.erase(generic)


# The pass ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlowLayoutRewritesPass(PhyslayoutPass):
    """Move layout transforms from generic results to their operands (module docstring)."""

    name = "flow-layout-rewrites"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        refuse_invalid_buffers(self.name, op)
        flow_layout_rewrites(op)


def flow_layout_rewrites(
    module: ModuleOp, callback: OperandTransformCallback | None = None
) -> None:
    """Flow every layout transform on a generic result backward, as far as it goes.

    `callback(generic, transform)`, when given, is asked first for each generic the
    transform can flow through; it returns one IndexMap (or None to keep the operand) per
    input, or None to let the pass derive the operand transforms itself. The pass still
    proves everything it relies on (injectivity of the supplied maps, the padding rules).
    """
    RootedWalker(
        GreedyRewritePatternApplier(
            [
                FlowTransformThroughGeneric(callback),
                FlowTransformThroughPad(),
                FlowTransformThroughInsertSlice(),
                FlowTransformThroughCrop(),
                CropThroughBlockedForm(),
                MergeEqualTransforms(),
                ReadGathersThroughBlockedForm(),
            ]
        )
    ).rewrite_module(module)
