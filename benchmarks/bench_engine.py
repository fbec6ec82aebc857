"""Benchmark: the cost of submitted runs (Dagster's engine) against in-process runs.

The same generated repository as ``bench_fleet.py`` (N packages, one ``yaml.load`` each: one
unit per package, disjoint write sets) is swept twice in the same run, each on a fresh copy and a
fresh instance configured as ``fleet sweep`` configures it:

- ``in-process``: ``sweep()`` with every run ``execute_in_process`` in this process (what tests
  do, and what ``fleet sweep`` did before runs were submitted);
- ``submitted``: ``sweep()`` inside ``fleet_pipelines.engine.submitting`` — every run created
  with the code location's origin, queued by the ``QueuedRunCoordinator``, dequeued by a
  ``dagster-daemon`` this script starts (as ``fleet sweep`` does on the embedded default) and
  launched as a run worker process by the code server.

Reported per mode: sweep wall, fix wall (the batched ``fix_<campaign>_job`` runs), Dagster runs,
and for the submitted runs the orchestration phases read back from the event log: queue
(enqueued -> starting: the daemon's dequeue), launch (starting -> started: code server, run
worker process, code import), step start (started -> first ``STEP_START``) — summed over the runs
and per unit; and the extra fix wall per unit against in-process.

Only one machine and one launcher (Dagster's ``DefaultRunLauncher``) are measured: runs on
several workers (dagster-celery, dagster-k8s) are not wired yet (docs/deploy.md), so there is no
1 / 2 / 4 worker column.

    .venv/bin/python benchmarks/bench_engine.py [--units 64] [--batch 8] [--agents 2] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_fleet import make_repo  # noqa: E402

# Dagster 1.13 still stores the run events under their pipeline-era names
ENQUEUED, STARTING, STARTED, STEP = "PIPELINE_ENQUEUED", "PIPELINE_STARTING", "PIPELINE_START", \
    "STEP_START"


def _phases(instance: Any) -> dict[str, float]:
    """Seconds spent queued (enqueued -> the daemon's launch), launching (-> the run worker's
    start: code server, process, code import) and starting the first step, summed over runs."""
    totals = {"queue_s": 0.0, "launch_s": 0.0, "step_start_s": 0.0}
    for run in instance.get_runs():
        stamps: dict[str, float] = {}
        for entry in instance.all_logs(run.run_id):
            kind = entry.dagster_event_type
            if kind is not None and kind.value not in stamps:
                stamps[kind.value] = entry.timestamp
        if {ENQUEUED, STARTING, STARTED, STEP} <= stamps.keys():
            totals["queue_s"] += stamps[STARTING] - stamps[ENQUEUED]
            totals["launch_s"] += stamps[STARTED] - stamps[STARTING]
            totals["step_start_s"] += stamps[STEP] - stamps[STARTED]
        else:
            totals["runs_without_phases"] = totals.get("runs_without_phases", 0.0) + 1
    return totals


def run_sweep(base: Path, work: Path, mode: str, agents: int, batch: int) -> dict[str, Any]:
    from dagster import DagsterInstance

    from fleet.store import open_store
    from fleet.unit import latest_results
    from fleet_pipelines.commands._sweep import sweep
    from fleet_pipelines.engine import ensure_run_queue, submitting
    from fleet_pipelines.resources import FleetSettings
    from fleet_pipelines.storage import ensure_instance_config

    repo = work / f"repo-{mode}"
    shutil.copytree(base, repo, symlinks=True)
    settings = FleetSettings.from_env({
        "FLEET_HOME": str(work / f"fleet-{mode}"), "FLEET_REPO": str(repo),
        "FLEET_SANDBOX": "bwrap", "FLEET_AGENTS": str(agents), "FLEET_BATCH_SIZE": str(batch),
        "FLEET_CAMPAIGNS": "yaml-safe-load"})
    settings.save()
    dagster_home = work / f"dagster-{mode}"
    ensure_instance_config(dagster_home)
    ensure_run_queue(dagster_home, agents)
    lines: list[str] = []
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        t0 = time.perf_counter()
        if mode == "submitted":
            with submitting(instance, settings.env(), lines.append):
                report = sweep(settings, instance, say=lines.append)
        else:
            report = sweep(settings, instance, say=lines.append)
        wall = time.perf_counter() - t0
        phases = _phases(instance) if mode == "submitted" else {}
    with open_store(settings.store_url) as store:
        results = list(latest_results(store.ledger, "yaml-safe-load").values())
    n = max(len(results), 1)
    return {"mode": mode, "units": len(results),
            "verified": sum(r.status == "verified" for r in results),
            "sweep_wall_s": round(wall, 2), "fix_wall_s": round(report.campaigns[0].fix_s, 2),
            "dagster_runs": report.runs, "unit_time_s": round(sum(r.wall_s for r in results), 2),
            **{k: round(v, 2) for k, v in phases.items()},
            **{f"{k}_per_unit": round(v / n, 3) for k, v in phases.items() if k.endswith("_s")},
            "load_1min": round(os.getloadavg()[0], 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        work = Path(tmp)
        base = make_repo(work / "base", args.units)
        rows = [run_sweep(base, work, mode, args.agents, args.batch)
                for mode in ("in-process", "submitted")]
    peer, submitted = rows
    extra = (submitted["fix_wall_s"] - peer["fix_wall_s"]) / max(submitted["units"], 1)
    summary = {"units": args.units, "batch": args.batch, "agents": args.agents,
               "cpus": os.cpu_count(), "rows": rows,
               "extra_fix_wall_per_unit_s": round(extra, 3)}
    print(f"{'mode':<11} {'units':>5} {'verified':>8} {'sweep s':>8} {'fix s':>7} {'runs':>4} "
          f"{'queue s':>7} {'launch s':>8} {'step start s':>12}")
    for r in rows:
        print(f"{r['mode']:<11} {r['units']:>5} {r['verified']:>8} {r['sweep_wall_s']:>8} "
              f"{r['fix_wall_s']:>7} {r['dagster_runs']:>4} {r.get('queue_s', '-'):>7} "
              f"{r.get('launch_s', '-'):>8} {r.get('step_start_s', '-'):>12}")
    print(f"extra fix wall per unit, submitted vs in-process: {extra:.3f} s "
          f"(batch {args.batch}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
