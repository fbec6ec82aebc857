"""LeaseStore contract: hierarchy, modes, all-or-nothing, deadlines, TTL, fencing."""

from __future__ import annotations

import threading
import time

import pytest

from fleet.protocols import LeaseStore
from fleet.store import Store, open_store
from fleet.types import Acquired, LeaseRequest, Refused


def w(symbol: str, rank: int = 0) -> LeaseRequest:
    return LeaseRequest(symbol, "write", rank)


def r(symbol: str, rank: int = 0) -> LeaseRequest:
    return LeaseRequest(symbol, "read", rank)


def test_implements_protocol(store: Store) -> None:
    assert isinstance(store.leases, LeaseStore)


@pytest.mark.parametrize(
    ("held", "wanted", "conflict"),
    [
        ("a.py::Foo", "a.py::Foo.bar", True),
        ("a.py::Foo.bar", "a.py::Foo", True),
        ("a.py::Foo", "a.py::Foobar", False),
        ("a.py::Foobar", "a.py::Foo", False),
        ("a.py::Foo", "a.py::Bar", False),
        ("a.py", "a.py::Foo.bar", True),
        ("a.py::Foo.bar.baz", "a.py", True),
        ("a.py", "a.pyx::Foo", False),
        ("a.py", "a.py.bak", False),
        ("a_b.py::X", "a%b.py::X", False),
        ("a.py::Foo", "b.py::Foo", False),
        ("a.py::Foo", "a.py::Foo", True),
    ],
)
def test_hierarchical_write_conflicts(store: Store, held: str, wanted: str, conflict: bool) -> None:
    first = store.leases.try_acquire("A", "u1", [w(held)], 30)
    assert isinstance(first, Acquired)
    second = store.leases.try_acquire("B", "u2", [w(wanted)], 30)
    if conflict:
        assert isinstance(second, Refused)
        assert second.blocking == ((held, "A"),)
    else:
        assert isinstance(second, Acquired), second


def test_two_classes_of_one_file_are_written_at_once(store: Store) -> None:
    assert isinstance(store.leases.try_acquire("A", "u1", [w("m.py::One")], 30), Acquired)
    assert isinstance(store.leases.try_acquire("B", "u2", [w("m.py::Two")], 30), Acquired)
    assert {g.holder for g in store.leases.held("m.py")} == {"A", "B"}


def test_reads_share_and_writes_exclude(store: Store) -> None:
    leases = store.leases
    assert isinstance(leases.try_acquire("A", "u", [r("a.py::Foo")], 30), Acquired)
    assert isinstance(leases.try_acquire("B", "u", [r("a.py::Foo.bar")], 30), Acquired)
    assert isinstance(leases.try_acquire("C", "u", [w("a.py::Foo.bar")], 30), Refused)
    assert isinstance(leases.try_acquire("C", "u", [w("a.py")], 30), Refused)
    assert isinstance(leases.try_acquire("C", "u", [w("a.py::Other")], 30), Acquired)


def test_all_or_nothing(store: Store) -> None:
    leases = store.leases
    assert isinstance(leases.try_acquire("A", "u1", [w("b.py::Taken")], 30), Acquired)
    result = leases.try_acquire("B", "u2", [w("a.py::Free"), w("b.py::Taken"), w("c.py::Z")], 30)
    assert isinstance(result, Refused)
    assert "b.py::Taken" in result.reason
    assert leases.held(holder="B") == []
    assert isinstance(leases.try_acquire("C", "u3", [w("a.py::Free"), w("c.py::Z")], 30), Acquired)


def test_grants_come_in_rank_then_symbol_order(store: Store) -> None:
    result = store.leases.try_acquire(
        "A", "u", [w("z.py::A", 0), w("a.py::B", 2), w("m.py::C", 1), w("b.py::D", 0)], 30
    )
    assert isinstance(result, Acquired)
    assert [g.symbol for g in result.grants] == ["b.py::D", "z.py::A", "m.py::C", "a.py::B"]
    assert [g.token for g in result.grants] == sorted(g.token for g in result.grants)


def test_fencing_tokens_increase_and_check_fence(store: Store) -> None:
    leases = store.leases
    first = leases.try_acquire("A", "u", [w("a.py::Foo")], 30)
    assert isinstance(first, Acquired)
    old = first.grants[0].token
    assert leases.check_fence("a.py::Foo", old)
    leases.release("A")
    assert leases.check_fence("a.py::Foo", old)  # nobody wrote since
    second = leases.try_acquire("B", "u", [w("a.py::Foo")], 30)
    assert isinstance(second, Acquired)
    assert second.grants[0].token > old
    assert not leases.check_fence("a.py::Foo", old)
    assert leases.check_fence("a.py::Foo", second.grants[0].token)
    leases.release("B")
    # a later write inside the symbol also invalidates it; a write next to it does not
    inner = leases.try_acquire("C", "u", [w("a.py::Foo.bar")], 30)
    assert isinstance(inner, Acquired)
    assert not leases.check_fence("a.py::Foo", second.grants[0].token)
    assert leases.check_fence("a.py::Foo.bar", inner.grants[0].token)
    assert isinstance(leases.try_acquire("D", "u", [w("a.py::Foobar")], 30), Acquired)
    assert leases.check_fence("a.py::Foo.bar", inner.grants[0].token)
    assert not leases.check_fence("never.py::X", 1)


