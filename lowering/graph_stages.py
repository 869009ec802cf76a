"""The graph-level stages of `physlayout-adreno`: the passes that choose layouts and memory
scopes of tensors before its later stages build kernels (what `physlayout viz` draws as
"after" and `physlayout demo` prints as the graph stage). A module of its own, without
imports, so that the command line can name them without loading the pipelines."""

GRAPH_STAGES = (
    "convert-layout",
    "flow-layout-rewrites",
    "fold-layout-rewrites",
    "annotate-texture-scope",
    "realize-scopes",
)

GRAPH_STAGES_PIPELINE = ",".join(GRAPH_STAGES)
"""`GRAPH_STAGES` as a pass pipeline."""
