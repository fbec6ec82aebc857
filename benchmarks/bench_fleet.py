"""Benchmark: the same sweep with 1, 2 and 4 agents over units that do not collide.

A generated repository holds N packages, each with one ``yaml.load`` call (the ``yaml-safe-load``
campaign: one unit per package, disjoint write sets, one wave) and its own test. For each agent
count the whole pipeline runs on a fresh copy through a real Dagster instance configured as
``fleet sweep`` configures it (SQLite, ``fleet_pipelines.storage``) with the real codemod agent
and the real gates in the bubblewrap sandbox. Reported per agent count:

- fix wall: the wall time of the fix stage, i.e. the batched ``fix_<campaign>_job`` run
  (``candidate_patches`` + ``verified_patches``) from launch to its end, run start and planned
  events included;
- speedup against one agent, and speedup / agents (target >= 0.8 up to the pool limit);
- units' own time: the sum of every unit's own wall time (``UnitResult.wall_s``: leases,
  worktree, agent, gates, commit, ledger), measured inside the unit;
- overhead per unit: ``(fix wall - units' own time / agents) / units``, the wall time not
  explained by the units' own work perfectly packed onto the agents. Stragglers (units that
  can't be packed evenly) count as overhead too, which is why the peer's figure is not 0;
- extra wall vs peer per unit: ``(fix wall - peer fix wall) / units``, the plain difference;
- the events the fix run wrote, per unit and by type (nothing is dropped to save time).

The peer in the same run is the same units run by ``fleet.unit.run_units`` directly, without
Dagster. ``--baseline DIR`` also runs the Dagster sweep with another checkout's code (the before
of a before/after: ``git archive HEAD | tar -x -C DIR``), interleaved with this one so both see
the same load; ``--load K`` adds K CPU-bound processes for the run (local, bounded).

    .venv/bin/python benchmarks/bench_fleet.py [--units 8] [--agents 1,2,4] [--json FILE]
        [--baseline DIR] [--load K]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# --baseline runs this script again with another checkout's code first on the path
sys.path.insert(0, os.environ.get("FLEET_BENCH_CODE", str(ROOT)))

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x.invalid"}


def make_repo(path: Path, units: int) -> Path:
    """``pkg_i/config.py`` with one ``yaml.load`` each and ``tests/test_pkg_i.py``."""
    path.mkdir(parents=True)
    (path / "tests").mkdir()
    for i in range(units):
        pkg = path / f"pkg_{i}"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "config.py").write_text(
            "import yaml\n\n\n"
            f"def load_{i}(text):\n"
            '    """Parse one settings document."""\n'
            "    return yaml.load(text)\n"
        )
        (path / "tests" / f"test_pkg_{i}.py").write_text(
            f"from pkg_{i}.config import load_{i}\n\n\n"
            f"def test_load_{i}():\n"
            f"    assert load_{i}('a: {i}') == {{'a': {i}}}\n"
        )
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=path, env=GIT_ENV, check=True)
    return path


def run_dagster(base: Path, work: Path, agents: int, tag: str = "") -> dict[str, Any]:
    """The whole sweep through a real Dagster instance configured as ``fleet sweep`` configures
    it (a checkout without ``fleet_pipelines.storage`` gets the stock SQLite instance)."""
    from dagster import DagsterInstance

    from fleet.store import open_store
    from fleet.unit import latest_results
    from fleet_pipelines.commands._sweep import sweep
    from fleet_pipelines.resources import FleetSettings

    repo = work / f"repo-{tag}{agents}"
    shutil.copytree(base, repo, symlinks=True)
    settings = FleetSettings.from_env({
        "FLEET_HOME": str(work / f"fleet-{tag}{agents}"), "FLEET_REPO": str(repo),
        "FLEET_SANDBOX": "bwrap", "FLEET_AGENTS": str(agents), "FLEET_BATCH_SIZE": "64",
        "FLEET_CAMPAIGNS": "yaml-safe-load"})
    dagster_home = work / f"dagster-{tag}{agents}"
    import fleet_pipelines

    code = Path(fleet_pipelines.__file__).parent
    if (code / "storage.py").exists():
        from fleet_pipelines.storage import ensure_instance_config

        ensure_instance_config(dagster_home)
    else:  # an older checkout (--baseline): Dagster's stock SQLite storage
        dagster_home.mkdir()
        (dagster_home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        report = sweep(settings, instance, say=lambda _: None)
        events = fix_run_events(instance)
    with open_store(settings.store_url) as store:
        results = list(latest_results(store.ledger, "yaml-safe-load").values())
    fix = report.campaigns[0].fix_s
    own = sum(r.wall_s for r in results)
    n = max(len(results), 1)
    return {"agents": agents, "units": len(results),
            "verified": sum(r.status == "verified" for r in results),
            "fix_wall_s": round(fix, 2), "unit_time_s": round(own, 2),
            "agent_s": round(sum(r.agent_s for r in results), 2),
            "gates_s": round(sum(r.gates_s for r in results), 2),
            "overhead_per_unit_s": round((fix - own / agents) / n, 3),
            "sweep_wall_s": round(report.wall_s, 2), "dagster_runs": report.runs,
            "fix_events_per_unit": {k: round(v / n, 2) for k, v in sorted(events.items())},
            "load_1min": round(os.getloadavg()[0], 2), "code": str(code.parent)}


def fix_run_events(instance: Any) -> dict[str, int]:
    """Events the fix runs wrote to the event log, by type (logs as ``LOG``)."""
    from collections import Counter

    counts: Counter[str] = Counter()
    for run in instance.get_runs():
        if run.job_name.startswith("fix_"):
            for entry in instance.all_logs(run.run_id):
                kind = entry.dagster_event_type
                counts[kind.value if kind is not None else "LOG"] += 1
    return dict(counts)


def run_baseline(code: Path, base: Path, work: Path, agents: int) -> dict[str, Any]:
    """``run_dagster`` with the pipeline code of another checkout ``code`` (e.g. the previous
    commit: ``git archive HEAD | tar -x -C DIR``), in a subprocess of this run."""
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", str(agents), "--base", str(base),
         "--work", str(work)],
        env={**os.environ, "FLEET_BENCH_CODE": str(code)}, capture_output=True, text=True,
        check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"baseline run failed: {proc.stderr[-3000:]}")
    row: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return row


def _busy(deadline: float) -> None:
    while time.time() < deadline:
        pass


def start_load(processes: int, seconds: float) -> list[Any]:
    """``processes`` CPU-bound processes on this machine, each ending by itself after
    ``seconds`` (the benchmark stops them earlier when it is done)."""
    import multiprocessing

    deadline = time.time() + seconds
    procs = [multiprocessing.Process(target=_busy, args=(deadline,), daemon=True)
             for _ in range(processes)]
    for p in procs:
        p.start()
    return procs


def run_direct(base: Path, work: Path, agents: int) -> dict[str, Any]:
    """The peer: plan with the same code, then ``run_units`` without Dagster."""
    from assets import _fleet
    from fleet.unit import run_units
    from fleet_pipelines.resources import AgentResource, SandboxResource, StoreResource

    repo = work / f"direct-{agents}"
    shutil.copytree(base, repo, symlinks=True)
    home = work / f"direct-fleet-{agents}"
    home.mkdir()
    store = StoreResource(url=f"sqlite:///{home / 'fleet.db'}")
    _fleet.index(repo, home)
    _fleet.find("yaml-safe-load", repo, home, store)
    plan = _fleet.plan("yaml-safe-load", repo, home, "main", store)
    env = _fleet.unit_env("yaml-safe-load", repo, home, store,
                          SandboxResource(backend="bwrap"), AgentResource())
    started = time.perf_counter()
    results = run_units(list(plan.units), env, parallel=agents)
    wall = time.perf_counter() - started
    own = sum(r.wall_s for r in results)
    return {"agents": agents, "units": len(results),
            "verified": sum(r.status == "verified" for r in results),
            "fix_wall_s": round(wall, 2), "unit_time_s": round(own, 2),
            "overhead_per_unit_s": round((wall - own / agents) / max(len(results), 1), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=8)
    parser.add_argument("--agents", default="1,2,4")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="also run the Dagster sweep with the code of this checkout "
                             "(the before of a before/after), interleaved with this one")
    parser.add_argument("--load", type=int, default=0,
                        help="CPU-bound processes to run alongside (bounded, local)")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--base", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.worker is not None:  # one run_dagster for --baseline, in this checkout's code
        print(json.dumps(run_dagster(args.base, args.work, args.worker, tag="baseline-")))
        return 0
    counts = [int(a) for a in args.agents.split(",")]
    load = start_load(args.load, 3600) if args.load else []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
            work = Path(tmp)
            base = make_repo(work / "base", args.units)
            dagster_rows, baseline_rows, direct_rows = [], [], []
            for k in counts:  # interleaved, so every variant sees the same load
                if args.baseline is not None:
                    baseline_rows.append(run_baseline(args.baseline, base, work, k))
                dagster_rows.append(run_dagster(base, work, k))
                direct_rows.append(run_direct(base, work, k))
    finally:
        for p in load:
            p.terminate()
    print(f"{args.units} non-colliding units, yaml-safe-load, codemod agent, bwrap sandbox, "
          f"{os.cpu_count()} CPU(s), {args.load} extra CPU-bound process(es), load average "
          f"{os.getloadavg()[0]:.1f}")
    print_table("Dagster (this checkout) against run_units without Dagster", dagster_rows,
                direct_rows)
    if baseline_rows:
        print_table(f"Dagster ({args.baseline}) against this checkout", baseline_rows,
                    dagster_rows)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"dagster": dagster_rows, "direct": direct_rows,
                                         "baseline": baseline_rows, "load": args.load},
                                        indent=1) + "\n")
    rows = dagster_rows + direct_rows + baseline_rows
    ok = all(d["verified"] == d["units"] == args.units for d in rows)
    return 0 if ok else 1


def print_table(title: str, rows: list[dict[str, Any]], peers: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    print("| agents | fix wall s | speedup | speedup / agents | units' own time s "
          "| overhead/unit s | peer wall s | peer speedup | peer overhead/unit s "
          "| extra wall vs peer per unit s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    one, one_peer = rows[0]["fix_wall_s"], peers[0]["fix_wall_s"]
    for d, p in zip(rows, peers, strict=True):
        speed = one / d["fix_wall_s"]
        extra = (d["fix_wall_s"] - p["fix_wall_s"]) / max(d["units"], 1)
        print(f"| {d['agents']} | {d['fix_wall_s']:.1f} | {speed:.2f} | "
              f"{speed / d['agents']:.2f} | {d['unit_time_s']:.1f} | "
              f"{d['overhead_per_unit_s']:.2f} | {p['fix_wall_s']:.1f} | "
              f"{one_peer / p['fix_wall_s']:.2f} | {p['overhead_per_unit_s']:.2f} | "
              f"{extra:.2f} |")


if __name__ == "__main__":
    raise SystemExit(main())
