"""A sweep whose inputs are as the last one left them submits no index run and no plan run, says
so, and leaves Dagster current (nothing re-materialized, so nothing turns stale); each input that
changes - the base commit, a finding's record, the campaign's spec, the Dagster instance, the
saved graph - brings the runs back (fleet_pipelines/commands/_unchanged.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from assets import SYMBOL_GRAPH
from fleet.campaigns.spec import load_campaign
from fleet.home import store_key
from fleet_pipelines.commands._sweep import SweepReport, sweep
from fleet_pipelines.resources import FleetSettings, StoreResource
from fleet_pipelines.storage import ensure_instance_config
from tests.conftest import commit_files, git

pytestmark = [pytest.mark.sandbox]
FILES = {
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
    "tests/test_config.py": ("from app.config import load_config\n\n\n"
                             "def test_config():\n    assert load_config('a: 1') == {'a': 1}\n"),
}
CAMPAIGN = "yaml-safe-load"


def _version(instance: DagsterInstance, key: AssetKey) -> str:
    event = instance.get_latest_materialization_event(key)
    assert event is not None and event.asset_materialization is not None
    return str((event.asset_materialization.tags or {}).get("dagster/data_version"))


def _latest(instance: DagsterInstance, key: AssetKey) -> int:
    records = instance.fetch_materializations(key, limit=1).records
    return records[0].storage_id if records else 0


def test_an_unchanged_sweep_runs_no_index_and_no_plan(
        git_repo: Path, tmp_path: Path, bwrap: object) -> None:
    repo = commit_files(git_repo, FILES, "tiny")
    settings = FleetSettings.from_env({
        "FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(repo), "FLEET_SANDBOX": "bwrap",
        "FLEET_CAMPAIGNS": CAMPAIGN})
    said: list[str] = []
    ensure_instance_config(tmp_path / "dagster")
    with DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        def swept(**kw: object) -> SweepReport:
            said.clear()
            return sweep(settings, instance, said.append, **kw)  # type: ignore[arg-type]

        first = swept()  # index, plan, fix, integrate; the unit self-merges: main moves
        assert first.campaigns[0].integrated and first.runs >= 4
        head = git(repo, "rev-parse", "main").strip()
        second = swept()  # on the moved base: index and plan again, nothing to fix
        assert not any("no index run" in s or "no plan run" in s for s in said)
        assert second.runs >= 2 and second.campaigns[0].batches == 0
        assert _version(instance, SYMBOL_GRAPH) == head
        findings, units = (AssetKey(["yaml_safe_load", n]) for n in ("findings", "work_units"))
        before = {k: _latest(instance, k) for k in (SYMBOL_GRAPH, findings, units)}

        third = swept()  # nothing changed: no run at all, and the sweep says why
        assert third.runs == 0
        assert any(s.startswith("index unchanged (base ") and s.endswith(": no index run")
                   for s in said), said
        assert any(s.startswith(f"[{CAMPAIGN}] unchanged since its last plan")
                   and s.endswith("no plan run") for s in said), said
        assert {k: _latest(instance, k) for k in before} == before  # nothing re-materialized
        assert _version(instance, SYMBOL_GRAPH) == head  # ... and what Dagster has is current
        report, last = third.campaigns[0], second.campaigns[0]
        assert (report.findings, report.fixed, report.units) == (
            last.findings, last.fixed, last.units)

        # each input that changed brings the plan run back, and only then
        commit_files(repo, {"README.md": "an edit elsewhere\n"}, "docs")
        assert swept().runs == 2  # a new base commit: the index and the plan
        assert _version(instance, SYMBOL_GRAPH) == git(repo, "rev-parse", "main").strip()
        assert swept().runs == 0

        store = StoreResource(url=settings.store_url, repo=store_key(settings.home, repo))
        record = store.store().findings.list(campaign=CAMPAIGN)[0]
        assert store.store().findings.set_status(record.finding.fingerprint, "suppressed")
        assert swept().runs == 1  # a finding's record changed: the plan, not the index
        assert any("no index run" in s for s in said) and swept().runs == 0

        spec = load_campaign(CAMPAIGN)
        changed = dataclasses.replace(spec, plan=dataclasses.replace(
            spec.plan, max_unit_symbols=spec.plan.max_unit_symbols + 1))
        assert swept(campaigns=[changed]).runs == 1  # the campaign's spec changed
        assert swept(campaigns=[changed]).runs == 0
        assert swept().runs == 1  # and back

        (Path(settings.home) / "graph" / "symbol_graph.json").unlink()
        assert swept().runs == 1  # the saved graph is gone: indexed again (the plan's
        # inputs are as they were: the same commit gives the same graph)
        assert (Path(settings.home) / "graph" / "symbol_graph.json").is_file()

    ensure_instance_config(tmp_path / "other-dagster")
    with DagsterInstance.from_config(str(tmp_path / "other-dagster")) as other:
        said.clear()
        fresh = sweep(settings, other, said.append)  # another instance has none of it
        assert fresh.runs >= 2 and _version(other, SYMBOL_GRAPH) == git(
            repo, "rev-parse", "main").strip()


def test_a_repository_by_url_is_fetched_before_its_runs_are_skipped(
        git_repo: Path, tmp_path: Path) -> None:
    """By URL the head is the remote's: a commit pushed there brings the runs back although the
    sweep's mirror had not fetched it yet (the CLI fetches first; ``sweep`` alone must too)."""
    import subprocess

    repo = commit_files(git_repo, {"app/__init__.py": "", "app/config.py": "X = 1\n"}, "clean")
    bare = tmp_path / "target.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    settings = FleetSettings.from_env({
        "FLEET_REPO": bare.as_uri(), "FLEET_HOME": str(tmp_path / "worker"),
        "FLEET_CAMPAIGNS": CAMPAIGN, "FLEET_SANDBOX": "bwrap", "FLEET_BASE_BRANCH": "main"})
    settings.checkout()
    ensure_instance_config(tmp_path / "dagster")
    with DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        # index, the code modules' first materialization, plan (no finding: nothing to fix)
        assert sweep(settings, instance, lambda _: None).runs == 3
        assert sweep(settings, instance, lambda _: None).runs == 0
        commit_files(repo, {"app/more.py": "Y = 2\n"}, "more")
        git(repo, "push", "-q", str(bare), "main")
        assert sweep(settings, instance, lambda _: None).runs == 3  # app/more.py: a new module
        assert _version(instance, SYMBOL_GRAPH) == git(repo, "rev-parse", "main").strip()
