"""Garbage-collector settings of physlayout's compile work (issue 43: compile time).

Python's cyclic collector runs a young-generation collection every 700 allocations (net of
frees). Importing the compiler (xDSL's dialects and physlayout's passes: classes, functions,
IRDL definitions), parsing a model and running a pass all allocate objects that nearly all
survive, so those collections mostly rescan live objects: about 0.1 s of a cold compile's
imports and up to a second of a large model's passes and OpenCL writer.
`spaced_young_collections()` collects the young generation every
`YOUNG_COLLECTION_THRESHOLD` allocations instead, within a block (the `compile` command,
`lowering.pipelines.survivors_frozen`), and restores the caller's thresholds after it. What
is collected is the same (only later), so nothing else changes; objects that become garbage
wait up to that many allocations longer.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_COLLECTION_THRESHOLD = 20_000
"""The allocations between two young-generation collections inside
`spaced_young_collections` (Python's default: 700)."""


@contextmanager
def spaced_young_collections() -> Iterator[None]:
    """Within the block, the young generation is collected every `YOUNG_COLLECTION_THRESHOLD`
    allocations (or the caller's threshold, when larger); the older generations' thresholds
    are unchanged. The caller's thresholds are restored at the end, also on error."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(YOUNG_COLLECTION_THRESHOLD, thresholds[0]), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
