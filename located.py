"""Reading MLIR text with source locations, and reporting problems MLIR-style.

`LocatingParser` records where each op was parsed; `attach_locations` gives every parsed op
its `loc("file":line:col)`; `parse_located` parses and verifies a file's text so that a
verifier failure is reported at the op's source line (`LocatedVerifyError`);
`located_diagnostic` and `report_text` turn xDSL's diagnostics into `file:line:col: error:`
text with the source line; `entry_function` chooses the function a driver runs. Used by
the command line (`physlayout.cli`) and the Python API (`physlayout.api`) alike.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Span

from physlayout.transforms.diagnostics import OpPassFailure, diagnostic_text
from physlayout.universe import make_context
from physlayout.verification import fast_verification

if TYPE_CHECKING:
    pass



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


def verified_its_last_pass(done: ModulePass) -> bool:
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
        return mlir_style(text)
    notes = getattr(err, "__notes__", None)
    if notes:
        text += "\n" + "\n".join(str(n) for n in notes)
    return f"error: {text}"


def mlir_style(text: str) -> str:
    """`loc\\nline\\ncaret\\nmsg` (xDSL) -> `loc: error: msg\\nline\\ncaret`."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) < 4:
        return f"error: {text}"
    location, source, caret = lines[0], lines[1], lines[2]
    message = "\n".join(line.strip() for line in lines[3:])
    return f"{location}: error: {message}\n{source}\n{caret}"


def parse_located(text: str, name: str) -> ModuleOp:
    """Parse and verify `text`; a verifier failure is reported at the op's source line."""
    parser = LocatingParser(make_context(), text, name)
    module = parse_module_reporting(parser)
    attach_locations(parser.locations)
    verify_with_locations(module, parser.locations)
    return module


def entry_function(module: ModuleOp, name: str | None) -> func.FuncOp:
    """The function `name` of `module`, or without a name @main, else the one function no
    other calls (a diagnostic when there is none or several)."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    by_name = {f.sym_name.data: f for f in functions}
    if name is not None:
        if name not in by_name:
            raise DiagnosticException(f"no function @{name} (have {sorted(by_name)})")
        return by_name[name]
    if "main" in by_name:
        return by_name["main"]
    called = {
        op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)
    }
    roots = [f for f in functions if f.sym_name.data not in called]
    if len(roots) != 1:
        raise DiagnosticException(
            "cannot choose the function to run: use --entry with one of "
            f"{sorted(by_name)}"
        )
    return roots[0]
