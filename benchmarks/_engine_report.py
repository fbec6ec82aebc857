"""bench_engine.py's summary: the median speedup over rounds and the printed table."""

from __future__ import annotations

import os
import statistics
from typing import Any

__all__ = ["median_speedups", "print_report"]


def median_speedups(rows: list[dict[str, Any]]) -> dict[str, tuple[float, list[float]]]:
    """Per worker count and pool factor (the mode without its round): the median of the rounds'
    speedups, and the speedups in round order."""
    by_mode: dict[str, list[float]] = {}
    for r in rows:
        if "speedup" in r and r.get("workers", 1) > 1:
            by_mode.setdefault(r["mode"], []).append(r["speedup"])
    return {mode: (round(statistics.median(each), 2), each) for mode, each in by_mode.items()}


def print_report(rows: list[dict[str, Any]], summary: dict[str, Any], batch: int,
                 agents: int) -> None:
    """The rows as a table, then each row's idle time, unit parts and CPU, and the medians."""
    print(f"{'mode':<15} {'units':>5} {'verified':>8} {'sweep s':>8} {'fix s':>7} "
          f"{'speedup':>7} {'runs':>4} {'overhead/unit s':>15} {'queue s':>7} {'launch s':>8} "
          f"{'dispatch s':>10} {'step start s':>12}")
    for r in rows:
        print(f"{r['mode']:<15} {r['units']:>5} {r['verified']:>8} {r['sweep_wall_s']:>8} "
              f"{r['fix_wall_s']:>7} {r.get('speedup', '-'):>7} {r['dagster_runs']:>4} "
              f"{r.get('overhead_per_unit_s', '-'):>15} {r.get('queue_s', '-'):>7} "
              f"{r.get('launch_s', '-'):>8} {r.get('dispatch_s', '-'):>10} "
              f"{r.get('step_start_s', '-'):>12}")
    for r in rows:
        if "idle_before_first_s_per_unit" in r:
            print(f"{r['mode']}: idle per unit before the first batch "
                  f"{r['idle_before_first_s_per_unit']} s, between batches "
                  f"{r['idle_between_s_per_unit']} s, after the last "
                  f"{r['idle_after_last_s_per_unit']} s, in the batch steps around the units "
                  f"{r['idle_in_steps_s_per_unit']} s")
    for r in rows:
        if "unit_agent_s_per_unit" in r:
            print(f"{r['mode']}: a unit's own wall, per unit: agent "
                  f"{r['unit_agent_s_per_unit']} s, "
                  f"gates {r['unit_gates_s_per_unit']} s, the rest (leases, worktree, commit, "
                  f"push, ledger) {r['unit_rest_s_per_unit']} s")
    for r in rows:
        if "sweep_tree_cpu_s" in r:
            print(f"{r['mode']}: CPU of the whole sweep (this benchmark's process tree: daemon, "
                  f"code server, run workers, sandboxes) {r['sweep_tree_cpu_s']} s, "
                  f"{r['sweep_tree_cpu_s_per_unit']} per unit")
    for r in rows:
        if "cpu_s" in r:
            print(f"{r['mode']}: CPU in the fix stage: the machine {r['cpu_s']} s = "
                  f"{r['cores_busy']} of {os.cpu_count()} cores busy on average; this "
                  f"benchmark's processes {r['tree_cpu_s']} s = {r['tree_cores']} cores, "
                  f"{r['tree_cpu_s_per_unit']} CPU-s per unit: "
                  + ", ".join(f"{k} {v}" for k, v in r["tree_by_kind"].items()))
    for mode, (med, each) in summary["median_speedup"].items():
        print(f"{mode}: speedup against K = 1 of the same round, median {med} over "
              f"{len(each)} round(s): {', '.join(map(str, each))}")
    print(f"batch {batch}, {agents} unit(s) at once per worker, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
