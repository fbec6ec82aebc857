"""The ``findings`` asset files every open finding as an issue through the forge exactly once:
two materializations on a temporary Dagster instance over a copy of acme, with the local forge
(issues as ledger events) and with GitHubForge against FakeGitHub (real PyGithub over HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dagster import AssetKey, DagsterInstance

from fleet.forge.fake_github import FakeGitHub
from fleet.forge.local import ISSUE_FILED
from fleet.store import open_store
from fleet_pipelines.definitions import build_definitions
from fleet_pipelines.resources import FleetSettings

CAMPAIGN = "yaml-safe-load"
FINDINGS = AssetKey(["yaml_safe_load", "findings"])
GH_REPO = "acme/monorepo"
GH_TOKEN = "ghp_findings_filed_token"


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as inst:
        yield inst


def _materialize(settings: FleetSettings, instance: DagsterInstance) -> dict[str, Any]:
    """Index + findings in one run; the findings materialization's metadata values."""
    defs = build_definitions(settings)
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(
        instance=instance, asset_selection=[AssetKey("symbol_graph"), FINDINGS])
    assert result.success
    (mat,) = [m for m in result.asset_materializations_for_node("yaml_safe_load__findings")]
    return {k: v.value for k, v in mat.metadata.items()}


def _settings(tmp_path: Path, repo: Path, **extra: str) -> FleetSettings:
    return FleetSettings.from_env({
        "FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(repo),
        "FLEET_CAMPAIGNS": CAMPAIGN, **extra})


def test_local_forge_files_each_finding_once(
    tmp_path: Path, acme_repo: Path, instance: DagsterInstance
) -> None:
    settings = _settings(tmp_path, acme_repo)
    first = _materialize(settings, instance)
    assert first["findings"] == 4 and first["new"] == 4
    assert first["issues_filed"] == 4 and first["issues_already_filed"] == 0
    assert first["issue_links"].count("fleet://issues/") == 4

    second = _materialize(settings, instance)
    assert second["known"] == 4 and second["new"] == 0
    assert second["issues_filed"] == 0 and second["issues_already_filed"] == 4

    with open_store(settings.store_url) as store:
        filed = store.ledger.events(kind=ISSUE_FILED, campaign=CAMPAIGN)
        fingerprints = [e.payload["fingerprint"] for e in filed]
        records = store.findings.list(CAMPAIGN)
        assert len(fingerprints) == len(set(fingerprints)) == 4
        assert {r.finding.fingerprint for r in records} == set(fingerprints)
        assert all(r.issue_ref and r.issue_ref.startswith("local#") for r in records)
        assert store.ledger.verify() == []


def test_github_forge_holds_one_issue_per_fingerprint(
    tmp_path: Path, acme_repo: Path, instance: DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    with FakeGitHub(token=GH_TOKEN) as fake:
        fake.add_repo(GH_REPO)
        settings = _settings(tmp_path, acme_repo, FLEET_FORGE="github",
                             FLEET_GITHUB_REPO=GH_REPO, FLEET_GITHUB_API_URL=fake.base_url)
        first = _materialize(settings, instance)
        second = _materialize(settings, instance)
        issues = fake.issues(GH_REPO)

    assert first["issues_filed"] == 4 and first["issues_already_filed"] == 0
    assert second["issues_filed"] == 0 and second["issues_already_filed"] == 4
    assert len(issues) == 4
    with open_store(settings.store_url) as store:
        records = store.findings.list(CAMPAIGN)
    fingerprints = {r.finding.fingerprint for r in records}
    assert len(fingerprints) == 4
    for fp in fingerprints:
        assert sum(fp in str(issue.get("body")) for issue in issues) == 1
    assert all(r.issue_ref and r.issue_ref.startswith("github#") for r in records)
