"""A real sweep (``fleet_pipelines.commands._sweep.sweep``) of one campaign over a copy of acme on
a temporary Dagster instance, through the deployment's third-party seams:

- ``FLEET_FORGE=github``: GitHubForge (real PyGithub over HTTP) against FakeGitHub on 127.0.0.1,
  with a bare git repository as the push remote. A second sweep opens no new pull request and
  files no new issue.
- ``FLEET_AGENT=claude``: ClaudeAgent through the real anthropic SDK against FakeMessagesServer,
  scripted so that exactly one unit (``billing/rates.py``) gets its edit."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance

from fleet.agents.fake_messages import FakeMessagesServer
from fleet.agents.scripted import tool_call, tool_response
from fleet.campaigns.spec import load_campaign
from fleet.forge.fake_github import FakeGitHub
from fleet.store import open_store
from fleet.types import Finding
from fleet.unit import latest_results, load_units
from fleet_pipelines.commands._sweep import sweep
from fleet_pipelines.resources import FleetSettings
from tests.conftest import git

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

CAMPAIGN = "yaml-safe-load"
GH_REPO = "acme/monorepo"
GH_TOKEN = "ghp_sweep_github_token"
INTEGRATION = f"fleet/{CAMPAIGN}/integration"


@pytest.fixture
def instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DagsterInstance]:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    (tmp_path / "dagster").mkdir()
    (tmp_path / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as inst:
        yield inst


@pytest.fixture
def remote(acme_repo: Path, tmp_path: Path) -> Path:
    """A bare repository standing in for github.com's git side, holding acme's ``main``."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(acme_repo, "push", "-q", str(bare), "main")
    return bare


def _unit_findings(settings: FleetSettings, key: str) -> tuple[Finding, ...]:
    with open_store(settings.store_url) as store:
        (unit,) = load_units(store.ledger, CAMPAIGN, [key])
    return unit.findings


