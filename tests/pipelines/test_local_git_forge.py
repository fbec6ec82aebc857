"""LocalGitForge over a real git repository and a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.errors import GitError
from fleet.forge.local import LocalGitForge
from fleet.protocols import Forge
from fleet.store import Store
from fleet.types import ChangeRef, Finding
from tests.conftest import git


def _branch_with_commit(repo: Path, branch: str, text: str) -> None:
    git(repo, "checkout", "-q", "-b", branch)
    (repo / "change.txt").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"change on {branch}")
    git(repo, "checkout", "-q", "main")


def test_publish_records_a_change_once_per_branch(git_repo: Path, store: Store) -> None:
    forge = LocalGitForge(store.changes, store.ledger)
    assert isinstance(forge, Forge)
    _branch_with_commit(git_repo, "fleet/c/integration", "one\n")
    first = forge.publish(str(git_repo), "fleet/c/integration", "t1", "body", labels=("fleet",))
    second = forge.publish(str(git_repo), "fleet/c/integration", "t2", "body 2")
    assert first.number == second.number == 1
    assert first.forge == "local" and first.state == "open"
    record = store.changes.get(1)
    assert record is not None and record.title == "t2" and record.body == "body 2"
    assert [e.payload["title"] for e in store.ledger.events(kind="change.published")] == [
        "t1", "t2"]
    assert store.ledger.verify() == []


def test_status_follows_the_branch_in_git(git_repo: Path, store: Store) -> None:
    forge = LocalGitForge(store.changes, store.ledger)
    _branch_with_commit(git_repo, "feature", "x\n")
    ref = forge.publish(str(git_repo), "feature", "t", "b")
    assert forge.status(ref) == "open"
    git(git_repo, "merge", "-q", "--ff-only", "feature")
    assert forge.status(ref) == "merged"
    git(git_repo, "branch", "-q", "-D", "feature")
    assert forge.status(ref) == "closed"
    assert [e.payload["state"] for e in store.ledger.events(kind="change.status")] == [
        "merged", "closed"]
    assert forge.list_changes(str(git_repo))[0].state == "closed"


def test_publish_of_a_missing_branch_and_status_of_an_unknown_change_raise(
    git_repo: Path, store: Store
) -> None:
    forge = LocalGitForge(store.changes, store.ledger)
    with pytest.raises(GitError):
        forge.publish(str(git_repo), "no-such-branch", "t", "b")
    with pytest.raises(GitError):
        forge.status(ChangeRef(forge="local", branch="x", number=42, url=""))


def test_file_issue_files_each_fingerprint_once(store: Store) -> None:
    forge = LocalGitForge(store.changes, store.ledger)
    finding = Finding("fp1", "datetime-utcnow", "utcnow", "a.py::f", "a.py", 3, 4, 10, 20,
                      "datetime.utcnow()", "naive datetime")
    other = Finding("fp2", "datetime-utcnow", "utcnow", "b.py::g", "b.py", 1, 0, 0, 5, "x", "y")
    first = forge.file_issue(finding, "fix a.py", "body")
    again = forge.file_issue(finding, "fix a.py", "body")
    third = forge.file_issue(other, "fix b.py", "body")
    assert first.created and not again.created and third.created
    assert first.number == again.number == 1 and third.number == 2
    assert len(store.ledger.events(kind="issue.filed")) == 2
