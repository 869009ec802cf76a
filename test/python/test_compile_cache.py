"""The compile cache (`runtime/compile_cache.py`): a second compile of the same text with the
same options is served from disk (the pipeline does not run), any change of text, option or
code misses, and a corrupt, partial or foreign entry is ignored, noted and rebuilt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from physlayout.runtime import compile_cache, deploy
from physlayout.runtime.device import DeviceLimits

GRAPH = """#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @main(%x: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.addf %in, %in_0 : f32
      linalg.yield %2 : f32
    } -> tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
}
"""
LIMITS = DeviceLimits(True, 8192, 8192, False, True)
PIPELINE = "physlayout-adreno{lift-params=true}"


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The entries compiled (not served from the cache) while the test runs, in a cache
    directory of the test's own."""
    monkeypatch.setenv("PHYSLAYOUT_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[str] = []
    original = deploy.compile_artifact

    def counting(module: Any, entry: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(entry)
        return original(module, entry, *args, **kwargs)

    monkeypatch.setattr(deploy, "compile_artifact", counting)
    return seen


def _parse(text: str) -> tuple[Any, str]:
    from physlayout.runtime.opencl import parse_module

    return parse_module(text), "main"


def _compile(text: str = GRAPH, **options: Any) -> Any:
    options.setdefault("pipeline", PIPELINE)
    return compile_cache.cached_compile(text, None, LIMITS, parse=_parse, **options)


def _entries() -> list[Path]:
    return [p for p in compile_cache.cache_dir().iterdir() if p.is_dir()]


def test_a_second_compile_is_served_from_the_cache(compiles: list[str]) -> None:
    first = _compile()
    second = _compile()
    assert compiles == ["main"]
    assert second.plan == first.plan and second.kernels == first.kernels
    (entry,) = _entries()
    assert json.loads((entry / "key.json").read_text())["pipeline"] == PIPELINE


def test_changed_text_options_or_code_miss(
    compiles: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _compile()
    _compile(GRAPH.replace("arith.addf", "arith.mulf"))
    _compile(precision="f16")
    _compile(pipeline="physlayout-adreno")
    _compile(physical_io=True)
    monkeypatch.setattr(compile_cache, "code_fingerprint", lambda: "another physlayout")
    _compile()
    assert len(compiles) == 6
    assert len(_entries()) == 6


def test_no_cache_always_compiles(compiles: list[str]) -> None:
    _compile(use_cache=False)
    _compile(use_cache=False)
    assert len(compiles) == 2
    assert not compile_cache.cache_dir().exists()


@pytest.mark.parametrize(
    ("damage", "note"),
    [
        (lambda e: (e / "plan.json").write_text("{not json"), "not valid JSON"),
        (lambda e: (e / "kernels.cl").unlink(), "has no kernels.cl"),
        (lambda e: (e / "kernels.cl").write_text("// another\n"), "belongs to another artifact"),
        (lambda e: (e / "key.json").write_text('{"source_sha256": "x"}'), "names another compile"),
        (lambda e: (e / "key.json").unlink(), "key.json"),
    ],
)
def test_a_damaged_entry_is_rebuilt(
    compiles: list[str], capsys: pytest.CaptureFixture[str], damage: Any, note: str
) -> None:
    first = _compile()
    (entry,) = _entries()
    damage(entry)
    again = _compile()
    assert compiles == ["main", "main"]
    assert again.plan == first.plan and again.kernels == first.kernels
    err = capsys.readouterr().err
    assert "note: ignoring the cached artifact" in err and note in err
    assert _compile().plan == first.plan and len(compiles) == 2  # the rebuilt entry serves


def test_the_cache_is_trimmed_least_recently_used_first(compiles: list[str]) -> None:
    _compile()
    (oldest,) = _entries()
    size = sum(f.stat().st_size for f in oldest.iterdir())
    _compile(precision="f16", max_bytes=10 * size)
    _compile(pipeline="physlayout-adreno", max_bytes=int(2.5 * size))
    assert not oldest.exists() and len(_entries()) == 2


def test_the_api_and_the_command_line_share_the_cache(
    compiles: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyopencl")
    import physlayout
    from physlayout.cli import main

    source = tmp_path / "add.mlir"
    source.write_text(GRAPH)
    x, b = np.ones((4, 8), np.float32), np.full((4, 8), 2.0, np.float32)
    try:
        model = physlayout.compile(str(source), params={"b": b})
    except Exception as err:  # no OpenCL device here
        pytest.skip(str(err))
    assert np.array_equal(model(x), x + b)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "b.npy", b)
    with pytest.raises(SystemExit) as done:  # the same device and options as the API's
        main(["run", str(source), "--input", f"x={tmp_path / 'x.npy'}",
              "--input", f"b={tmp_path / 'b.npy'}", "--output", f"result0={tmp_path / 'y.npy'}"])  # fmt: skip
    assert done.value.code == 0, capsys.readouterr().err
    assert np.array_equal(np.load(tmp_path / "y.npy"), x + b)
    assert compiles == ["main"]  # the command line found the API's artifact
    assert physlayout.compile(str(source), params={"b": b}).plan == model.plan
    assert compiles == ["main"]
