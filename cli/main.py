"""`physlayout`: the sub-commands `demo`, `run`, `compile`, `tune`, `viz` and `passes`, each a thin
parser of arguments over the Python API and the runtime.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
)

if TYPE_CHECKING:
    pass
from physlayout.cli.common import exit_without_teardown, run_with_deep_stack, versions_text
from physlayout.collector import spaced_young_collections
from physlayout.located import LocatedVerifyError, report_text, unexpected_error_text

USAGE_TEXT = """physlayout: buffer physical layouts (index maps, axis separators, memory scopes) for MLIR,
compiled to memref/affine IR and to OpenCL C with 2-D texture memory.

Rewrite IR with `physlayout-opt FILE -p PASSES` (stock `xdsl-opt` works too); this command
runs, draws and explains it."""


EXAMPLES_TEXT = """examples:
  physlayout demo                                the conv -> relu -> conv example, end to end
  physlayout run examples/relu_texture.mlir --check
                                                 run on OpenCL and compare with numpy
  physlayout tune model.mlir --budget 30          time schedules of its kernels on the device,
                                                 keep the fastest (run and compile use them)
  physlayout viz --shape 1,8,4,4 --map '(n, c, h, w) -> (n, c floordiv 4, h | w, c mod 4)'
                                                 draw a layout (SVG on stdout)
  physlayout passes apply-layout                 a pass's options
  physlayout-opt FILE -p apply-layout,flatten-buffers
                                                 rewrite IR (see physlayout passes)"""


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of `physlayout` (sub-commands: `demo`, `run`, `compile`, `tune`, `viz`,
    `passes`). Exits with the command's status (`SystemExit`). Called without `argv` (the
    `physlayout` program: the process is the command), `compile` ends the process at once
    when it is done (`exit_without_teardown`), unless it used an OpenCL device (`--device`,
    `--tune`), whose objects pyopencl releases at exit."""
    parser = argparse.ArgumentParser(
        prog="physlayout",
        description=USAGE_TEXT,
        epilog=EXAMPLES_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action=_VersionAction,
        help="print the versions of physlayout, xDSL, islpy, numpy and pyopencl",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    invoked = _invoked_command(sys.argv[1:] if argv is None else argv)
    if invoked in (None, "demo"):
        demo = sub.add_parser(
            "demo",
            help="run the conv -> relu -> conv example through the Adreno pipeline on OpenCL",
            description="Run examples/rfc_conv_relu_conv.mlir through the physlayout-adreno "
            "pipeline, run it on an OpenCL device and compare with numpy. Prints one line per "
            "stage, one kernel, the kernel times and a verdict; --verbose prints every stage's "
            "IR and all the OpenCL C.",
        )
        demo.add_argument(
            "--verbose", action="store_true",
            help="print each stage's IR and all generated OpenCL C",
        )  # fmt: skip
    if invoked in (None, "run"):
        from physlayout.cli.run import add_run_parser

        add_run_parser(sub)
    if invoked in (None, "compile"):
        from physlayout.cli.deploy import add_compile_parser

        add_compile_parser(sub)
    if invoked in (None, "tune"):
        from physlayout.cli.tune import add_tune_parser

        add_tune_parser(sub)
    if invoked in (None, "viz"):
        from physlayout.viz.command import add_viz_parser

        add_viz_parser(sub)
    if invoked in (None, "passes"):
        from physlayout.pass_help import add_passes_parser

        add_passes_parser(sub)
    args, extra = parser.parse_known_args(argv)
    if extra:  # the sub-command's usage, and the option it most likely meant
        _unknown_arguments(sub.choices[args.command], extra)
    if args.command == "demo":
        from physlayout.runtime.demo import RTOL, run_demo

        sys.exit(0 if run_demo(verbose=args.verbose) <= RTOL else 1)
    elif args.command == "run" and os.path.isdir(args.file):  # an artifact of `compile`
        from physlayout.cli.common import reported
        from physlayout.cli.deploy import run_artifact_command

        sys.exit(run_with_deep_stack(lambda: reported(lambda: run_artifact_command(args))))
    elif args.command == "run":
        from physlayout.cli.run import run_command

        sys.exit(run_with_deep_stack(lambda: run_command(args)))
    elif args.command == "compile":
        with spaced_young_collections():  # its imports, parse and passes: `collector`
            from physlayout.cli.deploy import compile_command

            status = run_with_deep_stack(lambda: compile_command(args))
        if argv is None and "pyopencl" not in sys.modules:  # the process is this command
            exit_without_teardown(status)
        sys.exit(status)
    elif args.command == "tune":
        from physlayout.cli.tune import tune_command

        sys.exit(run_with_deep_stack(lambda: tune_command(args)))
    elif args.command == "viz":
        sys.exit(run_with_deep_stack(lambda: _viz_command(args)))
    elif args.command == "passes":
        from physlayout.pass_help import passes_command

        sys.exit(passes_command(args))


class _VersionAction(argparse._VersionAction):  # pyright: ignore[reportPrivateUsage]
    """argparse's `--version`, its text (`versions_text`) made only when the option is
    given: reading the four packages' metadata (and importing `importlib.metadata`) took
    about 45 ms of every command (issue 43)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        self.version = versions_text()
        super().__call__(parser, *args, **kwargs)


COMMANDS = ("demo", "run", "compile", "tune", "viz", "passes")
"""The sub-commands of `physlayout`."""


def _invoked_command(argv: Sequence[str]) -> str | None:
    """The sub-command `argv` names (its first word that is not an option: `physlayout`'s
    own options, `--help` and `--version`, take no value), or None when it names none or
    an unknown one, or asks for `physlayout`'s own help before it. `main` builds the parser
    of that sub-command only (the others' options and the modules that define them are not
    needed); with None it builds them all, for the help that lists them and for argparse's
    "invalid choice" error."""
    for word in argv:
        if word in ("-h", "--help"):
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _viz_command(args: argparse.Namespace) -> int:
    """`physlayout viz` (physlayout.viz.command), its errors reported like `run`'s."""
    from physlayout.located import parse_located
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


def _unknown_arguments(parser: argparse.ArgumentParser, extra: list[str]) -> None:
    """Exit as argparse does (status 2) with `parser`'s usage, naming the arguments it does
    not know and the closest option to the first unknown one."""
    import difflib

    options = [o for action in parser._actions for o in action.option_strings]  # pyright: ignore[reportPrivateUsage]
    first = extra[0].split("=", 1)[0]
    close = difflib.get_close_matches(first, options, n=1)
    hint = f" (did you mean {close[0]}?)" if first.startswith("-") and close else ""
    parser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
