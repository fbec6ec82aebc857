"""``GitHubForge``: hand a result over as a GitHub pull request and file findings as issues.

Built on PyGithub. ``publish`` pushes the branch with a real ``git push`` (to ``push_url``:
github.com over HTTPS with the token, or any git URL or path), then opens the branch's pull
request or updates it (title, body, labels; a closed, unmerged one is reopened). ``status`` reads
the PR back (``open`` | ``merged`` | ``closed``) and ``checks`` its head commit's combined status.
``file_issue`` files a finding once (``_github_issues.py``: a hidden fingerprint marker in the
issue body, so a later call, from any process, finds it again; two processes racing converge on
the lower-numbered issue).

With a ``ledger``, every publish, observed state change and filed issue is also appended to it
(``change.published``, ``change.status``, ``issue.filed``, as ``LocalGitForge`` does).

Every PyGithub or network failure is raised as ``ForgeError`` (``_github_api.py``: the
configuration, the client with its retries and rate-limit spacing, the error translation); a
failed push as ``GitError``. The bodies are rendered by ``_github_body.py``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.errors import ForgeError, GitError
from fleet.forge._git import commit_of
from fleet.forge._git import run as run_git
from fleet.forge._github_api import CHANGE_PUBLISHED, CHANGE_STATUS, GitHubForgeConfig, redact
from fleet.forge._github_body import (
    BODY_LIMIT,
    FINDING_MARKER,
    UnitReport,
    render_change_body,
    render_issue_body,
)
from fleet.forge._github_issues import GitHubIssues
from fleet.types import ChangeRef

if TYPE_CHECKING:
    from github.PullRequest import PullRequest

__all__ = [
    "BODY_LIMIT",
    "FINDING_MARKER",
    "CheckReport",
    "GitHubForge",
    "GitHubForgeConfig",
    "PullMerge",
    "UnitReport",
    "render_change_body",
    "render_issue_body",
]

@dataclass(frozen=True)
class CheckReport:
    """One check run for the PR's head commit (the Checks API): ``name`` (one per gate),
    ``conclusion`` (``success`` | ``failure`` | ``neutral`` ...), a one-line ``title`` and a
    markdown ``summary`` / ``text`` (at most 65,535 characters each, as GitHub allows)."""

    name: str
    conclusion: str
    title: str
    summary: str
    text: str = ""


@dataclass(frozen=True)
class PullMerge:
    """How merging a pull request went: ``merged`` and its merge commit ``sha``, else why not."""

    merged: bool
    reason: str
    sha: str = ""


class GitHubForge(GitHubIssues):
    """The ``Forge`` protocol on GitHub. Pass ``github`` to reuse a configured PyGithub client;
    ``reachable``, ``close`` and the error translation are ``GitHubClient``'s, ``find_issue`` and
    ``file_issue`` ``GitHubIssues``'."""

    # --- git side ----------------------------------------------------------------------------

    def push(self, repo_path: str, branch: str) -> str:
        """Force-push ``branch`` (fleet owns its branches) to ``push_url``; returns its SHA."""
        cwd = Path(repo_path)
        head = commit_of(cwd, f"refs/heads/{branch}")
        if head is None:
            raise GitError(f"git rev-parse refs/heads/{branch} in {cwd}: no such branch")
        env = {"GIT_TERMINAL_PROMPT": "0"}
        url = self.config.push_url or f"https://github.com/{self.config.repo}.git"
        if url.startswith("https://"):  # token in the environment, not on the command line
            basic = base64.b64encode(f"x-access-token:{self.config.token}".encode()).decode()
            env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="http.extraHeader",
                       GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}")
        proc = run_git(cwd, "push", "--porcelain", url,
                       f"+refs/heads/{branch}:refs/heads/{branch}", env=env)
        if proc.returncode != 0:
            message = proc.stderr.decode(errors="replace").strip()
            raise GitError(redact(f"git push {url} {branch}: {message}", self.config.token))
        return head

    # --- pull requests -----------------------------------------------------------------------

    def _pull_for(self, branch: str, base: str) -> PullRequest | None:
        """The branch's open PR, else its newest closed unmerged one (to reopen), else None."""
        head = f"{self.config.repo.split('/')[0]}:{branch}"
        candidates = list(self._repo().get_pulls(state="all", head=head, base=base))
        for pull in candidates:
            if pull.state == "open":
                return pull
        for pull in candidates:
            if not pull.merged:
                return pull
        return None

    def publish(self, repo_path: str, branch: str, title: str, body: str,
                labels: Sequence[str] = ()) -> ChangeRef:
        """Push ``branch`` and open or update its pull request against the base branch."""
        from github import GithubException

        head = self.push(repo_path, branch)
        base = self._base()
        body = body[:BODY_LIMIT]
        with self._api(f"publish {branch}"):
            pull = self._pull_for(branch, base)
            if pull is None:
                try:
                    pull = self._repo().create_pull(base=base, head=branch, title=title, body=body)
                except GithubException as exc:  # another process opened it meanwhile
                    if exc.status != 422 or (pull := self._pull_for(branch, base)) is None:
                        raise
            if pull.state != "open":
                try:
                    pull.edit(title=title, body=body, state="open")
                except GithubException as exc:  # GitHub refuses to reopen a force-pushed PR
                    if exc.status != 422:
                        raise
                    pull = self._repo().create_pull(base=base, head=branch, title=title,
                                                    body=body)
            elif pull.title != title or pull.body != body:
                pull.edit(title=title, body=body)
            wanted = list(dict.fromkeys([*self.config.change_labels, *labels]))
            if wanted:
                pull.add_to_labels(*wanted)
            ref = ChangeRef(forge=self.name, branch=branch, number=pull.number,
                            url=pull.html_url, state="open")
        self._record(CHANGE_PUBLISHED, {
            "forge": self.name, "repo": self.config.repo, "number": ref.number, "url": ref.url,
            "branch": branch, "head": head, "base": base, "title": title, "labels": wanted})
        return ref

    def publish_units(self, repo_path: str, branch: str, title: str,
                      units: Sequence[UnitReport], summary: str = "",
                      labels: Sequence[str] = ()) -> ChangeRef:
        """``publish`` with a body that lists each unit, its findings, gates and ledger ids."""
        return self.publish(repo_path, branch, title, render_change_body(units, summary), labels)

    def status(self, ref: ChangeRef) -> str:
        """``merged`` | ``closed`` | ``open``, read from the pull request."""
        if ref.number is None:
            raise ForgeError(f"change on {ref.branch} has no pull request number")
        with self._api(f"read pull #{ref.number}"):
            pull = self._repo().get_pull(ref.number)
            state = "merged" if pull.merged else "closed" if pull.state == "closed" else "open"
        if state != ref.state:
            self._record(CHANGE_STATUS, {"forge": self.name, "repo": self.config.repo,
                                         "number": ref.number, "branch": ref.branch,
                                         "state": state})
        return state

    def checks(self, ref: ChangeRef) -> str | None:
        """Combined commit status of the PR head (``success`` | ``failure`` | ``pending``), or
        None when no status was reported. Reads the statuses API, not Actions check runs."""
        if ref.number is None:
            return None
        with self._api(f"read checks of pull #{ref.number}"):
            pull = self._repo().get_pull(ref.number)
            combined = self._repo().get_commit(pull.head.sha).get_combined_status()
            return str(combined.state) if combined.total_count else None

    def report_checks(self, ref: ChangeRef, head_sha: str, checks: Sequence[CheckReport]
                      ) -> list[str]:
        """One completed check run per report on ``head_sha`` (the PR's head commit); returns
        their URLs. The run's name is the report's, so each gate is its own line on the PR."""
        urls = []
        with self._api(f"report checks on {head_sha[:12]}"):
            for check in checks:
                run = self._repo().create_check_run(
                    name=check.name, head_sha=head_sha, status="completed",
                    conclusion=check.conclusion, external_id=f"{ref.branch}:{check.name}",
                    output={"title": check.title[:255], "summary": check.summary[:65535],
                            "text": check.text[:65535]})
                urls.append(str(run.html_url))
        self._record("change.checks", {"forge": self.name, "repo": self.config.repo,
                                       "number": ref.number, "head": head_sha,
                                       "checks": {c.name: c.conclusion for c in checks}})
        return urls

    def merge(self, ref: ChangeRef, head_sha: str, method: str = "merge") -> PullMerge:
        """Merge the pull request through GitHub (what "self-merge" means on a forge), only if
        its head is still ``head_sha``. GitHub's refusals (not mergeable, head moved, closed)
        are values saying why; transport and auth failures are ``ForgeError``."""
        from github import GithubException

        if ref.number is None:
            raise ForgeError(f"change on {ref.branch} has no pull request number")
        with self._api(f"merge pull #{ref.number}"):
            pull = self._repo().get_pull(ref.number)
            if pull.merged:
                return PullMerge(False, "already merged", str(pull.merge_commit_sha or ""))
            try:
                done = pull.merge(merge_method=method, sha=head_sha,
                                  commit_title=f"{pull.title} (#{ref.number})")
            except GithubException as exc:
                if exc.status not in (405, 409, 422):
                    raise
                data = exc.data if isinstance(exc.data, dict) else {}
                return PullMerge(False, f"GitHub refused the merge: HTTP {exc.status} "
                                        f"{data.get('message') or exc.message}")
        if not done.merged:
            return PullMerge(False, f"GitHub did not merge: {done.message}")
        self._record(CHANGE_STATUS, {"forge": self.name, "repo": self.config.repo,
                                     "number": ref.number, "branch": ref.branch,
                                     "state": "merged", "merge_commit": done.sha})
        return PullMerge(True, "merged", str(done.sha))
