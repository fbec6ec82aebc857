"""The summary of benchmarks/bench_leases.py: medians over the runs (ratios: the median of the
per-run ratios), printed as markdown tables and stored under ``results["summary"]``."""

from __future__ import annotations

import statistics
from typing import Any


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(results: dict[str, Any]) -> None:
    """Medians over the runs (ratios: the median of the per-run ratios), printed and stored."""
    summary: dict[str, Any] = {"leases": [], "queue": [], "scenario": []}
    keys = sorted({(r["pool"], r["procs"]) for r in results["leases"]}, key=lambda k: (-k[0], k[1]))
    print("\nmedians over the runs")
    print(
        "| pool | procs | grants/s | p50 ms | p99 ms | violations | naive grants/s "
        "| naive p50 / p99 ms | ours / naive | CPU µs/grant ours (client + server + WAL writer) "
        "| naive | naive CPU / ours |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for pool, procs in keys:
        rows = [r for r in results["leases"] if (r["pool"], r["procs"]) == (pool, procs)]
        m = {
            k: _median([r[k] for r in rows])
            for k in (
                "grants_s",
                "p50_ms",
                "p99_ms",
                "naive_grants_s",
                "naive_p50_ms",
                "naive_p99_ms",
                "ratio",
                "cpu_ratio",
            )
        }
        for side in ("cpu_us", "naive_cpu_us"):
            m[side] = {k: _median([r[side][k] for r in rows]) for k in rows[0][side]}
        m.update(pool=pool, procs=procs, violations=sum(r["violations"] for r in rows))
        summary["leases"].append(m)
        c, n = m["cpu_us"], m["naive_cpu_us"]
        print(
            f"| {pool} | {procs} | {m['grants_s']:.0f} | {m['p50_ms']:.2f} | {m['p99_ms']:.1f} | "
            f"{m['violations']} | {m['naive_grants_s']:.0f} | {m['naive_p50_ms']:.2f} / "
            f"{m['naive_p99_ms']:.1f} | {m['ratio']:.2f} | {c['total']:.0f} ({c['client']:.0f} + "
            f"{c['server']:.0f} + {c['walwriter']:.0f}) | {n['total']:.0f} ({n['client']:.0f} + "
            f"{n['server']:.0f} + {n['walwriter']:.0f}) | {m['cpu_ratio']:.2f} |"
        )
    if results["queue"]:
        print("\n| queue (16 processes) | fleet claims/s | plain SKIP LOCKED claims/s |")
        print("|---|---|---|")
    for batch in sorted({r["batch"] for r in results["queue"]}):
        rows = [r for r in results["queue"] if r["batch"] == batch]
        m = {
            k: _median([r[k] for r in rows])
            for k in ("fleet_queue_claims_s", "naive_queue_claims_s")
        }
        m["batch"] = batch
        summary["queue"].append(m)
        label = "single" if batch == 1 else f"batched ({batch})"
        print(f"| {label} | {m['fleet_queue_claims_s']:.0f} | {m['naive_queue_claims_s']:.0f} |")
    if results["scenario"]:
        print("\n| seed scenario (16 agents, 80 endpoints) | makespan s | parallelism |")
        print("|---|---|---|")
    for strategy in ("symbol leases", "file locks", "global lock"):
        rows = [r for r in results["scenario"] if r["strategy"] == strategy]
        if rows:
            m = {k: _median([r[k] for r in rows]) for k in ("makespan_s", "parallelism")}
            m["strategy"] = strategy
            summary["scenario"].append(m)
            print(f"| {strategy} | {m['makespan_s']:.2f} | {m['parallelism']:.1f} |")
    results["summary"] = summary
