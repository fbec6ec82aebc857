"""``LocalGitForge``: hand a result over as a local git branch plus a change record in the ledger.

The embedded default forge. Nothing leaves the machine: ``publish`` checks that the branch exists
in the repository and opens (or updates) a *change record* for it in the store; ``status`` reads
the branch back from git (``merged`` once the branch is an ancestor of the base branch, ``closed``
once it is deleted, else ``open``); ``file_issue`` records a finding as an issue in the ledger
exactly once per fingerprint. In a worker's mirror of a remote (``fleet.forge.remote``) the
branch is the one integration pushed there: a change's URL is the remote's ``URL#BRANCH`` and
``status`` asks the remote.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fleet.errors import GitError
from fleet.forge._git import git, run
from fleet.forge.remote import push_remote, remote_url
from fleet.protocols import Ledger
from fleet.store.records import ChangeRecord, SqlChanges
from fleet.types import ChangeRef, Finding, IssueRef

__all__ = ["LocalGitForge"]

CHANGE_PUBLISHED = "change.published"
CHANGE_STATUS = "change.status"
ISSUE_FILED = "issue.filed"


def branch_location(repo: str, branch: str) -> str:
    """Where a person finds ``branch`` of ``repo``: ``file://REPO#BRANCH``; in a worker's mirror
    of a remote (``fleet.forge.remote``), the remote's ``URL#BRANCH``, where every worker sees
    it."""
    path = Path(repo)
    remote = push_remote(path) if path.is_dir() else None
    if remote is not None:
        return f"{remote_url(path, remote)}#{branch}"
    return f"file://{repo}#{branch}"


class LocalGitForge:
    """A forge that is the local repository itself: change records in ``changes`` (the store's
    change table), every publish and state change also in the ``ledger``."""

    name = "local"

    def __init__(self, changes: SqlChanges, ledger: Ledger, base_branch: str = "main",
                 actor: str = "forge") -> None:
        self.changes = changes
        self.ledger = ledger
        self.base_branch = base_branch
        self.actor = actor

    @staticmethod
    def _ref(record: ChangeRecord) -> ChangeRef:
        return ChangeRef(forge="local", branch=record.branch, number=record.number,
                         url=branch_location(record.repo, record.branch), state=record.state)

    def publish(
        self, repo_path: str, branch: str, title: str, body: str, labels: Sequence[str] = ()
    ) -> ChangeRef:
        """Open the change of ``branch`` (which must exist in ``repo_path``), or update it (title,
        body, labels; reopened) keeping its number. Raises ``GitError`` if the branch is missing."""
        repo = Path(repo_path).resolve()
        head = git(repo, "rev-parse", "--verify", f"refs/heads/{branch}").strip()
        record = self.changes.upsert(str(repo), branch, title, body, labels)
        self.ledger.append(CHANGE_PUBLISHED, {"number": record.number, "repo": str(repo),
                           "branch": branch, "head": head, "base": self.base_branch,
                           "title": title, "labels": list(labels)}, actor=self.actor)
        return self._ref(record)

    def status(self, ref: ChangeRef) -> str:
        """``merged`` when the branch is contained in the base branch, ``closed`` when the branch
        no longer exists, else ``open``; a new state is saved on the change record and ledgered.
        Raises ``GitError`` for a change this forge never made."""
        record = self.changes.get(int(ref.number or 0))
        if record is None:
            raise GitError(f"no local change #{ref.number} for branch {ref.branch}")
        repo = Path(record.repo)
        remote = push_remote(repo) if repo.is_dir() else None
        if remote is not None:
            state = self._remote_state(repo, remote, record.branch)
        else:
            head = run(repo, "rev-parse", "--verify", "-q", f"refs/heads/{record.branch}")
            if head.returncode != 0:
                state = "closed"
            else:
                merged = run(repo, "merge-base", "--is-ancestor", head.stdout.decode().strip(),
                             f"refs/heads/{self.base_branch}")
                state = "merged" if merged.returncode == 0 else "open"
        if state != record.state:
            self.changes.set_state(record.number, state)
            self.ledger.append(CHANGE_STATUS, {"number": record.number, "branch": record.branch,
                               "state": state}, actor=self.actor)
        return state

    def _remote_state(self, repo: Path, remote: str, branch: str) -> str:
        """The change's state as the remote holds it: its branch gone there is ``closed``; in
        the base branch of the repository's own remote, ``merged``."""
        from fleet.forge.remote import fetch, remote_heads

        head = remote_heads(repo, [branch], remote).get(branch)
        if head is None:
            return "closed"
        fetch(repo, [branch], remote)
        base = fetch(repo, [self.base_branch], "origin")[self.base_branch]
        merged = run(repo, "merge-base", "--is-ancestor", head, base)
        return "merged" if merged.returncode == 0 else "open"

    def list_changes(self, repo_path: str | None = None) -> list[ChangeRef]:
        """Every change recorded (for ``repo_path`` when given), oldest first."""
        repo = None if repo_path is None else str(Path(repo_path).resolve())
        return [self._ref(r) for r in sorted(self.changes.list(repo), key=lambda r: r.number)]

    # -- issues --------------------------------------------------------------------------------

    def file_issue(self, finding: Finding, title: str, body: str) -> IssueRef:
        """File ``finding`` once per fingerprint: a repeat returns the first issue, ``created``
        False.

        Safe across processes without a lock: issue numbers are derived from the ledger's order
        (the n-th distinct fingerprint filed is issue n), so when two processes file the same
        finding at once, both append, both read the same order back, and the later event is a
        duplicate that names the same issue (its filer gets ``created=False``).
        """
        known = self._issue_numbers()
        if finding.fingerprint in known:
            return self._issue_ref(known[finding.fingerprint], created=False)
        event = self.ledger.append(
            ISSUE_FILED,
            {
                "fingerprint": finding.fingerprint,
                "rule": finding.rule,
                "symbol": finding.symbol,
                "path": finding.path,
                "line": finding.line,
                "title": title,
                "body": body,
            },
            campaign=finding.campaign,
            actor=self.actor,
        )
        number, first_seq = self._issue_numbers(with_seq=True)[finding.fingerprint]
        return self._issue_ref(number, created=first_seq == event.seq)

    def _issue_numbers(self, with_seq: bool = False) -> dict[str, Any]:
        """fingerprint -> issue number (and the seq of its first ``issue.filed`` event)."""
        out: dict[str, Any] = {}
        for event in sorted(self.ledger.events(kind=ISSUE_FILED), key=lambda e: e.seq):
            fingerprint = str(event.payload.get("fingerprint"))
            if fingerprint not in out:
                number = len(out) + 1
                out[fingerprint] = (number, event.seq) if with_seq else number
        return out

    def _issue_ref(self, number: int, *, created: bool) -> IssueRef:
        return IssueRef(
            forge=self.name, number=number, url=f"fleet://issues/{number}", created=created
        )
