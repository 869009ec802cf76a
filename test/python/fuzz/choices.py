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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")


class Chooser:
    """A source of bounded integers; records `choices` (offsets from each lower bound) and
    the `spans` of choices that built one part of a program (a statement, a function, a
    layout), which `shrink_choices` tries to delete as a whole."""

    def __init__(self) -> None:
        self.choices: list[int] = []
        self.spans: list[tuple[int, int]] = []

    @contextmanager
    def span(self) -> Iterator[None]:
        """Mark the choices made inside the block as one part."""
        start = len(self.choices)
        yield
        if len(self.choices) > start:
            self.spans.append((start, len(self.choices)))

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

    def repeat(self, least: int, most: int, percent: int) -> Iterator[int]:
        """Indices of a repeated part: `least` always, then each further one (up to
        `most`) while a flag with `percent`% holds. Each repetition is a span that starts
        with its flag, so deleting a span deletes exactly one repetition (and running out
        of choices stops the repetition)."""
        for index in range(most):
            with self.span():
                if index >= least and not self.flag(percent):
                    return
                yield index

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
    choices: Sequence[int],
    interesting: Callable[[list[int]], bool],
    budget: int = 200,
    spans_of: Callable[[list[int]], Sequence[tuple[int, int]]] | None = None,
) -> list[int]:
    """A smaller choice list for which `interesting` still holds, calling `interesting` at
    most `budget` times. Greedy passes until none helps: delete whole spans (`spans_of`
    gives the spans of a choice list, largest tried first: removing a statement's span lets
    the next statement take its place), delete runs of 8, 4, 2 and 1 choices, and lower
    single values (to 0, to half, by one)."""
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

    def delete_spans() -> bool:
        if spans_of is None:
            return False
        improved = False
        tried: set[tuple[int, ...]] = set()
        while calls < budget:
            spans = sorted(set(spans_of(best)), key=lambda s: s[0] - s[1])
            for start, end in spans:
                candidate = best[:start] + best[end:]
                if tuple(candidate) in tried:
                    continue
                tried.add(tuple(candidate))
                if attempt(candidate):
                    improved = True
                    break
            else:
                return improved
        return improved

    def delete_runs() -> bool:
        improved = False
        for width in (8, 4, 2, 1):
            start = 0
            while start < len(best) and calls < budget:
                if attempt(best[:start] + best[start + width :]):
                    improved = True
                else:
                    start += width
        return improved

    def lower_values() -> bool:
        improved = False
        for position in range(len(best)):
            if calls >= budget or position >= len(best):
                break
            value = best[position]
            for smaller in (0, value // 2, value - 1):
                if 0 <= smaller < value and attempt(
                    [*best[:position], smaller, *best[position + 1 :]]
                ):
                    improved = True
                    break
        return improved

    while calls < budget:
        if not (delete_spans() | delete_runs() | lower_values()):
            break
    return best
