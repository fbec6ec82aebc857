"""Benchmark: the cost of submitted runs (Dagster's engine) against in-process runs.

The same generated repository as ``bench_fleet.py`` (N packages, one ``yaml.load`` each: one
unit per package, disjoint write sets) is swept twice in the same run, each on a fresh copy and a
fresh instance configured as ``fleet sweep`` configures it:

- ``in-process``: ``sweep()`` with every run ``execute_in_process`` in this process (what tests
  do, and what ``fleet sweep`` did before runs were submitted);
- ``submitted``: ``sweep()`` inside ``fleet_pipelines.engine.submitting`` — every run created
  with the code location's origin, queued by the ``QueuedRunCoordinator``, dequeued by a
  ``dagster-daemon`` this script starts (as ``fleet sweep`` does on the embedded default) and
  launched by the embedded default's run launcher (a run worker forked from a warm fork server,
  fleet_pipelines/engine/run_launcher.py);
- ``submitted-default`` (with ``--submitted``, its peer): the same with Dagster's
  ``DefaultRunLauncher``, whose code server spawns a fresh interpreter per run.

Reported per mode: sweep wall, fix wall (the batched ``fix_<campaign>_job`` runs), Dagster runs,
and for the submitted runs the orchestration phases read back from the event log: queue
(enqueued -> starting: the daemon's dequeue), launch (starting -> started: code server, run
worker process, code import), step start (started -> first ``STEP_START``) — summed over the runs
and per unit; and the extra fix wall per unit against in-process.

``celery-K`` (K = 1, 2, 4 by default): the multi-worker deployment of tests/distributed
(``tests/distributed/_cluster.py``: Redis, ``git daemon`` serving the repository, the daemon on
``deploy/dagster.yaml`` with Dagster's storage and the fleet store on PostgreSQL, K fleet celery
workers each with its own ``FLEET_HOME``), swept by ``fleet sweep <remote>``. Reported per K:
fix wall, speedup against K = 1, and the orchestration overhead per unit: the worker time not
spent running units (K x fix wall - the units' own wall) / units, and the phases of its runs
(submission -> queued, queue, launch, dispatch to a celery worker, step start).

    .venv/bin/python benchmarks/bench_engine.py [--units 64] [--batch 8] [--agents 2]\
        [--workers 1,2,4] [--pools 1,2] [--json F]
    (FLEET_BENCH_PG_DSN: a server of yours, else a throwaway one; ``--pools 1,2`` runs each K
    with the ``agent_sandbox`` pool at K and at 2K batches: above K the next batch's run
    launches while the workers still run theirs)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _cpu_sampler import CpuSampler  # noqa: E402
from _engine_report import median_speedups, print_report  # noqa: E402
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


def run_sweep(base: Path, work: Path, mode: str, agents: int, batch: int,
              cpu: CpuSampler) -> dict[str, Any]:
    from dagster import DagsterInstance

    from fleet.store import open_store
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
    if mode == "submitted-default":  # the peer: Dagster's own launcher (the code server spawns)
        config = dagster_home / "dagster.yaml"
        config.write_text(config.read_text() + "run_launcher:\n  module: dagster\n"
                          "  class: DefaultRunLauncher\n")
    ensure_run_queue(dagster_home, agents)
    lines: list[str] = []
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        t0 = time.perf_counter()
        begun = time.time()
        if mode.startswith("submitted"):
            with submitting(instance, settings.env(), lines.append):
                report = sweep(settings, instance, say=lines.append)
        else:
            report = sweep(settings, instance, say=lines.append)
        wall = time.perf_counter() - t0
        ended = time.time()
        phases = _phases(instance) if mode.startswith("submitted") else {}
        span = _fix_span(instance)
    with open_store(settings.store_url) as store:
        results = _finished(store.ledger)
    n = max(len(results), 1)
    time.sleep(1.0)  # a CPU sample after the sweep's end, for its window
    return {"mode": mode, "units": len(results),
            "verified": sum(r.status == "verified" for r in results),
            "sweep_wall_s": round(wall, 2), "fix_wall_s": round(report.campaigns[0].fix_s, 2),
            "dagster_runs": report.runs, "unit_time_s": round(sum(r.wall_s for r in results), 2),
            **_unit_parts(results),
            **{k: round(v, 2) for k, v in phases.items()},
            **{f"{k}_per_unit": round(v / n, 3) for k, v in phases.items() if k.endswith("_s")},
            **(cpu.window(*span, len(results)) if span else {}),
            **{f"sweep_{k}": v for k, v in cpu.window(begun, ended, len(results)).items()
               if k in ("tree_cpu_s", "tree_cpu_s_per_unit", "tree_by_kind")},
            "load_1min": round(os.getloadavg()[0], 2)}


def _unit_parts(results: list[Any]) -> dict[str, float]:
    """Where the units' own wall time went (``UnitResult``'s clocks), per unit: the agent, the
    gates, and the rest (leases, worktree, commit, push, ledger). Side by side with K = 1 it
    says which part slows down when K units share the machine."""
    n = max(len(results), 1)
    agent = sum(r.agent_s for r in results)
    gates = sum(r.gates_s for r in results)
    rest = sum(r.wall_s for r in results) - agent - gates
    return {"unit_agent_s_per_unit": round(agent / n, 3),
            "unit_gates_s_per_unit": round(gates / n, 3),
            "unit_rest_s_per_unit": round(rest / n, 3)}


def _finished(ledger: Any) -> list[Any]:
    """The last ``unit.finished`` result of each unit this (fresh) store saw. Not
    ``latest_results``: it drops results judged with another test interpreter than this
    process's ``sys.executable``, and a submitted run's worker runs on the daemon's (``python3``
    where this benchmark may run as ``python``)."""
    from fleet.unit import UNIT_FINISHED, result_from_dict

    last = {e.unit: e for e in ledger.events(campaign="yaml-safe-load", kind=UNIT_FINISHED)
            if e.unit is not None}
    return [result_from_dict(e.payload) for e in last.values()]


def _fix_span(instance: Any) -> tuple[float, float] | None:
    """The fix runs' first creation and last end (epoch s), or None without fix runs."""
    from dagster import RunsFilter

    records = [r for r in instance.get_run_records(RunsFilter())
               if r.dagster_run.job_name.startswith("fix_")]
    if not records:
        return None
    return (min(r.create_timestamp.timestamp() for r in records),
            max((r.end_time or 0.0) for r in records))


