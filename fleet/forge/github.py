"""``GitHubForge``: hand a result over as a GitHub pull request and file findings as issues.

Built on PyGithub. ``publish`` pushes the branch with a real ``git push`` (to ``push_url``:
github.com over HTTPS with the token, or any git URL or path), then opens the branch's pull
request or updates it (title, body, labels; a closed, unmerged one is reopened). ``status`` reads
the PR back (``open`` | ``merged`` | ``closed``) and ``checks`` its head commit's combined status.
``file_issue`` files a finding once: the issue body carries a hidden fingerprint marker and the
finding label, so a later call, from any process, finds it again instead of filing it twice; two
processes racing to file the same finding converge on the lower-numbered issue (the other is
closed as a duplicate).

With a ``ledger``, every publish, observed state change and filed issue is also appended to it
(``change.published``, ``change.status``, ``issue.filed``, as ``LocalGitForge`` does).

Every PyGithub or network failure is raised as ``ForgeError``; a failed push as ``GitError``.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.errors import ConfigError, ForgeError, GitError
from fleet.forge._git import commit_of
from fleet.forge._git import run as run_git
from fleet.forge._github_body import (
    BODY_LIMIT,
    FINDING_MARKER,
    UnitReport,
    render_change_body,
    render_issue_body,
)
from fleet.protocols import Ledger
from fleet.types import ChangeRef, Finding, IssueRef

if TYPE_CHECKING:
    from github.Issue import Issue
    from github.PullRequest import PullRequest
    from github.Repository import Repository

__all__ = [
    "FINDING_MARKER",
    "CheckReport",
    "GitHubForge",
    "GitHubForgeConfig",
    "PullMerge",
    "UnitReport",
    "render_change_body",
    "render_issue_body",
]

_MARKER_RE = re.compile(r"<!-- fleet-finding: ([\w.:-]+) -->")
# Ledger event kinds, the same as LocalGitForge's.
CHANGE_PUBLISHED = "change.published"
CHANGE_STATUS = "change.status"
ISSUE_FILED = "issue.filed"


@dataclass(frozen=True)
class GitHubForgeConfig:
    """Where and how to reach GitHub.

    ``repo`` is ``owner/name``; ``base_url`` the REST root (GitHub Enterprise:
    ``https://host/api/v3``; tests: the fake's URL); ``push_url`` where ``git push`` goes
    (default ``https://github.com/<repo>.git``, authenticated with the token); ``base_branch``
    the PRs' base (default: the repository's default branch). ``throttle`` keeps PyGithub's
    spacing between requests, which GitHub's secondary rate limits expect.
    """

    repo: str
    token: str
    base_url: str = "https://api.github.com"
    push_url: str | None = None
    base_branch: str | None = None
    finding_label: str = "fleet-finding"
    change_labels: tuple[str, ...] = ("fleet",)
    timeout_s: int = 15
    retries: int = 3
    per_page: int = 100
    throttle: bool = True

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", self.repo):
            raise ForgeError(f"GitHub repository must be 'owner/name', got {self.repo!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GitHubForgeConfig:
        """From ``FLEET_GITHUB_REPO``, ``FLEET_GITHUB_TOKEN`` (or ``GITHUB_TOKEN``) and the
        optional ``FLEET_GITHUB_API_URL``, ``FLEET_GITHUB_PUSH_URL``,
        ``FLEET_GITHUB_BASE_BRANCH``. Raises ``ConfigError`` naming a missing variable."""
        env = os.environ if environ is None else environ
        repo = env.get("FLEET_GITHUB_REPO", "")
        token = env.get("FLEET_GITHUB_TOKEN") or env.get("GITHUB_TOKEN") or ""
        if not repo:
            raise ConfigError("FLEET_GITHUB_REPO is not set (owner/name of the repository)")
        if not token:
            raise ConfigError("FLEET_GITHUB_TOKEN (or GITHUB_TOKEN) is not set")
        return cls(repo=repo, token=token,
                   base_url=env.get("FLEET_GITHUB_API_URL") or "https://api.github.com",
                   push_url=env.get("FLEET_GITHUB_PUSH_URL") or None,
                   base_branch=env.get("FLEET_GITHUB_BASE_BRANCH") or None)


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


def _redact(text: str, token: str) -> str:
    return text.replace(token, "***") if token else text


class GitHubForge:
    """The ``Forge`` protocol on GitHub. Pass ``github`` to reuse a configured PyGithub client."""

    name = "github"

    def __init__(self, config: GitHubForgeConfig, *, github: Any | None = None,
                 ledger: Ledger | None = None, actor: str = "forge") -> None:
        from github import Auth, Github

        self.config = config
        self.ledger = ledger
        self.actor = actor
        if github is None:
            from github import Consts

            github = Github(
                auth=Auth.Token(config.token), base_url=config.base_url.rstrip("/"),
                timeout=config.timeout_s, retry=config.retries, per_page=config.per_page,
                seconds_between_requests=(
                    Consts.DEFAULT_SECONDS_BETWEEN_REQUESTS if config.throttle else None),
                seconds_between_writes=(
                    Consts.DEFAULT_SECONDS_BETWEEN_WRITES if config.throttle else None),
            )
        self._github = github
        self._repository: Repository | None = None
        self._issue_index: dict[str, IssueRef] | None = None

    def close(self) -> None:
        self._github.close()

    def __enter__(self) -> GitHubForge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _api(self, what: str) -> Iterator[None]:
        """Translate PyGithub and transport errors into ``ForgeError`` naming the request."""
        from github import GithubException
        from requests import RequestException

        try:
            yield
        except GithubException as exc:
            data = exc.data if isinstance(exc.data, dict) else {}
            message = data.get("message") or exc.message or exc.data
            errors = f" {data['errors']}" if data.get("errors") else ""
            raise ForgeError(f"GitHub {what} on {self.config.repo}: HTTP {exc.status} "
                             f"{message}{errors}") from exc
        except RequestException as exc:
            raise ForgeError(f"GitHub {what} on {self.config.repo}: {exc}") from exc

    def _record(self, kind: str, payload: dict[str, Any], campaign: str | None = None) -> None:
        if self.ledger is not None:
            self.ledger.append(kind, payload, campaign=campaign, actor=self.actor)

    def _repo(self) -> Repository:
        if self._repository is None:
            with self._api("get repository"):
                self._repository = self._github.get_repo(self.config.repo)
        return self._repository

    def reachable(self) -> None:
        """Read the repository once: ``ForgeError`` naming the status (401 bad token, 404 no
        such repository or no access) when the configuration cannot work."""
        with self._api(f"read the repository (FLEET_GITHUB_API_URL {self.config.base_url})"):
            self._repo().full_name  # noqa: B018 - the GET is the point

    def _base(self) -> str:
        if self.config.base_branch:
            return self.config.base_branch
        with self._api("read default branch"):
            return str(self._repo().default_branch)

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
            raise GitError(_redact(f"git push {url} {branch}: {message}", self.config.token))
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

    # --- issues ------------------------------------------------------------------------------

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
