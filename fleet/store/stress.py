"""Lease stress workers: the 16-process race of the contract suite and the benchmark run these as
real processes (``python -m fleet.store.stress hammer|hold ...``), each with its own store.

``hammer`` loops until a deadline, taking random overlapping lease sets with ``try_acquire``,
holding each briefly and releasing it, and prints one JSON document with every hold and the
acquisition latencies. ``hold`` takes a lease set and a task, prints them, then heartbeats until
killed (the crash test sends it SIGKILL). ``churn`` acquires and releases until the store fails
(the server-crash test stops PostgreSQL under it), printing one JSON line per event as soon as
the store has acknowledged it: ``{"ready": holder}`` once connected,
``{"g": [[id, symbol, mode, token], ...]}`` after a grant,
``{"rs": [ids]}`` before a release is sent, ``{"r": [ids]}`` after it returned.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from fleet.types import Acquired, LeaseRequest

__all__ = ["churn", "flat_pool", "hammer", "hierarchical_pool", "main"]


def hierarchical_pool(files: int, classes: int, methods: int) -> list[str]:
    """Symbols with nesting and prefix traps: ``f0.py``, ``f0.py::C0``, ``f0.py::C0.m0``, and
    ``f0.py::C0x`` (which must not conflict with ``f0.py::C0``)."""
    pool: list[str] = []
    for f in range(files):
        path = f"pkg/f{f}.py"
        pool.append(path)
        for c in range(classes):
            pool.append(f"{path}::C{c}")
            pool.append(f"{path}::C{c}x")
            pool.extend(f"{path}::C{c}.m{m}" for m in range(methods))
    return pool


def flat_pool(size: int, per_file: int = 50) -> list[str]:
    """``size`` class symbols, ``per_file`` per file: ``pkg/m0.py::C0`` ..."""
    return [f"pkg/m{i // per_file}.py::C{i % per_file}" for i in range(size)]


def hammer(
    url: str,
    holder: str,
    pool: list[str],
    *,
    duration_s: float,
    start_at: float,
    seed: int,
    max_set: int = 3,
    write_ratio: float = 0.7,
    hold_s: float = 0.002,
    ttl_s: float = 60.0,
) -> dict[str, Any]:
    from fleet.store import open_store

    rng = random.Random(seed)
    store = open_store(url, migrate=False)
    holds: list[list[Any]] = []
    latencies: list[float] = []
    refused = 0
    try:
        delay = start_at - time.time()
        if delay > 0:
            time.sleep(delay)
        end = time.monotonic() + duration_s
        while time.monotonic() < end:
            size = rng.randint(1, max_set)
            requests = [
                LeaseRequest(s, "write" if rng.random() < write_ratio else "read")
                for s in rng.sample(pool, min(size, len(pool)))
            ]
            t0 = time.perf_counter()
            result = store.leases.try_acquire(holder, "bench", requests, ttl_s)
            latencies.append(time.perf_counter() - t0)
            if not isinstance(result, Acquired):
                refused += 1
                continue
            start = time.monotonic()
            if hold_s:
                time.sleep(rng.uniform(0, hold_s))
            finish = time.monotonic()
            store.leases.release(holder, [g.lease_id for g in result.grants])
            holds.extend([g.symbol, g.mode, g.token, start, finish] for g in result.grants)
    finally:
        store.close()
    return {"holder": holder, "holds": holds, "latencies": latencies, "refused": refused}


def hold(url: str, holder: str, symbols: list[str], ttl_s: float, task_kind: str) -> None:
    from fleet.store import open_store

    store = open_store(url, migrate=False)
    tasks = store.queue.claim(holder, [task_kind], limit=1)
    result = store.leases.try_acquire(
        holder, "crash", [LeaseRequest(s, "write") for s in symbols], ttl_s
    )
    grants = [g.__dict__ for g in result.grants] if isinstance(result, Acquired) else []
    print(json.dumps({"tasks": [t.task_id for t in tasks], "grants": grants}), flush=True)
    while True:  # a live unit: heartbeat until killed
        time.sleep(ttl_s / 3)
        store.leases.renew(holder, ttl_s)
        store.queue.heartbeat(holder)


def churn(
    url: str, holder: str, pool: list[str], *, seed: int, hold_s: float = 0.0, ttl_s: float = 600.0
) -> None:
    from fleet.errors import StoreError
    from fleet.store import open_store

    rng = random.Random(seed)
    out = sys.stdout
    try:
        store = open_store(url, migrate=False)
        store.leases.held(holder=holder)  # connected: tell the driver
        out.write(json.dumps({"ready": holder}) + "\n")
        out.flush()
        while True:
            requests = [
                LeaseRequest(s, "write" if rng.random() < 0.7 else "read")
                for s in rng.sample(pool, rng.randint(1, 2))
            ]
            got = store.leases.try_acquire(holder, "churn", requests, ttl_s)
            if not isinstance(got, Acquired):
                continue
            grants = [[g.lease_id, g.symbol, g.mode, g.token] for g in got.grants]
            out.write(json.dumps({"g": grants}) + "\n")
            out.flush()
            if hold_s:
                time.sleep(rng.uniform(0, hold_s))
            ids = [g.lease_id for g in got.grants]
            out.write(json.dumps({"rs": ids}) + "\n")
            out.flush()
            store.leases.release(holder, ids)
            out.write(json.dumps({"r": ids}) + "\n")
            out.flush()
    except StoreError as exc:  # the server went away: what was acknowledged is on stdout
        out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        out.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fleet.store.stress")
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("hammer")
    h.add_argument("--url", required=True)
    h.add_argument("--holder", required=True)
    h.add_argument("--pool", help="JSON list of symbols")
    h.add_argument("--pool-size", type=int, default=0, help="or: N flat symbols, 50 per file")
    h.add_argument("--duration", type=float, default=2.0)
    h.add_argument("--start-at", type=float, default=0.0)
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--max-set", type=int, default=3)
    h.add_argument("--write-ratio", type=float, default=0.7)
    h.add_argument("--hold", type=float, default=0.002)
    k = sub.add_parser("hold")
    k.add_argument("--url", required=True)
    k.add_argument("--holder", required=True)
    k.add_argument("--symbols", required=True, help="JSON list of symbols")
    k.add_argument("--ttl", type=float, default=1.0)
    k.add_argument("--task-kind", default="unit")
    c = sub.add_parser("churn")
    c.add_argument("--url", required=True)
    c.add_argument("--holder", required=True)
    c.add_argument("--pool", required=True, help="JSON list of symbols")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--hold", type=float, default=0.0, help="hold each grant up to this long")
    args = parser.parse_args(argv)
    if args.command == "churn":
        churn(args.url, args.holder, json.loads(args.pool), seed=args.seed, hold_s=args.hold)
        return 0
    if args.command == "hammer":
        out = hammer(
            args.url,
            args.holder,
            json.loads(args.pool) if args.pool else flat_pool(args.pool_size),
            duration_s=args.duration,
            start_at=args.start_at,
            seed=args.seed,
            max_set=args.max_set,
            write_ratio=args.write_ratio,
            hold_s=args.hold,
        )
        json.dump(out, sys.stdout)
        return 0
    hold(args.url, args.holder, json.loads(args.symbols), args.ttl, args.task_kind)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
