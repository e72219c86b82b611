"""Deltas fold back into the manifests they came from, however the history goes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from helix.world import Entry, apply_delta, delta

_paths = st.sampled_from(["a", "b", "c", "d/e", "d/f", "g/h/i"])
_entries = st.builds(
    Entry,
    st.sampled_from(["1" * 64, "2" * 64, "3" * 64]),
    st.sampled_from([0o100644, 0o100755, 0o120777]),
    st.integers(0, 5),
    st.integers(-1, 3),
)
_manifests = st.dictionaries(_paths, _entries, max_size=6)


@given(st.lists(_manifests, min_size=1, max_size=8))
def test_folding_the_deltas_of_a_history_gives_every_state(states: list[dict[str, Entry]]) -> None:
    folded: dict[str, Entry] = {}
    previous: dict[str, Entry] = {}
    for state in states:
        apply_delta(folded, delta(previous, state))
        assert folded == state
        previous = state


@given(_manifests, _manifests)
def test_a_delta_holds_only_what_changed(old: dict[str, Entry], new: dict[str, Entry]) -> None:
    changes = delta(old, new)
    assert all(old.get(p) != new.get(p) for p in changes)
    assert set(changes) == {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}
