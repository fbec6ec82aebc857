"""The fleet's settings: ``FleetSettings.from_env()`` reads the deployment setting
(``FLEET_DEPLOYMENT=embedded``, the default: SQLite fleet store at ``$FLEET_HOME/fleet.db``,
local git forge, codemod agent, ``auto`` sandbox; or ``shared``: ``FLEET_STORE_URL`` must name a
PostgreSQL DSN, Dagster's own storage is configured in ``$DAGSTER_HOME/dagster.yaml`` with
dagster-postgres), every field overridable by its environment variable (``docs/pipeline.md``);
and the base branch a repository defaults to. ``fleet_pipelines.resources`` builds the Dagster
resources from them.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fleet.errors import ConfigError
from fleet.forge import commit_of, git_output, run_git
from fleet.forge.remote import Remote, checkout, head_branch, is_url, mirror_path
from fleet.home import default_home, normalise_remote, store_key
from fleet.protocols import DEFAULT_LEASE_TTL_S

__all__ = ["FALLBACK_BASE_BRANCH", "SETTINGS_FILE", "FleetSettings", "builtin_campaign_names",
           "checked_out_branch", "default_base_branch", "remote_head_branch"]

SETTINGS_FILE = "settings.json"
FALLBACK_BASE_BRANCH = "main"
log = logging.getLogger(__name__)


def checked_out_branch(repo: Path) -> str | None:
    """The branch ``repo``'s HEAD is on (its symbolic ref, e.g. ``master``), ``""`` when HEAD
    is detached, ``None`` when ``repo`` is no git repository."""
    if not repo.is_dir():
        return None
    done = run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
    if done.returncode == 0:
        return done.stdout.decode().strip()
    return "" if done.returncode == 1 else None  # git exits 1 for a detached HEAD, 128 else


def remote_head_branch(repo: Path) -> str:
    """The branch ``origin``'s HEAD names (``refs/remotes/origin/HEAD`` -> ``origin/master``:
    ``master``) when ``repo`` has it as a local branch, else ``""``."""
    name = (git_output(repo, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
            or "").partition("/")[2]
    if not name:
        return ""
    return name if commit_of(repo, f"refs/heads/{name}") else ""


def default_base_branch(repo: Path) -> str:
    """The base branch when ``FLEET_BASE_BRANCH`` is not set: the repository's checked-out
    branch; when HEAD is detached, the branch ``origin``'s HEAD names; else ``main`` (with a
    warning saying so), also when ``repo`` is no git repository (the steps that need the branch
    then fail naming the repository)."""
    branch = checked_out_branch(repo)
    if branch == "":
        branch = remote_head_branch(repo)
    if branch == "":
        log.warning("FLEET_BASE_BRANCH is not set and HEAD of %s is detached: using %r", repo,
                    FALLBACK_BASE_BRANCH)
    return branch or FALLBACK_BASE_BRANCH


def builtin_campaign_names() -> tuple[str, ...]:
    """Every built-in campaign (``fleet/campaigns/builtin/*.yaml``): the default sweep."""
    from fleet.campaigns.spec import builtin_campaigns

    return tuple(builtin_campaigns())


def lease_ttl(env: Mapping[str, str]) -> float:
    """``FLEET_LEASE_TTL_S`` (seconds, > 0; default 60)."""
    text = env.get("FLEET_LEASE_TTL_S", "") or str(DEFAULT_LEASE_TTL_S)
    try:
        ttl = float(text)
    except ValueError as exc:
        raise ConfigError(f"FLEET_LEASE_TTL_S: {exc}") from exc
    if not ttl > 0:
        raise ConfigError(f"FLEET_LEASE_TTL_S: expected seconds > 0, got {text!r}")
    return ttl


@dataclass(frozen=True)
class FleetSettings:
    """One deployment's choices. ``home`` holds the fleet's state (``.fleet`` by default)."""

    home: str = ".fleet"
    repo: str = "."
    """The local repository the fleet works in: the user's checkout, or (``url`` set) this
    worker's mirror of the remote under ``home`` (``fleet.forge.remote``)."""
    base_branch: str = "main"
    deployment: str = "embedded"
    store_url: str = ""
    sandbox: str = "auto"
    agent: str = "codemod"
    forge: str = "local"
    agents: int = 2
    batch_size: int = 8
    campaigns: tuple[str, ...] = field(default_factory=builtin_campaign_names)
    github_repo: str = ""
    github_url: str = "https://api.github.com"
    url: str = ""
    """``FLEET_REPO`` when it is a URL (or the ``file://`` URL of a local path when ``remote``
    is set): the fleet works in a mirror and pushes its branches; ``""``: the embedded default,
    the checkout itself, nothing pushed."""
    remote: str = ""
    """``FLEET_REMOTE``: a fleet-owned remote that unit and integration branches go to (a bare
    repository by URL) instead of the repository's own; ``""``: the repository's own."""
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S
    """``FLEET_LEASE_TTL_S``: how long a unit's leases outlive their holder's last heartbeat
    (renewed every third of it): how soon the units of a worker that died are free again."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> FleetSettings:
        """Environment variables first, then ``$FLEET_HOME/settings.json`` (what the last
        ``fleet sweep`` / ``fleet demo`` saved, so ``make ui`` shows that repository), then the
        embedded defaults."""
        env = dict(os.environ if environ is None else environ)
        # a URL's default state is its own under the cwd's .fleet/remotes (fleet.home)
        home = env.get("FLEET_HOME") or str(default_home(env.get("FLEET_REPO", ".")))
        saved = Path(home) / SETTINGS_FILE
        if saved.is_file():
            try:
                stored = json.loads(saved.read_text())
            except ValueError as exc:
                raise ConfigError(f"{saved}: not valid JSON: {exc}") from exc
            env = {**{k: str(v) for k, v in stored.items()}, **env}
        deployment = env.get("FLEET_DEPLOYMENT", "embedded")
        if deployment not in ("embedded", "shared"):
            raise ConfigError(f"FLEET_DEPLOYMENT: expected embedded|shared, got {deployment!r}")
        store_url = env.get("FLEET_STORE_URL", "")
        if deployment == "shared" and not store_url.startswith(("postgresql://", "postgres://")):
            raise ConfigError("FLEET_STORE_URL: the shared deployment needs a PostgreSQL DSN")
        if not store_url:
            store_url = f"sqlite:///{Path(home).resolve() / 'fleet.db'}"
        campaigns = tuple(c for c in env.get("FLEET_CAMPAIGNS", "").split(",") if c.strip())
        try:
            agents = int(env.get("FLEET_AGENTS", "2"))
            batch = int(env.get("FLEET_BATCH_SIZE", "8"))
        except ValueError as exc:
            raise ConfigError(f"FLEET_AGENTS / FLEET_BATCH_SIZE: {exc}") from exc
        lease_ttl_s = lease_ttl(env)
        url, remote = env.get("FLEET_REPO", ".").strip(), env.get("FLEET_REMOTE", "").strip()
        if is_url(url) or remote:
            url = url if is_url(url) else Path(url).resolve().as_uri()
            for name, text in (("FLEET_REPO", url), ("FLEET_REMOTE", remote)):
                try:
                    if text:
                        Remote.parse(text)
                except ConfigError as exc:
                    raise ConfigError(f"{name}: {exc}") from exc
            repo = mirror_path(Remote.parse(url), Path(home).resolve())
        else:
            url, repo = "", Path(url).resolve()
        return cls(
            home=str(Path(home).resolve()),
            repo=str(repo),
            base_branch=env.get("FLEET_BASE_BRANCH") or (
                default_base_branch(repo) if repo.is_dir() or not url
                else head_branch(url) or FALLBACK_BASE_BRANCH),  # no mirror yet: ask the remote
            deployment=deployment,
            store_url=store_url,
            sandbox=env.get("FLEET_SANDBOX", "auto"),
            agent=env.get("FLEET_AGENT", "codemod"),
            forge=env.get("FLEET_FORGE", "local"),
            agents=max(agents, 1),
            batch_size=max(batch, 1),
            campaigns=tuple(c.strip() for c in campaigns) or builtin_campaign_names(),
            github_repo=env.get("FLEET_GITHUB_REPO", ""),
            github_url=env.get("FLEET_GITHUB_API_URL") or "https://api.github.com",
            url=url, remote=remote, lease_ttl_s=lease_ttl_s,
        )

    def checkout(self) -> Path:
        """The local repository of these settings, made current: with a ``url``, this
        worker's mirror cloned or fetched (``fleet.forge.remote.checkout``; a ``RemoteError``
        names a remote that cannot be reached); else the checkout itself, untouched."""
        if not self.url:
            return Path(self.repo)
        return checkout(self.url, Path(self.home), self.remote)

    def repository_key(self) -> str:
        """What this repository's rows carry in the store (``fleet.home.store_key``); by URL,
        the remote's (the same for every worker, before its mirror exists)."""
        key = store_key(self.home, self.repo)
        return key or (normalise_remote(self.url) if self.url else "")


    def env(self) -> dict[str, str]:
        """These settings as the environment variables ``from_env`` reads."""
        return {
            "FLEET_HOME": self.home, "FLEET_REPO": self.url or self.repo,
            "FLEET_REMOTE": self.remote,
            "FLEET_BASE_BRANCH": self.base_branch, "FLEET_DEPLOYMENT": self.deployment,
            "FLEET_STORE_URL": self.store_url, "FLEET_SANDBOX": self.sandbox,
            "FLEET_AGENT": self.agent, "FLEET_FORGE": self.forge,
            "FLEET_AGENTS": str(self.agents), "FLEET_BATCH_SIZE": str(self.batch_size),
            "FLEET_CAMPAIGNS": ",".join(self.campaigns),
            "FLEET_GITHUB_REPO": self.github_repo, "FLEET_GITHUB_API_URL": self.github_url,
        }

    def save(self) -> Path:
        """Write ``$FLEET_HOME/settings.json`` (read back by ``from_env``)."""
        path = Path(self.home) / SETTINGS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        env = self.env()
        del env["FLEET_HOME"]
        tmp = path.with_name(f".{SETTINGS_FILE}.{os.getpid()}")  # readers never see half a file
        tmp.write_text(json.dumps(env, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
        return path
