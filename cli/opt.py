"""`physlayout-opt`: stock `xdsl-opt` with MLIR-style error reporting.

`physlayout-opt` is stock `xdsl-opt` (same flags, passes, targets: it is a thin `xDSLOptMain`
subclass) with MLIR-style error reporting: a parse, verify or pass diagnostic is printed as
`file:line:col: error: message` with the offending source line, without a Python traceback;
the exit status is 1 and no `-o` output file is written (output goes to a temporary file that
replaces FILE only after success; an input file is never overwritten).

Exceptions that are not diagnostics (xDSL's parser raising NotImplementedError on valid MLIR
it cannot represent, a RecursionError on very deep nests, a bug) become diagnostics too: at the
parser's position while parsing, naming the pass while running passes. Both commands run on a
thread with a large stack and recursion limit, so nests thousands of levels deep still work.
Warnings and remarks that passes emit (`transforms.diagnostics`) are located at the op's
source line the same way.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from io import StringIO
from typing import IO, TYPE_CHECKING, ClassVar, cast

from xdsl.dialects.builtin import (
    ModuleOp,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
)
from xdsl.utils.lexer import Span
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from physlayout.cli.common import output_closed, run_with_deep_stack, versions_text
from physlayout.located import (
    LocatedPassError,
    LocatedVerifyError,
    LocatingParser,
    attach_locations,
    located_diagnostic,
    mlir_style,
    parse_module_reporting,
    report_text,
    unexpected_error_text,
    verified_its_last_pass,
    verify_with_locations,
)
from physlayout.transforms.diagnostics import source_locator
from physlayout.transforms.pass_options import did_you_mean, pipeline_passes
from physlayout.verification import fast_verification

if TYPE_CHECKING:
    from physlayout.lowering.pipelines import PassTime



class _KeptOpen(StringIO):
    """An output buffer that survives `close()` (the base driver closes its stream)."""

    def close(self) -> None:
        pass


class PhyslayoutOptMain(xDSLOptMain):
    """`xdsl-opt` with diagnostics printed MLIR-style and no output on failure."""

    version_format: ClassVar[str] = versions_text()

    locations: dict[Operation, Span[str] | Span[bytes]]
    line_offset: int
    """Line of the current `--split-input-file` chunk in the input file."""
    output: StringIO
    """Everything the driver writes; delivered to stdout or `-o` only after success."""
    verified: ModuleOp | None
    """The module `parse_chunk` verified last (the pipeline does not verify it again)."""

    def __init__(self, description: str = "physlayout modular optimizer driver",
                 args: Sequence[str] | None = None):
        self.locations = {}
        self.verified = None
        self.line_offset = 0
        self.output = _KeptOpen()
        self.pass_times: list[PassTime] = []
        super().__init__(description, args)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            parser = LocatingParser(self.ctx, io.read(), self.get_input_name())
            module = parse_module_reporting(parser, not self.args.no_implicit_module)
            self.locations = parser.locations
            return module

        self.available_frontends["mlir"] = parse_mlir

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        self.line_offset = start_offset
        try:
            module = super().parse_chunk(chunk, file_extension, start_offset)
        except ParseError as err:
            if not self.args.parsing_diagnostics:
                raise
            # Printed MLIR-style (`loc: error: message`, source line, caret), as without
            # --parsing-diagnostics, instead of xDSL's raw span dump.
            err.span = dataclasses.replace(err.span, line_offset=start_offset)
            print(mlir_style(str(err)))
            return None
        attach_locations(self.locations, start_offset)
        if module is not None and not self.args.disable_verify:
            verify_with_locations(module, self.locations, start_offset)
            self.verified = module
        return module

    def setup_pipeline(self) -> None:
        """xDSL's pipeline, whose verification before the first pass is skipped for a module
        that `parse_chunk` has just verified (everything else the callback does is kept).
        Its passes are read by `pipeline_passes`: bare flags mean true, misspelt names get a
        suggestion."""
        requested = self.args.passes
        self.args.passes = ""
        try:
            super().setup_pipeline()
        finally:
            self.args.passes = requested
        passes = pipeline_passes(self.available_passes, requested)
        stock = self.pipeline.callback
        if stock is None:
            self.pipeline = PassPipeline(passes)
            return

        def callback(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            if (previous is None and module is not self.verified) or (
                previous is not None and not verified_its_last_pass(previous)
            ):
                # the stock callback's verification
                with fast_verification():
                    stock(previous, module, following)
            else:
                disabled = self.args.disable_verify
                self.args.disable_verify = True
                try:
                    stock(previous, module, following)
                finally:
                    self.args.disable_verify = disabled
            self._print_pass_times()

        self.pipeline = PassPipeline(passes, callback)

    def _print_pass_times(self) -> None:
        """Under `--time-passes`, after the stock line of a declared pipeline (`Pass NAME
        took S seconds`), one indented line per pass it ran, with the verification after it
        (`recorded_pass_times`)."""
        for timed in self.pass_times:
            if timed.verification is not None:
                check = f"verified in {timed.verification} seconds"
            else:
                check = "not verified" if timed.changed else "changed nothing: not verified"
            print(f"  Pass {timed.name} took {timed.seconds} seconds ({check})")
        self.pass_times.clear()

    def _run_timed(self) -> None:
        """xDSL's run; under `--time-passes` the passes of declared pipelines are timed
        too (`_print_pass_times`)."""
        if not self.args.time_passes:
            super().run()
            return
        from physlayout.lowering.pipelines import recorded_pass_times

        with recorded_pass_times() as self.pass_times:
            super().run()

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            with source_locator(self._source_of):
                try:
                    super().apply_passes(prog)
                except DiagnosticException as err:
                    located = located_diagnostic(err)
                    if located is None:
                        raise
                    raise located from None
        except (ParseError, DiagnosticException):
            raise
        except Exception as err:  # any other exception becomes a diagnostic
            names = ",".join(p.name for p in self.pipeline.passes)
            raise DiagnosticException(
                f"{names or 'pass pipeline'}: {unexpected_error_text(err)}"
            ) from None

    def check_target_options(self) -> None:
        """Build the `-t` target once, so a bad target option is refused before any input
        is read (xDSL would raise a bare ValueError only after the passes have run)."""
        spec = parse_spec(self.args.target)
        factory = self.available_targets.get(spec.name)
        if factory is not None and not inspect.signature(factory).parameters:
            target_class = cast(Callable[[], type[Target]], factory)()
            target_class.from_spec(spec)

    def _source_of(self, op: Operation) -> tuple[str, str] | None:
        """`file:line:col` of a parsed op and its source line (for pass warnings)."""
        span = self.locations.get(op)
        if span is None:
            return None
        span = dataclasses.replace(span, line_offset=self.line_offset)
        location, _, context = span.print_with_context().partition("\n")
        return location, context.rstrip()

    def prepare_output(self) -> IO[str]:
        return self.output

    def run(self) -> None:
        sys.exit(run_with_deep_stack(self._run_reporting))

    def _run_reporting(self) -> int:
        if _same_file(self.args.output_file, self.args.input_file):
            print(
                f"error: refusing to overwrite the input file {self.args.input_file}",
                file=sys.stderr,
            )
            return 1
        try:
            self._run_timed()
        except (LocatedVerifyError, LocatedPassError) as err:
            print(err, file=sys.stderr)
            return 1
        except (ParseError, DiagnosticException) as err:
            print(report_text(err), file=sys.stderr)
            return 1
        except Exception as err:  # reported, never a traceback
            print(f"error: {unexpected_error_text(err)}", file=sys.stderr)
            return 1
        try:
            self._deliver()
        except BrokenPipeError:
            return output_closed()
        except OSError as err:
            target = self.args.output_file or "<stdout>"
            print(f"error: could not write '{target}': {err.strerror or err}", file=sys.stderr)
            return 1
        return 0

    def _deliver(self) -> None:
        """Write the buffered output to its destination (after a successful run)."""
        if self.args.output_file is None:
            sys.stdout.write(self.output.getvalue())
            return
        write_atomically(self.args.output_file, self.output.getvalue().encode())


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory and a rename,
    so a failure never leaves a partial or truncated file. A path that exists and is not a
    regular file (`/dev/null`, a pipe, a terminal) is written directly: renaming over it
    would replace the device."""
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "wb") as out:
            out.write(data)
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=".physlayout-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _same_file(output: str | None, source: str | None) -> bool:
    if output is None or source is None or not os.path.exists(output):
        return False
    return os.path.exists(source) and os.path.samefile(output, source)


