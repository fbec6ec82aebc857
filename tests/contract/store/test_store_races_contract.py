"""Real concurrency on both stores: 16 processes racing for overlapping hierarchical lease sets,
a holder killed with SIGKILL mid-unit, and the UserAuth/TenantContext deadlock story."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from fleet.store import Store, open_store
from fleet.store.invariants import Hold, check_holds
from fleet.store.stress import hierarchical_pool
from fleet.types import Acquired, LeaseRequest, Refused

PROCESSES = 16


@pytest.mark.slow
def test_sixteen_processes_never_hold_conflicting_leases(store: Store) -> None:
    pool = hierarchical_pool(files=3, classes=3, methods=2)
    start_at = time.time() + 1.5  # every process imported and connected before the start
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fleet.store.stress",
                "hammer",
                "--url",
                store.url,
                "--holder",
                f"p{n}",
                "--pool",
                json.dumps(pool),
                "--duration",
                "1.5",
                "--start-at",
                str(start_at),
                "--seed",
                str(n),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    outputs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert [p.returncode for p in procs] == [0] * PROCESSES
    holds = [
        Hold(out["holder"], symbol, mode, token, start, end)
        for out in outputs
        for symbol, mode, token, start, end in out["holds"]
    ]
    refused = sum(out["refused"] for out in outputs)
    assert len({h.holder for h in holds}) == PROCESSES  # everyone got leases
    assert len(holds) > 200 and refused > 0  # real contention, not a quiet run
    assert check_holds(holds) == []
    assert store.leases.held() == []


def test_checker_catches_a_violation() -> None:
    ok = [Hold("a", "f.py::C", "write", 1, 0.0, 1.0), Hold("b", "f.py::C.m", "write", 2, 1.0, 2.0)]
    assert check_holds(ok) == []
    bad = [Hold("a", "f.py::C", "write", 1, 0.0, 1.0), Hold("b", "f.py::C.m", "read", 2, 0.5, 2.0)]
    assert check_holds(bad)[0].startswith("conflicting holds overlap")
    twice = [Hold("a", "f.py::C", "read", 7, 0.0, 1.0), Hold("b", "g.py::C", "read", 7, 0.0, 1.0)]
    assert check_holds(twice)[0].startswith("token 7 issued twice")


def test_kill_minus_nine_mid_unit(store: Store) -> None:
    symbols = ["acme/auth.py::UserAuth", "acme/tenancy.py::TenantContext.switch"]
    task_id = store.queue.enqueue("unit", "u-crash", {"symbols": symbols})
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fleet.store.stress",
            "hold",
            "--url",
            store.url,
            "--holder",
            "doomed",
            "--symbols",
            json.dumps(symbols),
            "--ttl",
            "1.0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    started = json.loads(proc.stdout.readline())
    assert started["tasks"] == [task_id]
    old = {g["symbol"]: g["token"] for g in started["grants"]}
    assert set(old) == set(symbols)
    time.sleep(1.2)  # it heartbeats: still held past its first TTL
    assert isinstance(
        store.leases.try_acquire("rescuer", "u", [LeaseRequest(symbols[0], "write")], 30), Refused
    )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    proc.stdout.close()
    # no heartbeat any more: the leases expire and the task is requeued
    result = store.leases.acquire_all(
        "rescuer", "u-crash", [LeaseRequest(s, "write") for s in symbols], 30, deadline_s=5
    )
    assert isinstance(result, Acquired)
    time.sleep(0.5)
    assert store.queue.requeue_stale(older_than_s=1.0) == 1
    (task,) = store.queue.claim("rescuer")
    assert task.task_id == task_id and task.attempts == 2
    # the killed holder's late write carries its old fencing tokens: refused
    for symbol, token in old.items():
        assert not store.leases.check_fence(symbol, token)
    for grant in result.grants:
        assert store.leases.check_fence(grant.symbol, grant.token)


AUTH = "acme/auth.py::UserAuth"
TENANT = "acme/tenancy.py::TenantContext"


def _run_pair(store_url: str, agent: object) -> dict[str, object]:
    results: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def run(name: str, first: str, second: str) -> None:
        with open_store(store_url, migrate=False) as own:
            results[name] = agent(own, name, first, second, barrier)  # type: ignore[operator]

    threads = [
        threading.Thread(target=run, args=("A", AUTH, TENANT)),
        threading.Thread(target=run, args=("B", TENANT, AUTH)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_deadlock_story_naive_locking_times_out(store: Store) -> None:
    """Each agent locks what it needs when it needs it: A holds UserAuth and waits for
    TenantContext, B holds TenantContext and waits for UserAuth. Neither can finish."""

    def naive(own: Store, name: str, first: str, second: str, barrier: threading.Barrier) -> str:
        got = own.leases.acquire_all(name, name, [LeaseRequest(first, "write")], 30, deadline_s=2)
        assert isinstance(got, Acquired)
        barrier.wait()  # both hold their first lease
        then = own.leases.acquire_all(name, name, [LeaseRequest(second, "write")], 30, 1.0)
        barrier.wait()  # a naive agent keeps what it holds until it has what it waits for
        own.leases.release(name)
        return "finished" if isinstance(then, Acquired) else "timed out"

    assert _run_pair(store.url, naive) == {"A": "timed out", "B": "timed out"}


def test_deadlock_story_ranked_all_or_nothing_both_finish(store: Store) -> None:
    """The same two agents, each asking for its whole set in lock-rank order, all-or-nothing."""
    ranks = {AUTH: 0, TENANT: 1}  # UserAuth <-> TenantContext is one SCC: one rank order

    def ranked(own: Store, name: str, first: str, second: str, barrier: threading.Barrier) -> str:
        barrier.wait()
        wanted = [LeaseRequest(s, "write", ranks[s]) for s in (first, second)]
        got = own.leases.acquire_all(name, name, wanted, 30, deadline_s=5)
        if not isinstance(got, Acquired):
            return "timed out"
        assert [g.symbol for g in got.grants] == [AUTH, TENANT]
        time.sleep(0.2)  # the unit's work
        own.ledger.append("unit.done", {"agent": name}, unit=name)
        own.leases.release(name)
        return "finished"

    assert _run_pair(store.url, ranked) == {"A": "finished", "B": "finished"}
    assert {e.unit for e in store.ledger.events(kind="unit.done")} == {"A", "B"}
