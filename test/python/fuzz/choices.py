"""Where the random program generators get their decisions from.

A generator asks a `Chooser` for bounded integers (and derived choices). Three sources:

- `DrawChooser`: Hypothesis draws (`st.integers`), so a generator is a Hypothesis strategy
  (`programs()` in `programs.py`) that Hypothesis can shrink;
- `ReplayChooser`: a recorded list of choices, replayed (missing choices are the minimum);
- `RandomChooser`: a seeded `random.Random` (no Hypothesis engine: the long campaign).

Every chooser records the choices it made as offsets from the lower bound, so any
generated program can be regenerated from `chooser.choices` with a `ReplayChooser`, and
`shrink_choices` minimizes a failing program by shrinking that list (deleting runs,
lowering values): smaller offsets are simpler programs (features are opt-in).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


class Chooser:
    """A source of bounded integers; records `choices` (offsets from each lower bound)."""

    def __init__(self) -> None:
        self.choices: list[int] = []

    def _next(self, size: int) -> int:
        raise NotImplementedError

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]; shrinks towards lo."""
        assert lo <= hi, (lo, hi)
        if lo == hi:
            return lo
        offset = self._next(hi - lo)
        self.choices.append(offset)
        return lo + offset

    def choice(self, options: Sequence[T]) -> T:
        """One of `options`; shrinks towards the first."""
        return options[self.integer(0, len(options) - 1)]

    def flag(self, percent: int) -> bool:
        """True with about `percent`% probability; shrinks towards False."""
        return self.integer(0, 99) >= 100 - percent

    def subset(self, options: Sequence[T], percent: int) -> list[T]:
        return [o for o in options if self.flag(percent)]

    def permutation(self, n: int) -> list[int]:
        """A permutation of range(n); shrinks towards the identity."""
        rest = list(range(n))
        return [rest.pop(self.integer(0, len(rest) - 1)) for _ in range(n)]


class DrawChooser(Chooser):
    """Choices drawn by Hypothesis (inside `st.composite` or `st.data()`)."""

    def __init__(self, draw: Callable[[st.SearchStrategy[int]], int]) -> None:
        super().__init__()
        self.draw = draw

    def _next(self, size: int) -> int:
        return self.draw(st.integers(0, size))


class RandomChooser(Chooser):
    """Choices from a seeded generator; small offsets are favoured like Hypothesis does."""

    def __init__(self, seed: Any) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def _next(self, size: int) -> int:
        if self.rng.random() < 0.1:
            return self.rng.choice((0, size))
        return self.rng.randint(0, size)


class ReplayChooser(Chooser):
    """Replays recorded offsets (clamped to each range); the minimum once they run out."""

    def __init__(self, recorded: Sequence[int]) -> None:
        super().__init__()
        self.recorded = list(recorded)
        self.position = 0

    def _next(self, size: int) -> int:
        if self.position >= len(self.recorded):
            return 0
        value = self.recorded[self.position]
        self.position += 1
        return min(max(value, 0), size)


def shrink_choices(
    choices: Sequence[int], interesting: Callable[[list[int]], bool], budget: int = 200
) -> list[int]:
    """A smaller choice list for which `interesting` still holds (greedy: delete runs of
    choices, then lower single values to 0 or halve them), calling `interesting` at
    most `budget` times."""
    best = list(choices)
    calls = 0

    def attempt(candidate: list[int]) -> bool:
        nonlocal calls, best
        if calls >= budget or candidate == best:
            return False
        calls += 1
        if interesting(candidate):
            best = candidate
            return True
        return False

    improved = True
    while improved and calls < budget:
        improved = False
        for width in (8, 4, 2, 1):
            start = 0
            while start < len(best) and calls < budget:
                if attempt(best[:start] + best[start + width :]):
                    improved = True
                else:
                    start += width
        for position in range(len(best)):
            if calls >= budget:
                break
            value = best[position]
            for smaller in (0, value // 2, value - 1):
                if 0 <= smaller < value and attempt(
                    [*best[:position], smaller, *best[position + 1 :]]
                ):
                    improved = True
                    break
    return best
