"""Fresh names: `base` when it is free, else `base_1`, `base_2`, ... the first one free.

`FreshNames` hands them out over a growing set of taken names (kernel symbols in
legalize-layout, value names in the graph pictures). It remembers, per base, the suffix it
gave last: every smaller suffix was taken then and names are never given back, so the next
search starts after it. Handing out n names from one base (a model's hundreds of
`@main_fused_*` kernels) costs O(n) steps in all, where searching from 1 each time costs
O(n^2); the names are the same.
"""

from __future__ import annotations

from collections.abc import Iterable


class FreshNames:
    """Names not taken yet (see the module docstring)."""

    def __init__(self, taken: Iterable[str] = ()):
        self.taken = set(taken)
        self._last: dict[str, int] = {}

    def fresh(self, base: str) -> str:
        """`base`, or `base_k` for the least k >= 1 not taken; it is taken from now on."""
        if base not in self.taken:
            self.taken.add(base)
            return base
        k = self._last.get(base, 0) + 1
        while f"{base}_{k}" in self.taken:
            k += 1
        self._last[base] = k
        name = f"{base}_{k}"
        self.taken.add(name)
        return name