def test_one_acquisition_of_nested_writes_does_not_fence_itself_off(store: Store) -> None:
    leases = store.leases
    both = leases.try_acquire("A", "u", [w("a.py::Foo"), w("a.py::Foo.bar"), r("a.py::Baz")], 30)
    assert isinstance(both, Acquired)
    assert all(leases.check_fence(g.symbol, g.token) for g in both.grants)
    leases.release("A")
    later = leases.try_acquire("B", "u", [w("a.py::Foo.bar")], 30)  # a later writer inside
    assert isinstance(later, Acquired)
    assert not any(leases.check_fence(g.symbol, g.token) for g in both.grants if g.mode == "write")
    assert leases.check_fence("a.py::Baz", both.grants[0].token)  # read, nobody wrote there


def test_expired_leases_are_ignored_and_reaped(store: Store) -> None:
    leases = store.leases
    assert isinstance(leases.try_acquire("A", "u", [w("a.py::Foo")], 0.3), Acquired)
    assert isinstance(leases.try_acquire("B", "u", [w("a.py::Foo")], 30), Refused)
    time.sleep(0.45)
    assert leases.renew("A", 30) == 0  # too late: the lease is gone
    taken = leases.try_acquire("B", "u", [w("a.py::Foo")], 30)
    assert isinstance(taken, Acquired)
    assert isinstance(leases.try_acquire("C", "u", [w("x.py::Short")], 0.2), Acquired)
    time.sleep(0.3)
    assert leases.reap() >= 1
    assert [g.holder for g in leases.held()] == ["B"]


def test_renew_keeps_a_lease_alive(store: Store) -> None:
    leases = store.leases
    assert isinstance(leases.try_acquire("A", "u", [w("a.py::Foo"), r("b.py::X")], 0.5), Acquired)
    for _ in range(3):
        time.sleep(0.25)
        assert leases.renew("A", 0.5) == 2
    assert isinstance(leases.try_acquire("B", "u", [w("a.py::Foo")], 30), Refused)


def test_release_some_or_all(store: Store) -> None:
    leases = store.leases
    got = leases.try_acquire("A", "u", [w("a.py::One"), w("a.py::Two"), w("a.py::Three")], 30)
    assert isinstance(got, Acquired)
    assert leases.release("B") == 0  # not B's
    assert leases.release("A", [got.grants[0].lease_id]) == 1
    assert len(leases.held(holder="A")) == 2
    assert leases.release("A") == 2
    assert leases.held() == []


def test_acquire_all_waits_for_release_within_deadline(store: Store) -> None:
    leases = store.leases
    assert isinstance(leases.try_acquire("A", "u", [w("a.py::Foo")], 30), Acquired)
    threading.Timer(0.3, lambda: leases.release("A")).start()
    started = time.monotonic()
    result = leases.acquire_all("B", "u", [w("a.py::Foo.bar"), w("b.py::X")], 30, deadline_s=5)
    assert isinstance(result, Acquired)
    assert 0.25 < time.monotonic() - started < 3


def test_acquire_all_gives_up_at_deadline_holding_nothing(store: Store) -> None:
    leases = store.leases
    assert isinstance(leases.try_acquire("A", "u", [w("b.py::X")], 30), Acquired)
    started = time.monotonic()
    result = leases.acquire_all("B", "u", [w("a.py::Free"), w("b.py::X")], 30, deadline_s=0.4)
    elapsed = time.monotonic() - started
    assert isinstance(result, Refused)
    assert "deadline" in result.reason and result.blocking == (("b.py::X", "A"),)
    assert 0.4 <= elapsed < 1.5
    assert leases.held(holder="B") == []


def test_two_store_instances_see_each_other(store_url: str) -> None:
    with open_store(store_url) as one, open_store(store_url) as two:
        assert isinstance(one.leases.try_acquire("A", "u", [w("a.py::Foo")], 30), Acquired)
        assert isinstance(two.leases.try_acquire("B", "u", [w("a.py::Foo.x")], 30), Refused)
        one.leases.release("A")
        assert isinstance(two.leases.try_acquire("B", "u", [w("a.py::Foo.x")], 30), Acquired)
