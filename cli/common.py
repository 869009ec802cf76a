"""What every command of the command line shares: versions, MLIR-style reporting of a
sub-command's errors (`reported`: never a traceback) and a thread with a deep stack.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
)

if TYPE_CHECKING:
    pass
from physlayout.located import (
    LocatedVerifyError,
    located_diagnostic,
    report_text,
    unexpected_error_text,
)

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


STACK_BYTES = 512 * 1024 * 1024


RECURSION_LIMIT = 200_000


def output_closed() -> int:
    """The reader of standard output went away (``physlayout ... | head -1``): stop quietly,
    as a Unix filter does (standard output is pointed at the null device, so the flush at
    exit cannot fail again); exit status 0."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def exit_without_teardown(status: int) -> NoReturn:
    """End the process now with exit status `status`, after flushing standard output and
    error, without the interpreter's teardown (`os._exit`): no module is torn down, no
    object freed one by one, no `atexit` handler runs. For a command whose process ends
    with it, once everything it writes is closed: tearing down a compiler's objects (xDSL's
    classes, the IR of a model) took 0.4 to 0.9 s wall after `physlayout compile` had
    finished (issue 43), longer than some whole compiles of `iree-compile`. (mypy's
    `hard_exit` does the same for the same reason.)"""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a closed stream
            stream.flush()
    os._exit(status)


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


def add_texture_storage(parser: argparse.ArgumentParser, auto: str) -> None:
    """`--texture-storage image|buffer|auto` (default auto, which holds textures as buffers
    `auto` describes); `OpenCLRuntime.texture_storage` takes the value."""
    parser.add_argument(
        "--texture-storage", choices=("image", "buffer", "auto"), default="auto",
        help="hold texture-scoped buffers as images (image2d_t), as __global arrays of the "
        f"same texels (buffer), or (auto, default) as buffers {auto}, as images otherwise",
    )  # fmt: skip


def add_fp_contract(parser: argparse.ArgumentParser) -> None:
    """`--fp-contract`: `OpenCLRuntime.fp_contract` (each multiply whose only use is an add
    becomes one `fma`, `contract-fma`)."""
    parser.add_argument(
        "--fp-contract", action="store_true",
        help="contract each f32 vector multiply whose only use is an add into one fma (one rounding "
        "instead of two: faster on devices with FMA units, results within about 1e-5 of the "
        "evaluator instead of bit-exact; default off)",
    )  # fmt: skip
