"""The complete `layout` dialect (buffer, graph and scope ops with their attributes and
types). xDSL's `linalg` with the relayout ops is `linalg_dialect.LinalgWithRelayout` (a
module of its own: loading `layout` does not import xDSL's linalg)."""

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
from physlayout.dialects.layout_fused import FusedOp, YieldOp
from physlayout.dialects.layout_graph import CropOp, PadOp, TransformOp
from physlayout.dialects.layout_schedule import ScheduleAttr
from physlayout.dialects.layout_scopes import CopyOp

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
        FusedOp,
        YieldOp,
    ],
    [IndexMapAttr, MemoryScopeAttr, BufferType, PtrType, ScheduleAttr],
)
