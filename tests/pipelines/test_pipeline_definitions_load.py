"""The Dagster definitions load, with the asset chain, checks, jobs, schedules and sensors; the
code module assets come from a real index of the example repository."""

from __future__ import annotations

from pathlib import Path

from dagster import AssetKey, Definitions

from assets import AGENT_POOL
from assets._fleet import index
from fleet.campaigns.spec import load_campaign
from fleet_pipelines.definitions import GATES, build_definitions
from fleet_pipelines.resources import FleetSettings


def _settings(tmp_path: Path, repo: Path, **kw: object) -> FleetSettings:
    return FleetSettings.from_env({
        "FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(repo),
        "FLEET_CAMPAIGNS": "datetime-utcnow,yaml-safe-load", **{k: str(v) for k, v in kw.items()},
    })


def test_definitions_load_with_the_whole_chain(tmp_path: Path, git_repo: Path) -> None:
    defs = build_definitions(_settings(tmp_path, git_repo))
    Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    keys = set(repo.asset_graph.get_all_asset_keys())
    for name in ("findings", "work_units", "candidate_patches", "verified_patches",
                 "integration", "pull_requests"):
        assert AssetKey(["datetime_utcnow", name]) in keys
        assert AssetKey(["yaml_safe_load", name]) in keys
    assert AssetKey("symbol_graph") in keys
    jobs = {j.name for j in repo.get_all_jobs()}
    assert {"index_code_job", "plan_datetime_utcnow_job", "fix_datetime_utcnow_job",
            "integrate_datetime_utcnow_job"} <= jobs
    assert {s.name for s in repo.schedule_defs} == {
        "plan_datetime_utcnow_job_schedule", "plan_yaml_safe_load_job_schedule"}
    assert {s.name for s in repo.sensor_defs} == {"planner_sensor", "pr_status_sensor"}
    candidate = repo.assets_defs_by_key[AssetKey(["datetime_utcnow", "candidate_patches"])]
    checks = {k.name for k in candidate.check_keys}
    # one blocking check per gate the campaign file lists, not every gate there is
    assert checks == {f"candidate_patches_{g}" for g in load_campaign("datetime-utcnow").gates}
    assert set(load_campaign("datetime-utcnow").gates) < set(GATES)
    assert all(spec.blocking for spec in candidate.check_specs)
    assert candidate.partitions_def is not None
    assert candidate.op.pool == AGENT_POOL
    verified = repo.assets_defs_by_key[AssetKey(["datetime_utcnow", "verified_patches"])]
    assert not verified.op.outs["result"].is_required


def test_code_module_assets_follow_the_import_graph(tmp_path: Path, acme_repo: Path) -> None:
    settings = _settings(tmp_path, acme_repo)
    stats = index(acme_repo, Path(settings.home))
    assert stats["modules"] > 10
    defs = build_definitions(settings)
    Definitions.validate_loadable(defs)
    graph = defs.get_repository_def().asset_graph
    code = {k for k in graph.get_all_asset_keys() if k.path[0] == "code"}
    assert len(code) == stats["modules"]
    payments = AssetKey(["code", "billing", "payments"])
    assert payments in code
    parents = graph.get(payments).parent_keys
    assert AssetKey("symbol_graph") in parents
    assert AssetKey(["code", "billing", "store"]) in parents
    # the UserAuth <-> TenantContext import cycle is broken to one direction, not dropped
    user_auth = graph.get(AssetKey(["code", "auth", "user_auth"])).parent_keys
    context = graph.get(AssetKey(["code", "tenants", "context"])).parent_keys
    assert (AssetKey(["code", "tenants", "context"]) in user_auth) != (
        AssetKey(["code", "auth", "user_auth"]) in context)


def test_settings_validate_the_deployment(tmp_path: Path) -> None:
    import pytest

    from fleet.errors import ConfigError

    with pytest.raises(ConfigError):
        FleetSettings.from_env({"FLEET_DEPLOYMENT": "cloud"})
    with pytest.raises(ConfigError):
        FleetSettings.from_env({"FLEET_DEPLOYMENT": "shared"})
    shared = FleetSettings.from_env({"FLEET_DEPLOYMENT": "shared",
                                     "FLEET_STORE_URL": "postgresql://u:p@127.0.0.1/db"})
    assert shared.store_url.startswith("postgresql://")
    embedded = FleetSettings.from_env({"FLEET_HOME": str(tmp_path)})
    assert embedded.store_url == f"sqlite:///{tmp_path.resolve() / 'fleet.db'}"


def test_the_campaign_files_gates_are_the_checks(tmp_path: Path, git_repo: Path) -> None:
    """A campaign that lists three gates gets three checks (the field is not parsed and
    ignored), and its file is read once per definitions build, not once per asset."""
    from fleet.campaigns import spec as campaign_spec

    text = (campaign_spec.BUILTIN_DIR / "yaml-safe-load.yaml").read_text()
    mine = tmp_path / "three-gates.yaml"
    mine.write_text(text.replace("name: yaml-safe-load", "name: three-gates").replace(
        "gates: [applies, parses, lease_scope, impacted_tests, security]",
        "gates: [applies, parses, security]"))
    reads: list[object] = []
    real = campaign_spec.load_campaign

    def counting(name_or_path: object) -> campaign_spec.Campaign:
        reads.append(name_or_path)
        return real(name_or_path)  # type: ignore[arg-type]

    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(campaign_spec, "load_campaign", counting)
        defs = build_definitions(_settings(tmp_path, git_repo, FLEET_CAMPAIGNS=str(mine)))
    assert reads == [str(mine)]
    repo = defs.get_repository_def()
    candidate = repo.assets_defs_by_key[AssetKey(["three_gates", "candidate_patches"])]
    assert {k.name for k in candidate.check_keys} == {
        "candidate_patches_applies", "candidate_patches_parses", "candidate_patches_security"}
    assert {s.name for s in repo.schedule_defs} == {"plan_three_gates_job_schedule"}
    assert next(iter(repo.schedule_defs)).cron_schedule == "0 4 * * *"  # the file's schedule
