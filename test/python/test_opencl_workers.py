"""Writing a module's kernels in two processes (`lowering/opencl_workers.py`) gives the
program of writing them in one, byte for byte and launch plan for launch plan; a failure
in either process falls back to writing in one, so a refused kernel raises the same
diagnostic; kernel names that a process chose differently are caught."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from physlayout.located import parse_located
from physlayout.lowering import opencl, opencl_workers
from physlayout.lowering.opencl_c import NameTable
from physlayout.lowering.opencl_kernels import KernelInfo, Launch
from physlayout.runtime.device import DeviceLimits
from physlayout.runtime.opencl import apply_verified_once, parse_module

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
LIMITS = DeviceLimits(True, 16384, 16384, False, True)


def _lowered(name: str) -> ModuleOp:
    text = (MODELS / f"{name}.mlir").read_text()
    return apply_verified_once(
        "physlayout-adreno{lift-params=true}", LIMITS, parse_located(text, name), lambda _: None
    )


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each `write_forked` call of the test used its forked result (forking
    allowed even where this test process has imported pyopencl: the child only writes C)."""
    used: list[bool] = []
    original = opencl.write_forked

    def recording(*args: Any, **kwargs: Any) -> Any:
        written = original(*args, **kwargs)
        used.append(written is not None)
        return written

    monkeypatch.setattr(opencl, "can_fork", lambda: True)
    monkeypatch.setattr(opencl, "write_forked", recording)
    return used


@pytest.mark.parametrize("name", ["bottleneck", "autoencoder_transpose"])
def test_two_processes_write_the_program_of_one(name: str, forks: list[bool]) -> None:
    module = _lowered(name)
    serial = opencl.generate_opencl(module, vectorized=True, processes=1)
    assert forks == []
    forked = opencl.generate_opencl(module, vectorized=True, processes=2)
    assert forks == [True]
    assert forked.source == serial.source
    assert forked.kernels == serial.kernels
    assert list(forked.kernels) == list(serial.kernels)


def _refuse(monkeypatch: pytest.MonkeyPatch, refused: str | None) -> None:
    """The writer refuses kernel `@refused` (none when None) with a diagnostic."""
    write = opencl._Writer.write  # pyright: ignore[reportPrivateUsage]

    def refusing(self: Any) -> Any:
        if self.function.sym_name.data == refused:
            raise DiagnosticException(f"opencl: @{refused}: refused for the test")
        return write(self)

    monkeypatch.setattr(opencl._Writer, "write", refusing)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("position", [0, 1, 5])
