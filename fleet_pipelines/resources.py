"""Dagster resources: the seams swapped per deployment, built from the fleet's settings
(``fleet_pipelines.settings.FleetSettings``, re-exported here).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagster import ConfigurableResource, EnvVar

from fleet.agents.model_name import DEFAULT_MODEL
from fleet.errors import ConfigError
from fleet.forge.remote import checkout
from fleet.protocols import DEFAULT_LEASE_TTL_S, Agent, Forge, LeaseStore, Ledger
from fleet.store import Store, open_store
from fleet_pipelines.settings import (  # re-exported: importers of resources keep working
    FALLBACK_BASE_BRANCH,
    SETTINGS_FILE,
    FleetSettings,
    builtin_campaign_names,
    checked_out_branch,
    default_base_branch,
    remote_head_branch,
)

__all__ = ["FALLBACK_BASE_BRANCH", "SETTINGS_FILE", "AgentResource", "FleetSettings",
           "ForgeResource", "RepoResource", "SandboxResource", "StoreResource", "anthropic_key",
           "build_resources", "builtin_campaign_names", "check_forge", "checked_out_branch",
           "default_base_branch", "forge_resource", "github_token", "remote_head_branch"]

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from fleet.graph import SymbolGraph

log = logging.getLogger(__name__)


_STORES: dict[str, Store] = {}
_STORES_LOCK = threading.Lock()


def _open_store(url: str) -> Store:
    """One store object per URL per process (connections are the store's business)."""
    with _STORES_LOCK:
        if url not in _STORES:
            _STORES[url] = open_store(url)
        return _STORES[url]


class StoreResource(ConfigurableResource):
    """The fleet store (``sqlite:///path`` or a PostgreSQL DSN), seen as the repository ``repo``'s
    (its store key, ``fleet.home.store_key``: findings and ledger events are that repository's,
    see ``fleet.store.repo_scope``; ``""``: unscoped)."""

    url: str
    repo: str = ""
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S
    """A unit's leases outlive their holder's last heartbeat by this (``FLEET_LEASE_TTL_S``)."""

    def store(self) -> Store:
        from fleet.store.repo_scope import scoped_store

        return scoped_store(_open_store(self.url), self.repo)

    def leases(self) -> LeaseStore:
        return self.store().leases

    def ledger(self) -> Ledger:
        return self.store().ledger

    def killed(self) -> bool:
        return self.store().controls.engaged()

    def shared(self) -> bool:
        """The store is shared by processes that do not share a filesystem (PostgreSQL)."""
        return not self.url.startswith("sqlite")


class SandboxResource(ConfigurableResource):
    """``auto`` picks the strongest backend that works here; or ``microvm|gvisor|bwrap|local``."""

    backend: str = "auto"

    def open(self) -> Any:
        from sandbox import select_sandbox

        return select_sandbox(self.backend)


ANTHROPIC_KEY_VAR = "ANTHROPIC_API_KEY"


def anthropic_key(kind: str, environ: Mapping[str, str] | None = None) -> EnvVar | str:
    """The key field of the ``claude`` agent: ``EnvVar("ANTHROPIC_API_KEY")`` when it is set
    (Dagster resolves it when the resource starts and shows its name, never its value, in the
    UI); ``""`` for the other agents or when it is not set (the agent then says so when it
    starts)."""
    env = os.environ if environ is None else environ
    return EnvVar(ANTHROPIC_KEY_VAR) if kind == "claude" and env.get(ANTHROPIC_KEY_VAR) else ""


class AgentResource(ConfigurableResource):
    """``codemod`` (offline, deterministic: the campaign's libcst codemod) or ``claude`` (the
    anthropic Messages API; its key from ``ANTHROPIC_API_KEY`` as the ``EnvVar`` field
    ``api_key``, see ``build_resources``, resolved in the orchestrator, never in a sandbox)."""

    kind: str = "codemod"
    model: str = DEFAULT_MODEL
    base_url: str = ""
    api_key: str = ""

    def open(self, campaign: Campaign, graph: SymbolGraph, store: Store) -> Agent:
        """The campaign's own fixer (``codemod``: its codemod, or its ``fix.command``) or the
        Claude agent wired from the campaign file (``fleet.agents.select.agent_for``)."""
        from fleet.agents.select import agent_for

        if self.kind not in ("codemod", "claude"):
            raise ConfigError(f"FLEET_AGENT: unknown agent {self.kind!r} (codemod|claude)")
        kind = "command" if campaign.fix.command else "codemod"
        kind = "claude" if self.kind == "claude" else kind
        return agent_for(kind, campaign, graph=graph, ledger=store.ledger, controls=store.controls,
                         notes=tuple(n.text for n in store.memory.list()),
                         model=None if self.model == DEFAULT_MODEL else self.model,
                         base_url=self.base_url or None, api_key=self.api_key or None)


GITHUB_TOKEN_VARS = ("FLEET_GITHUB_TOKEN", "GITHUB_TOKEN")


def github_token(environ: Mapping[str, str] | None = None) -> EnvVar | str:
    """The token field of the github forge: ``EnvVar`` of the first of ``FLEET_GITHUB_TOKEN``,
    ``GITHUB_TOKEN`` that is set (Dagster resolves it when the resource starts and shows the
    variable's name, never its value, in the UI); ``""`` when neither is."""
    env = os.environ if environ is None else environ
    return next((EnvVar(name) for name in GITHUB_TOKEN_VARS if env.get(name)), "")


class ForgeResource(ConfigurableResource):
    """``local`` (a branch + change record in the ledger) or ``github`` (PyGithub; the token from
    ``FLEET_GITHUB_TOKEN`` or ``GITHUB_TOKEN`` and the push URL from ``FLEET_GITHUB_PUSH_URL``
    as ``EnvVar`` fields, see ``build_resources``; ``git push`` goes to github.com when no push
    URL is set)."""

    kind: str = "local"
    base_branch: str = "main"
    github_repo: str = ""
    github_url: str = "https://api.github.com"
    token: str = ""
    push_url: str = ""

    def open(self, store: Store) -> Forge:
        if self.kind == "local":
            from fleet.forge.local import LocalGitForge

            return LocalGitForge(store.changes, store.ledger, base_branch=self.base_branch)
        if self.kind == "github":
            from fleet.forge.github import GitHubForge

            return GitHubForge(self.github_config(), ledger=store.ledger)
        raise ConfigError(f"FLEET_FORGE: unknown forge {self.kind!r} (local|github)")

    def github_config(self) -> Any:
        """The ``GitHubForgeConfig`` of these fields; ``ConfigError`` naming what is missing."""
        from fleet.forge.github import GitHubForgeConfig

        if not self.github_repo:
            raise ConfigError("the github forge needs FLEET_GITHUB_REPO (owner/name)")
        if not self.token:
            raise ConfigError("the github forge needs a token: set FLEET_GITHUB_TOKEN (or "
                              "GITHUB_TOKEN)")
        return GitHubForgeConfig(repo=self.github_repo, token=self.token,
                                 base_url=self.github_url, push_url=self.push_url or None,
                                 base_branch=self.base_branch)


class RepoResource(ConfigurableResource):
    """The target repository and where the fleet keeps its state. With a ``url``, ``path`` is
    this worker's mirror of it (under its own ``home``), cloned or fetched when a step starts,
    and the branches the steps make are pushed to ``remote`` (else to ``url``)."""

    path: str
    base_branch: str = "main"
    home: str = ".fleet"
    agents: int = 2
    url: str = ""
    remote: str = ""

    def setup_for_execution(self, context: Any) -> None:
        if self.url:
            checkout(self.url, Path(self.home), self.remote)


def build_resources(settings: FleetSettings) -> dict[str, Any]:
    """The resource dict of ``Definitions`` for ``settings``."""
    return {
        "store": StoreResource(url=settings.store_url, repo=settings.repository_key(),
                               lease_ttl_s=settings.lease_ttl_s),
        "sandbox": SandboxResource(backend=settings.sandbox),
        "agent": AgentResource(kind=settings.agent, api_key=anthropic_key(settings.agent)),
        "forge": forge_resource(settings),
        "repo": RepoResource(path=settings.repo, base_branch=settings.base_branch,
                             home=settings.home, agents=settings.agents, url=settings.url,
                             remote=settings.remote),
    }


def forge_resource(settings: FleetSettings, environ: Mapping[str, str] | None = None
                   ) -> ForgeResource:
    """The forge of ``settings``; for ``github`` its secrets as ``EnvVar`` fields."""
    env = os.environ if environ is None else environ
    secrets: dict[str, Any] = {}
    if settings.forge == "github":
        secrets["token"] = github_token(env)
        if env.get("FLEET_GITHUB_PUSH_URL"):
            secrets["push_url"] = EnvVar("FLEET_GITHUB_PUSH_URL")
    return ForgeResource(kind=settings.forge, base_branch=settings.base_branch,
                         github_repo=settings.github_repo, github_url=settings.github_url,
                         **secrets)


def check_forge(settings: FleetSettings, environ: Mapping[str, str] | None = None) -> None:
    """Before any run: the github forge has its repository, a token, and the token reaches the
    repository (one request). A ``ConfigError`` / ``ForgeError`` in one line otherwise, naming
    the variables (docs/forge-github.md), instead of a step's traceback after the index."""
    if settings.forge != "github":
        return
    from fleet.forge.github import GitHubForge, GitHubForgeConfig

    env = os.environ if environ is None else environ
    token = next((env[name] for name in GITHUB_TOKEN_VARS if env.get(name)), "")
    if not settings.github_repo:
        raise ConfigError("--forge github: FLEET_GITHUB_REPO is not set (owner/name of the "
                          "repository, see docs/forge-github.md)")
    if not token:
        raise ConfigError("--forge github: set FLEET_GITHUB_TOKEN (or GITHUB_TOKEN) to a token "
                          f"with contents, pull requests, issues and checks write access to "
                          f"{settings.github_repo}")
    config = GitHubForgeConfig(repo=settings.github_repo, token=token,
                               base_url=settings.github_url, retries=0, throttle=False)
    with GitHubForge(config) as forge:
        forge.reachable()
