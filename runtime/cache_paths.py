"""Where physlayout caches what it computed once: compiled artifacts
(`runtime/compile_cache.py`) and built OpenCL programs (`runtime/program_cache.py`).

The directory: `$PHYSLAYOUT_CACHE_DIR`, else `$XDG_CACHE_HOME/physlayout/artifacts`, else
`~/.cache/physlayout/artifacts`.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache directory (module docstring)."""
    explicit = os.environ.get("PHYSLAYOUT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "physlayout" / "artifacts"