def opt_main(args: Sequence[str] | None = None) -> None:
    """Entry point of `physlayout-opt`."""
    try:
        driver = PhyslayoutOptMain(args=args)
        driver.check_target_options()
    except ArgSpecParseError as err:  # `pass-pipeline:1:C: error: ...`, the spec and a caret
        print(mlir_style(str(err).partition("\n")[2]), file=sys.stderr)
        sys.exit(1)
    except Exception as err:  # a bad -p pipeline or -t option: reported, never a traceback
        print(f"error: {option_error_text(err)}", file=sys.stderr)
        sys.exit(1)
    driver.run()


_UNKNOWN_OPTIONS = re.compile(
    r"Provided arguments \[(.*)\] not found in expected arguments \[(.*)\]"
)


_BAD_VALUE = re.compile(r"Incompatible types: given \((.*?),?\), expected <class '(\w+)'>")


def option_error_text(err: Exception) -> str:
    """The message for a pass pipeline or target spec that xDSL refuses, with option names
    spelled as on the command line (`rewrite-loops`, not `rewrite_loops`)."""
    text = " ".join(line.strip() for line in str(err).strip().splitlines() if line.strip())
    if found := _UNKNOWN_OPTIONS.search(text):
        given = found.group(1).replace('"', "").replace("_", "-")
        expected = found.group(2).replace('"', "").replace("_", "-")
        hint = did_you_mean(given, expected.split(", "))
        text = f"unknown option {given}{hint}; the options are {expected or 'none'}"
    elif found := _BAD_VALUE.search(text):
        kinds = {"bool": "true or false", "int": "an integer", "str": "a string"}
        kind = kinds.get(found.group(2), found.group(2))
        text = f"option value {found.group(1)} is not {kind}"
    return f"invalid pass pipeline or target option: {text}"
