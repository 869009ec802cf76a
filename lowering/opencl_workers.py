"""Writing the kernels of a module in two processes (issue 43: compile time).

The kernels of a module are written independently of each other (one `KernelWriter` per
`func.func`); what they share is the set of `px_` helpers they call and the table of
kernel names. `write_forked` forks a child, and parent and child take kernels from one
queue (a pipe holding the kernels' indices, the largest functions first) until it is
empty, each with its own helper set and name table: how long a kernel takes to write is
not known in advance (one kernel of 472 ops took as long as one of 1,429), so neither
process is handed a fixed share. The child sends its kernels' C lines and launch plans
back through a second pipe, and the parent joins them in the original order.

What it guarantees: the same program, byte for byte, as writing in one process, whichever
process wrote which kernel. The kernel names are checked: the parent asks the module's
real name table for every kernel's name in the original order and compares it with the
name the writer chose in its own table (they differ only when a name was taken by a
kernel of the other process; then nothing of the forked result is used). The helpers are
a set, emitted in a fixed order.

What it refuses (returns None; the caller then writes the kernels in one process, so any
diagnostic is the one writing in one process raises): a platform without `os.fork`, a
process that has imported pyopencl (an OpenCL context or any driver state must not be
duplicated by a fork; a plain `physlayout compile` never imports it), fewer than two
usable CPUs or none idle (the output never depends on it, only the time), a module whose
kernel functions have fewer than `MIN_OPS` ops in all or fewer than two kernels
(`worth_forking`: forking costs more than it saves), and any failure of either side: an
exception (a diagnostic included), a child that exits without a complete answer, or a
name that differs.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from xdsl.dialects import func

from physlayout.lowering.opencl_c import NameTable
from physlayout.lowering.opencl_kernels import KernelArg, KernelInfo, Launch

MIN_OPS = 400
"""The fewest ops, over all kernel functions of a module, for which two processes write
them (a fork, its pipes and the pickled answer cost about as much as writing a few
hundred ops)."""

_INDEX = 4
"""Bytes of one kernel index in the queue (`_queued`)."""

IDLE = 0.5
"""How far below the CPU count the load average must be for a fork (`can_fork`)."""


@dataclass(frozen=True)
class KernelJob:
    """One kernel function to write, with the indices of its parameters that callers may
    bind to views at an offset."""

    function: func.FuncOp
    offset_params: frozenset[int]

    @cached_property
    def size(self) -> int:
        """The number of ops of the function (how the queue orders the jobs; counted once:
        `worth_forking` asks first)."""
        return sum(1 for _ in self.function.walk())


def worth_forking(jobs: Sequence[KernelJob]) -> bool:
    """Whether `jobs` are enough work for two processes: two or more, `MIN_OPS` ops in all."""
    return len(jobs) >= 2 and sum(job.size for job in jobs) >= MIN_OPS


Written = tuple[list[str], KernelInfo]
"""A kernel function's C lines and its `KernelInfo`."""

WriteOne = Callable[[KernelJob, set[str], NameTable], Written]
"""Writes one kernel function, adding the helpers it calls to the set and taking its
kernels' names from the table."""


def can_fork() -> bool:
    """Whether this process may fork a writer: `os.fork` exists, pyopencl was never imported
    (so no OpenCL object exists), at least two CPUs are usable and one of them is idle (the
    load average of the last minute, this process included, is below the CPU count less
    `IDLE`: on a machine whose other CPUs are busy the child only takes turns with the
    parent, and forking makes the phase slower; googlenet with one other busy process on
    2 CPUs: 3.2 s in one process, 3.6 s in two)."""
    if not hasattr(os, "fork") or "pyopencl" in sys.modules:
        return False
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    if cpus < 2:
        return False
    load = getattr(os, "getloadavg", None)
    return load is None or load()[0] < cpus - IDLE


_PortableArg = tuple[str, str, str, tuple[int, ...], bool, bool, bool, bool]
"""A `KernelArg` without its type."""

_Portable = tuple[str, tuple[Launch, ...], list[_PortableArg]]
"""A `KernelInfo` that pickles without xDSL objects (`_portable`)."""


def _portable(info: KernelInfo) -> _Portable:
    """`info` without its parameter types (xDSL attributes; the parent has them)."""
    args: list[_PortableArg] = [
        (a.name, a.kind, a.c_type, a.physical_shape, a.read, a.written, a.offset_argument,
         a.covers)
        for a in info.args
    ]  # fmt: skip
    return info.name, info.launches, args


def _rebuilt(job: KernelJob, portable: _Portable) -> KernelInfo:
    """The `KernelInfo` of `_portable`, its parameter types read from the function again."""
    name, launches, args = portable
    params = job.function.body.blocks[0].args
    rebuilt = tuple(
        KernelArg(arg_name, kind, param.type, c_type, shape, read, written, offset, covers)
        for param, (arg_name, kind, c_type, shape, read, written, offset, covers) in zip(
            params, args, strict=True
        )
    )
    return KernelInfo(name, rebuilt, launches)


