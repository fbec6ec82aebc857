"""The whole chain on a temporary Dagster instance over a copy of the example repository:
index -> findings -> work units -> candidate patches (batched, per-unit materializations and
per-partition gate checks) -> verified patches -> integration -> hand-over; then a second sweep
finds nothing new."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import AssetCheckKey, AssetKey, DagsterInstance

from fleet.store import open_store
from fleet.unit import latest_results
from fleet_pipelines.commands._sweep import SweepReport, sweep
from fleet_pipelines.definitions import GATES
from fleet_pipelines.resources import FleetSettings
from fleet_pipelines.storage import ensure_instance_config
from sandbox import Sandbox
from tests.conftest import git

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    """The embedded instance as ``fleet sweep`` configures it (the pooled SQLite event log)."""
    ensure_instance_config(tmp_path / "dagster")
    with DagsterInstance.from_config(str(tmp_path / "dagster")) as inst:
        yield inst


def _settings(tmp_path: Path, repo: Path) -> FleetSettings:
    return FleetSettings.from_env({
        "FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(repo), "FLEET_SANDBOX": "bwrap",
        "FLEET_AGENTS": "2", "FLEET_CAMPAIGNS": "yaml-safe-load,datetime-utcnow"})


def _checks(instance: DagsterInstance, key: AssetKey, gate: str) -> dict[str, str]:
    """Per partition, the latest recorded status of one gate's check."""
    records = instance.event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(key, f"candidate_patches_{gate}"), limit=1000)
    out: dict[str, str] = {}
    for rec in sorted(records, key=lambda r: r.id):
        if rec.partition is not None:
            out[rec.partition] = rec.status.value
    return out


def _severities(instance: DagsterInstance, key: AssetKey, gate: str) -> dict[str, str]:
    """Per partition, the severity of the latest failed evaluation of one gate's check."""
    records = instance.event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(key, f"candidate_patches_{gate}"), limit=1000)
    out: dict[str, str] = {}
    for rec in sorted(records, key=lambda r: r.id):
        evaluation = rec.event.asset_check_evaluation if rec.event else None
        if rec.partition is not None and evaluation is not None:
            out[rec.partition] = "" if evaluation.passed else evaluation.severity.value
    return out


def _stale_inputs(instance: DagsterInstance, keys: list[AssetKey]
                  ) -> tuple[dict[str, str], set[str]]:
    """Assets whose latest materialization recorded an input data version that is no longer its
    input's current one (what the UI shows as "Unsynced" / "Upstream data"), and the versioned
    inputs compared (an input without a data version of its own is not one)."""
    def tags(key: AssetKey) -> dict[str, str]:
        event = instance.get_latest_materialization_event(key)
        assert event is not None and event.asset_materialization is not None, key
        return dict(event.asset_materialization.tags or {})

    current: dict[str, str] = {}
    stale: dict[str, str] = {}
    for key in keys:
        for tag, version in tags(key).items():
            if not tag.startswith("dagster/input_data_version/"):
                continue
            upstream = tag.removeprefix("dagster/input_data_version/")
            if upstream not in current:
                current[upstream] = tags(AssetKey.from_user_string(upstream)).get(
                    "dagster/data_version", "")
            if current[upstream] and version != current[upstream]:
                stale[key.to_user_string()] = upstream
    return stale, {k for k, v in current.items() if v}


