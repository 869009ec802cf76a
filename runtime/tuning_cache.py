"""The tuning cache: the fastest schedule `physlayout tune` found per device and kernel.

A JSON file (`tuning_cache_path()`: `$PHYSLAYOUT_CACHE_DIR/tuning.json`, else
`$XDG_CACHE_HOME/physlayout/tuning.json`, else `~/.cache/physlayout/tuning.json`; the
commands' `--tuning-cache FILE` chooses another):

    {"format": "physlayout-tuning-cache", "version": 1,
     "entries": [{"device": "cpu-haswell-...", "driver": "6.0+debian", "version": 1,
                  "texture_storage": "buffer", "fp_contract": false,
                  "signature": "3f0c...", "schedule": "1x2x1x4/1x1x4x16",
                  "seconds": 0.00031, "kernel": "main_fused_3", ...}, ...]}

An entry is keyed by the device's name, its driver version, how the kernels were built
(`texture_storage`: image or buffer, `DeviceLimits.texture_storage`, and `fp_contract`:
whether multiply-adds were contracted, `DeviceLimits.fp_contract`: the fastest schedule of
the same kernel differs between them) and the kernel signature
(`transforms/given_schedules.kernel_signature`); `version` is the schedule format it was
written under (`given_schedules.SCHEDULE_FORMAT`). What `schedules_for(device)` gives the
compiler (`apply-schedules{schedules}`) is the table of the entries of that device,
driver and build and of this format; the others stay in the file, unused: an entry of
another device or driver (foreign), of another texture storage or contraction (an entry
without `texture_storage`, written before it was recorded, counts as another) or of
another format (stale) is ignored with one note line on stderr per kind. A file that is
not such JSON (corrupt, or another program's) is ignored with a note, never a crash; `tune`
then writes a new one. Writes go to a temporary file in the same directory, renamed over
the file (a reader sees the old file or the new one).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from xdsl.utils.exceptions import DiagnosticException, VerifyException

from physlayout.dialects.layout_schedule import ScheduleAttr
from physlayout.transforms.given_schedules import (
    SCHEDULE_FORMAT,
    parse_schedule_text,
    schedule_table_text,
    schedule_text,
)

FILE_FORMAT = "physlayout-tuning-cache"
"""The `format` field of a tuning cache file."""
FILE_VERSION = 1
"""The `version` field of the file (its layout; the schedules' is per entry)."""
FILE_NAME = "tuning.json"
DEFAULT_BUDGET = 60.0
"""Seconds `physlayout tune` (`runtime/tuner.py`) spends on a model by default."""


def tuning_cache_path() -> Path:
    """The default tuning cache file (module docstring)."""
    explicit = os.environ.get("PHYSLAYOUT_CACHE_DIR")
    if explicit:
        return Path(explicit) / FILE_NAME
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "physlayout" / FILE_NAME


@dataclass(frozen=True)
class DeviceKey:
    """What a tuned schedule is valid for: the device's name, its driver's version, and
    how the kernels are built there (texture storage, contraction)."""

    device: str
    driver: str
    texture_storage: str = "image"
    """`DeviceLimits.texture_storage`: "image" or "buffer"."""
    fp_contract: bool = False
    """`DeviceLimits.fp_contract`."""

    @staticmethod
    def of(runtime: Any) -> DeviceKey:
        """The key of an `OpenCLRuntime`'s device and build settings."""
        return DeviceKey(
            runtime.describe(),
            str(runtime.device.driver_version).strip(),
            runtime.limits.texture_storage,
            runtime.limits.fp_contract,
        )

    def describe(self) -> str:
        """`NAME, driver VERSION`, for notes."""
        return f"{self.device}, driver {self.driver}"

    def build(self) -> str:
        """`textures as STORAGE, fp-contract on|off`, for notes."""
        return build_text(self.texture_storage, self.fp_contract)

    def owns(self, entry: Mapping[str, Any]) -> bool:
        """Whether `entry` is of this device and driver."""
        return entry["device"] == self.device and entry["driver"] == self.driver

    def builds_like(self, entry: Mapping[str, Any]) -> bool:
        """Whether `entry` was tuned with this texture storage and contraction."""
        return (entry.get("texture_storage") == self.texture_storage
                and bool(entry.get("fp_contract", False)) == self.fp_contract)  # fmt: skip


def build_text(texture_storage: Any, fp_contract: Any) -> str:
    """How an entry's kernels were built, for notes."""
    storage = "unrecorded" if texture_storage is None else texture_storage
    return f"textures as {storage}, fp-contract {'on' if fp_contract else 'off'}"


@dataclass(frozen=True)
class TunedKernel:
    """One entry: the fastest schedule of a kernel on a device, with its time."""

    signature: str
    schedule: ScheduleAttr
    seconds: float
    """Median device seconds of one launch with `schedule`."""
    kernel: str = ""
    """The kernel's name where it was tuned (informative only)."""
    unscheduled_seconds: float = 0.0
    heuristic_seconds: float = 0.0


@dataclass
class TuningCache:
    """A tuning cache file read into memory (module docstring)."""

    path: Path
    entries: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Every well-formed entry of the file, in order (other devices' and formats' too)."""

    @staticmethod
    def load(path: str | os.PathLike[str], notes: TextIO | None = None) -> TuningCache:
        """The cache in `path` (empty when there is no such file); a file that cannot be
        read as one is ignored with a note on `notes` (default stderr). A directory is a
        DiagnosticException."""
        where = Path(path)
        stream = notes if notes is not None else sys.stderr
        if where.is_dir():
            raise DiagnosticException(f"tuning cache {where}: is a directory, not a JSON file")
        if not where.exists():
            return TuningCache(where)
        try:
            data = json.loads(where.read_text())
            entries = _entries(data)
        except (OSError, UnicodeDecodeError, ValueError) as err:
            print(f"note: ignoring the tuning cache {where} ({err})", file=stream)
            return TuningCache(where)
        return TuningCache(where, entries)

    def schedules_for(self, key: DeviceKey, notes: TextIO | None = None) -> dict[str, TunedKernel]:
        """The entries of device `key` in this format, by signature; one note line on
        `notes` (default stderr) per kind of entry left out (foreign, stale)."""
        stream = notes if notes is not None else sys.stderr
        found: dict[str, TunedKernel] = {}
        foreign: list[dict[str, Any]] = []
        other_build: list[dict[str, Any]] = []
        stale: list[dict[str, Any]] = []
        for entry in self.entries:
            if not key.owns(entry):
                foreign.append(entry)
            elif not key.builds_like(entry):
                other_build.append(entry)
            elif entry["version"] != SCHEDULE_FORMAT:
                stale.append(entry)
            else:
                found[entry["signature"]] = _tuned(entry)
        if foreign:
            other = foreign[0]
            print(
                f"note: tuning cache {self.path}: ignoring {len(foreign)} entr"
                f"{'y' if len(foreign) == 1 else 'ies'} of other devices or drivers (e.g. "
                f"{other['device']}, driver {other['driver']}; this is {key.describe()})",
                file=stream,
            )
        if other_build:
            other = other_build[0]
            print(
                f"note: tuning cache {self.path}: ignoring {len(other_build)} entr"
                f"{'y' if len(other_build) == 1 else 'ies'} tuned with other build settings "
                f"(e.g. {build_text(other.get('texture_storage'), other.get('fp_contract'))}; "
                f"this is {key.build()}: `physlayout tune` with these settings)",
                file=stream,
            )
        if stale:
            print(
                f"note: tuning cache {self.path}: ignoring {len(stale)} entr"
                f"{'y' if len(stale) == 1 else 'ies'} of schedule format {stale[0]['version']} "
                f"(this physlayout's is {SCHEDULE_FORMAT}; `physlayout tune` again)",
                file=stream,
            )
        return found

    def table_text(self, key: DeviceKey, notes: TextIO | None = None) -> str:
        """The `apply-schedules{schedules}` table of device `key` ('' when none)."""
        tuned = self.schedules_for(key, notes)
        return schedule_table_text({sig: t.schedule for sig, t in tuned.items()})

    def update(self, key: DeviceKey, tuned: Mapping[str, TunedKernel]) -> None:
        """Replace the entries of device `key` (and its build settings) for the signatures
        of `tuned` (stale ones included) by `tuned`'s; the others stay."""
        kept = [
            e
            for e in self.entries
            if not (key.owns(e) and key.builds_like(e) and e["signature"] in tuned)
        ]
        for signature in sorted(tuned):
            one = tuned[signature]
            kept.append({
                "device": key.device,
                "driver": key.driver,
                "version": SCHEDULE_FORMAT,
                "texture_storage": key.texture_storage,
                "fp_contract": key.fp_contract,
                "signature": signature,
                "schedule": schedule_text(one.schedule),
                "seconds": one.seconds,
                "kernel": one.kernel,
                "unscheduled_seconds": one.unscheduled_seconds,
                "heuristic_seconds": one.heuristic_seconds,
            })  # fmt: skip
        self.entries = kept

    def save(self, create_parents: bool = False) -> None:
        """Write the file atomically (a temporary file renamed over it); a
        DiagnosticException when it cannot be written."""
        data = {"format": FILE_FORMAT, "version": FILE_VERSION, "entries": self.entries}
        text = json.dumps(data, indent=1) + "\n"
        try:
            if create_parents:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, staging = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
            )
            try:
                with os.fdopen(handle, "w") as stream:
                    stream.write(text)
                os.replace(staging, self.path)
            except BaseException:
                os.unlink(staging)
                raise
        except OSError as err:
            raise DiagnosticException(
                f"cannot write the tuning cache {self.path}: {err.strerror or err}"
            ) from None


