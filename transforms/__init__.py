"""Passes within physlayout's IR (one pass per module, each a `ModulePass` over small named
patterns) and the analyses they share: buffer aliases, loop dependences, dead code, loop-nest
building and MLIR-style warnings/remarks."""
