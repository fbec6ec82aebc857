"""The resources declare their secrets as ``EnvVar`` fields (resolved by Dagster when a run
starts, shown by name in the UI), and every module's Dagster-private imports are in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import dagster
from dagster import EnvVar

from assets._dagster_private import DAGSTER_VERSION_CHECKED
from fleet.errors import ConfigError
from fleet_pipelines.definitions import build_definitions
from fleet_pipelines.resources import FleetSettings, ForgeResource, forge_resource

ROOT = Path(__file__).resolve().parents[2]


def _settings(tmp_path: Path, **env: str) -> FleetSettings:
    return FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "home"),
                                   "FLEET_REPO": str(tmp_path), "FLEET_CAMPAIGNS": "yaml-safe-load",
                                   **env})


def test_the_github_forge_reads_its_secrets_as_env_vars(tmp_path: Path) -> None:
    settings = _settings(tmp_path, FLEET_FORGE="github", FLEET_GITHUB_REPO="acme/shop",
                         FLEET_GITHUB_API_URL="http://127.0.0.1:9/api")
    both = forge_resource(settings, {"FLEET_GITHUB_TOKEN": "a", "GITHUB_TOKEN": "b",
                                     "FLEET_GITHUB_PUSH_URL": "/srv/remote.git"})
    assert isinstance(both.token, EnvVar) and both.token.env_var_name == "FLEET_GITHUB_TOKEN"
    assert isinstance(both.push_url, EnvVar)
    assert both.push_url.env_var_name == "FLEET_GITHUB_PUSH_URL"
    assert both.github_url == "http://127.0.0.1:9/api"
    fallback = forge_resource(settings, {"GITHUB_TOKEN": "b"})
    assert isinstance(fallback.token, EnvVar) and fallback.token.env_var_name == "GITHUB_TOKEN"
    assert fallback.push_url == ""
    # the local forge has no secrets to declare
    local = forge_resource(_settings(tmp_path), {"FLEET_GITHUB_TOKEN": "a"})
    assert local.token == "" and not isinstance(local.token, EnvVar)


def test_dagster_resolves_the_token_when_the_resource_starts(
    tmp_path: Path, monkeypatch: object
) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("FLEET_GITHUB_TOKEN", "ghp_resolved")
    settings = _settings(tmp_path, FLEET_FORGE="github", FLEET_GITHUB_REPO="acme/shop")
    defs = build_definitions(settings)
    forge = (defs.resources or {})["forge"]
    assert isinstance(forge, ForgeResource) and isinstance(forge.token, EnvVar)
    started = forge.process_config_and_initialize()
    assert started.token == "ghp_resolved"
    assert started.github_config().token == "ghp_resolved"


def test_dagster_private_imports_live_in_one_module() -> None:
    """Only ``assets/_dagster_private.py`` imports ``dagster._*`` (checked on the version it
    names, the one installed)."""
    offenders = []
    for package in ("assets", "fleet_pipelines", "fleet", "sandbox"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "_dagster_private.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                              if n.startswith(("dagster._", "dagster_postgres._"))]
    assert offenders == []
    assert dagster.__version__ == DAGSTER_VERSION_CHECKED


def test_the_pipelines_agent_holds_the_campaigns_daily_budget(
    tmp_path: Path, monkeypatch: object
) -> None:
    """``budgets.daily_usd`` of the campaign file reaches the agent the ``agent`` resource opens
    for the pipeline's units, as its ``DayBudget`` (a file without it: unlimited)."""
    import pytest

    from fleet.campaigns import spec as campaign_spec
    from fleet.store import open_store
    from fleet_pipelines.definitions import build_campaigns
    from fleet_pipelines.resources import AgentResource

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")  # never used: no call is made
    text = (campaign_spec.BUILTIN_DIR / "yaml-safe-load.yaml").read_text()
    capped = tmp_path / "capped.yaml"
    capped.write_text(text.replace("name: yaml-safe-load", "name: capped").replace(
        "budgets: {max_wall_s: 300}", "budgets: {max_wall_s: 300, daily_usd: 0.25}"))
    settings = _settings(tmp_path, FLEET_AGENT="claude",
                         FLEET_CAMPAIGNS=f"{capped},yaml-safe-load")
    defs = build_definitions(settings)
    resource = (defs.resources or {})["agent"]
    assert isinstance(resource, AgentResource) and resource.kind == "claude"
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        agents = {c.campaign: resource.open(c.spec, None, store)  # type: ignore[arg-type]
                  for c in build_campaigns(settings)}
    assert agents["capped"].day_budget.max_cost_usd == 0.25  # type: ignore[attr-defined]
    assert agents["yaml-safe-load"].day_budget.max_cost_usd is None  # type: ignore[attr-defined]


def test_the_claude_agent_reads_its_key_as_an_env_var(
    tmp_path: Path, monkeypatch: object
) -> None:
    """``FLEET_AGENT=claude``: the agent resource declares ``ANTHROPIC_API_KEY`` as an
    ``EnvVar`` field (its name in the UI, never its value); Dagster resolves it when the
    resource starts, and the agent's model is built with the resolved key."""
    import pytest

    from fleet.store import open_store
    from fleet_pipelines.definitions import build_campaigns
    from fleet_pipelines.resources import AgentResource

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-resolved")
    settings = _settings(tmp_path, FLEET_AGENT="claude")
    resource = (build_definitions(settings).resources or {})["agent"]
    assert isinstance(resource, AgentResource) and isinstance(resource.api_key, EnvVar)
    assert resource.api_key.env_var_name == "ANTHROPIC_API_KEY"
    assert "sk-ant-resolved" not in repr(resource)
    started = resource.process_config_and_initialize()
    assert started.api_key == "sk-ant-resolved"
    (campaign,) = build_campaigns(settings)
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        agent = started.open(campaign.spec, None, store)
    model = agent.model
    assert model._client.api_key == "sk-ant-resolved"
    assert "sk-ant-resolved" not in repr(model)
    # the codemod agent has no secret to declare, and an unset key is no field either: the
    # Claude agent then refuses to start, naming the variable
    assert (build_definitions(_settings(tmp_path)).resources or {})["agent"].api_key == ""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    unset = (build_definitions(settings).resources or {})["agent"]
    assert unset.api_key == ""
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store, pytest.raises(
            ConfigError, match="ANTHROPIC_API_KEY is not set"):
        unset.open(campaign.spec, None, store)