def _fix_phases(instance: Any) -> dict[str, float]:
    """The fix runs' wall (first created -> last ended) and phases summed over them: queue,
    launch, dispatch (run start -> a celery worker takes the step), step start."""
    from dagster import RunsFilter

    totals = {"fix_wall_s": 0.0, "queue_s": 0.0, "launch_s": 0.0, "dispatch_s": 0.0,
              "step_start_s": 0.0}
    records = [r for r in instance.get_run_records(RunsFilter())
               if r.dagster_run.job_name.startswith("fix_")]
    if not records:
        return totals
    begin = min(r.create_timestamp.timestamp() for r in records)
    totals["fix_wall_s"] = max((r.end_time or 0.0) for r in records) - begin
    for record in records:
        stamps: dict[str, float] = {}
        for entry in instance.all_logs(record.dagster_run.run_id):
            kind = entry.dagster_event_type
            if kind is None:
                continue
            key = kind.value
            if key == "ENGINE_EVENT" and "celery worker" in (entry.message or ""):
                key = "DISPATCHED"
            stamps.setdefault(key, entry.timestamp)
        if {ENQUEUED, STARTING, STARTED, "DISPATCHED", STEP} <= stamps.keys():
            totals["queue_s"] += stamps[STARTING] - stamps[ENQUEUED]
            totals["launch_s"] += stamps[STARTED] - stamps[STARTING]
            totals["dispatch_s"] += stamps["DISPATCHED"] - stamps[STARTED]
            totals["step_start_s"] += stamps[STEP] - stamps["DISPATCHED"]
    return totals


