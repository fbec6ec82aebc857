"""gc_paused: what the index allocates leaves the pause in the oldest generation (no scan of
millions of young objects on re-enabling), and cycles among it are still collected."""

from __future__ import annotations

import gc
import weakref

from fleet.graph._shared import gc_paused

__all__: list[str] = []


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_objects_allocated_in_the_pause_are_not_left_young() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        made: list[list[int]] = [[] for _ in range(5000)]
    assert gc.isenabled()
    young = {id(o) for o in gc.get_objects(generation=0)}
    young |= {id(o) for o in gc.get_objects(generation=1)}
    assert not any(id(x) in young for x in made)
    assert gc.get_freeze_count() == 0  # nothing stays frozen


def test_a_cycle_made_in_the_pause_is_still_collected() -> None:
    with gc_paused():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
    assert ref() is not None
    gc.collect()
    assert ref() is None


def test_a_nested_pause_leaves_the_collector_off() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
