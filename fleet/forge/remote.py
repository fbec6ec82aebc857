"""A target repository addressed by URL, for workers that share nothing but a git remote.

``Remote.parse(text)`` takes ``file://``, ``ssh://``, ``git://``, ``http(s)://``, scp-style
``user@host:path`` or a local path (read as ``file://``). Each worker keeps its own clone of it,
its *mirror*, under its own ``FLEET_HOME`` (``<home>/mirrors/<name>-<hash>``): a normal clone with
a detached checkout, so every ``refs/heads/*`` of the remote can be fetched into it as a local
branch and the worktree code (``fleet.forge.worktree``) works on it unchanged. Nothing here
assumes that two workers see one filesystem:

- :func:`sync` clones the mirror, or fetches every branch of the remote into it (pruned);
- :func:`push` publishes a unit's branch to the remote, with a lease on what the remote held
  (``--force-with-lease``): a worker whose view is stale (a zombie that lost its unit) is
  ``Refused``, never overwrites the branch another worker finished;
- :func:`fetch` brings the branches integration merges into the mirror.

A URL that cannot be cloned, a remote that is down or refuses a push for any reason other than
the lease: ``RemoteError`` with one line naming the URL and git's reason.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from fleet.errors import ConfigError, FleetError
from fleet.forge._git import git, run

__all__ = ["Pushed", "Refused", "Remote", "RemoteError", "fetch", "mirror_path", "push", "sync"]

SCHEMES = ("file", "ssh", "git", "http", "https")
_SCP = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:(?!//)[^\s]+$")
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class RemoteError(FleetError):
    """The remote could not be reached, cloned, fetched or pushed to (not a lease refusal)."""


@dataclass(frozen=True)
class Remote:
    """A git remote by URL (``url`` is what git is given)."""

    url: str

    @classmethod
    def parse(cls, text: str) -> Remote:
        """``text`` as a remote; ``ConfigError`` naming it when it is no repository URL."""
        text = text.strip()
        if not text:
            raise ConfigError("repository URL: empty")
        if "://" in text:
            parts = urlsplit(text)
            if parts.scheme not in SCHEMES:
                raise ConfigError(f"repository URL {text!r}: scheme {parts.scheme!r} is not one "
                                  f"of {', '.join(SCHEMES)}")
            if parts.scheme != "file" and not parts.netloc:
                raise ConfigError(f"repository URL {text!r}: no host")
            if not parts.path.strip("/"):
                raise ConfigError(f"repository URL {text!r}: no repository path")
            return cls(text)
        if _SCP.match(text) and not Path(text).exists():
            return cls(text)
        return cls(Path(text).resolve().as_uri())

    @property
    def name(self) -> str:
        """A short file-system-safe name: the repository's last path component."""
        path = urlsplit(self.url).path if "://" in self.url else self.url.split(":", 1)[-1]
        stem = path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or "repo"
        return _NAME.sub("-", stem)


@dataclass(frozen=True)
class Pushed:
    branch: str
    commit: str


@dataclass(frozen=True)
class Refused:
    """The remote's branch is not what the push expected (another worker moved it)."""

    branch: str
    reason: str


def mirror_path(remote: Remote, home: Path) -> Path:
    """Where the worker whose state directory is ``home`` keeps its clone of ``remote``."""
    digest = hashlib.sha256(remote.url.encode()).hexdigest()[:10]
    return home / "mirrors" / f"{remote.name}-{digest}"


def _line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:", "remote:"))]
    return (fatal or lines or ["no output"])[-1]


def sync(remote: Remote, home: Path) -> Path:
    """The worker's mirror of ``remote``, cloned on first use, else with every branch of the
    remote fetched into it (``refs/heads/*``, forced and pruned; the checkout stays detached so
    no branch is ever the current one). Returns the mirror's path."""
    mirror = mirror_path(remote, home)
    if not (mirror / ".git").is_dir():
        mirror.parent.mkdir(parents=True, exist_ok=True)
        tmp = mirror.with_name(mirror.name + ".cloning")
        if tmp.exists():
            import shutil

            shutil.rmtree(tmp)
        proc = run(mirror.parent, "clone", "--quiet", "--no-checkout", remote.url, str(tmp))
        if proc.returncode != 0:
            raise RemoteError(f"cannot clone {remote.url}: {_line(proc.stderr)}")
        git(tmp, "checkout", "--quiet", "--detach", "origin/HEAD")
        tmp.rename(mirror)
    proc = run(mirror, "fetch", "--quiet", "--prune", "--update-head-ok", "origin",
               "+refs/heads/*:refs/heads/*")
    if proc.returncode != 0:
        raise RemoteError(f"cannot fetch from {remote.url}: {_line(proc.stderr)}")
    return mirror


def push(mirror: Path, branch: str, expect: str | None) -> Pushed | Refused:
    """Publish ``branch`` of ``mirror`` to its remote, only if the remote's branch is still
    ``expect`` (a commit; ``None``: the branch must not exist there yet)."""
    commit = git(mirror, "rev-parse", "--verify", f"refs/heads/{branch}^{{commit}}").strip()
    lease = f"--force-with-lease=refs/heads/{branch}:{expect or ''}"
    proc = run(mirror, "push", "--porcelain", lease, "origin",
               f"{commit}:refs/heads/{branch}")
    if proc.returncode == 0:
        return Pushed(branch, commit)
    out = proc.stdout.decode("utf-8", "replace")
    if "[rejected]" in out and "stale info" in out:
        return Refused(branch, f"the remote's {branch} is no longer {expect or 'absent'}")
    if "[rejected]" in out:
        return Refused(branch, _line(proc.stdout + b"\n" + proc.stderr))
    url = git(mirror, "remote", "get-url", "origin").strip()
    raise RemoteError(f"push of {branch} to {url} failed: {_line(proc.stderr)}")


def fetch(mirror: Path, branches: list[str]) -> dict[str, str]:
    """Fetch ``branches`` from the mirror's remote into the mirror (forced); returns each
    branch's commit. A branch the remote does not have is a ``RemoteError`` naming it."""
    if not branches:
        return {}
    specs = [f"+refs/heads/{b}:refs/heads/{b}" for b in branches]
    proc = run(mirror, "fetch", "--quiet", "--update-head-ok", "origin", *specs)
    if proc.returncode != 0:
        url = git(mirror, "remote", "get-url", "origin").strip()
        raise RemoteError(f"cannot fetch {', '.join(branches)} from {url}: "
                          f"{_line(proc.stderr)}")
    return {b: git(mirror, "rev-parse", f"refs/heads/{b}").strip() for b in branches}
