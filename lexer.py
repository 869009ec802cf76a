"""Linear-time lexing of MLIR string literals (a fix of xDSL 0.74's lexer).

xDSL's `MLIRLexer` matches a string literal with `"(?:[^"\\\\\\n\\v\\f]+|\\\\(...))*"`: a run
of plain characters can be split between iterations of the outer `*` in exponentially many
ways, and on a literal that never closes on its line (`scope = "loca> -> ...`) Python's
backtracking regex engine tries every split before it fails: the time doubles with each
character up to the end of the line (a 30-character rest of line took minutes).

`install()` replaces that pattern with one that accepts exactly the same literals (the same
characters, escapes and end) but takes one plain character per iteration, with disjoint
alternatives under a possessive `*+`, so a match or a failure is linear in the line. A
literal that does not lex is reported where it stops: `string literal is not closed on its
line` at its opening quote, or `invalid escape sequence` at the backslash (xDSL says "End of
file reached before closing string literal." for both). Stock `xdsl-opt` gets the fix too: it
imports `physlayout.universe`, which installs it, before it reads any input.
"""

import re

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken

_BODY = r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+'
STRING_LITERAL = re.compile(_BODY + '"')
"""A double-quoted literal: characters other than `"`, `\\`, newline, vertical tab and form
feed, or the escapes `\\"`, `\\n`, `\\t`, `\\\\` and `\\XX` (two hex digits)."""
_LITERAL_START = re.compile(_BODY)

_stock_lex_string_literal = MLIRLexer._lex_string_literal  # pyright: ignore[reportPrivateUsage]


def _lex_string_literal(self: MLIRLexer, start_pos: Position) -> MLIRToken:
    """xDSL's string literal lexing, with the failure located and named."""
    try:
        return _stock_lex_string_literal(self, start_pos)
    except ParseError:
        pass
    content = self.input.content
    found = _LITERAL_START.match(content, start_pos)
    stop = found.end() if found is not None else start_pos
    if stop < len(content) and content[stop] == "\\":
        raise ParseError(
            Span(stop, min(stop + 2, len(content)), self.input),
            'invalid escape sequence in string literal (the escapes are \\", \\n, \\t, \\\\ '
            "and two hex digits)",
        )
    raise ParseError(
        Span(start_pos, start_pos + 1, self.input),
        "string literal is not closed on its line (no closing '\"' before the end of the line)",
    )


def install() -> None:
    """Make xDSL's MLIR lexer match string literals in linear time and name why a literal
    does not lex (idempotent)."""
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL  # pyright: ignore[reportPrivateUsage]
    MLIRLexer._lex_string_literal = _lex_string_literal  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