def test_the_whole_chain_then_nothing_new(
    tmp_path: Path, acme_repo: Path, instance: DagsterInstance, bwrap: Sandbox
) -> None:
    settings = _settings(tmp_path, acme_repo)
    report = sweep(settings, instance, say=lambda _: None)
    yaml_report, utc_report = report.campaigns
    store = open_store(settings.store_url)

    # yaml-safe-load: every unit verified, integrated on one branch whose tests pass
    yaml_results = latest_results(store.ledger, "yaml-safe-load")
    assert len(yaml_results) == len(yaml_report.units) >= 3
    assert {r.status for r in yaml_results.values()} == {"verified"}
    integration = yaml_report.integration
    assert integration is not None and integration["tests_passed"] is True
    assert sorted(integration["merged"]) == sorted(yaml_results)
    branch = "fleet/yaml-safe-load/integration"
    for path in {p for r in yaml_results.values() for p in r.paths}:
        text = git(acme_repo, "show", f"{branch}:{path}")
        assert "safe_load" in text or "SafeLoader" in text
    tree = tmp_path / "check"
    git(acme_repo, "worktree", "add", "-q", "--detach", str(tree), branch)
    run = bwrap.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tree,
                    env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, timeout=600)
    assert run.ok, run.stdout[-3000:]
    assert yaml_report.change_url.endswith(branch)

    # datetime-utcnow: a rejected unit names the gate that fired
    utc_results = latest_results(store.ledger, "datetime-utcnow")
    rejected = [r for r in utc_results.values() if r.status == "rejected"]
    assert rejected and all(r.rejected_by in GATES for r in rejected)
    # (a gate that said "unknown" shows as "unsure"; both are rejected results)
    held_back = ("rejected", "unsure")
    assert {k: u["gate"] for k, u in utc_report.units.items() if u["status"] in held_back} == {
        r.unit: r.rejected_by for r in rejected}

    # Dagster: a materialization per unit, verified_patches only for the verified ones, and the
    # rejecting gate recorded as a failed check on that unit's partition
    utc = ["datetime_utcnow"]
    cand = instance.get_materialized_partitions(AssetKey([*utc, "candidate_patches"]))
    assert cand == set(utc_results)
    verified = instance.get_materialized_partitions(AssetKey([*utc, "verified_patches"]))
    assert verified == {k for k, r in utc_results.items() if r.status == "verified"}
    assert instance.get_materialized_partitions(
        AssetKey(["yaml_safe_load", "verified_patches"])) == set(yaml_results)
    first = rejected[0]
    assert first.rejected_by is not None
    gate_checks = _checks(instance, AssetKey([*utc, "candidate_patches"]), first.rejected_by)
    assert gate_checks[first.unit] == "FAILED"
    # ... with ERROR severity (red in the UI), also for a unit that ran alone, and a description
    # that says what the gate did
    severities = _severities(instance, AssetKey([*utc, "candidate_patches"]), first.rejected_by)
    assert severities[first.unit] == "ERROR"
    assert all(severities[r.unit] == "ERROR" for r in rejected
               if r.rejected_by == first.rejected_by)
    latest = max(instance.event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(AssetKey([*utc, "candidate_patches"]),
                      f"candidate_patches_{first.rejected_by}"), limit=1000),
        key=lambda r: (r.partition == first.unit, r.id))
    assert latest.event is not None and latest.event.asset_check_evaluation is not None
    said = latest.event.asset_check_evaluation.description or ""
    assert said.startswith(f"gate {first.rejected_by} ") and " accepted" not in said
    shown = str(latest.event.asset_check_evaluation.metadata)
    assert "/tmp/" not in shown and f"{tempfile.gettempdir()}/" not in shown  # ($TMPDIR too)
    applies = _checks(instance, AssetKey([*utc, "candidate_patches"]), "applies")
    assert set(applies.values()) == {"SUCCEEDED"}
    assert store.ledger.verify() == []
    assert git(acme_repo, "status", "--porcelain") == ""

    second: SweepReport = sweep(settings, instance, say=lambda _: None)
    assert [c.new_units for c in second.campaigns] == [0, 0]
    assert [c.batches for c in second.campaigns] == [0, 0]
    assert len(latest_results(store.ledger, "yaml-safe-load")) == len(yaml_results)
    assert len(store.ledger.events(kind="integration.finished", campaign="yaml-safe-load")) == 1
    # one run: yaml-safe-load re-plans on the base its self-merge moved; the index (done by
    # datetime-utcnow's plan on that base) and datetime-utcnow's plan are as they were
    assert second.runs == 1
    # nothing changed, so nothing is stale: the re-index and the re-plans gave the same data
    # versions as the materializations downstream of them recorded
    keys = [k for k in instance.get_asset_keys()
            if instance.get_latest_materialization_event(k) is not None]
    assert len(keys) > 10
    stale, compared = _stale_inputs(instance, keys)
    assert stale == {}
    assert {"symbol_graph", "yaml_safe_load/findings", "datetime_utcnow/findings"} <= compared
    store.close()
    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=acme_repo,
                   check=False)
