"""Command-line entry points: `physlayout-opt` and `physlayout`.

`physlayout-opt` is stock `xdsl-opt` (same flags, passes, targets: it is a thin `xDSLOptMain`
subclass) with MLIR-style error reporting: a parse, verify or pass diagnostic is printed as
`file:line:col: error: message` with the offending source line, without a Python traceback;
the exit status is 1 and no `-o` output file is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain


class LocatingParser(Parser):
    """A parser that remembers where each operation starts in the source text."""

    locations: dict[Operation, Span[str] | Span[bytes]]

    def __init__(self, *args: object, **kwargs: object):
        super().__init__(*args, **kwargs)  # pyright: ignore[reportArgumentType]
        self.locations = {}

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        self.locations[op] = start
        return op


class _KeptOpen(StringIO):
    """An output buffer that survives `close()` (the base driver closes its stream)."""

    def close(self) -> None:
        pass


class PhyslayoutOptMain(xDSLOptMain):
    """`xdsl-opt` with diagnostics printed MLIR-style and no output on failure."""

    locations: dict[Operation, Span[str] | Span[bytes]]
    _line_offset: int

    def __init__(self, description: str = "physlayout modular optimizer driver",
                 args: Sequence[str] | None = None):
        self.locations = {}
        self._line_offset = 0
        super().__init__(description, args)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            parser = LocatingParser(self.ctx, io.read(), self.get_input_name())
            module = parser.parse_module(not self.args.no_implicit_module)
            self.locations = parser.locations
            return module

        self.available_frontends["mlir"] = parse_mlir

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self._line_offset = start_offset
        module = super().parse_chunk(chunk, file_extension, start_offset)
        if module is not None and not self.args.disable_verify:
            self._verify_with_locations(module)
        return module

    def _verify_with_locations(self, module: ModuleOp) -> None:
        """Verify innermost operations first and report the first failure at its source."""
        for op in _post_order(module):
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as err:
                raise _LocatedError(self._locate(op, str(err))) from None
        module.verify()

    def _locate(self, op: Operation, message: str) -> str:
        message = message.removeprefix("Operation does not verify: ")
        if not message.startswith(f"'{op.name}'"):
            message = f"'{op.name}' op {message}"
        span = self.locations.get(op)
        if span is None:
            return f"error: {message}"
        span = dataclasses.replace(span, line_offset=self._line_offset)
        location, _, context = span.print_with_context().partition("\n")
        return f"{location}: error: {message}\n{context.rstrip()}"

    def prepare_output(self) -> IO[str]:
        return self._stream

    def run(self) -> None:
        expects_diagnostics = self.args.verify_diagnostics or self.args.parsing_diagnostics
        try:
            super().run()
        except _LocatedError as err:
            if expects_diagnostics:
                print(err.message)
                return self._deliver()
            print(err.message, file=sys.stderr)
            sys.exit(1)
        except (ParseError, DiagnosticException) as err:
            print(_diagnostic_text(err), file=sys.stderr)
            sys.exit(1)
        self._deliver()

    def _deliver(self) -> None:
        """Write the buffered output to its destination (after a successful run)."""
        stream = self._stream
        if self.args.output_file is None:
            sys.stdout.write(stream.getvalue())
        else:
            with open(self.args.output_file, "w") as out:
                out.write(stream.getvalue())

    @property
    def _stream(self) -> StringIO:
        return self.__dict__.setdefault("_output", _KeptOpen())


def _post_order(op: Operation) -> list[Operation]:
    ops: list[Operation] = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                ops.extend(_post_order(child))
    ops.append(op)
    return ops


@dataclasses.dataclass
class _LocatedError(Exception):
    message: str


def _diagnostic_text(err: Exception) -> str:
    """A diagnostic's message without xDSL's appended IR dump for parse errors."""
    text = str(err)
    if isinstance(err, ParseError):
        return _mlir_style(text)
    notes = getattr(err, "__notes__", None)
    if notes:
        text += "\n" + "\n".join(str(n) for n in notes)
    return f"error: {text}"


def _mlir_style(text: str) -> str:
    """`loc\\nline\\ncaret\\nmsg` (xDSL) -> `loc: error: msg\\nline\\ncaret`."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) < 4:
        return f"error: {text}"
    location, source, caret = lines[0], lines[1], lines[2]
    message = "\n".join(line.strip() for line in lines[3:])
    return f"{location}: error: {message}\n{source}\n{caret}"


def opt_main(args: Sequence[str] | None = None) -> None:
    """Entry point of `physlayout-opt`."""
    PhyslayoutOptMain(args=args).run()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of `physlayout` (sub-commands: `demo`)."""
    parser = argparse.ArgumentParser(prog="physlayout", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run the embedded example pipeline and print each stage")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from physlayout.examples_demo import run_demo

        run_demo()