def test_a_refused_kernel_raises_the_diagnostic_of_one_process(
    position: int, forks: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel at `position` is refused, by whichever process took it from the queue;
    either way the kernels are written again in one process, which raises the diagnostic
    of the first refused kernel."""
    module = _lowered("bottleneck")
    kernels = list(opencl.generate_opencl(module, vectorized=True, processes=1).kernels)
    refused = kernels[position]
    _refuse(monkeypatch, refused)
    with pytest.raises(DiagnosticException) as serial:
        opencl.generate_opencl(module, vectorized=True, processes=1)
    with pytest.raises(DiagnosticException) as forked:
        opencl.generate_opencl(module, vectorized=True, processes=2)
    assert str(forked.value) == str(serial.value) == f"opencl: @{refused}: refused for the test"
    assert forks == [False]


_INVALID_BUFFERS = """
func.func @copy(%A: !layout.buffer<16xf32>, %B: !layout.buffer<16xf32>) {
  %d = layout.data %A : !layout.buffer<16xf32> -> !layout.ptr<f32>
  %V = layout.decl_buffer %d : !layout.ptr<f32> -> !layout.buffer<8xvector<4xf32>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %A[%i] : !layout.buffer<16xf32>, f32
    layout.store %v, %B[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}
func.func @scale(%A: !layout.buffer<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %v = layout.load %A[%i] : !layout.buffer<16xf32>, f32
    %w = arith.mulf %v, %two : f32
    layout.store %w, %A[%i] : !layout.buffer<16xf32>, f32
  }
  func.return
}
"""


@pytest.mark.parametrize("refused", [None, "copy", "scale"])
def test_invalid_buffers_are_refused_after_the_kernels(
    refused: str | None, forks: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The buffer rules are checked by the parent while the child writes, but a kernel the
    writer refuses (in either share) still raises first, as in one process; else the
    buffers' diagnostic."""
    monkeypatch.setattr(opencl_workers, "MIN_OPS", 0)
    _refuse(monkeypatch, refused)
    module = parse_module(_INVALID_BUFFERS)
    errors: list[str] = []
    for processes in (1, 2):
        with pytest.raises(Exception) as raised:
            opencl.generate_opencl(module, processes=processes)
        errors.append(str(raised.value))
    assert errors[0] == errors[1]
    if refused is None:
        assert "does not fit in its storage" in errors[0]
        assert forks == [True]
    else:
        assert errors[0] == f"opencl: @{refused}: refused for the test"
        assert forks == [False]


def test_names_chosen_apart_are_caught() -> None:
    """Kernels written by two processes took names each process thought free: replaying
    the original order on the module's table finds a name that differs (here a function
    `@f` of two launches, `f_0` and `f_1`, and a function named `f_0` written apart from
    it) and leaves the table as it was."""
    table = NameTable(reserved={"main"}, allow_underscores=True)
    f = KernelInfo("f", (), (Launch("f_0", (1,)), Launch("f_1", (1,))))
    f_0 = KernelInfo("f_0", (), (Launch("f_0", (1,)),))
    assert not opencl_workers._same_names([([], f), ([], f_0)], table)  # pyright: ignore[reportPrivateUsage]
    assert table.used == {"main"} and table.counter == 0
    g = KernelInfo("g", (), (Launch("g", (1,)),))
    assert opencl_workers._same_names([([], f), ([], g)], table)  # pyright: ignore[reportPrivateUsage]
    assert table.used == {"main", "f_0", "f_1", "g"}


def test_no_fork_where_pyopencl_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pyopencl", raising=False)
    monkeypatch.setattr(opencl_workers.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(opencl_workers.os, "sched_getaffinity", lambda _: {0, 1})
    assert opencl_workers.can_fork()
    monkeypatch.setitem(sys.modules, "pyopencl", object())
    assert not opencl_workers.can_fork()


def test_no_fork_on_a_busy_or_single_cpu_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pyopencl", raising=False)
    monkeypatch.setattr(opencl_workers.os, "sched_getaffinity", lambda _: {0, 1})
    monkeypatch.setattr(opencl_workers.os, "getloadavg", lambda: (1.2, 0.0, 0.0))
    assert opencl_workers.can_fork()
    monkeypatch.setattr(opencl_workers.os, "getloadavg", lambda: (1.9, 0.0, 0.0))
    assert not opencl_workers.can_fork()
    monkeypatch.setattr(opencl_workers.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(opencl_workers.os, "sched_getaffinity", lambda _: {0})
    assert not opencl_workers.can_fork()


def _jobs(name: str) -> list[opencl_workers.KernelJob]:
    """The kernel functions of a lowered model (not its host function)."""
    return [
        opencl_workers.KernelJob(f, frozenset())
        for f in _lowered(name).ops
        if isinstance(f, func.FuncOp) and not any(isinstance(o, func.CallOp) for o in f.walk())
    ]


def test_the_queue_hands_out_every_kernel_once_the_largest_first() -> None:
    """One process draining the queue writes every kernel exactly once, the functions with
    the most ops first (ties in the original order); a second drain finds it empty."""
    jobs = _jobs("autoencoder_transpose")
    sizes = [job.size for job in jobs]
    assert len(set(sizes)) < len(sizes)  # ties, to check their order
    order: list[int] = []

    def write_one(job: opencl_workers.KernelJob, helpers: set[str], names: NameTable) -> Any:
        order.append(jobs.index(job))
        return [job.function.sym_name.data], None

    queue = opencl_workers._queued(jobs)  # pyright: ignore[reportPrivateUsage]
    try:
        written = opencl_workers._take(queue, jobs, write_one, set(), NameTable())  # pyright: ignore[reportPrivateUsage]
        assert opencl_workers._take(queue, jobs, write_one, set(), NameTable()) == {}  # pyright: ignore[reportPrivateUsage]
    finally:
        os.close(queue)
    assert order == sorted(range(len(jobs)), key=lambda k: (-sizes[k], k))
    assert sorted(written) == list(range(len(jobs)))
    assert all(written[k][0] == [jobs[k].function.sym_name.data] for k in written)


def test_small_modules_are_written_in_one_process() -> None:
    """A fork is worth it from two kernels of `MIN_OPS` ops in all."""
    jobs = _jobs("bottleneck")
    assert sum(job.size for job in jobs) >= opencl_workers.MIN_OPS
    assert opencl_workers.worth_forking(jobs)
    assert not opencl_workers.worth_forking(jobs[:1])
    small = [job for job in jobs if job.size < 40][:3]
    assert len(small) == 3 and not opencl_workers.worth_forking(small)
