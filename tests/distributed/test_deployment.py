"""A sweep on the multi-worker deployment: every batch runs on a celery worker with its own
FLEET_HOME, the units' branches travel through the git remote, the integration is published
there."""

from __future__ import annotations

from typing import Any

import pytest
from dagster import DagsterEventType

from fleet_pipelines.cli import main
from tests.conftest import git
from tests.distributed._cluster import Cluster
from tests.distributed.conftest import add_packages

pytestmark = [pytest.mark.postgres, pytest.mark.sandbox, pytest.mark.slow,
              pytest.mark.timeout(900)]


def sweep(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> int:
    for key, value in cluster.env.items():
        monkeypatch.setenv(key, value)
    return main(["sweep", cluster.remote, "-c", cluster.env["FLEET_CAMPAIGNS"],
                 "--sandbox", "bwrap", "--agents", "1", "--home", cluster.env["FLEET_HOME"]])


def fix_runs(instance: Any) -> list[Any]:
    """The fix runs, less those Dagster failed before they ran a step and retried (a start
    timeout, a run worker lost under load): their retry, also a fix run, did their batch."""
    from dagster import RunsFilter

    from assets._dagster_private import AUTO_RETRY_RUN_ID_TAG

    runs = instance.get_runs(RunsFilter(job_name="fix_yaml_safe_load_job"))
    ids = {r.run_id for r in runs}
    kept = []
    for run in runs:
        retry = run.tags.get(AUTO_RETRY_RUN_ID_TAG)
        if retry is not None and not instance.get_records_for_run(
                run.run_id, of_type={DagsterEventType.STEP_START}).records:
            assert retry in ids, (run.run_id, run.tags)  # its retry ran the batch
            continue
        kept.append(run)
    return kept


def worker_of_runs(cluster: Cluster) -> dict[str, tuple[str, list[str]]]:
    """Per fix run: the celery worker(s) that executed its batch step and the units it
    materialized."""
    out: dict[str, tuple[str, list[str]]] = {}
    with cluster.instance() as instance:
        for run in fix_runs(instance):
            workers = []
            units = []
            for entry in instance.all_logs(run.run_id):
                event = entry.dagster_event
                if event is None:
                    continue
                if event.event_type == DagsterEventType.ENGINE_EVENT and event.step_key and \
                        event.step_key.endswith("candidate_patches"):
                    data = event.engine_event_data.metadata.get("Celery worker")
                    if data is not None:
                        workers.append(str(data.value))
                if event.event_type == DagsterEventType.ASSET_MATERIALIZATION:
                    mat = event.step_materialization_data.materialization
                    if mat.partition and mat.asset_key.path[-1] == "candidate_patches":
                        units.append(mat.partition)
            out[run.run_id] = (",".join(workers), units)
    return out


def verified_steps(cluster: Cluster) -> tuple[list[str], int]:
    """Where each fix run's ``verified_patches`` step ran (its engine event's "Celery worker":
    ``name@host`` for a celery worker, the bare host name when applied in the run worker), and
    how many verified units it materialized."""
    where, materialized = [], 0
    with cluster.instance() as instance:
        for run in fix_runs(instance):
            for entry in instance.all_logs(run.run_id):
                event = entry.dagster_event
                if event is None or not (event.step_key or "").endswith("verified_patches"):
                    continue
                if event.event_type == DagsterEventType.ENGINE_EVENT:
                    data = event.engine_event_data.metadata.get("Celery worker")
                    if data is not None:
                        where.append(str(data.value))
                if event.event_type == DagsterEventType.ASSET_MATERIALIZATION:
                    materialized += 1
    return where, materialized


@pytest.mark.xdist_group("cluster-b")  # with the broker restart (test_faults.py)
def test_batches_run_on_the_workers(cluster: Cluster, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    add_packages(cluster, ["alpha", "beta", "gamma"])
    assert sweep(cluster, monkeypatch) == 0, "\n".join(cluster.failures())[-6000:]
    out = capsys.readouterr()
    assert out.out.count("verified, integrated") >= 3, out.out
    runs = worker_of_runs(cluster)
    ran = {w.split("@")[0] for w, _ in runs.values()}
    assert runs and ran <= set(cluster.workers) and len(ran) >= 2, (runs, cluster.statuses())
    assert all(units for _, units in runs.values())  # each batch's units, on its worker
    where, materialized = verified_steps(cluster)  # one celery task per batch, not two: the
    assert len(where) == len(runs) and materialized >= 3, (where, materialized)  # ledger-only
    assert not [w for w in where if "@" in w], where  # step ran in the run worker
    for name in ran:  # each worker's own state: its mirror and its graph, nothing shared
        home = cluster.workers[name].home
        assert (home / "graph" / "symbol_graph.json").is_file()
        assert any((home / "mirrors").iterdir())
    remote = cluster.git.base / "target.git"
    heads = git(remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/fleet")
    assert len([h for h in heads.split() if h.startswith("fleet/yaml-safe-load/")]) >= 3


@pytest.mark.xdist_group("cluster-b")
def test_the_engine_counts_the_workers_that_answer(cluster: Cluster,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep counts its celery workers by a ping on the broker (its batch window is two
    batches per worker, ``_sweep.batch_window``): every worker still running answers."""
    from dagster import DagsterInstance

    from fleet_pipelines.engine import Engine

    monkeypatch.setenv("FLEET_EXECUTOR", "celery")
    monkeypatch.setenv("FLEET_CELERY_BROKER", cluster.env["FLEET_CELERY_BROKER"])
    alive = sum(w.proc.poll() is None for w in cluster.workers.values())
    assert alive >= 1
    with DagsterInstance.ephemeral() as instance:
        assert Engine(instance, print, {}).workers("fix_yaml_safe_load_job") == alive