def test_sweep_hands_over_through_github_once(
    tmp_path: Path, acme_repo: Path, remote: Path, instance: DagsterInstance,
    monkeypatch: pytest.MonkeyPatch, bwrap: object,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    monkeypatch.setenv("FLEET_GITHUB_PUSH_URL", str(remote))
    with FakeGitHub(token=GH_TOKEN) as fake:
        fake.add_repo(GH_REPO, git_dir=remote)
        settings = FleetSettings.from_env({
            "FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(acme_repo),
            "FLEET_CAMPAIGNS": CAMPAIGN, "FLEET_SANDBOX": "bwrap", "FLEET_FORGE": "github",
            "FLEET_GITHUB_REPO": GH_REPO, "FLEET_GITHUB_API_URL": fake.base_url})
        main_before = git(acme_repo, "rev-parse", "main")
        first = sweep(settings, instance, say=lambda _: None)
        pulls_after_first = fake.issues(GH_REPO, pulls=True)
        issues_after_first = fake.issues(GH_REPO)
        check_runs = fake.checks(GH_REPO)
        second = sweep(settings, instance, say=lambda _: None)
        pulls = fake.issues(GH_REPO, pulls=True)
        issues = fake.issues(GH_REPO)

    (report,) = first.campaigns
    assert report.findings == 4 and len(report.units) == 3
    integrated = sorted(k for k, u in report.units.items() if u["status"] == "verified, integrated")
    assert integrated, report.units
    assert report.integration is not None and report.integration["branch"] == INTEGRATION

    # the integration branch was pushed: the remote holds the local branch's commit
    assert git(remote, "rev-parse", f"refs/heads/{INTEGRATION}") == git(
        acme_repo, "rev-parse", INTEGRATION)

    # exactly one pull request, its body listing each integrated unit with its gate verdicts
    assert len(pulls_after_first) == 1
    (pull,) = pulls_after_first
    assert (pull["head"]["ref"], pull["base"]["ref"]) == (INTEGRATION, "main")
    assert report.change_url == f"{fake.base_url}/{GH_REPO}/pull/{pull['number']}"
    body = str(pull["body"])
    with open_store(settings.store_url) as store:
        results = latest_results(store.ledger, CAMPAIGN)
        records = store.findings.list(CAMPAIGN)
        assert store.ledger.verify() == []
    for key in integrated:
        line = next((ln for ln in body.splitlines() if f"unit `{key}`" in ln), None)
        assert line is not None, (key, body)
        verdicts = results[key].verdicts
        assert verdicts
        for v in verdicts:
            assert f"{v.gate}={v.status}" in line, (v, line)

    # the full evidence: per unit its findings, gates with evidence, diffstat, ledger ids
    assert body.count("### Unit `") == len(integrated)
    assert "**Gates**" in body and "**Ledger events:** #" in body
    assert "file(s) changed" in body and "| `impacted_tests` |" in body
    assert "/tmp/" not in body and f"{tempfile.gettempdir()}/" not in body  # ($TMPDIR too)
    # ... and the issues it closes (GitHub links "#N" and closes them on merge)
    by_fp = {r.finding.fingerprint: r.issue_ref for r in records}
    merged_fps = {f.fingerprint for k in integrated for f in _unit_findings(settings, k)}
    closes = sorted(str(by_fp[f]).split("#")[1] for f in merged_fps)
    assert closes and all(f"#{n}" in body for n in closes) and "Closes #" in body

    # one check run per gate of the campaign on the PR's head commit
    head = report.integration["head"]
    gates = load_campaign(CAMPAIGN).gates
    assert sorted(r["name"] for r in check_runs) == sorted(f"fleet/{g}" for g in gates)
    assert {r["head_sha"] for r in check_runs} == {head}
    assert {r["conclusion"] for r in check_runs} == {"success"}
    assert all(r["output"]["summary"].startswith("| unit |") for r in check_runs)

    # self-merge (the campaign's autonomy) through GitHub: the pull request is merged there;
    # the local main did not move while a pull request was open
    assert pull["merged"] is True and pull["state"] == "closed"
    assert git(acme_repo, "rev-parse", "main") == main_before
    assert git(remote, "merge-base", "--is-ancestor", head, "main") == ""
    assert report.self_merge.startswith("merged the pull request through GitHub")

    # the findings were filed as issues once each
    assert len(issues_after_first) == len(records) == 4
    for r in records:
        assert sum(r.finding.fingerprint in str(i.get("body")) for i in issues_after_first) == 1
    assert all(r.issue_ref and r.issue_ref.startswith("github#") for r in records)

    # a second sweep creates no new pull request or issue
    (again,) = second.campaigns
    assert again.new_units == 0
    assert [p["number"] for p in pulls] == [pull["number"]]
    assert len(issues) == 4


RATES_SYMBOL = "billing/rates.py::load_rate_card"
FIXED_RATES = """def load_rate_card(path: str | Path) -> RateCard:
    \"\"\"Read a rate card from YAML (``currency``, ``plans``, ``metered``).\"\"\"
    text = Path(path).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return RateCard(
        currency=data.get("currency", "USD"),
        plans={name: int(price) for name, price in data.get("plans", {}).items()},
        metered={name: Decimal(str(p)) for name, p in data.get("metered", {}).items()},
    )
"""


def test_sweep_with_the_claude_agent_applies_its_one_scripted_edit(
    tmp_path: Path, acme_repo: Path, instance: DagsterInstance,
    monkeypatch: pytest.MonkeyPatch, bwrap: object,
) -> None:
    # One agent at a time, so the script is consumed unit by unit: each unit's agent tries to
    # replace load_rate_card (refused outside the rates unit's write set) and then finishes.
    units = 3
    script = [tool_response(tool_call("replace_symbol", symbol=RATES_SYMBOL, source=FIXED_RATES))
              if i % 2 == 0 else
              tool_response(tool_call("finish", summary="done")) for i in range(2 * units)]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-sweep-test")
    with FakeMessagesServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        settings = FleetSettings.from_env({
            "FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(acme_repo),
            "FLEET_CAMPAIGNS": CAMPAIGN, "FLEET_SANDBOX": "bwrap", "FLEET_AGENT": "claude",
            "FLEET_AGENTS": "1"})
        (report,) = sweep(settings, instance, say=lambda _: None).campaigns
        requests = list(server.requests)

    assert len(requests) == 2 * units
    # the key from the orchestrator's environment (SDK 2.x sends it as a bearer token)
    assert all("sk-ant-sweep-test" in (r["headers"].get("x-api-key") or "")
               + (r["headers"].get("authorization") or "") for r in requests)
    assert len(report.units) == units
    integrated = [u for u in report.units.values() if u["status"] == "verified, integrated"]
    assert [u["paths"] for u in integrated] == ["billing/rates.py"], report.units
    assert report.integration is not None
    branch = str(report.integration["branch"])
    rates = git(acme_repo, "show", f"{branch}:billing/rates.py")
    assert "data = yaml.safe_load(text)" in rates and "yaml.load(" not in rates
    # the other units made no edit: their files are unchanged on the integration branch
    for path in ("common/config.py", "tenants/plans.py"):
        assert "yaml.load(" in git(acme_repo, "show", f"{branch}:{path}")
    with open_store(settings.store_url) as store:
        assert store.ledger.verify() == []
