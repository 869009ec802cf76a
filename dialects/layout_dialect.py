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
from physlayout.dialects.layout_fused import FusedOp, YieldOp
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp
from physlayout.dialects.layout_scopes import CopyOp
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
        FusedOp,
        YieldOp,
    ],
    [IndexMapAttr, MemoryScopeAttr, BufferType, PtrType],
)

LinalgWithRelayout = Dialect("linalg", [*Linalg.operations, PackOp, UnPackOp], [*Linalg.attributes])
"""xDSL's `linalg` dialect plus `linalg.pack` and `linalg.unpack` (xDSL 0.74 lacks them)."""
