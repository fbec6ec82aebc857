"""The peers of benchmarks/bench_leases.py that run as its subprocesses (``bench_leases.py
_worker NAME ...``): a naive ``INSERT ... ON CONFLICT`` / ``DELETE`` lease table, a plain
``FOR UPDATE SKIP LOCKED`` queue loop, and ``SqlTaskQueue.claim`` through the fleet store."""

from __future__ import annotations

import random
import time

import psycopg

from fleet.store import open_store


def naive_lease_worker(dsn: str, pool_size: int, duration: float, start_at: float, seed: int):
    rng = random.Random(seed)
    holder = f"n{seed}"
    grants, refused, latencies, starts = 0, 0, [], []
    with psycopg.connect(dsn, autocommit=True) as conn:
        time.sleep(max(0.0, start_at - time.time()))
        end = time.monotonic() + duration
        while time.monotonic() < end:
            i = rng.randrange(pool_size)
            symbol = f"pkg/m{i // 50}.py::C{i % 50}"
            t0 = time.perf_counter()
            row = conn.execute(
                "INSERT INTO naive_leases (symbol, holder, expires_at) "
                "VALUES (%s, %s, now() + interval '60 s') "
                "ON CONFLICT (symbol) DO UPDATE SET holder = excluded.holder, "
                "expires_at = excluded.expires_at WHERE naive_leases.expires_at < now() "
                "RETURNING symbol",
                (symbol, holder),
            ).fetchone()
            latencies.append(time.perf_counter() - t0)
            if row is None:
                refused += 1
                continue
            grants += 1
            starts.append(t0)
            conn.execute(
                "DELETE FROM naive_leases WHERE symbol = %s AND holder = %s", (symbol, holder)
            )
    return {"grants": grants, "refused": refused, "latencies": latencies, "starts": starts}


def naive_queue_worker(dsn: str, batch: int, duration: float, start_at: float, seed: int):
    claimed = 0
    with psycopg.connect(dsn, autocommit=True) as conn:
        time.sleep(max(0.0, start_at - time.time()))
        end = time.monotonic() + duration
        while time.monotonic() < end:
            rows = conn.execute(
                "WITH c AS (SELECT id FROM naive_queue WHERE status = 'queued' ORDER BY id "
                "LIMIT %s FOR UPDATE SKIP LOCKED) UPDATE naive_queue q SET status = 'claimed', "
                "claimed_by = %s FROM c WHERE q.id = c.id RETURNING q.id",
                (batch, f"n{seed}"),
            ).fetchall()
            if not rows:
                break
            claimed += len(rows)
        elapsed = duration - (end - time.monotonic())
    return {"claimed": claimed, "elapsed": min(elapsed, duration)}


def fleet_queue_worker(dsn: str, batch: int, duration: float, start_at: float, seed: int):
    claimed = 0
    store = open_store(dsn, migrate=False)
    try:
        time.sleep(max(0.0, start_at - time.time()))
        end = time.monotonic() + duration
        while time.monotonic() < end:
            tasks = store.queue.claim(f"w{seed}", ["bench"], limit=batch)
            if not tasks:
                break
            claimed += len(tasks)
        elapsed = duration - (end - time.monotonic())
    finally:
        store.close()
    return {"claimed": claimed, "elapsed": min(elapsed, duration)}


WORKERS = {
    "naive_lease": naive_lease_worker,
    "naive_queue": naive_queue_worker,
    "fleet_queue": fleet_queue_worker,
}
