"""Benchmark: the same sweep with 1, 2 and 4 agents over units that do not collide.

A generated repository holds N packages, each with one ``yaml.load`` call (the ``yaml-safe-load``
campaign: one unit per package, disjoint write sets, one wave) and its own test. For each agent
count the whole pipeline runs on a fresh copy through a real Dagster instance (SQLite) with the
real codemod agent and the real gates in the bubblewrap sandbox. Reported per agent count: the
wall time of the fix stage (the batched ``candidate_patches`` + ``verified_patches`` run), the
speedup against one agent, the units' own time (agent + gates, summed), and the orchestration
overhead per unit: ``(fix wall - unit time / agents) / units``.

The peer in the same run is the same units run by ``fleet.unit.run_units`` directly, without
Dagster: the difference is what Dagster adds.

    .venv/bin/python benchmarks/bench_fleet.py [--units 8] [--json FILE]
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
sys.path.insert(0, str(ROOT))

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


def run_dagster(base: Path, work: Path, agents: int) -> dict[str, Any]:
    from dagster import DagsterInstance

    from fleet.store import open_store
    from fleet.unit import latest_results
    from fleet_pipelines.commands._sweep import sweep
    from fleet_pipelines.resources import FleetSettings

    repo = work / f"repo-{agents}"
    shutil.copytree(base, repo, symlinks=True)
    (work / f"dagster-{agents}").mkdir()
    settings = FleetSettings.from_env({
        "FLEET_HOME": str(work / f"fleet-{agents}"), "FLEET_REPO": str(repo),
        "FLEET_SANDBOX": "bwrap", "FLEET_AGENTS": str(agents), "FLEET_BATCH_SIZE": "64",
        "FLEET_CAMPAIGNS": "yaml-safe-load"})
    with DagsterInstance.local_temp(str(work / f"dagster-{agents}")) as instance:
        report = sweep(settings, instance, say=lambda _: None)
    with open_store(settings.store_url) as store:
        results = list(latest_results(store.ledger, "yaml-safe-load").values())
    fix = report.campaigns[0].fix_s
    own = sum(r.wall_s for r in results)
    return {"agents": agents, "units": len(results),
            "verified": sum(r.status == "verified" for r in results),
            "fix_wall_s": round(fix, 2), "unit_time_s": round(own, 2),
            "agent_s": round(sum(r.agent_s for r in results), 2),
            "gates_s": round(sum(r.gates_s for r in results), 2),
            "overhead_per_unit_s": round((fix - own / agents) / max(len(results), 1), 3),
            "sweep_wall_s": round(report.wall_s, 2), "dagster_runs": report.runs}


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
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    counts = [int(a) for a in args.agents.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        work = Path(tmp)
        base = make_repo(work / "base", args.units)
        dagster_rows = [run_dagster(base, work, k) for k in counts]
        direct_rows = [run_direct(base, work, k) for k in counts]
    one = dagster_rows[0]["fix_wall_s"]
    one_direct = direct_rows[0]["fix_wall_s"]
    print(f"{args.units} non-colliding units, yaml-safe-load, codemod agent, bwrap sandbox, "
          f"{os.cpu_count()} CPU(s)")
    print("| agents | Dagster fix wall s | speedup | x agents | unit time s | overhead/unit s "
          "| direct wall s | direct speedup | direct overhead/unit s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d, p in zip(dagster_rows, direct_rows, strict=True):
        speed = one / d["fix_wall_s"]
        print(f"| {d['agents']} | {d['fix_wall_s']:.1f} | {speed:.2f} | "
              f"{speed / d['agents']:.2f} | {d['unit_time_s']:.1f} | "
              f"{d['overhead_per_unit_s']:.2f} | {p['fix_wall_s']:.1f} | "
              f"{one_direct / p['fix_wall_s']:.2f} | {p['overhead_per_unit_s']:.2f} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"dagster": dagster_rows, "direct": direct_rows},
                                        indent=1) + "\n")
    ok = all(d["verified"] == d["units"] == args.units for d in dagster_rows + direct_rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
