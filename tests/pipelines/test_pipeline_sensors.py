"""The planner and PR-status sensors, evaluated with ``build_sensor_context`` on a real instance
and a real SQLite store; both honour the kill switch."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance, RunRequest, build_sensor_context
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)

from fleet.forge.local import LocalGitForge
from fleet.unit import UnitResult, record_result
from fleet_pipelines.definitions import build_definitions
from fleet_pipelines.resources import FleetSettings, ForgeResource, RepoResource, StoreResource
from fleet_pipelines.sensors import batches
from tests.conftest import git

CAMPAIGN = "datetime-utcnow"
PARTITIONS = "datetime_utcnow_units"


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as inst:
        yield inst


@pytest.fixture
def settings(tmp_path: Path, git_repo: Path) -> FleetSettings:
    return FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "home"),
                                   "FLEET_REPO": str(git_repo), "FLEET_CAMPAIGNS": CAMPAIGN,
                                   "FLEET_BATCH_SIZE": "2"})


def _finished(store: StoreResource, key: str, status: str = "verified") -> None:
    record_result(store.ledger(), UnitResult(unit=key, campaign=CAMPAIGN, status=status,  # type: ignore[arg-type]
                                             base_commit="0" * 40), "test")


def _requests(settings: FleetSettings, instance: DagsterInstance, store: StoreResource
              ) -> list[RunRequest]:
    sensor = build_definitions(settings).resolve_sensor_def("planner_sensor")
    repo = RepoResource(path=settings.repo, base_branch=settings.base_branch)
    with build_sensor_context(instance=instance,
                              resources={"store": store, "repo": repo}) as context:
        data = sensor.evaluate_tick(context)
    return list(data.run_requests or [])


def test_batches_cover_exactly_the_pending_keys() -> None:
    keys = ["a", "b", "c", "d", "e", "f"]
    assert batches(keys, ["a", "b", "c", "e"], 2) == [("a", "b"), ("c", "c"), ("e", "e")]
    assert batches(keys, [], 3) == []
    assert batches(keys, keys, 4) == [("a", "d"), ("e", "f")]


def test_planner_sensor_launches_pending_batches_then_integration(
    settings: FleetSettings, instance: DagsterInstance
) -> None:
    store = StoreResource(url=settings.store_url)
    instance.add_dynamic_partitions(PARTITIONS, ["k1", "k2", "k3", "k4"])
    _finished(store, "k2")
    requests = _requests(settings, instance, store)
    assert [(r.job_name, r.tags[ASSET_PARTITION_RANGE_START_TAG],
             r.tags[ASSET_PARTITION_RANGE_END_TAG]) for r in requests] == [
        ("fix_datetime_utcnow_job", "k1", "k1"), ("fix_datetime_utcnow_job", "k3", "k4")]
    assert all(r.tags["fleet/campaign"] == CAMPAIGN for r in requests)

    _finished(store, "k1")
    _finished(store, "k3", "rejected")
    _finished(store, "k4")
    requests = _requests(settings, instance, store)
    assert [r.job_name for r in requests] == ["integrate_datetime_utcnow_job"]

    store.ledger().append("integration.finished", {"merged": ["k1", "k2", "k4"]},
                          campaign=CAMPAIGN)
    assert _requests(settings, instance, store) == []

    # a re-plan drops k4 while the integration branch (not in main) still carries its patch
    git(Path(settings.repo), "checkout", "-q", "-b", "fleet/x/integration")
    git(Path(settings.repo), "commit", "-q", "--allow-empty", "-m", "integrated")
    head = git(Path(settings.repo), "rev-parse", "HEAD").strip()
    git(Path(settings.repo), "checkout", "-q", settings.base_branch)
    store.ledger().append("integration.finished", {"merged": ["k1", "k2", "k4"], "head": head},
                          campaign=CAMPAIGN)
    assert _requests(settings, instance, store) == []
    instance.delete_dynamic_partition(PARTITIONS, "k4")
    assert [r.job_name for r in _requests(settings, instance, store)] == [
        "integrate_datetime_utcnow_job"]


def test_planner_sensor_honours_the_kill_switch(
    settings: FleetSettings, instance: DagsterInstance
) -> None:
    store = StoreResource(url=settings.store_url)
    instance.add_dynamic_partitions(PARTITIONS, ["k1"])
    store.store().controls.engage("test")
    sensor = build_definitions(settings).resolve_sensor_def("planner_sensor")
    repo = RepoResource(path=settings.repo, base_branch=settings.base_branch)
    with build_sensor_context(instance=instance,
                              resources={"store": store, "repo": repo}) as context:
        data = sensor.evaluate_tick(context)
    assert not data.run_requests and data.skip_message == "kill switch engaged"
    store.store().controls.release()
    assert len(_requests(settings, instance, store)) == 1


def test_pr_status_sensor_records_a_merged_change(
    settings: FleetSettings, instance: DagsterInstance, git_repo: Path
) -> None:
    store = StoreResource(url=settings.store_url)
    git(git_repo, "checkout", "-q", "-b", "fleet/datetime-utcnow/integration")
    (git_repo / "x.txt").write_text("x\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "x")
    git(git_repo, "checkout", "-q", "main")
    forge = LocalGitForge(store.store().changes, store.ledger())
    ref = forge.publish(str(git_repo), "fleet/datetime-utcnow/integration", "t", "b")
    store.ledger().append("pull_request.published", {"ref": dataclasses.asdict(ref)},
                          campaign=CAMPAIGN)
    sensor = build_definitions(settings).resolve_sensor_def("pr_status_sensor")

    def tick() -> str:
        with build_sensor_context(instance=instance, resources={
                "store": store, "forge": ForgeResource(kind="local")}) as context:
            return str(sensor.evaluate_tick(context).skip_message)

    assert tick() == "1 change(s) checked, 0 changed state"
    git(git_repo, "merge", "-q", "--ff-only", "fleet/datetime-utcnow/integration")
    assert tick() == "1 change(s) checked, 1 changed state"
    assert tick() == "1 change(s) checked, 0 changed state"
    states = [e.payload["state"] for e in store.ledger().events(kind="pull_request.status")]
    assert states == ["merged"]
