"""The state directory belongs to its repository (``fleet.home``): the default is ``REPO/.fleet``
(excluded from git), a state directory records its repository and refuses any other in one
line naming both, and a moved repository keeps its state directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fleet.home import (
    HomeMismatch,
    claim_home,
    default_home,
    identify,
    normalise_remote,
    repository_key,
    store_key,
)
from fleet.plan._snapshot import checkout_matches
from fleet_pipelines.resources import default_base_branch
from tests.conftest import commit_files, git


def _repo(path: Path, branch: str = "main") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch)
    return commit_files(path, {"pkg/mod.py": "X = 1\n"}, "initial")


def test_default_home_is_the_repositorys_own(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "a")
    assert default_home(repo / "pkg") == repo.resolve() / ".fleet"
    assert default_home(tmp_path) == tmp_path / ".fleet"  # outside any repository


def test_claim_records_the_repository_and_keeps_it_out_of_git(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "a")
    home = repo / ".fleet"
    ident = claim_home(home, repo)
    record = json.loads((home / "repository.json").read_text())
    assert record["root"] == str(repo.resolve()) and record["first_commit"] == ident.first_commit
    assert record["key"] == f"{repo.resolve()}@{ident.first_commit[:12]}" == store_key(home, repo)
    (home / "fleet.db").write_text("state")
    assert git(repo, "status", "--porcelain") == ""
    assert checkout_matches(repo, git(repo, "rev-parse", "HEAD").strip())
    claim_home(home, repo)  # again: nothing changes, the exclude line is not repeated
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.fleet/") == 1


def test_another_repository_is_refused_in_one_line_naming_both(tmp_path: Path) -> None:
    a, b = _repo(tmp_path / "a"), _repo(tmp_path / "b", "master")
    shared = tmp_path / "shared-home"
    claim_home(shared, a)
    with pytest.raises(HomeMismatch) as refused:
        claim_home(shared, b)
    message = str(refused.value)
    assert "\n" not in message and str(a.resolve()) in message and str(b.resolve()) in message
    assert str(b.resolve() / ".fleet") in message  # where B's own state goes
    # a copy of A (cp -r) carries A's state directory along: refused, not silently shared
    copy = tmp_path / "copy"
    shutil.copytree(a, copy)
    claim_home(a / ".fleet", a)
    shutil.copytree(a / ".fleet", copy / ".fleet", dirs_exist_ok=True)
    with pytest.raises(HomeMismatch, match="came with a copy of"):
        claim_home(copy / ".fleet", copy)


def test_a_moved_repository_keeps_its_state_directory(tmp_path: Path) -> None:
    a = _repo(tmp_path / "a")
    key = claim_home(a / ".fleet", a).key
    moved = tmp_path / "renamed"
    a.rename(moved)
    ident = claim_home(moved / ".fleet", moved)
    assert ident.root == str(moved.resolve())
    assert ident.key == key  # its rows in a shared store are still its own


def test_a_state_directory_from_before_is_its_saved_repositorys(tmp_path: Path) -> None:
    a, b = _repo(tmp_path / "a"), _repo(tmp_path / "b")
    legacy = tmp_path / "old"
    legacy.mkdir()
    (legacy / "settings.json").write_text(json.dumps({"FLEET_REPO": str(a)}))
    with pytest.raises(HomeMismatch):
        claim_home(legacy, b)
    assert claim_home(legacy, a).root == str(a.resolve())
    (legacy / "repository.json").write_text("{not json")
    with pytest.raises(Exception, match=r"repository\.json: not a repository record"):
        claim_home(legacy, a)


def test_remote_is_the_key_every_clone_agrees_on(tmp_path: Path) -> None:
    for url in ("git@github.com:acme/billing.git", "https://github.com/acme/billing",
                "ssh://git@github.com/acme/billing.git/"):
        assert normalise_remote(url) == "github.com/acme/billing"
    a = _repo(tmp_path / "a")
    git(a, "remote", "add", "origin", "git@github.com:acme/billing.git")
    assert repository_key(a) == "github.com/acme/billing"
    assert identify(a).remote == "git@github.com:acme/billing.git"


def test_base_branch_is_the_checkout_or_origins_head(tmp_path: Path) -> None:
    upstream = _repo(tmp_path / "up", "master")
    assert default_base_branch(upstream) == "master"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    git(clone, "checkout", "-q", "--detach")
    assert default_base_branch(clone) == "master"  # detached: origin/HEAD names master


def test_the_store_commands_default_to_the_repositorys_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fleet.store import default_store_url
    from fleet_pipelines.commands.store import default_store_url as cli_default

    repo = _repo(tmp_path / "a")
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    monkeypatch.delenv("FLEET_HOME", raising=False)
    monkeypatch.chdir(repo / "pkg")  # a subdirectory: the repository's store, not ./.fleet
    expected = f"sqlite:///{repo.resolve() / '.fleet' / 'fleet.db'}"
    assert default_store_url() == cli_default() == expected
    assert cli_default(tmp_path) == f"sqlite:///{tmp_path.resolve() / '.fleet' / 'fleet.db'}"
    monkeypatch.setenv("FLEET_HOME", str(tmp_path / "elsewhere"))
    assert default_store_url() == f"sqlite:///{(tmp_path / 'elsewhere' / 'fleet.db').resolve()}"


def test_serve_without_launching_claims_the_repositorys_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fleet_pipelines.cli import main

    a, b = _repo(tmp_path / "a"), _repo(tmp_path / "b")
    shared = tmp_path / "shared-home"
    claim_home(shared, a)
    monkeypatch.setenv("FLEET_HOME", str(shared))
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    # B's coordinator on A's state directory: refused before it listens, in one line
    assert main(["serve", "--no-launch", "--repo", str(b), "--port", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(a.resolve()) in err and str(b.resolve()) in err, err
    assert json.loads((shared / "repository.json").read_text())["root"] == str(a.resolve())