def _entries(data: Any) -> list[dict[str, Any]]:
    """The entries of a parsed file; ValueError when it is not a tuning cache."""
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:  # pyright: ignore[reportUnknownMemberType]
        raise ValueError(f'not a physlayout tuning cache: no "format": "{FILE_FORMAT}"')
    if data.get("version") != FILE_VERSION:  # pyright: ignore[reportUnknownMemberType]
        raise ValueError(
            f"file version {data.get('version')!r}, this physlayout reads {FILE_VERSION}"  # pyright: ignore[reportUnknownMemberType]
        )
    entries: Any = data.get("entries")  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(entries, list):
        raise ValueError('"entries" is not a list')
    checked: list[dict[str, Any]] = []
    for position, entry in enumerate(entries):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        if not (isinstance(entry, dict)
                and all(isinstance(entry.get(k), str) for k in ("device", "driver", "signature", "schedule"))  # pyright: ignore[reportUnknownMemberType]
                and isinstance(entry.get("version"), int)  # pyright: ignore[reportUnknownMemberType]
                and isinstance(entry.get("seconds"), int | float)):  # pyright: ignore[reportUnknownMemberType]  # fmt: skip
            raise ValueError(f"entry {position} is not a tuned kernel")
        if entry["version"] == SCHEDULE_FORMAT:
            try:
                parse_schedule_text(entry["schedule"])  # pyright: ignore[reportUnknownArgumentType]
            except VerifyException as err:
                raise ValueError(f"entry {position}: {err}") from None
        checked.append(entry)  # pyright: ignore[reportUnknownArgumentType]
    return checked


def _tuned(entry: Mapping[str, Any]) -> TunedKernel:
    return TunedKernel(
        entry["signature"],
        parse_schedule_text(entry["schedule"]),
        float(entry["seconds"]),
        str(entry.get("kernel", "")),
        float(entry.get("unscheduled_seconds", 0.0)),
        float(entry.get("heuristic_seconds", 0.0)),
    )


def tuned_table(
    runtime: Any, path: str | os.PathLike[str] | None = None, notes: TextIO | None = None
) -> str:
    """The schedule table of `runtime`'s device from the tuning cache at `path` (None: the
    default one): what `run`, `compile` and `physlayout.compile` give the compiler. A
    `path` given that does not exist is noted (the heuristic's schedules are used)."""
    if path is not None and not Path(path).exists():
        print(f"note: no tuning cache at {path}; kernels get the heuristic's schedules",
              file=notes if notes is not None else sys.stderr)  # fmt: skip
        return ""
    cache = TuningCache.load(path if path is not None else tuning_cache_path(), notes)
    return cache.table_text(DeviceKey.of(runtime), notes)
