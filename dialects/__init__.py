"""The IR physlayout adds to xDSL: the `layout` dialect (buffer-level, graph-level and scope
ops, `!layout.buffer` / `!layout.ptr` types), `linalg.pack` / `linalg.unpack`, the meaning
of a buffer's layout in terms of the IndexMap engine, and the graph ops' canonicalizations."""

from physlayout.lexer import install as _install_linear_lexer

_install_linear_lexer()
