"""Shared-nothing workers: two separate ``fleet`` processes, each with its own ``FLEET_HOME`` and
its own working directory, share only one PostgreSQL fleet store and a bare git remote served
over loopback by ``git daemon``. Worker A runs units of a campaign (``fleet fix URL``: each
verified unit's branch is pushed to the remote); A's state directory is then deleted, and
worker B integrates them from the remote (``assets._fleet.integrate`` and ``publish``, what the
``integration`` and ``pull_requests`` assets call, on settings read from the environment): the
integration branch on the remote has each unit exactly once, the self-merge moved the
remote's ``main``, and the hand-over's ledger checkpoint is a note on the remote."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine.conftest import GitDaemon, pg_url, start_git_daemon, stop

pytestmark = [pytest.mark.postgres, pytest.mark.sandbox, pytest.mark.timeout(300)]

CAMPAIGN = "yaml-safe-load"

# worker B: what the integration and pull_requests assets do, from FLEET_* settings
INTEGRATE = """
import json, sys
from pathlib import Path
from assets._fleet import integrate, publish
from fleet.campaigns.spec import load_campaign
from fleet_pipelines.resources import (FleetSettings, SandboxResource, StoreResource,
                                       forge_resource)
settings = FleetSettings.from_env()
repo = settings.checkout()
store = StoreResource(url=settings.store_url, repo=settings.repository_key())
result = integrate(sys.argv[1], repo, Path(settings.home), settings.base_branch, store,
                   SandboxResource(backend="bwrap"))
done = publish(load_campaign(sys.argv[1]), repo, settings.base_branch, store,
               forge_resource(settings))
merge = done.self_merge if done is not None else None
print(json.dumps({"merged": list(result.merged), "head": result.head, "repo": str(repo),
                  "stale": list(result.stale),
                  "self_merged": bool(merge and merge.merged),
                  "reason": merge.reason if merge else ""}))
"""


def worker_env(home: Path, store: str, url: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEET_")}
    return {**env, "FLEET_HOME": str(home), "FLEET_STORE_URL": store, "FLEET_REPO": url,
            "FLEET_DEPLOYMENT": "shared", "FLEET_CAMPAIGNS": CAMPAIGN}


def fleet(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "fleet_pipelines.cli", *args], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(proc: subprocess.Popen[str], timeout: float = 120) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, f"exit {proc.returncode}: {err[-2000:]}"
    return out


@pytest.fixture
def daemon(tmp_path: Path) -> object:
    served = start_git_daemon(tmp_path / "served")
    try:
        yield served
    finally:
        stop(served.proc)


def test_one_worker_fixes_another_integrates_from_the_remote(
        acme_repo: Path, daemon: GitDaemon, pg_dsn: str, tmp_path: Path) -> None:
    bare = daemon.bare_from(acme_repo, "acme.git")
    url = daemon.url("acme.git")
    store = pg_url(pg_dsn)
    env_a = worker_env(tmp_path / "a" / "home", store, url)
    plan = json.loads(finished(fleet(["plan", url, "-c", CAMPAIGN, "--json"], tmp_path / "a" /
                                     "cwd", env_a)))
    keys = [u["key"] for u in plan["units"]][:2]
    assert len(keys) == 2
    # worker A: two units at once, two processes on one state directory (one mirror)
    fixes = [fleet(["fix", url, "-c", CAMPAIGN, "--unit", k, "--require-verified"],
                   tmp_path / "a" / "cwd", env_a) for k in keys]
    for proc in fixes:
        finished(proc)
    pushed = git(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/fleet/").split()
    assert sorted(pushed) == sorted(f"fleet/{CAMPAIGN}/{k}" for k in keys)
    shutil.rmtree(tmp_path / "a")  # nothing of worker A's disk is left for B to lean on

    env_b = worker_env(tmp_path / "b" / "home", store, url)
    (tmp_path / "b" / "cwd").mkdir(parents=True)
    done = subprocess.run([sys.executable, "-c", INTEGRATE, CAMPAIGN], cwd=tmp_path / "b" / "cwd",
                          env=env_b, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(report["repo"]).is_relative_to(tmp_path / "b" / "home")
    assert sorted(report["merged"]) == sorted(keys) and report["stale"] == []

    branch = f"fleet/{CAMPAIGN}/integration"
    assert git(bare, "rev-parse", branch).strip() == report["head"]
    subjects = git(bare, "log", "--format=%s", f"{git(acme_repo, 'rev-parse', 'main').strip()}"
                   f"..{branch}").splitlines()
    assert sorted(subjects) == sorted(f"fleet({CAMPAIGN}): integrate unit {k}" for k in keys)
    assert report["self_merged"], report["reason"]
    assert git(bare, "rev-parse", "main").strip() == report["head"]
    note = git(bare, "notes", "--ref=fleet-ledger", "show", report["head"])
    assert note.startswith("fleet-ledger-checkpoint seq=")
