"""The OpenCL writer's memos (issue 43: compile time) change no character of the C it
writes. The copies of an unrolled body (lane loops, register tiles) ask the writer the
same questions many times: the substituted index of an expression, the texel of an
access, whether an access reaches a parameter legally, which values a body defines,
whether an op is one the target refuses. Each answer is kept (`KernelWriter`'s
`substituted_memo`, `texel_memo`, `flat_memo`, `access_memo`, `access_exprs`, `defined_in`,
`pure_kinds`, `half_helpers`, `type_names`, `walks`); here a
writer that forgets every answer must write the same program, byte for byte, on models
whose kernels are unrolled and tiled, and the memos must be asked more often than they
hold answers (they are used). A planted bug, a substituted-index memo keyed without the
loop values, must change the C: the comparison would see a wrong key."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.located import parse_located
from physlayout.lowering import opencl, opencl_kernels, opencl_memory
from physlayout.runtime.device import DeviceLimits
from physlayout.runtime.opencl import apply_verified_once, lower_module

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
LIMITS = DeviceLimits(True, 16384, 16384, False, True)


class _Forgetful(dict[Any, Any]):
    """A memo that never keeps an answer."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _lowered_source(name: str) -> str:
    text = (MODELS / f"{name}.mlir").read_text()
    module = apply_verified_once(
        "physlayout-adreno{lift-params=true}", LIMITS, parse_located(text, name), lambda _: None
    )
    return lower_module(module, LIMITS, lowered_already=True).program.source


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[opencl_kernels.KernelWriter]:
    """The writers of the next `generate_opencl` calls, kept to read their memos."""
    writers: list[opencl_kernels.KernelWriter] = []
    init = opencl._Writer.__init__  # pyright: ignore[reportPrivateUsage]

    def keeping(self: opencl_kernels.KernelWriter, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)  # pyright: ignore[reportArgumentType]
        writers.append(self)

    monkeypatch.setattr(opencl._Writer, "__init__", keeping)  # pyright: ignore[reportPrivateUsage]
    return writers


@pytest.mark.parametrize("name", ["espcn_pixelshuffle", "bottleneck"])
def test_a_writer_that_forgets_writes_the_same_c(
    name: str, asked: list[opencl_kernels.KernelWriter], monkeypatch: pytest.MonkeyPatch
) -> None:
    remembered = _lowered_source(name)
    texel_answers = sum(len(w.texel_memo) for w in asked)
    substituted_answers = sum(len(w.substituted_memo) for w in asked)
    assert texel_answers > 0 and substituted_answers > 0
    init = opencl._Writer.__init__  # pyright: ignore[reportPrivateUsage]
    texel_questions: list[int] = [0]

    class _Counting(_Forgetful):
        def get(self, key: Any, default: Any = None) -> Any:
            texel_questions[0] += 1
            return default

    def forgetful(self: opencl_kernels.KernelWriter, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)  # pyright: ignore[reportArgumentType]
        self.substituted_memo = _Forgetful()
        self.texel_memo = _Counting()
        self.access_memo = _Forgetful()
        self.defined_in = _Forgetful()
        self.pure_kinds = _Forgetful()
        self.flat_memo = _Forgetful()
        self.half_helpers = _Forgetful()
        self.type_names = _Forgetful()
        self.access_exprs = _Forgetful()
        self.walks = _Forgetful()

    writer = opencl._Writer  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(writer, "__init__", forgetful)
    assert _lowered_source(name) == remembered
    assert texel_questions[0] > texel_answers  # the memo answered the other questions


def test_a_substituted_memo_keyed_without_loop_values_changes_the_c(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted bug: the memo answers an index by the expression alone (the values of the
    unrolled loops left out of the key), so every copy gets the first copy's index."""
    remembered = _lowered_source("espcn_pixelshuffle")
    original = opencl_kernels.KernelWriter.substituted

    def keyed_badly(self: opencl_kernels.KernelWriter, expr: Expr) -> Expr:
        found = self.substituted_memo.get((expr, ()))
        if found is None:
            found = self.substituted_memo[(expr, ())] = original(self, expr)
        return found

    monkeypatch.setattr(opencl_kernels.KernelWriter, "substituted", keyed_badly)
    assert _lowered_source("espcn_pixelshuffle") != remembered


def test_a_flat_memo_keyed_without_the_copy_s_indices_changes_the_c(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted bug: the global-buffer element index is remembered per access op (the
    substituted indices, which carry the unrolled copy's loop values, left out of the
    key), so every copy of an unrolled body reads the first copy's element."""
    remembered = _lowered_source("autoencoder_transpose")
    original = opencl_memory.MemoryWriter.global_flat
    by_op: dict[Any, Expr] = {}

    def keyed_badly(
        self: opencl_memory.MemoryWriter, op: Any, accessed: Any, offset: int
    ) -> Expr:
        if op not in by_op:
            by_op[op] = original(self, op, accessed, offset)
        return by_op[op]

    monkeypatch.setattr(opencl_memory.MemoryWriter, "global_flat", keyed_badly)
    assert _lowered_source("autoencoder_transpose") != remembered


def test_an_expression_remembers_its_hash_but_pickles_without_it() -> None:
    """Compound nodes keep their hash and dimensions once computed; a pickle (another
    process hashes strings differently) carries neither, and equal trees hash alike."""
    i, j = Dim("i"), Dim("j")
    expr = (i * 4 + j) // 4 + j % 3
    same = (Dim("i") * 4 + Dim("j")) // 4 + Dim("j") % 3
    assert hash(expr) == hash(same) and expr.dims() == frozenset({"i", "j"})
    assert "_hash" in expr.__dict__ and "_dims" in expr.__dict__
    copy = pickle.loads(pickle.dumps(expr))
    assert copy == expr and "_hash" not in copy.__dict__ and "_dims" not in copy.__dict__
    assert hash(copy) == hash(expr) and {expr: 1}[copy] == 1


def test_expressions_are_not_abc_instances() -> None:
    """`Expr` is a plain class: `isinstance` against it and its nodes does not go through
    `ABCMeta.__instancecheck__` (a Python call per test, hundreds of thousands per model)."""
    assert type(Expr) is type and type(Dim) is type
