"""TaskQueue contract: idempotent enqueue, batch claims without duplicates, retries, staleness."""

from __future__ import annotations

import threading
import time

from fleet.protocols import TaskQueue
from fleet.store import Store, open_store


def test_implements_protocol(store: Store) -> None:
    assert isinstance(store.queue, TaskQueue)


def test_enqueue_is_idempotent_while_live(store: Store) -> None:
    q = store.queue
    first = q.enqueue("unit", "k1", {"n": 1})
    assert q.enqueue("unit", "k1", {"n": 2}) == first
    assert q.enqueue("other", "k1", {}) != first
    (task,) = q.claim("w1", ["unit"])
    assert task.task_id == first and task.payload == {"n": 1} and task.attempts == 1
    assert q.enqueue("unit", "k1", {}) == first  # claimed is still live
    q.complete(first, {"ok": True})
    again = q.enqueue("unit", "k1", {"n": 3})
    assert again != first
    record = q.get(first)
    assert record is not None and record.status == "done" and record.result == {"ok": True}


def test_claim_in_order_by_kind_and_in_batches(store: Store) -> None:
    q = store.queue
    ids = [q.enqueue("unit", f"k{i}", {"i": i}) for i in range(5)]
    q.enqueue("job", "j", {})
    batch = q.claim("w", ["unit"], limit=3)
    assert [t.task_id for t in batch] == ids[:3]
    assert all(t.claimed_by == "w" for t in batch)
    assert [t.task_id for t in q.claim("w", ["unit"], limit=10)] == ids[3:]
    assert q.claim("w", ["unit"]) == []
    assert [t.kind for t in q.claim("w")] == ["job"]


def test_fail_retries_then_fails(store: Store) -> None:
    q = store.queue
    task_id = q.enqueue("unit", "k", {})
    for attempt in range(1, 4):
        (task,) = q.claim("w")
        assert task.attempts == attempt
        q.fail(task_id, f"boom {attempt}")
    assert q.claim("w") == []
    record = q.get(task_id)
    assert record is not None and record.status == "failed" and record.error == "boom 3"
    other = q.enqueue("unit", "k2", {})
    q.claim("w")
    q.fail(other, "fatal", retry=False)
    assert q.get(other).status == "failed"  # type: ignore[union-attr]


def test_requeue_of_stale_claims_only(store: Store) -> None:
    q = store.queue
    stale = q.enqueue("unit", "stale", {})
    live = q.enqueue("unit", "live", {})
    q.claim("dead-worker", limit=1)
    q.claim("live-worker", limit=1)
    time.sleep(0.4)
    q.heartbeat("live-worker")
    assert q.requeue_stale(0.3) == 1
    assert q.get(stale).status == "queued"  # type: ignore[union-attr]
    assert q.get(live).status == "claimed"  # type: ignore[union-attr]
    q.complete(stale)  # a late completion by the dead worker is ignored
    assert q.get(stale).status == "queued"  # type: ignore[union-attr]
    (again,) = q.claim("w2")
    assert again.task_id == stale and again.attempts == 2


def test_concurrent_claims_never_hand_out_a_task_twice(store_url: str) -> None:
    with open_store(store_url) as setup:
        for i in range(120):
            setup.queue.enqueue("unit", f"k{i}", {"i": i})
    claimed: list[str] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        with open_store(store_url) as own:
            while True:
                batch = own.queue.claim(name, limit=4)
                if not batch:
                    return
                with lock:
                    claimed.extend(t.task_id for t in batch)
                for t in batch:
                    own.queue.complete(t.task_id)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(claimed) == 120 and len(set(claimed)) == 120
    with open_store(store_url) as check:
        assert check.queue.counts() == {"done": 120}
