"""xDSL's `linalg` dialect with the relayout ops `linalg.pack` / `linalg.unpack`, which
physlayout registers in place of xDSL's own `linalg` (see `physlayout.universe`)."""

from xdsl.dialects.linalg import Linalg
from xdsl.ir import Dialect

from physlayout.dialects.linalg_pack import PackOp, UnPackOp

LinalgWithRelayout = Dialect("linalg", [*Linalg.operations, PackOp, UnPackOp], [*Linalg.attributes])
"""xDSL's `linalg` dialect plus `linalg.pack` and `linalg.unpack` (xDSL 0.74 lacks them)."""
