"""Command-line entry points: `physlayout-opt` and `physlayout`.

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

import argparse
import bisect
import dataclasses
import inspect
import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from io import StringIO
from typing import IO, TYPE_CHECKING, ClassVar, cast

from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass, PassPipeline
from xdsl.traits import NoTerminator
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Span
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from physlayout.transforms.diagnostics import OpPassFailure, diagnostic_text, source_locator
from physlayout.transforms.pass_options import did_you_mean, pipeline_passes
from physlayout.verification import fast_verification

if TYPE_CHECKING:
    from physlayout.lowering.pipelines import PassTime

VERSION_PACKAGES = ("xdsl", "islpy", "numpy", "pyopencl")
"""The dependencies `--version` reports beside physlayout."""


def versions_text() -> str:
    """physlayout's version and its key dependencies', as `--version` prints them."""
    from importlib.metadata import PackageNotFoundError, version

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    names = {"xdsl": "xDSL"}
    found = ", ".join(f"{names.get(p, p)} {of(p)}" for p in VERSION_PACKAGES)
    return f"physlayout {of('physlayout')} ({found})"


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
            print(_mlir_style(str(err)))
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
                previous is not None and not _verified_its_last_pass(previous)
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


def unexpected_error_text(err: BaseException) -> str:
    """The message reported for an exception that is not a diagnostic (a RecursionError, a
    MemoryError, xDSL's NotImplementedError, a bug), so that it never ends in a traceback."""
    if isinstance(err, RecursionError):
        return "the input is nested too deeply to process (recursion limit reached)"
    if isinstance(err, MemoryError):
        return "out of memory"
    if isinstance(err, NotImplementedError):
        return f"not supported (by xDSL's IR): {err}"
    if isinstance(err, OSError) and err.filename is not None:
        return f"could not open '{err.filename}': {err.strerror or err}"
    return f"unexpected {type(err).__name__}: {err}"


def parse_module_reporting(parser: Parser, implicit_module: bool = True) -> ModuleOp:
    """`parser.parse_module`, with any exception that is not a diagnostic (e.g. xDSL's
    NotImplementedError for a semi-affine map) raised as a ParseError at the parser's current
    position."""
    try:
        return parser.parse_module(implicit_module)
    except (ParseError, DiagnosticException):
        raise
    except Exception as err:  # becomes a located diagnostic
        span = parser._current_token.span  # pyright: ignore[reportPrivateUsage]
        raise ParseError(span, unexpected_error_text(err)) from None


STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 200_000


def output_closed() -> int:
    """The reader of standard output went away (``physlayout ... | head -1``): stop quietly,
    as a Unix filter does (standard output is pointed at the null device, so the flush at
    exit cannot fail again); exit status 0."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def reported(body: Callable[[], int]) -> int:
    """Run a sub-command's `body`; its errors become MLIR-style diagnostics on stderr (never a
    traceback) and exit status 1, a closed standard output (`| head`) a quiet 0."""
    try:
        return body()
    except LocatedVerifyError as err:
        print(err, file=sys.stderr)
    except ParseError as err:
        print(report_text(err), file=sys.stderr)
    except DiagnosticException as err:
        print(located_diagnostic(err) or report_text(err), file=sys.stderr)
    except BrokenPipeError:
        return output_closed()
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
    except Exception as err:  # reported, never a traceback
        print(f"error: {unexpected_error_text(err)}", file=sys.stderr)
    return 1


def run_with_deep_stack(body: Callable[[], int]) -> int:
    """Run `body` on a thread with a large stack and recursion limit (deep loop nests recurse
    in xDSL's parser, printer and walkers); its exit status."""
    status: list[int] = [1]

    def target() -> None:
        status[0] = body()

    old_limit = sys.getrecursionlimit()
    old_size = threading.stack_size(STACK_BYTES)
    sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        thread = threading.Thread(target=target, name="physlayout")
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    return status[0]


def _post_order(op: Operation) -> list[Operation]:
    ops: list[Operation] = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                ops.extend(_post_order(child))
    ops.append(op)
    return ops


def attach_locations(
    locations: dict[Operation, Span[str] | Span[bytes]], line_offset: int = 0
) -> None:
    """Give every parsed op without a location its source position (`loc("file":L:C)`, as
    `mlir-opt` does), so passes can point at it in remarks; printed only with
    `--print-debuginfo`. Linear in the input: the newlines of each input are found once
    (xDSL's `Span.get_location` counts them from the start of the input for every span)."""
    newlines: dict[int, list[int]] = {}
    for op, span in locations.items():
        if not isinstance(op.location, UnknownLoc):
            continue
        source = span.input
        found = newlines.get(id(source))
        if found is None:
            newline = re.escape(source.newline)  # pyright: ignore[reportArgumentType, reportCallIssue]
            found = [m.start() for m in re.finditer(newline, source.content)]  # pyright: ignore[reportArgumentType, reportCallIssue]
            newlines[id(source)] = found
        before = bisect.bisect_left(found, span.start)
        line_start = found[before - 1] + 1 if before else 0
        op.location = FileLineColLoc(
            StringAttr(source.name),
            IntAttr(before + 1 + line_offset),
            IntAttr(span.start - line_start + 1),
        )


class LocatedVerifyError(VerifyException):
    """A verifier failure reported MLIR-style at the operation's source location."""


class LocatedPassError(DiagnosticException):
    """A pass failure reported MLIR-style at the source location of the op it concerns."""


def located_diagnostic(err: DiagnosticException) -> LocatedPassError | None:
    """A pass failure reported at the source lines of the ops it concerns (see
    `transforms.diagnostics`), without xDSL's dump of the whole module: each problem of an
    `InvalidBuffersError`, or the op a failing rewrite pattern was applied to. None when the
    failure concerns no op."""
    # Imported here: an InvalidBuffersError exists only once a pass has loaded the module,
    # and `physlayout-opt` without such a pass should not pay for importing it.
    from physlayout.transforms.verify_buffers import InvalidBuffersError

    if isinstance(err, InvalidBuffersError):
        lines = [f"error: {line}" for line in err.header]
        lines += [diagnostic_text("error", p.op, p.message) for p in err.problems]
        return LocatedPassError("\n".join(lines))
    op = err.op if isinstance(err, OpPassFailure) else failing_op(err)
    if op is None:
        return None
    return LocatedPassError(diagnostic_text("error", op, str(err)))


def failing_op(err: BaseException) -> Operation | None:
    """The op a rewrite pattern was applied to when it raised `err` (xDSL's walker reports
    such a failure through `Operation.emit_error`, which stays on the traceback), or None."""
    tb = err.__traceback__
    found: Operation | None = None
    while tb is not None:
        frame = tb.tb_frame
        target = frame.f_locals.get("self")
        if frame.f_code.co_name == "emit_error" and isinstance(target, Operation):
            found = target
        tb = tb.tb_next
    return found


def _verified_its_last_pass(done: ModulePass) -> bool:
    """Whether `done` is a declared pipeline (`lowering/pipelines.py`) that verified the
    module after its last pass, so that verifying it again now would repeat the same checks
    on the same IR (read without importing the pipelines: a run without them loads no
    pass)."""
    verifies = getattr(done, "verifies_each_pass", None)
    passes = getattr(done, "passes", None)
    return callable(verifies) and callable(passes) and bool(verifies()) and bool(passes())


def verify_with_locations(
    module: ModuleOp,
    locations: dict[Operation, Span[str] | Span[bytes]],
    line_offset: int = 0,
) -> None:
    """Verify innermost operations first; report the first failure at its source line."""
    with fast_verification():
        _verify_with_locations(module, locations, line_offset)


def _verify_with_locations(
    module: ModuleOp,
    locations: dict[Operation, Span[str] | Span[bytes]],
    line_offset: int,
) -> None:
    for op in _post_order(module):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as err:
            # The message up to xDSL's annotated IR (after an empty line); a constraint
            # failure ("operand 'x' at position 0 does not verify:") continues on the next
            # lines with the reason, joined here into one line.
            lines = str(err).split("\n\n")[0].split("\n")
            message = " ".join(line.strip() for line in lines if line.strip())
            message = message.removeprefix("Operation does not verify: ")
            if not message.startswith(f"'{op.name}'"):
                message = f"'{op.name}' op {message}"
            span = locations.get(op)
            if span is None:
                raise LocatedVerifyError(f"error: {message}") from None
            span = dataclasses.replace(span, line_offset=line_offset)
            location, _, context = span.print_with_context().partition("\n")
            raise LocatedVerifyError(f"{location}: error: {message}\n{context.rstrip()}") from None
    verify_structure(module)


def verify_structure(module: ModuleOp) -> None:
    """What `module.verify()` checks beyond each op's own verifier (after every op passed
    `op.verify(verify_nested_ops=False)`): parent pointers, and no empty block in a
    single-block region whose op needs a terminator; the same messages, without verifying
    every op a second time."""
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    if child.parent is not block:
                        raise ValueError(
                            "Parent pointer of operation does not refer to containing region"
                        )
                if (
                    block.first_op is None
                    and len(region.blocks) == 1
                    and not op.has_trait(NoTerminator)
                ):
                    raise VerifyException(
                        f"Operation {op.name} contains empty block in single-block region "
                        "that expects at least a terminator"
                    )
                if block.parent is not region:
                    raise ValueError("Parent pointer of block does not refer to containing region")


def report_text(err: Exception) -> str:
    """A diagnostic as MLIR prints it: `loc: error: message` and the source line for parse
    errors; `error: message` (plus xDSL's annotated IR, where it added one) otherwise."""
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
    try:
        driver = PhyslayoutOptMain(args=args)
        driver.check_target_options()
    except ArgSpecParseError as err:  # `pass-pipeline:1:C: error: ...`, the spec and a caret
        print(_mlir_style(str(err).partition("\n")[2]), file=sys.stderr)
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


USAGE_TEXT = """physlayout: buffer physical layouts (index maps, axis separators, memory scopes) for MLIR,
compiled to memref/affine IR and to OpenCL C with 2-D texture memory.

Rewrite IR with `physlayout-opt FILE -p PASSES` (stock `xdsl-opt` works too); this command
runs, draws and explains it."""

EXAMPLES_TEXT = """examples:
  physlayout demo                                the conv -> relu -> conv example, end to end
  physlayout run examples/relu_texture.mlir --check
                                                 run on OpenCL and compare with numpy
  physlayout viz --shape 1,8,4,4 --map '(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)'
                                                 draw a layout (SVG on stdout)
  physlayout passes apply-layout                 a pass's options
  physlayout-opt FILE -p apply-layout,flatten-buffers
                                                 rewrite IR (see physlayout passes)"""


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of `physlayout` (sub-commands: `demo`, `run`, `compile`, `viz`, `passes`)."""
    parser = argparse.ArgumentParser(
        prog="physlayout",
        description=USAGE_TEXT,
        epilog=EXAMPLES_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=versions_text(),
        help="print the versions of physlayout, xDSL, islpy, numpy and pyopencl",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="run the conv -> relu -> conv example through the Adreno pipeline on OpenCL",
        description="Run examples/rfc_conv_relu_conv.mlir through the physlayout-adreno "
        "pipeline, run it on an OpenCL device and compare with numpy. Prints one line per "
        "stage, one kernel, the kernel times and a verdict; --verbose prints every stage's IR "
        "and all the OpenCL C.",
    )
    demo.add_argument(
        "--verbose", action="store_true", help="print each stage's IR and all generated OpenCL C"
    )
    from physlayout.cli_run import add_run_parser, run_command

    add_run_parser(sub)
    from physlayout.cli_deploy import add_compile_parser, compile_command

    add_compile_parser(sub)
    from physlayout.viz.command import add_viz_parser

    add_viz_parser(sub)
    from physlayout.pass_help import add_passes_parser, passes_command

    add_passes_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "demo":
        from physlayout.runtime.demo import RTOL, run_demo

        sys.exit(0 if run_demo(verbose=args.verbose) <= RTOL else 1)
    elif args.command == "run":
        sys.exit(run_with_deep_stack(lambda: run_command(args)))
    elif args.command == "compile":
        sys.exit(run_with_deep_stack(lambda: compile_command(args)))
    elif args.command == "viz":
        sys.exit(run_with_deep_stack(lambda: _viz_command(args)))
    elif args.command == "passes":
        sys.exit(passes_command(args))


def _viz_command(args: argparse.Namespace) -> int:
    """`physlayout viz` (physlayout.viz.command), its errors reported like `run`'s."""
    from physlayout.cli_run import parse_located
    from physlayout.viz.command import viz_command

    try:
        return viz_command(args, parse_located)
    except LocatedVerifyError as err:
        print(err, file=sys.stderr)
    except (ParseError, DiagnosticException) as err:
        print(report_text(err), file=sys.stderr)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
    except Exception as err:  # reported, never a traceback
        print(f"error: {unexpected_error_text(err)}", file=sys.stderr)
    return 1
