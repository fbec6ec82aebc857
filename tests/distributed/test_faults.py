"""Faults on the multi-worker deployment, each during a sweep (``fleet sweep`` of the remote, in
the background): a worker killed with -9 mid-unit, the Dagster daemon killed and started again,
the broker restarted. Every sweep finishes, every unit is verified and integrated exactly once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import git
from tests.distributed._cluster import Cluster
from tests.distributed.conftest import add_packages

pytestmark = [pytest.mark.postgres, pytest.mark.sandbox, pytest.mark.slow,
              pytest.mark.timeout(1200)]
CAMPAIGN = "yaml-safe-load"
RANGE_START = "dagster/asset_partition_range_start"
# Under ``--dist loadgroup`` (``make test``) the tests of one group run on one worker, one
# after the other on the deployment it starts (tests/distributed/conftest.py ``cluster``): two
# deployments side by side, not one per test: the longest with the shortest (at load ~8: worker
# kill 275 s + daemon kill 132 s; broker restart 187 s + test_deployment.py 182 s).


def wait_for(what: str, check: Callable[[], Any], sweep: subprocess.Popen[str],
             cluster: Cluster, timeout_s: float = 300) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        assert sweep.poll() is None, f"the sweep ended before {what}:\n{cluster.sweep_log()}"
        assert time.monotonic() < deadline, f"no {what} after {timeout_s} s"
        time.sleep(0.5)


def open_store(cluster: Cluster) -> Any:
    from fleet.store import open_store as open_

    return open_(cluster.env["FLEET_STORE_URL"])


def units_of(cluster: Cluster, package: str) -> list[str]:
    """The planned units whose files are in ``package``."""
    from fleet.unit import load_units

    with open_store(cluster) as store:
        units = load_units(store.ledger, CAMPAIGN)
    return [u.key for u in units if any(p.startswith(f"{package}/") for p in u.paths)]


def step_workers(cluster: Cluster, unit: str) -> list[str]:
    """The celery workers that started the batch step of ``unit``'s fix runs, in order."""
    from dagster import DagsterEventType, RunsFilter

    workers = []
    with cluster.instance() as instance:
        runs = instance.get_runs(RunsFilter(job_name=f"fix_{CAMPAIGN.replace('-', '_')}_job",
                                            tags={RANGE_START: unit}))
        for run in reversed(runs):
            for entry in instance.all_logs(run.run_id, of_type=DagsterEventType.ENGINE_EVENT):
                data = entry.dagster_event.engine_event_data.metadata.get("Celery worker")
                if data is not None and str(entry.step_key).endswith("candidate_patches"):
                    workers.append(str(data.value).split("@")[0])
    return workers


def finished(sweep: subprocess.Popen[str], cluster: Cluster, packages: list[str],
             timeout_s: float = 900) -> None:
    """The sweep exits 0 and reports every unit of ``packages`` verified and integrated; each
    is merged by exactly one integration, once on the remote's integration branch. A sweep
    still running after ``timeout_s`` is killed (the next test's would be refused as busy) and
    the failure shows its log and the instance's runs."""
    try:
        code = sweep.wait(timeout_s)
    except subprocess.TimeoutExpired:
        cluster.end_sweeps()
        raise AssertionError(f"the sweep did not end in {timeout_s} s:\n"
                             f"{cluster.sweep_log()[-6000:]}\nruns:\n{cluster.runs_summary()}"
                             ) from None
    assert code == 0, cluster.sweep_log()[-6000:] + "\n".join(cluster.failures())[-6000:]
    with open_store(cluster) as store:
        integrations = store.ledger.events(kind="integration.finished", campaign=CAMPAIGN)
        for package in packages:
            (unit,) = units_of(cluster, package)
            merged = [e for e in integrations if unit in (e.payload.get("merged") or ())]
            assert len(merged) >= 1, (package, [e.payload for e in integrations])
            head = str(merged[-1].payload["head"])
            log = git(cluster.root / "user", "log", "--format=%s", head) if _fetch(cluster) \
                else ""
            assert sum(f"unit {unit}" in line for line in log.splitlines()) == 1, log


def _fetch(cluster: Cluster) -> bool:
    git(cluster.root / "user", "fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*")
    return True