def _copy(table: NameTable) -> NameTable:
    """A name table in the state of `table`, changed independently of it."""
    copy = NameTable()
    copy.used, copy.counter, copy.pattern = set(table.used), table.counter, table.pattern
    return copy


def _queued(jobs: Sequence[KernelJob]) -> int:
    """A pipe's read end holding the index of every job, the largest functions first
    (ties in the original order); its write end is closed, so a read past the last index
    finds the end. A pipe never returns part of a record here: every read asks for one
    record and the pipe holds whole records only."""
    order = sorted(range(len(jobs)), key=lambda k: -jobs[k].size)
    data = b"".join(k.to_bytes(_INDEX, "little") for k in order)
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(write_end, "wb") as queue:
            queue.write(data)
    except BaseException:
        os.close(read_end)
        raise
    return read_end


def _take(
    queue: int, jobs: Sequence[KernelJob], write_one: WriteOne, helpers: set[str],
    names: NameTable,
) -> dict[int, Written]:
    """Write jobs taken from `queue` until it is empty, by index."""
    written: dict[int, Written] = {}
    while record := os.read(queue, _INDEX):
        k = int.from_bytes(record, "little")
        written[k] = write_one(jobs[k], helpers, names)
    return written


def _child(
    queue: int, jobs: Sequence[KernelJob], write_one: WriteOne, names: NameTable, pipe: int
) -> None:
    """The child's work: write jobs from `queue`, send (helpers, {index: (lines, portable
    info)}) and exit without running any of the parent's cleanup."""
    status = 1
    try:
        helpers: set[str] = set()
        written = _take(queue, jobs, write_one, helpers, names)
        answer = (helpers, {k: (lines, _portable(info)) for k, (lines, info) in written.items()})
        data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(pipe, "wb") as out:
            out.write(data)
        status = 0
    finally:
        os._exit(status)  # pyright: ignore[reportPrivateUsage]


def _received(pipe: int, pid: int) -> bytes | None:
    """Everything the child sent, once it exited successfully (None otherwise)."""
    with os.fdopen(pipe, "rb") as source:
        data = source.read()
    _, status = os.waitpid(pid, 0)
    return data if os.waitstatus_to_exitcode(status) == 0 else None


def write_forked(
    jobs: Sequence[KernelJob],
    write_one: WriteOne,
    helpers: set[str],
    kernel_names: NameTable,
    alongside: Callable[[], None] | None = None,
) -> list[Written] | None:
    """Every job written, in order, by this process and a forked child taking jobs from
    one queue (module docstring); `helpers` gets the helpers of all and `kernel_names`
    every kernel's name; `alongside`, other work of the caller, runs in the parent once the
    queue is empty, while the child may still be writing. None, with `helpers` and
    `kernel_names` untouched, when this process may not fork or anything fails: the
    caller writes the jobs itself then."""
    if len(jobs) < 2:
        return None
    queue = _queued(jobs)
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        for end in (queue, read_end, write_end):
            os.close(end)
        return None
    if pid == 0:
        os.close(read_end)
        _child(queue, jobs, write_one, _copy(kernel_names), write_end)
    os.close(write_end)
    parent_helpers: set[str] = set()
    try:
        try:
            own = _take(queue, jobs, write_one, parent_helpers, _copy(kernel_names))
        finally:
            os.close(queue)
        if alongside is not None:
            alongside()
    except BaseException as error:
        _received(read_end, pid)
        if isinstance(error, Exception):
            return None
        raise
    data = _received(read_end, pid)
    if data is None:
        return None
    answer: tuple[set[str], dict[int, tuple[list[str], _Portable]]] = pickle.loads(data)
    child_helpers, answers = answer
    if own.keys() & answers.keys() or len(own) + len(answers) != len(jobs):
        return None
    other = {k: (lines, _rebuilt(jobs[k], info)) for k, (lines, info) in answers.items()}
    written = [own[k] if k in own else other[k] for k in range(len(jobs))]
    if not _same_names(written, kernel_names):
        return None
    helpers |= parent_helpers | child_helpers
    return written


def _same_names(written: Sequence[Written], kernel_names: NameTable) -> bool:
    """Ask a copy of `kernel_names` for every kernel's name in order, as `KernelWriter.write`
    does (`@name`, or `@name_K` for a function of several launches); True, and the names
    taken in `kernel_names` itself, when each is the name the kernel was written with."""
    table = _copy(kernel_names)
    for _, info in written:
        several = len(info.launches) > 1
        for k, launch in enumerate(info.launches):
            hint = f"{info.name}_{k}" if several else info.name
            if table.fresh(hint, "kernel") != launch.kernel:
                return False
    kernel_names.used, kernel_names.counter = table.used, table.counter
    return True
