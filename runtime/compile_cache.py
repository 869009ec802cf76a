"""The compile cache: an artifact per (source text, options, target, physlayout code) on disk,
so that compiling the same model again costs reading its artifact instead of the pipeline.

`cached_compile(text, entry, limits, ..., parse=...)` returns what `compile_artifact` would:
from the cache when an entry for the same key is there and reads back whole, else compiled
and stored. The key is a SHA-256 of the source text, the entry name as given, the pipeline,
the precision, the physical-io switch, every field of the target's `DeviceLimits` (image
limits, fp16/fp64, ...), the given schedules (the tuning cache's table for the device,
`runtime/tuning_cache.py`: a tuned schedule changes the kernels), and the physlayout code
itself (every `.py` of the installed package, so an edited checkout
never reads an artifact an older one wrote; xDSL's version too).

An entry is a directory `<cache>/<key>/` holding the artifact's files and `key.json` (what
was hashed, in full). It is used only when `key.json` equals the expected key and
`load_artifact` accepts the files (plan schema, kernels of the same artifact); anything
else (a corrupt, partial or foreign entry) is removed, noted on stderr, and rebuilt.
Entries are written to a temporary directory and renamed, so a reader never sees half of
one. After a store the cache is trimmed to `max_bytes`, least recently used first (a hit
touches its entry).

The cache directory is `cache_paths.cache_dir()`: `$PHYSLAYOUT_CACHE_DIR`, else
`$XDG_CACHE_HOME/physlayout/artifacts`, else `~/.cache/physlayout/artifacts`; its `opencl/`
folder holds built OpenCL programs (`program_cache.py`). Compiling with remarks bypasses the cache (remarks
are printed while compiling).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from physlayout.runtime.artifact import Artifact, load_artifact, write_artifact
from physlayout.runtime.cache_paths import cache_dir
from physlayout.runtime.device import DeviceLimits

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
"""The default size bound of the cache directory."""

KEY_FILE = "key.json"


SKIPPED = frozenset({"test", "bench", "build", "__pycache__"})
"""Folders of the checkout that are not part of the installed code (and dot-folders: .venv)."""


@cache
def code_fingerprint() -> str:
    """A hash of physlayout's own Python files (tests and benchmarks left out) and of xDSL's
    version: what the artifacts of this installation depend on."""
    from importlib.metadata import version  # only with the cache (not for --no-cache)

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"xdsl {version('xdsl')}\n".encode())
    files: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [s for s in subfolders if s not in SKIPPED and not s.startswith(".")]
        files += [Path(folder, n) for n in names if n.endswith(".py")]
    for path in sorted(files):
        relative = path.relative_to(root).as_posix()
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(
    text: str,
    entry: str | None,
    limits: DeviceLimits,
    pipeline: str,
    precision: str,
    physical_io: bool,
    schedules: str = "",
) -> dict[str, Any]:
    """Everything an artifact depends on (hashed into its entry's name)."""
    return {
        "schedules_sha256": hashlib.sha256(schedules.encode()).hexdigest() if schedules else "",
        "source_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "entry": entry,
        "pipeline": pipeline,
        "precision": precision,
        "physical_io": physical_io,
        "limits": list(dataclasses.astuple(limits)),
        "code": code_fingerprint(),
    }


def cached_compile(
    text: str,
    entry: str | None,
    limits: DeviceLimits,
    *,
    pipeline: str,
    precision: str = "f32",
    physical_io: bool = False,
    schedules: str = "",
    remarks: bool = False,
    use_cache: bool = True,
    max_bytes: int = DEFAULT_MAX_BYTES,
    parse: Callable[[str], tuple[ModuleOp, str]],
) -> Artifact:
    """The artifact of function `entry` (None: the default entry) of the module whose text
    is `text` (see the module docstring), with the given `schedules` (a table by kernel
    signature, `transforms/given_schedules.py`). When it must be compiled, `parse(text)`
    gives the module and the name of the entry function."""
    place: tuple[Path, dict[str, Any]] | None = None
    if use_cache and not remarks:  # the key hashes physlayout's code: only when it is used
        key = cache_key(text, entry, limits, pipeline, precision, physical_io, schedules)
        place = cache_dir() / hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32], key
        hit = _read(*place)
        if hit is not None:
            return hit
    module, name = parse(text)
    from physlayout.runtime import deploy  # the compiler loads on a miss only

    artifact = deploy.compile_artifact(
        module, name, limits, pipeline=pipeline, physical_io=physical_io, remarks=remarks,
        source_text=text, precision=precision, schedules=schedules,
    )  # fmt: skip
    if place is not None:
        _store(*place, artifact, max_bytes)
    return artifact


def _read(directory: Path, key: dict[str, Any]) -> Artifact | None:
    if not directory.is_dir():
        return None
    try:
        stored = json.loads((directory / KEY_FILE).read_text())
        if stored != key:
            raise ValueError("its key.json names another compile")
        artifact = load_artifact(str(directory))
    except Exception as err:  # corrupt, partial or foreign: rebuilt
        print(f"note: ignoring the cached artifact {directory} ({err}); compiling again",
              file=sys.stderr)  # fmt: skip
        shutil.rmtree(directory, ignore_errors=True)
        return None
    os.utime(directory)
    return artifact


def _store(directory: Path, key: dict[str, Any], artifact: Artifact, max_bytes: int) -> None:
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=directory.parent))
        write_artifact(artifact, str(staging))
        (staging / KEY_FILE).write_text(json.dumps(key, indent=1) + "\n")
        shutil.rmtree(directory, ignore_errors=True)
        os.replace(staging, directory)
    except OSError as err:  # a read-only or full disk: compile without caching
        print(f"note: cannot cache the artifact in {directory.parent} ({err})", file=sys.stderr)
        return
    trim(directory.parent, max_bytes)


def trim(root: Path, max_bytes: int) -> None:
    """Remove the least recently used entries of `root` until it holds at most `max_bytes`
    (the newest entry is kept even when it alone is larger)."""
    entries: list[tuple[float, int, Path]] = []
    for entry in root.iterdir():
        if not entry.is_dir():
            continue
        size = sum(f.stat().st_size for f in entry.iterdir() if f.is_file())
        entries.append((entry.stat().st_mtime, size, entry))
    entries.sort(reverse=True)
    total = 0
    for position, (_, size, entry) in enumerate(entries):
        total += size
        if total > max_bytes and position > 0:
            shutil.rmtree(entry, ignore_errors=True)