def _idle(instance: Any, workers: int, unit_time: float) -> dict[str, float]:
    """Where the workers' idle time goes (K x fix wall - the units' own wall), from the event
    log: before each worker's first batch step (the first run's queue, launch, dispatch),
    between its batch steps, after its last (the last runs' ``verified_patches`` and end), and
    inside the batch steps around the units (step set-up, event writes, the batch's checks)."""
    from dagster import DagsterEventType, RunsFilter

    records = [r for r in instance.get_run_records(RunsFilter())
               if r.dagster_run.job_name.startswith("fix_")]
    if not records:
        return {}
    begin = min(r.create_timestamp.timestamp() for r in records)
    end = max((r.end_time or 0.0) for r in records)
    steps: dict[str, list[tuple[float, float]]] = {}
    for record in records:
        start, worker = None, None
        for entry in instance.all_logs(record.dagster_run.run_id):
            event = entry.dagster_event
            if event is None or not (entry.step_key or "").endswith("candidate_patches"):
                continue
            if event.event_type == DagsterEventType.ENGINE_EVENT:
                data = event.engine_event_data.metadata.get("Celery worker")
                if data is not None:
                    start, worker = entry.timestamp, str(data.value)
            elif event.event_type in (DagsterEventType.STEP_SUCCESS,
                                      DagsterEventType.STEP_FAILURE) and start is not None:
                steps.setdefault(str(worker), []).append((start, entry.timestamp))
    first = sum(min(s for s, _ in spans) - begin for spans in steps.values())
    last = sum(end - max(e for _, e in spans) for spans in steps.values())
    ordered = [sorted(spans) for spans in steps.values()]
    between = sum(b[0] - a[1] for spans in ordered for a, b in pairwise(spans))
    in_steps = sum(e - s for spans in ordered for s, e in spans) - unit_time
    never = (workers - len(steps)) * (end - begin)  # a worker that took no batch at all
    return {"idle_before_first_s": first + never, "idle_between_s": between,
            "idle_after_last_s": last, "idle_in_steps_s": in_steps}


def run_celery(base: Path, work: Path, workers: int, agents: int, batch: int,
               admin_dsn: str, template: str, cpu: CpuSampler,
               pool: int | None = None) -> dict[str, Any]:
    """A sweep of ``base`` on a fresh multi-worker deployment with ``workers`` workers, and an
    ``agent_sandbox`` pool of ``pool`` batches at once (default: 2 x ``workers``)."""
    from fleet.store import open_store
    from fleet.unit import latest_results
    from tests.distributed._cluster import start_cluster
    from tests.distributed.conftest import _database

    name = f"celery-{workers}" + (f"-pool{pool}" if pool else "")  # (the default: 2 x K)
    root = work / name
    root.mkdir(parents=True)
    cluster = start_cluster(root, base, _database(admin_dsn, template),
                            _database(admin_dsn, template), workers=workers,
                            campaign="yaml-safe-load", visibility_s=3600, pool=pool,
                            FLEET_BATCH_SIZE=str(batch), FLEET_AGENTS=str(agents))
    try:
        t0 = time.perf_counter()
        sweep = cluster.start_sweep()
        code = sweep.wait()
        wall = time.perf_counter() - t0
        if code != 0:
            raise SystemExit(f"{name}: the sweep failed:\n{cluster.sweep_log()[-4000:]}")
        with open_store(cluster.env["FLEET_STORE_URL"]) as store:
            results = list(latest_results(store.ledger, "yaml-safe-load").values())
        unit_time = sum(r.wall_s for r in results)
        with cluster.instance() as instance:
            phases = _fix_phases(instance)
            idle = _idle(instance, workers, unit_time / agents)
            runs = len(instance.get_runs())
            span = _fix_span(instance)
    finally:
        cluster.close()
    n = max(len(results), 1)
    idle_s = workers * agents * phases["fix_wall_s"] - unit_time
    return {"mode": name, "workers": workers, "pool": pool or 2 * workers,
            "units": len(results),
            "verified": sum(r.status == "verified" for r in results),
            "sweep_wall_s": round(wall, 2), "fix_wall_s": round(phases["fix_wall_s"], 2),
            "dagster_runs": runs, "unit_time_s": round(unit_time, 2), **_unit_parts(results),
            "overhead_per_unit_s": round(idle_s / n, 3),
            **{f"{k}_per_unit": round(v / n, 3) for k, v in idle.items()},
            **{k: round(v, 2) for k, v in phases.items() if k != "fix_wall_s"},
            **{f"{k}_per_unit": round(v / n, 3) for k, v in phases.items()
               if k != "fix_wall_s"},
            **(cpu.window(*span, len(results)) if span else {}),
            "load_1min": round(os.getloadavg()[0], 2)}