@pytest.mark.xdist_group("cluster-a")
def test_a_worker_killed_mid_unit(cluster: Cluster) -> None:
    from fleet.forge.remote import Refused, push
    from fleet.forge.worktree import branch_name

    add_packages(cluster, ["slowkill"], sleep_s=8)
    sweep = cluster.start_sweep()
    unit = wait_for("planned unit", lambda: units_of(cluster, "slowkill"), sweep, cluster)[0]

    def granted() -> Any:
        with open_store(cluster) as store:
            return store.ledger.events(kind="lease.granted", unit=unit)

    grants = wait_for("lease grant", granted, sweep, cluster)
    victim = wait_for("worker of the unit", lambda: step_workers(cluster, unit), sweep,
                      cluster)[-1]
    time.sleep(2)  # inside its gates (the unit's test sleeps 8 s)
    cluster.workers[victim].kill()
    killed = time.monotonic()
    finished(sweep, cluster, ["slowkill"])
    workers = step_workers(cluster, unit)
    assert workers[0] == victim and workers[-1] != victim, workers  # another worker finished
    # delivered again because its claim lapsed (_claims), not after the visibility timeout
    assert any(b"lost its worker" in w.log.read_bytes() for w in cluster.workers.values())
    assert time.monotonic() - killed < 600
    with open_store(cluster) as store:
        results = store.ledger.events(kind="unit.finished", unit=unit)
        assert [e.payload["status"] for e in results] == ["verified"]  # once, by the survivor
        stale = grants[0].payload["grants"]
        later = store.ledger.events(kind="lease.granted", unit=unit)[-1].payload["grants"]
        for (symbol, _mode, token), (_s, _m, newer) in zip(stale, later, strict=True):
            assert newer > token
            assert not store.leases.check_fence(symbol, token)  # the zombie's token is dead
    # the zombie's late write of its unit branch (it saw none on the remote) is refused
    mirror = next(p for p in (cluster.workers[victim].home / "mirrors").iterdir()
                  if p.is_dir())  # (beside it: the mirror's lock file)
    branch = branch_name(CAMPAIGN, unit)
    if subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                      cwd=mirror, capture_output=True, check=False).returncode != 0:
        git(mirror, "update-ref", f"refs/heads/{branch}", "HEAD")  # (its worktree holds it)
    assert isinstance(push(mirror, branch, None), Refused)
    cluster.start_worker(victim)  # the deployment replaces it
    cluster.wait_ready([victim])


@pytest.mark.xdist_group("cluster-a")
def test_the_daemon_killed_mid_sweep_and_started_again(cluster: Cluster) -> None:
    add_packages(cluster, ["dmone", "dmtwo"])
    sweep = cluster.start_sweep()
    wait_for("a batch submitted", lambda: "fix_yaml_safe_load_job run" in cluster.sweep_log(),
             sweep, cluster)
    assert cluster.daemon.proc is not None
    old = cluster.daemon.proc.pid
    os.kill(old, signal.SIGKILL)  # the daemon alone: the runs it launched go on
    cluster.daemon.proc.wait()
    time.sleep(3)
    cluster.daemon.start()
    try:
        finished(sweep, cluster, ["dmone", "dmtwo"])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(old, signal.SIGKILL)  # the dead daemon's code server
    # the index ran in a run worker of the daemon, on the daemon's own FLEET_HOME: the sweep
    # learnt of the new modules from the store, and their code module assets materialized
    from dagster import AssetKey

    with cluster.instance() as instance:
        for package in ("dmone", "dmtwo"):
            key = AssetKey(["code", package, "load"])
            assert instance.get_latest_materialization_event(key) is not None, key
    assert not (cluster.root / "coordinator" / "home" / "graph").exists()


@pytest.mark.xdist_group("cluster-b")
def test_the_broker_restarted_mid_sweep(cluster: Cluster) -> None:
    add_packages(cluster, ["brone", "brtwo", "brthree"], sleep_s=4)
    mark = {n: w.log.read_bytes().count(b"] received") for n, w in cluster.workers.items()}
    sweep = cluster.start_sweep()
    wait_for("a batch on a worker", lambda: any(
        w.log.read_bytes().count(b"] received") > mark[n] for n, w in cluster.workers.items()),
        sweep, cluster)
    cluster.redis.stop()
    time.sleep(2)
    cluster.redis.start()
    finished(sweep, cluster, ["brone", "brtwo", "brthree"])
