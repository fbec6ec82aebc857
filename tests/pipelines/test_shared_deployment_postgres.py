"""The shared deployment: the fleet store on PostgreSQL behind the same definitions (plan job,
planner sensor, ledger)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance, build_sensor_context

from fleet.store import open_store
from fleet.unit import load_units
from fleet_pipelines.definitions import build_definitions
from fleet_pipelines.resources import FleetSettings, RepoResource, StoreResource

pytestmark = [pytest.mark.postgres]


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as inst:
        yield inst


def _url(dsn: str) -> str:
    from psycopg.conninfo import conninfo_to_dict

    p = conninfo_to_dict(dsn)
    return (f"postgresql://{p.get('user', '')}:{p.get('password', '')}@{p.get('host', '')}:"
            f"{p.get('port', 5432)}/{p['dbname']}")


def test_plan_and_planner_sensor_on_postgres(
    tmp_path: Path, acme_repo: Path, pg_dsn: str, instance: DagsterInstance
) -> None:
    pg_dsn = _url(pg_dsn)
    settings = FleetSettings.from_env({
        "FLEET_DEPLOYMENT": "shared", "FLEET_STORE_URL": pg_dsn,
        "FLEET_HOME": str(tmp_path / "fleet"), "FLEET_REPO": str(acme_repo),
        "FLEET_CAMPAIGNS": "yaml-safe-load", "FLEET_BATCH_SIZE": "2"})
    defs = build_definitions(settings)
    result = defs.resolve_job_def("plan_yaml_safe_load_job").execute_in_process(
        instance=instance)
    assert result.success
    with open_store(pg_dsn) as store:
        assert store.db.dialect != "sqlite"
        units = load_units(store.ledger, "yaml-safe-load")
        assert len(units) >= 3
        assert {r.status for r in store.findings.list("yaml-safe-load")} == {"new"}
        assert store.ledger.verify() == []
    assert instance.get_dynamic_partitions("yaml_safe_load_units") == [u.key for u in units]
    sensor = defs.resolve_sensor_def("planner_sensor")
    store_resource = StoreResource(url=pg_dsn)
    repo_resource = RepoResource(path=settings.repo, base_branch=settings.base_branch)
    with build_sensor_context(instance=instance, resources={
            "store": store_resource, "repo": repo_resource}) as ctx:
        requests = sensor.evaluate_tick(ctx).run_requests or []
    assert len(requests) == (len(units) + 1) // 2
    assert all(r.job_name == "fix_yaml_safe_load_job" for r in requests)
