"""xDSL's `linalg` dialect as physlayout registers it in place of xDSL's own (see
`physlayout.universe`): plus the ops xDSL 0.74 lacks -- `linalg.pack` / `linalg.unpack`
(`linalg_pack`) and the named ops torch-mlir emits (`linalg_named`) -- and with two of xDSL's
ops replaced by subclasses that fix them: `linalg.generic` reads upstream's ``-> (T1, T2)``
result lists (`linalg_generic`), `linalg.pooling_nchw_max` has upstream's body."""

from xdsl.dialects.linalg import Linalg
from xdsl.ir import Dialect

from physlayout.dialects.linalg_generic import GenericOp
from physlayout.dialects.linalg_named import (
    BatchMatmulOp,
    DepthwiseConv2DNchwChwOp,
    PoolingNchwMaxOp,
    PoolingNchwSumOp,
)
from physlayout.dialects.linalg_pack import PackOp, UnPackOp

REPLACED = {GenericOp.name, PoolingNchwMaxOp.name}
"""xDSL linalg ops physlayout replaces by a subclass that fixes them."""

LinalgWithRelayout = Dialect(
    "linalg",
    [
        *(op for op in Linalg.operations if op.name not in REPLACED),
        GenericOp,
        PoolingNchwMaxOp,
        PackOp,
        UnPackOp,
        DepthwiseConv2DNchwChwOp,
        PoolingNchwSumOp,
        BatchMatmulOp,
    ],
    [*Linalg.attributes],
)
"""physlayout's `linalg` dialect (module docstring)."""