def _pg() -> tuple[str, str, Any]:
    """An admin DSN, a template database, and the throwaway cluster to destroy (or None)."""
    import uuid

    import psycopg

    cluster = None
    dsn = os.environ.get("FLEET_BENCH_PG_DSN")
    if not dsn:
        from tests._pgcluster import start_cluster

        cluster = start_cluster()
        dsn = cluster.dsn
    template = f"fleet_tpl_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{template}" TEMPLATE template0 ENCODING \'UTF8\'')
    return dsn, template, cluster


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--agents", type=int, default=1, help="units at once per worker")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--no-peer", action="store_true",
                        help="skip the in-process peer (celery rows only)")
    parser.add_argument("--submitted", action="store_true",
                        help="also the submitted runs on one machine: the embedded default "
                             "(the forking run launcher) and Dagster's default launcher")
    parser.add_argument("--pools", default="2",
                        help="agent_sandbox pool sizes per worker count, as multiples of it "
                             "(e.g. 1,2: each worker count with pool = K and = 2K)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="the worker counts this many times, the order reversed every other "
                             "round (1,2,2,1,...): each round's speedup is against its own K = 1 "
                             "sweep, and the median over rounds is reported (this host's speed "
                             "changes by up to 2x within minutes)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    factors = [int(f) for f in args.pools.split(",") if f.strip()] or [2]
    ks = [int(k) for k in args.workers.split(",") if k.strip()]
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp, CpuSampler() as cpu:
        work = Path(tmp)
        base = make_repo(work / "base", args.units)
        modes = (("in-process", "submitted", "submitted-default") if args.submitted
                 else ("in-process",))
        rows = [run_sweep(base, work, mode, args.agents, args.batch, cpu) for mode in modes
                if not args.no_peer]
        for row in rows:
            print(json.dumps(row), flush=True)
        dsn, template, pg = _pg()
        try:
            for n in range(args.rounds):
                for k in (ks if n % 2 == 0 else ks[::-1]):
                    for factor in factors:
                        row = run_celery(base, work / f"round{n}", k, args.agents, args.batch,
                                         dsn, template, cpu, pool=k * factor)
                        rows.append({**row, "round": n})
                        print(json.dumps(rows[-1]), flush=True)
        finally:
            if pg is not None:
                pg.destroy()
    peer = rows[0] if not args.no_peer else {"fix_wall_s": 0.0}
    for r in rows:
        one = next((o for o in rows if o.get("workers") == 1 and o.get("round") == r.get("round")
                    and o.get("pool") == r.get("pool", 0) // max(r.get("workers", 1), 1)),
                   None)
        if one is not None and "workers" in r:
            r["speedup"] = round(one["fix_wall_s"] / max(r["fix_wall_s"], 1e-9), 2)
        r["extra_fix_wall_per_unit_s"] = round(
            (r["fix_wall_s"] - peer["fix_wall_s"]) / max(r["units"], 1), 3)
    summary = {"units": args.units, "batch": args.batch, "agents": args.agents,
               "cpus": os.cpu_count(), "rounds": args.rounds,
               "median_speedup": median_speedups(rows), "rows": rows}
    print_report(rows, summary, args.batch, args.agents)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
