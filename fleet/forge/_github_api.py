"""The REST side of ``GitHubForge``: where GitHub is (``GitHubForgeConfig``), the PyGithub client
with its timeout, retries and request spacing (GitHub's secondary rate limits), and the
translation of every PyGithub or transport failure into ``ForgeError`` naming the request.

``GitHubClient`` is the base the forge's issue filing (``_github_issues.py``) and pull requests
(``github.py``) build on: one client, one cached repository, one ledger."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from fleet.errors import ConfigError, ForgeError
from fleet.protocols import Ledger

if TYPE_CHECKING:
    from github.Repository import Repository

__all__ = ["CHANGE_PUBLISHED", "CHANGE_STATUS", "ISSUE_FILED", "GitHubClient",
           "GitHubForgeConfig", "redact"]

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


def redact(text: str, token: str) -> str:
    """``text`` with the token masked (git's and GitHub's messages may echo a URL with it)."""
    return text.replace(token, "***") if token else text


def _open_github(config: GitHubForgeConfig) -> Any:
    """A PyGithub client: its own retries (``retries``) and, with ``throttle``, PyGithub's
    default spacing between requests and between writes."""
    from github import Auth, Consts, Github

    return Github(
        auth=Auth.Token(config.token), base_url=config.base_url.rstrip("/"),
        timeout=config.timeout_s, retry=config.retries, per_page=config.per_page,
        seconds_between_requests=(
            Consts.DEFAULT_SECONDS_BETWEEN_REQUESTS if config.throttle else None),
        seconds_between_writes=(
            Consts.DEFAULT_SECONDS_BETWEEN_WRITES if config.throttle else None),
    )


class GitHubClient:
    """One repository on GitHub through PyGithub (``github``: a configured client to reuse),
    with a ``ledger`` that the forge's operations append to as ``actor``."""

    name = "github"  # the forge's name in ``ChangeRef`` / ``IssueRef`` and in ledger payloads

    def __init__(self, config: GitHubForgeConfig, *, github: Any | None = None,
                 ledger: Ledger | None = None, actor: str = "forge") -> None:
        self.config = config
        self.ledger = ledger
        self.actor = actor
        self._github = _open_github(config) if github is None else github
        self._repository: Repository | None = None

    def close(self) -> None:
        self._github.close()

    def __enter__(self) -> Self:
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
