"""The pictures of the README's tutorial, committed under `docs/` (`make docs` writes them;
`test/python/test_viz.py` checks that the committed files are what this module draws).

Each picture is one `physlayout viz` command line (without `-o`), so the README can show
how to draw it and the test can run that exact command.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

PICTURES: dict[str, str] = {
    "rfc0039_split_padded.svg": (
        "physlayout viz --shape 14 --map '(i) -> (i floordiv 4, i mod 4)' --pad-value 0.0"
    ),
    "rfc0039_transpose.svg": "physlayout viz --shape 3,5 --map '(i, j) -> (j, i)'",
    "rfc0039_nchw4c_separator.svg": (
        "physlayout viz --shape 1,2,3,8 --map '(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)'"
    ),
    "nhwc_nchw4c_texture.svg": (
        "physlayout viz --shape 1,2,3,8 "
        "--map '(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)' --scope global.texture"
    ),
    "nhwc_nchw4c_texture_3ch.svg": (
        "physlayout viz docs/tutorial/relu_texture_3ch.mlir --value out"
    ),
    "relu_texture_out.svg": "physlayout viz examples/relu_texture.mlir --value out",
    "graph_conv_bias_conv.dot": (
        "physlayout viz examples/graph_conv_bias_conv.mlir --function conv_bias_conv "
        "--pipeline flow-layout-rewrites,fold-layout-rewrites"
    ),
    "rfc_conv_relu_conv.dot": "physlayout viz examples/rfc_conv_relu_conv.mlir",
}
"""File name under docs/ -> the `physlayout viz` command that draws it (to stdout)."""


def draw(command: str) -> str:
    """The text `command` (a `physlayout viz` line from `PICTURES`) writes to stdout, run
    in this process from the repository root."""
    import contextlib
    import io

    from physlayout.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(shlex.split(command)[1:])
        except SystemExit as exit_:
            if exit_.code:
                raise RuntimeError(f"'{command}' failed (exit {exit_.code})") from None
    return out.getvalue()


def write_all(folder: Path) -> list[Path]:
    """Draw every picture into `folder`; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, command in PICTURES.items():
        path = folder / name
        path.write_text(draw(command))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "docs")):
        print(f"wrote {path}")
