"""The pipeline on a repository named by URL: every step works in this worker's own mirror
under its ``FLEET_HOME`` (``RepoResource`` syncs it when the step starts), the verified units'
branches and the integration branch end up on the remote, and the user's checkout that the
remote was made from is never touched. Runs execute in process (the sweep's path when no
engine is current): what is tested is where the repository comes from, not the run launcher."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import git

pytestmark = [pytest.mark.sandbox, pytest.mark.timeout(300)]

CAMPAIGN = "yaml-safe-load"


def test_a_sweep_by_url_pushes_units_and_integration_to_the_remote(
        acme_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dagster import DagsterInstance

    from fleet_pipelines.commands._sweep import sweep
    from fleet_pipelines.resources import FleetSettings

    bare = tmp_path / "acme.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(acme_repo), str(bare)], check=True)
    home = tmp_path / "worker"
    monkeypatch.chdir(tmp_path)
    settings = FleetSettings.from_env({
        "FLEET_REPO": bare.as_uri(), "FLEET_HOME": str(home), "FLEET_CAMPAIGNS": CAMPAIGN,
        "FLEET_SANDBOX": "bwrap", "FLEET_BATCH_SIZE": "8"})
    assert settings.url == bare.as_uri() and Path(settings.repo).is_relative_to(home)
    assert not Path(settings.repo).exists()  # the first step clones it
    base = git(bare, "rev-parse", "main").strip()
    with DagsterInstance.ephemeral() as instance:
        report = sweep(settings, instance, say=lambda _: None)
    (campaign,) = report.campaigns
    verified = sorted(k for k, u in campaign.units.items() if u["status"].startswith("verified"))
    assert len(verified) == 3, campaign.units
    pushed = git(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/fleet/").split()
    assert sorted(pushed) == sorted([*(f"fleet/{CAMPAIGN}/{k}" for k in verified),
                                     f"fleet/{CAMPAIGN}/integration"])
    assert campaign.integration is not None
    head = campaign.integration["head"]
    assert git(bare, "rev-parse", f"fleet/{CAMPAIGN}/integration").strip() == head
    subjects = git(bare, "log", "--format=%s", f"{base}..{head}").splitlines()
    assert sorted(subjects) == sorted(f"fleet({CAMPAIGN}): integrate unit {k}" for k in verified)
    assert git(bare, "rev-parse", "main").strip() == head, campaign.self_merge  # self-merged
    assert campaign.self_merge == (
        f"fast-forwarded main to {head[:10]} on the remote {bare.as_uri()}")
    assert git(acme_repo, "rev-parse", "main").strip() == base  # the source checkout: untouched
    assert git(acme_repo, "branch", "--list", "fleet/*") == ""
    # the hand-over names the branch where every worker finds it, and its state is the remote's
    assert campaign.change_url == f"{bare.as_uri()}#fleet/{CAMPAIGN}/integration"
    from fleet.forge.local import LocalGitForge
    from fleet_pipelines.resources import StoreResource

    opened = StoreResource(url=settings.store_url, repo=settings.repository_key()).store()
    forge = LocalGitForge(opened.changes, opened.ledger, base_branch="main")
    (change,) = forge.list_changes()
    assert change.url == campaign.change_url and forge.status(change) == "merged"
    git(bare, "branch", "-D", f"fleet/{CAMPAIGN}/integration")
    assert forge.status(change) == "closed"


def test_a_fleet_owned_remote_takes_the_branches_the_source_never_moves(
        acme_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``FLEET_REMOTE``: the source is read-only to the fleet (its pre-receive hook refuses
    every push); units and the integration go to a fleet-owned bare remote, and the self-merge
    says why it does not move the source's base branch."""
    from dagster import DagsterInstance

    from fleet_pipelines.commands._sweep import sweep
    from fleet_pipelines.resources import FleetSettings

    source, owned = tmp_path / "source.git", tmp_path / "fleet.git"
    for bare in (source, owned):
        subprocess.run(["git", "clone", "--quiet", "--bare", str(acme_repo), str(bare)],
                       check=True)
    hook = source / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho read-only >&2\nexit 1\n")
    hook.chmod(0o755)
    base = git(source, "rev-parse", "main").strip()
    monkeypatch.chdir(tmp_path)
    settings = FleetSettings.from_env({
        "FLEET_REPO": f"file://{source}", "FLEET_REMOTE": f"file://{owned}",
        "FLEET_HOME": str(tmp_path / "worker"), "FLEET_CAMPAIGNS": CAMPAIGN,
        "FLEET_SANDBOX": "bwrap"})
    with DagsterInstance.ephemeral() as instance:
        report = sweep(settings, instance, say=lambda _: None)
    (campaign,) = report.campaigns
    verified = sorted(k for k, u in campaign.units.items() if u["status"].startswith("verified"))
    assert len(verified) == 3, campaign.units
    assert git(source, "for-each-ref", "refs/heads/fleet/") == ""
    assert git(source, "rev-parse", "main").strip() == base
    pushed = git(owned, "for-each-ref", "--format=%(refname:short)", "refs/heads/fleet/").split()
    assert sorted(pushed) == sorted([*(f"fleet/{CAMPAIGN}/{k}" for k in verified),
                                     f"fleet/{CAMPAIGN}/integration"])
    assert campaign.integration is not None
    assert git(owned, "rev-parse", f"fleet/{CAMPAIGN}/integration").strip() == (
        campaign.integration["head"])
    assert campaign.self_merge == (
        f"not merged: main is the source's (file://{source}); the fleet pushes only to "
        f"file://{owned}; the change stays on fleet/{CAMPAIGN}/integration")


def test_a_remote_gone_mid_sweep_stops_it_in_one_line(
        acme_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The remote goes away after the worker cloned it: the first step's sync fails, the sweep
    stops with one line naming the URL (the repo resource could not start: no step ran)."""
    import shutil

    from dagster import DagsterInstance

    from fleet_pipelines.commands._sweep import RunFailed, sweep
    from fleet_pipelines.resources import FleetSettings

    bare = tmp_path / "acme.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(acme_repo), str(bare)], check=True)
    monkeypatch.chdir(tmp_path)
    settings = FleetSettings.from_env({
        "FLEET_REPO": bare.as_uri(), "FLEET_HOME": str(tmp_path / "worker"),
        "FLEET_CAMPAIGNS": CAMPAIGN, "FLEET_SANDBOX": "bwrap"})
    settings.checkout()
    shutil.rmtree(bare)
    with DagsterInstance.ephemeral() as instance, pytest.raises(RunFailed) as info:
        sweep(settings, instance, say=lambda _: None)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("run of index_code_job failed: fleet.forge.remote.RemoteError: "
                              f"cannot fetch from {bare.as_uri()}: fatal: "), message
