"""Reference semantics: the numpy evaluator of buffer-level and graph-level IR."""
