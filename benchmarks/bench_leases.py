"""Lease, queue and scheduling benchmark of the fleet store on PostgreSQL (default settings).

    FLEET_BENCH_PG_DSN=postgresql://fleet:fleet@127.0.0.1:5432/fleet_test \\
        .venv/bin/python benchmarks/bench_leases.py [--duration 3] [--runs 3] \\
        [--json benchmarks/results/bench_leases.json]

Creates a scratch database (dropped afterwards) on the server of the DSN and measures, in the same
run against peers:

1. lease grants/s and acquire latency p50/p99 at 1, 4 and 16 processes, over a 100k-symbol pool
   and a hot 50-symbol pool: ``PostgresLeaseStore`` (hierarchical, fenced, TTL) against a naive
   ``INSERT ... ON CONFLICT`` / ``DELETE`` lease table; every hold of ours goes through the
   invariant checker (violations must be 0); and CPU per grant of each (clients + backends +
   WAL writer, from /proc, when the server runs on this machine);
2. queue claims/s at 16 processes, single and batched (50): ``SqlTaskQueue.claim`` against a plain
   ``FOR UPDATE SKIP LOCKED`` loop;
3. the seed scenario: 16 agents, 80 endpoints with overlapping symbol needs, with symbol leases vs
   file-level locks vs one global lock: makespan and achieved parallelism.

The peers' worker processes (``bench_leases.py _worker NAME ...``) are in
``benchmarks/_lease_workers.py``, the summary tables in ``benchmarks/_lease_summary.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import psycopg
from _lease_summary import summarize  # benchmarks/: the summary tables
from _lease_workers import WORKERS  # benchmarks/: the peers, run as subprocesses
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from fleet.store import open_store
from fleet.store.invariants import Hold, check_holds
from fleet.types import Acquired, LeaseRequest

HERE = os.path.abspath(__file__)


# ---------------------------------------------------------------- orchestration
def run_procs(argvs: list[list[str]]) -> list[dict[str, Any]]:
    procs = [
        subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, text=True)
        for argv in argvs
    ]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("a benchmark worker failed")
    return [json.loads(o) for o in outs]


def _ticks(pid: int) -> int | None:
    """User + system CPU ticks of a process on this machine, None when it is not visible."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def run_measured(
    argvs: list[list[str]], dsn: str, start_at: float, duration: float
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """``run_procs``, plus the CPU seconds of the workers ("client"), their backends ("server")
    and the WAL writer over the middle of the run (25%..85% of ``duration``), and that window
    as ``t0``/``t1`` on the monotonic clock. Server figures are NaN unless the server runs on
    this machine (its processes' /proc)."""
    procs = [
        subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, text=True)
        for argv in argvs
    ]
    with psycopg.connect(dsn, autocommit=True) as conn:
        give_up = time.monotonic() + 60
        while True:  # every worker connected (a late one starts late: shift the window)
            rows = conn.execute(
                "SELECT pid, backend_type FROM pg_stat_activity WHERE backend_type = 'walwriter' "
                "OR (datname = current_database() AND pid <> pg_backend_pid())"
            ).fetchall()
            if sum(kind != "walwriter" for _, kind in rows) >= len(procs):
                break
            if time.monotonic() > give_up or any(p.poll() is not None for p in procs):
                break
            time.sleep(0.05)
    start_at = max(start_at, time.time())
    time.sleep(max(0.0, start_at + 0.25 * duration - time.time()))
    groups = {
        "client": [p.pid for p in procs],
        "server": [pid for pid, kind in rows if kind != "walwriter"],
        "walwriter": [pid for pid, kind in rows if kind == "walwriter"],
    }
    t0 = time.monotonic()
    before = {k: [_ticks(pid) for pid in pids] for k, pids in groups.items()}
    time.sleep(max(0.0, start_at + 0.85 * duration - time.time()))
    t1 = time.monotonic()
    after = {k: [_ticks(pid) for pid in pids] for k, pids in groups.items()}
    outs = [p.communicate(timeout=600)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("a benchmark worker failed")
    hz = os.sysconf("SC_CLK_TCK")
    cpu: dict[str, float] = {"t0": t0, "t1": t1}
    for kind in groups:
        pairs = list(zip(before[kind], after[kind], strict=True))
        seen = all(a is not None and b is not None for a, b in pairs) and bool(pairs)
        cpu[kind] = sum(b - a for a, b in pairs) / hz if seen else float("nan")  # type: ignore[operator]
    return [json.loads(o) for o in outs], cpu


def _per_grant_us(cpu: dict[str, float], grants: int) -> dict[str, float]:
    n = grants or float("nan")
    out = {k: 1e6 * cpu[k] / n for k in ("client", "server", "walwriter")}
    out["total"] = out["client"] + out["server"] + out["walwriter"]
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


LEAD_S = 2.0  # + 0.25 s per process: every worker has imported and connected before start_at


def bench_leases(dsn: str, procs: int, pool: int, duration: float) -> dict[str, Any]:
    """Ours, then the naive peer, each ``procs`` processes for ``duration`` seconds: grants/s,
    latency, violations, and CPU per grant (clients + their backends + WAL writer, over the
    middle of each run), which stays comparable when other work shares the machine."""
    hammer = ["-m", "fleet.store.stress", "hammer", "--url", dsn, "--pool-size", str(pool)]
    hammer += ["--duration", str(duration), "--max-set", "1", "--write-ratio", "1", "--hold", "0"]
    start_at = time.time() + LEAD_S + 0.25 * procs
    ours, cpu = run_measured(
        [[*hammer, "--holder", f"p{n}", "--start-at", str(start_at), "--seed", str(n)]
         for n in range(procs)],
        dsn, start_at, duration,
    )  # fmt: skip
    holds = [Hold(o["holder"], s, m, t, a, b) for o in ours for s, m, t, a, b in o["holds"]]
    lat = [x for o in ours for x in o["latencies"]]
    in_window = sum(1 for h in holds if cpu["t0"] <= h.start < cpu["t1"])
    start_at = time.time() + LEAD_S + 0.25 * procs
    naive, ncpu = run_measured(
        [[HERE, "_worker", "naive_lease", dsn, str(pool), str(duration), str(start_at), str(n)]
         for n in range(procs)],
        dsn, start_at, duration,
    )  # fmt: skip
    nlat = [x for o in naive for x in o["latencies"]]
    n_in_window = sum(1 for o in naive for t in o["starts"] if ncpu["t0"] <= t < ncpu["t1"])
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE naive_leases")
    naive_grants = sum(o["grants"] for o in naive)
    us, nus = _per_grant_us(cpu, in_window), _per_grant_us(ncpu, n_in_window)
    return {
        "procs": procs,
        "pool": pool,
        "load_1m": os.getloadavg()[0],
        "ratio": len(holds) / naive_grants if naive_grants else float("nan"),
        "grants_s": len(holds) / duration,
        "p50_ms": pct(lat, 0.5),
        "p99_ms": pct(lat, 0.99),
        "refused": sum(o["refused"] for o in ours),
        "violations": len(check_holds(holds)),
        "naive_grants_s": naive_grants / duration,
        "naive_p50_ms": pct(nlat, 0.5),
        "naive_p99_ms": pct(nlat, 0.99),
        "cpu_us": us,
        "naive_cpu_us": nus,
        # > 1: a grant of ours costs the machine less CPU than a grant of the peer
        "cpu_ratio": nus["total"] / us["total"],
    }


def bench_queue(dsn: str, procs: int, batch: int, duration: float) -> dict[str, Any]:
    result: dict[str, Any] = {"procs": procs, "batch": batch}
    for name, fill in (("fleet_queue", _fill_fleet_queue), ("naive_queue", _fill_naive_queue)):
        fill(dsn, 200000 if batch > 1 else 20000)
        start_at = time.time() + 1.0 + 0.15 * procs
        outs = run_procs(
            [
                [HERE, "_worker", name, dsn, str(batch), str(duration), str(start_at), str(n)]
                for n in range(procs)
            ]
        )
        # a queue that runs dry before the end counts until the last worker found it empty
        elapsed = max(o["elapsed"] for o in outs)
        result[name + "_claims_s"] = sum(o["claimed"] for o in outs) / elapsed
        result[name + "_claimed"] = sum(o["claimed"] for o in outs)
    return result


def _fill_fleet_queue(dsn: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM tasks WHERE kind = 'bench'")
        conn.execute(
            "INSERT INTO tasks (id, kind, key, payload, status, max_attempts, run_after, "
            "created_at, updated_at) SELECT md5(g::text), 'bench', g::text, '{}', 'queued', 3, "
            "0, g, g FROM generate_series(1, %s) g",
            (n,),
        )
        conn.execute("VACUUM ANALYZE tasks")


def _fill_naive_queue(dsn: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE naive_queue")
        conn.execute(
            "INSERT INTO naive_queue (status) SELECT 'queued' FROM generate_series(1, %s)", (n,)
        )
        conn.execute("VACUUM ANALYZE naive_queue")


# ---------------------------------------------------------------- the seed scenario
def seed_scenario(seed: int = 7) -> list[tuple[list[str], float]]:
    """80 endpoints in 10 route files; a quarter also edit a shared helper; 20-60 ms of work."""
    rng = random.Random(seed)
    units = []
    for k in range(10):
        for j in range(8):
            needs = [f"api/routes_{k}.py::endpoint_{j}"]
            if rng.random() < 0.25:
                needs.append(f"api/common.py::helper_{rng.randrange(5)}")
            units.append((needs, rng.uniform(0.02, 0.06)))
    return units


def simulate(dsn: str, strategy: str, agents: int = 16) -> dict[str, Any]:
    units = seed_scenario()
    with open_store(dsn) as store:
        store.leases.release  # noqa: B018 - the store is migrated and reachable
    queue = list(range(len(units)))
    lock = threading.Lock()
    busy: list[float] = []

    def needs(i: int) -> list[LeaseRequest]:
        symbols = units[i][0]
        if strategy == "file locks":
            symbols = sorted({s.split("::")[0] for s in symbols})
        elif strategy == "global lock":
            symbols = ["<repository>"]
        return [LeaseRequest(s, "write") for s in symbols]

    def agent(n: int) -> None:
        with open_store(dsn, migrate=False) as own:
            while True:
                with lock:
                    if not queue:
                        return
                    i = queue.pop(0)
                got = own.leases.acquire_all(f"{strategy}-{n}", str(i), needs(i), 60, 120)
                assert isinstance(got, Acquired)
                time.sleep(units[i][1])
                own.leases.release(f"{strategy}-{n}")
                with lock:
                    busy.append(units[i][1])

    started = time.monotonic()
    threads = [threading.Thread(target=agent, args=(n,)) for n in range(agents)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    makespan = time.monotonic() - started
    return {"strategy": strategy, "makespan_s": makespan, "parallelism": sum(busy) / makespan}


# ---------------------------------------------------------------- main
def scratch_database(admin: str) -> str:
    name = f"fleet_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(admin)
    params["dbname"] = name
    return make_conninfo(**params)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        name, dsn, a, d, s, seed = sys.argv[2:8]
        out = WORKERS[name](dsn, int(a), float(d), float(s), int(seed))
        json.dump(out, sys.stdout)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument(
        "--procs", default="1,4,16", help="comma-separated process counts for the lease runs"
    )
    parser.add_argument("--pools", default="100000,50", help="comma-separated lease pool sizes")
    parser.add_argument(
        "--leases-only", action="store_true", help="skip the queue and seed-scenario sections"
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="repeat every section; the summary takes medians"
    )
    args = parser.parse_args()
    procs_list = [int(x) for x in args.procs.split(",")]
    pools = [int(x) for x in args.pools.split(",")]
    admin = os.environ.get("FLEET_BENCH_PG_DSN") or os.environ.get("FLEET_TEST_PG_DSN")
    if not admin:
        raise SystemExit("set FLEET_BENCH_PG_DSN to a PostgreSQL DSN that may CREATE DATABASE")
    dsn = scratch_database(admin)
    results: dict[str, Any] = {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(["benchmarks/bench_leases.py", *sys.argv[1:]]),
        "leases": [],
        "queue": [],
        "scenario": [],
    }
    try:
        open_store(dsn).close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE naive_leases (symbol text PRIMARY KEY, holder text NOT NULL, "
                "expires_at timestamptz NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE naive_queue (id bigserial PRIMARY KEY, status text NOT NULL, "
                "claimed_by text)"
            )
            version = conn.execute("SHOW server_version").fetchone()
        results["server"] = f"PostgreSQL {version[0] if version else '?'}, {os.cpu_count()} cores"
        results["load_before"] = os.getloadavg()
        print(results["server"], f"load average {results['load_before'][0]:.2f}")
        for run in range(args.runs):
            _lease_section(dsn, pools, procs_list, args.duration, run, results)
            if args.leases_only:
                continue
            for batch in (1, 50):
                r = bench_queue(dsn, 16, batch, args.duration)
                results["queue"].append({"run": run, **r})
            for strategy in ("symbol leases", "file locks", "global lock"):
                r = simulate(dsn, strategy)
                results["scenario"].append({"run": run, **r})
        results["load_after"] = os.getloadavg()
        summarize(results)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                f'DROP DATABASE IF EXISTS "{conninfo_to_dict(dsn)["dbname"]}" WITH (FORCE)'
            )
    return _finish(args.json, results)


def _lease_section(
    dsn: str,
    pools: list[int],
    procs_list: list[int],
    duration: float,
    run: int,
    out: dict[str, Any],
) -> None:
    print(f"\nrun {run + 1}")
    print(
        "| pool | procs | grants/s | p50 ms | p99 ms | violations | naive grants/s "
        "| naive p50 | naive p99 | ours / naive | CPU µs/grant ours / naive | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for pool in pools:
        for procs in procs_list:
            r = bench_leases(dsn, procs, pool, duration)
            out["leases"].append({"run": run, **r})
            print(
                f"| {pool} | {procs} | {r['grants_s']:.0f} | {r['p50_ms']:.2f} | "
                f"{r['p99_ms']:.2f} | {r['violations']} | {r['naive_grants_s']:.0f} | "
                f"{r['naive_p50_ms']:.2f} | {r['naive_p99_ms']:.2f} | {r['ratio']:.2f} | "
                f"{r['cpu_us']['total']:.0f} / {r['naive_cpu_us']['total']:.0f} | "
                f"{r['load_1m']:.1f} |",
                flush=True,
            )


def _finish(path: str | None, results: dict[str, Any]) -> int:
    if path:
        with open(path, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
