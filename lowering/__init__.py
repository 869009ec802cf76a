"""Conversions out of physlayout's IR: `lower-layout` (buffer level -> upstream `memref` and
`affine`), `lower-layout-rewrites` / `raise-layout-rewrites` (graph-level rewrites <-> upstream
`linalg`/`tensor`), `-t opencl` (buffer-level kernels -> OpenCL C) and runners that execute
lowered IR with upstream `mlir-opt` / `mlir-runner`."""
