"""`FreshNames` gives the names a search from suffix 1 gives, for any taken set and any
sequence of bases (suffix-like bases included), in steps linear in the names handed out."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from physlayout.naming import FreshNames

# bases that collide with each other's suffixed forms: "k_1" is both a base and `k`'s first
_BASES = st.sampled_from(["k", "k_1", "k_2", "k_1_1", "main_fused", "main_fused_3", "x"])


def _searched(taken: set[str], base: str) -> str:
    """The name by a search from suffix 1 (what `FreshNames` must equal)."""
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


@settings(max_examples=300, deadline=None)
@given(
    st.sets(_BASES | st.sampled_from(["k_3", "k_5", "main_fused_1"])), st.lists(_BASES, max_size=40)
)
def test_fresh_names_equal_a_search_from_one(taken: set[str], bases: list[str]) -> None:
    fresh = FreshNames(taken)
    expected = set(taken)
    names = [fresh.fresh(base) for base in bases]
    assert names == [_searched(expected, base) for base in bases]
    assert len(set(names)) == len(names) and not set(names) & taken


def test_many_names_from_one_base_take_linear_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = FreshNames()
    probes = 0

    class Counting(set[str]):
        def __contains__(self, item: object) -> bool:
            nonlocal probes
            probes += 1
            return super().__contains__(item)

    monkeypatch.setattr(fresh, "taken", Counting())
    names = [fresh.fresh("main_fused") for _ in range(2000)]
    assert names[:3] == ["main_fused", "main_fused_1", "main_fused_2"]
    assert names[-1] == "main_fused_1999"
    assert probes <= 2 * 2000
