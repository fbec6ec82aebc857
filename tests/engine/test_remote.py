"""Workers that share only a git remote (``fleet.forge.remote``): each keeps its own mirror under
its own home; a unit's branch goes to the remote under a lease on what the remote held, so a
stale worker is refused; integration fetches the branches it merges. The remote is a real
``git daemon`` on loopback (and a ``file://`` URL); bad URLs fail in one line naming them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fleet.errors import ConfigError
from fleet.forge.remote import (
    Pushed,
    Refused,
    Remote,
    RemoteError,
    fetch,
    mirror_path,
    push,
    sync,
)
from tests.conftest import git
from tests.engine.conftest import GitDaemon, start_git_daemon, stop


def _commit_on(mirror: Path, branch: str, base: str, text: str) -> str:
    """A commit of ``text`` into a.py on ``branch`` (from ``base``), made in a worktree of
    ``mirror`` the way a unit makes its patch; returns the commit."""
    tree = mirror.parent / f"wt-{branch.replace('/', '-')}-{abs(hash(text))}"
    git(mirror, "worktree", "add", "-q", "-B", branch, str(tree), base)
    (tree / "a.py").write_text(text)
    git(tree, "add", "a.py")
    git(tree, "commit", "-q", "-m", text.strip())
    commit = git(tree, "rev-parse", "HEAD").strip()
    git(mirror, "worktree", "remove", "--force", str(tree))
    return commit


def test_two_workers_share_only_the_remote(served_repo: str, tmp_path: Path) -> None:
    remote = Remote.parse(served_repo)
    a = sync(remote, tmp_path / "worker-a")
    b = sync(remote, tmp_path / "worker-b")
    assert a != b and a == mirror_path(remote, tmp_path / "worker-a")
    assert a.is_relative_to(tmp_path / "worker-a") and b.is_relative_to(tmp_path / "worker-b")
    base = git(a, "rev-parse", "refs/heads/main").strip()
    assert git(b, "rev-parse", "refs/heads/main").strip() == base

    branch = "fleet/c/unit1"
    first = _commit_on(a, branch, base, "A = 2\n")
    assert push(a, branch, None) == Pushed(branch, first)
    # worker b ran the same unit from a stale view (it still thinks the branch is absent)
    _commit_on(b, branch, base, "A = 3\n")
    refused = push(b, branch, None)
    assert isinstance(refused, Refused) and refused.branch == branch
    # integration on b fetches what it merges: worker a's commit, not its own stale one
    assert fetch(b, [branch]) == {branch: first}
    # a later run of the unit on b, knowing the remote's head, may move it
    second = _commit_on(b, branch, first, "A = 4\n")
    assert push(b, branch, first) == Pushed(branch, second)
    # a zombie a pushing over it with its old view is refused, the remote keeps b's commit
    _commit_on(a, branch, base, "A = 5\n")
    assert isinstance(push(a, branch, first), Refused)
    assert sync(remote, tmp_path / "worker-a") == a
    assert git(a, "rev-parse", f"refs/heads/{branch}").strip() == second


def test_file_url_and_a_plain_path_are_the_same_remote(git_repo: Path, tmp_path: Path) -> None:
    assert Remote.parse(str(git_repo)) == Remote.parse(git_repo.as_uri())
    mirror = sync(Remote.parse(git_repo.as_uri()), tmp_path / "w")
    assert git(mirror, "rev-parse", "refs/heads/main") == git(git_repo, "rev-parse", "main")
    assert git(git_repo, "status", "--porcelain") == ""  # the source checkout is never touched


@pytest.mark.parametrize("text", ["ftp://host/repo.git", "https://example.invalid", "ssh://",
                                  ""])
def test_a_bad_url_is_one_line_naming_it(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        Remote.parse(text)
    message = str(info.value)
    assert "\n" not in message
    assert (repr(text) in message) if text else message == "repository URL: empty"


def test_https_ssh_and_scp_urls_are_accepted() -> None:
    for url in ("https://github.com/acme/mono.git", "ssh://git@host:2222/acme/mono.git",
                "git@github.com:acme/mono.git"):
        assert Remote.parse(url).url == url
        assert Remote.parse(url).name == "mono"


def test_a_remote_that_is_down_or_refuses_pushes(git_daemon: GitDaemon, git_repo: Path,
                                                 tmp_path: Path) -> None:
    down = Remote.parse(git_daemon.url("missing.git"))
    with pytest.raises(RemoteError, match=r"cannot clone git://127\.0\.0\.1:\d+/missing\.git"):
        sync(down, tmp_path / "w")
    assert not mirror_path(down, tmp_path / "w").exists()  # no half-made mirror left

    read_only = start_git_daemon(tmp_path / "ro", push=False)
    try:
        read_only.bare_from(git_repo, "t.git")
        mirror = sync(Remote.parse(read_only.url("t.git")), tmp_path / "w")
        base = git(mirror, "rev-parse", "refs/heads/main").strip()
        _commit_on(mirror, "fleet/c/u", base, "A = 9\n")
        with pytest.raises(RemoteError) as info:
            push(mirror, "fleet/c/u", None)
        assert read_only.url("t.git") in str(info.value) and "\n" not in str(info.value)
        stop(read_only.proc)
        with pytest.raises(RemoteError, match="cannot fetch"):
            sync(Remote.parse(read_only.url("t.git")), tmp_path / "w")
    finally:
        stop(read_only.proc)
    assert subprocess.run(["git", "-C", str(mirror), "fsck", "--no-progress"],
                          capture_output=True, check=False).returncode == 0


def test_a_fetch_killed_mid_way_does_not_wedge_the_mirror(served_repo: str,
                                                          tmp_path: Path) -> None:
    import os
    import time

    remote = Remote.parse(served_repo)
    mirror = sync(remote, tmp_path / "w")
    lock = mirror / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_text("")  # what a fetch killed with -9 leaves behind
    other = sync(remote, tmp_path / "other")  # another worker moves main: the fetch must lock
    base = git(other, "rev-parse", "refs/heads/main").strip()
    moved = _commit_on(other, "main", base, "A = 7\n")
    assert push(other, "main", base) == Pushed("main", moved)
    with pytest.raises(RemoteError, match="cannot fetch from git://") as info:
        sync(remote, tmp_path / "w")  # a fresh lock may be a live fetch's: left alone
    assert "\n" not in str(info.value) and lock.exists()
    old = time.time() - 600
    os.utime(lock, (old, old))
    assert sync(remote, tmp_path / "w") == mirror and not lock.exists()
    assert git(mirror, "rev-parse", "refs/heads/main").strip() == moved


def test_checkpoint_notes_of_two_workers_both_reach_the_remote(served_repo: str,
                                                               tmp_path: Path) -> None:
    from fleet.forge.remote import push_notes

    remote = Remote.parse(served_repo)
    a, b = sync(remote, tmp_path / "a"), sync(remote, tmp_path / "b")
    base = git(a, "rev-parse", "refs/heads/main").strip()
    first = _commit_on(a, "fleet/c/integration", base, "A = 2\n")
    assert push(a, "fleet/c/integration", None) == Pushed("fleet/c/integration", first)
    second = _commit_on(b, "fleet/d/integration", base, "A = 3\n")
    assert push(b, "fleet/d/integration", None) == Pushed("fleet/d/integration", second)
    ref = "refs/notes/fleet-ledger"
    push_notes(a, ref, first, "checkpoint a", "origin")
    push_notes(b, ref, second, "checkpoint b", "origin")  # b never saw a's note: fetched first
    check = sync(remote, tmp_path / "c")
    assert git(check, "notes", f"--ref={ref}", "show", first).strip() == "checkpoint a"
    assert git(check, "notes", f"--ref={ref}", "show", second).strip() == "checkpoint b"


def test_the_same_commit_pushed_by_another_is_refused_not_won(git_repo: Path,
                                                               tmp_path: Path) -> None:
    """Git reports "up to date" before it checks the lease: two integrations of the same units
    in the same second build the very same commit, and the second push used to count as won
    (test_two_integrations_at_once_one_wins_whole failed so once under load). It is refused
    unless the remote was expected to hold that commit."""
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(git_repo), str(bare)], check=True)
    mirror = sync(Remote.parse(bare.as_uri()), tmp_path / "home")
    base = git(mirror, "rev-parse", "HEAD").strip()
    commit = _commit_on(mirror, "fleet/c/integration", base, "x = 1\n")
    assert push(mirror, "fleet/c/integration", None, commit=commit) == Pushed(
        "fleet/c/integration", commit)
    again = push(mirror, "fleet/c/integration", None, commit=commit)
    assert isinstance(again, Refused) and "this very commit" in again.reason
    assert isinstance(push(mirror, "fleet/c/integration", commit, commit=commit), Pushed)
