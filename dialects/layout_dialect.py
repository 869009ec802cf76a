"""The dialects physlayout registers: the complete `layout` dialect (buffer, graph and scope
ops with their attributes and types) and xDSL's `linalg` with the relayout ops
`linalg.pack` / `linalg.unpack`."""

from xdsl.dialects.linalg import Linalg
from xdsl.ir import Dialect

from physlayout.dialects.layout import (
    AllocateOp,
    BufferType,
    DataOp,
    DeclBufferOp,
    IndexMapAttr,
    LoadOp,
    MemoryScopeAttr,
    PtrType,
    StoreOp,
)
from physlayout.dialects.layout_check import CheckOp
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp
from physlayout.dialects.layout_scopes import CopyOp
from physlayout.dialects.linalg_generic import GenericOp
from physlayout.dialects.linalg_named import (
    BatchMatmulOp,
    DepthwiseConv2DNchwChwOp,
    PoolingNchwMaxOp,
    PoolingNchwSumOp,
)
from physlayout.dialects.linalg_pack import PackOp, UnPackOp

Layout = Dialect(
    "layout",
    [
        AllocateOp,
        DeclBufferOp,
        DataOp,
        LoadOp,
        StoreOp,
        TransformOp,
        PadOp,
        CropOp,
        CopyOp,
        CheckOp,
    ],
    [IndexMapAttr, MemoryScopeAttr, BufferType, PtrType],
)

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
"""xDSL's `linalg` dialect plus the ops xDSL 0.74 lacks: `linalg.pack`, `linalg.unpack`
(`linalg_pack`) and the named ops torch-mlir emits (`linalg_named`), with a
`linalg.generic` that reads upstream's ``-> (T1, T2)`` result lists (`linalg_generic`)."""
