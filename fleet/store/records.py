"""Small record tables other stages keep in the store: campaign findings (by repository and
fingerprint, with a triage status and the filed issue) and change records of the local git forge."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from fleet.store._db import Database, Row
from fleet.types import Finding

__all__ = ["ChangeRecord", "FindingRecord", "FindingStatus", "SqlChanges", "SqlFindings"]

FindingStatus = Literal["new", "known", "fixed", "suppressed"]
FINDING_STATUSES = ("new", "known", "fixed", "suppressed")


@dataclass(frozen=True)
class FindingRecord:
    finding: Finding
    status: FindingStatus
    issue_ref: str | None
    first_seen: float
    last_seen: float


def _finding(row: Row) -> FindingRecord:
    return FindingRecord(
        finding=Finding(**json.loads(row["data"])),
        status=row["status"],
        issue_ref=row["issue_ref"],
        first_seen=float(row["first_seen"]),
        last_seen=float(row["last_seen"]),
    )


class SqlFindings:
    """Findings of one repository by fingerprint. ``upsert`` of a fingerprint never seen gives
    ``new``; seen again, ``known``; seen again after ``fixed``, ``new`` (a regression);
    ``suppressed`` stays. A fingerprint names a site and a rule, not a campaign: seen by another
    campaign (a copy of one with other fix parameters), the row becomes that campaign's, its
    status and issue kept.

    ``repo`` is the repository's store key (``fleet.home.repository_key``): every read and write
    is of that repository's rows only, so a store shared by many repositories never mixes them
    and a sweep marks only its own repository's findings fixed. ``""`` names no repository:
    ``list`` and ``get`` then read every repository's rows (an operator's view of the whole
    store), while every write touches only the rows of no repository (a store from before
    findings had one). :meth:`for_repo` gives the view of a repository."""

    def __init__(self, db: Database, repo: str = "") -> None:
        self.db = db
        self.repo = repo

    def for_repo(self, repo: str) -> SqlFindings:
        """The findings of the repository ``repo`` in the same database."""
        return SqlFindings(self.db, repo)

    def adopt_unowned(self) -> int:
        """Give the rows written before findings had a repository to this one (for a store that
        only ever served it: the SQLite file in its state directory). Returns how many."""
        if not self.repo:
            return 0
        with self.db.write() as tx:
            return tx.run("finding_adopt", {"repo": self.repo})

    def upsert(self, finding: Finding) -> FindingRecord:
        params = {**asdict(finding), "data": json.dumps(asdict(finding)), "now": self.db.now(),
                  "repo": self.repo}
        with self.db.write() as tx:
            if tx.run("finding_seen", params) == 0:
                tx.run("finding_insert", params)
            row = tx.one("finding_get", params)
        assert row is not None
        return _finding(row)

    def upsert_many(self, findings: Iterable[Finding]) -> list[FindingRecord]:
        return [self.upsert(f) for f in findings]

    def get(self, fingerprint: str) -> FindingRecord | None:
        with self.db.read() as tx:
            row = tx.one("finding_get", {"fingerprint": fingerprint, "repo": self.repo})
        return None if row is None else _finding(row)

    def set_status(self, fingerprint: str, status: FindingStatus) -> bool:
        if status not in FINDING_STATUSES:
            raise ValueError(f"finding status must be one of {FINDING_STATUSES}, not {status!r}")
        with self.db.write() as tx:
            return tx.run("finding_set_status", {"fingerprint": fingerprint, "status": status,
                                                 "repo": self.repo}) == 1

    def set_issue(self, fingerprint: str, issue_ref: str) -> bool:
        """Record the filed issue (e.g. ``github:owner/repo#12``) so it is filed only once."""
        with self.db.write() as tx:
            return (
                tx.run("finding_set_issue", {"fingerprint": fingerprint, "issue_ref": issue_ref,
                                             "repo": self.repo})
                == 1
            )

    def list(
        self, campaign: str | None = None, status: FindingStatus | None = None
    ) -> list[FindingRecord]:
        with self.db.read() as tx:
            return [
                _finding(r)
                for r in tx.all("finding_list", {"campaign": campaign, "status": status,
                                                 "repo": self.repo})
            ]

    def mark_fixed(self, campaign: str, seen: Sequence[str]) -> int:
        """After a full sweep of ``campaign`` over this repository: every open finding of this
        repository not in ``seen`` is ``fixed`` (never another repository's)."""
        with self.db.write() as tx:
            return tx.run(
                "finding_mark_fixed",
                {
                    "repo": self.repo,
                    "campaign": campaign,
                    "seen": self.db.list_param(list(seen)),
                    "now": self.db.now(),
                },
            )


@dataclass(frozen=True)
class ChangeRecord:
    number: int
    repo: str
    branch: str
    title: str
    body: str
    state: str
    labels: tuple[str, ...]
    created_at: float
    updated_at: float


def _change(row: Row) -> ChangeRecord:
    return ChangeRecord(
        int(row["number"]),
        row["repo"],
        row["branch"],
        row["title"],
        row["body"],
        row["state"],
        tuple(json.loads(row["labels"])),
        float(row["created_at"]),
        float(row["updated_at"]),
    )


class SqlChanges:
    """Change records (the local forge's pull requests): one per ``(repo, branch)``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def upsert(
        self, repo: str, branch: str, title: str, body: str, labels: Sequence[str] = ()
    ) -> ChangeRecord:
        """Open the change of ``branch`` or update its title/body/labels (and reopen it)."""
        params = {
            "repo": repo,
            "branch": branch,
            "title": title,
            "body": body,
            "labels": json.dumps(list(labels)),
            "now": self.db.now(),
        }
        with self.db.write() as tx:
            row = tx.one("change_upsert", params)
        assert row is not None
        return _change(row)

    def get(self, number: int) -> ChangeRecord | None:
        with self.db.read() as tx:
            row = tx.one("change_get", {"number": number})
        return None if row is None else _change(row)

    def by_branch(self, repo: str, branch: str) -> ChangeRecord | None:
        with self.db.read() as tx:
            row = tx.one("change_by_branch", {"repo": repo, "branch": branch})
        return None if row is None else _change(row)

    def set_state(self, number: int, state: str) -> bool:
        if state not in ("open", "merged", "closed"):
            raise ValueError(f"change state must be open, merged or closed, not {state!r}")
        with self.db.write() as tx:
            return (
                tx.run("change_set_state", {"number": number, "state": state, "now": self.db.now()})
                == 1
            )

    def list(self, repo: str | None = None, state: str | None = None) -> list[ChangeRecord]:
        with self.db.read() as tx:
            return [_change(r) for r in tx.all("change_list", {"repo": repo, "state": state})]
