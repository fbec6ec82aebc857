"""``FleetSettings`` with a repository by URL: the working repository is this worker's mirror
under its own home, the base branch is the remote's HEAD branch even before the mirror exists,
every worker computes the same store key, and the settings round-trip through their environment.
A local path without ``FLEET_REMOTE`` stays the embedded default: the checkout itself, nothing
pushed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fleet.forge.remote import push_remote
from fleet.unit import GitWorkspaces
from fleet_pipelines.resources import FleetSettings
from tests.conftest import commit_files, git


def test_a_url_names_each_workers_own_mirror(git_repo: Path, tmp_path: Path) -> None:
    commit_files(git_repo, {"a.py": "A = 1\n"}, "a")
    git(git_repo, "branch", "-m", "main", "trunk")
    bare = tmp_path / "r.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo), str(bare)], check=True)
    url = bare.as_uri()
    a = FleetSettings.from_env({"FLEET_REPO": url, "FLEET_HOME": str(tmp_path / "a")})
    b = FleetSettings.from_env({"FLEET_REPO": url, "FLEET_HOME": str(tmp_path / "b")})
    assert a.url == b.url == url and a.remote == ""
    assert Path(a.repo).is_relative_to(tmp_path / "a") and Path(b.repo).is_relative_to(
        tmp_path / "b")
    assert a.base_branch == "trunk" and not Path(a.repo).exists()  # asked the remote
    key = a.repository_key()
    assert key == b.repository_key() and key
    assert a.checkout() == Path(a.repo) and push_remote(Path(a.repo)) == "origin"
    assert a.repository_key() == key  # the mirror's own identity agrees with the URL's
    assert git(Path(a.repo), "rev-parse", "HEAD") == git(git_repo, "rev-parse", "trunk")
    again = FleetSettings.from_env(a.env())
    assert (again.url, again.repo, again.remote, again.home) == (a.url, a.repo, a.remote, a.home)


def test_a_path_stays_the_embedded_default(git_repo: Path, tmp_path: Path) -> None:
    commit_files(git_repo, {"a.py": "A = 1\n"}, "a")
    settings = FleetSettings.from_env({"FLEET_REPO": str(git_repo),
                                       "FLEET_HOME": str(tmp_path / "h")})
    assert settings.url == "" and Path(settings.repo) == git_repo.resolve()
    assert settings.checkout() == git_repo.resolve()
    assert push_remote(git_repo) is None and not (tmp_path / "h" / "mirrors").exists()
    workspaces = GitWorkspaces(git_repo)
    assert workspaces.remote is None
    assert FleetSettings.from_env(settings.env()).url == ""


def test_fleet_remote_beside_a_path_works_in_a_mirror(git_repo: Path, tmp_path: Path) -> None:
    commit_files(git_repo, {"a.py": "A = 1\n"}, "a")
    owned = tmp_path / "fleet.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(owned)], check=True)
    settings = FleetSettings.from_env({"FLEET_REPO": str(git_repo),
                                       "FLEET_REMOTE": owned.as_uri(),
                                       "FLEET_HOME": str(tmp_path / "h")})
    assert settings.url == git_repo.resolve().as_uri() and settings.remote == owned.as_uri()
    mirror = settings.checkout()
    assert push_remote(mirror) == "fleet"
    assert git(mirror, "remote", "get-url", "fleet").strip() == owned.as_uri()
    assert git(git_repo, "status", "--porcelain") == ""  # the checkout is only read


def test_fleet_gc_by_url_works_in_the_mirror_offline(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from fleet.forge.remote import mirror_of
    from fleet_pipelines.cli import main

    commit_files(git_repo, {"a.py": "A = 1\n"}, "a")
    bare = tmp_path / "r.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo), str(bare)], check=True)
    monkeypatch.setenv("FLEET_HOME", str(tmp_path / "h"))
    monkeypatch.delenv("FLEET_REMOTE", raising=False)
    url = bare.as_uri()
    assert main(["gc", url]) == 2  # no mirror yet: nothing to collect, said in one line
    assert capsys.readouterr().err.strip() == (
        f"error: {mirror_of(url)}: no such directory (expected a git checkout)")
    mirror = FleetSettings.from_env({"FLEET_REPO": url, "FLEET_HOME": str(tmp_path / "h")}
                                    ).checkout()
    assert mirror == mirror_of(url)
    scratch = mirror / ".git" / "fleet-worktrees" / "c--dead" / "scratch"
    scratch.mkdir(parents=True)  # what a killed unit leaves: a home without a live worktree
    shutil.rmtree(bare)  # the remote is gone: gc needs none of it
    assert main(["gc", url]) == 0
    assert "removed 1 workspace(s)" in capsys.readouterr().out and not scratch.exists()


def test_a_default_home_inside_a_checkout_keeps_the_mirror_out_of_its_status(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fleet.forge.remote import working_repository

    commit_files(git_repo, {"a.py": "A = 1\n"}, "a")
    bare = tmp_path / "r.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(git_repo), str(bare)], check=True)
    here = tmp_path / "here"
    here.mkdir()
    git(here, "init", "-q")
    monkeypatch.chdir(here)
    monkeypatch.delenv("FLEET_HOME", raising=False)
    monkeypatch.delenv("FLEET_REMOTE", raising=False)
    mirror = working_repository(bare.as_uri())
    # the URL's own state directory, under the current directory's (fleet.home.default_home)
    assert mirror.is_relative_to(here / ".fleet" / "remotes")
    assert mirror.parent.name == "mirrors"
    assert git(here, "status", "--porcelain") == ""


def test_a_plain_sync_keeps_the_push_remote_checkout_chose(git_repo: Path, tmp_path: Path
                                                          ) -> None:
    """A worker that syncs its mirror on its own (before a task) does not undo FLEET_REMOTE for
    the steps that run on it; a checkout without FLEET_REMOTE goes back to the source's."""
    from fleet.forge.remote import Remote, checkout, sync

    commit_files(git_repo, {"a.py": "A = 1\n"}, "a")
    owned = tmp_path / "fleet.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(owned)], check=True)
    home, url = tmp_path / "h", git_repo.resolve().as_uri()
    mirror = checkout(url, home, owned.as_uri())
    assert sync(Remote.parse(url), home) == mirror and push_remote(mirror) == "fleet"
    assert checkout(url, home) == mirror and push_remote(mirror) == "origin"
