"""Findings filed as GitHub issues, each once: the issue body carries a hidden fingerprint marker
and the finding label, so a later call, from any process, finds it again instead of filing it
twice; two processes racing to file the same finding converge on the lower-numbered issue (the
other is closed as a duplicate)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fleet.forge._github_api import ISSUE_FILED, GitHubClient
from fleet.forge._github_body import render_issue_body
from fleet.types import Finding, IssueRef

if TYPE_CHECKING:
    from github.Issue import Issue

__all__ = ["GitHubIssues"]

_MARKER_RE = re.compile(r"<!-- fleet-finding: ([\w.:-]+) -->")


class GitHubIssues(GitHubClient):
    """``find_issue`` / ``file_issue`` of the ``Forge`` protocol on GitHub."""

    #: fingerprint -> issue, as last listed from GitHub (None: not listed yet)
    _issue_index: dict[str, IssueRef] | None = None

    def _scan_issues(self) -> dict[str, IssueRef]:
        """Fingerprint -> the lowest-numbered issue carrying its marker (any state)."""
        index: dict[str, IssueRef] = {}
        issues = self._repo().get_issues(state="all", labels=[self.config.finding_label],
                                         direction="asc")
        for issue in issues:
            match = _MARKER_RE.search(issue.body or "")
            # Pull requests show up in the issues list too; tell them by their html_url, since
            # reading ``pull_request`` of a plain issue costs PyGithub one more GET.
            if match is None or "/pull/" in issue.html_url:
                continue
            known = index.get(match.group(1))
            if known is None or issue.number < known.number:
                index[match.group(1)] = IssueRef(self.name, issue.number, issue.html_url, False)
        self._issue_index = index
        return index

    def find_issue(self, fingerprint: str) -> IssueRef | None:
        """The issue already filed for ``fingerprint`` (read from GitHub), if any."""
        with self._api("list finding issues"):
            return self._scan_issues().get(fingerprint)

    def file_issue(self, finding: Finding, title: str, body: str) -> IssueRef:
        """File ``finding`` once. Known fingerprints return the existing issue with
        ``created=False``; a duplicate created by a concurrent filer is closed as such."""
        known = (self._issue_index or {}).get(finding.fingerprint)
        if known is not None:
            return known
        with self._api(f"file issue for {finding.fingerprint[:16]}"):
            known = self._scan_issues().get(finding.fingerprint)
            if known is not None:
                return known
            issue: Issue = self._repo().create_issue(
                title=title[:256], body=render_issue_body(finding, body),
                labels=[self.config.finding_label],
            )
            winner = self._scan_issues().get(finding.fingerprint)
            if winner is not None and winner.number != issue.number:
                issue.create_comment(f"Duplicate of #{winner.number}: the same fleet finding "
                                     f"(`{finding.fingerprint[:16]}`) was filed concurrently.")
                issue.edit(state="closed", state_reason="not_planned")
                return winner
            ref = IssueRef(self.name, issue.number, issue.html_url, True)
            self._record(ISSUE_FILED, {
                "forge": self.name, "repo": self.config.repo, "number": issue.number,
                "url": issue.html_url, "fingerprint": finding.fingerprint, "rule": finding.rule,
                "symbol": finding.symbol, "path": finding.path, "line": finding.line,
                "title": title}, campaign=finding.campaign)
            if self._issue_index is not None:
                self._issue_index[finding.fingerprint] = IssueRef(
                    self.name, issue.number, issue.html_url, False)
            return ref
