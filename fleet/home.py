"""The state directory (``FLEET_HOME``) and the repository it belongs to.

Default: ``REPO/.fleet`` of the repository a command works on (its git top level), kept out of
git through ``.git/info/exclude``; outside any repository, ``./.fleet``; a repository by URL,
``.fleet/remotes/<name>-<hash>`` under the current directory's (its own, beside the others').
``--home`` and ``FLEET_HOME`` override it.

A state directory records its repository in ``repository.json`` (root path, first commit, the
``origin`` URL and the store key below) the first time a command uses it for one, and
:func:`claim_home` refuses it, in one line naming both, for any other repository: its graph
snapshot, settings, Dagster instance and SQLite store are that repository's. A repository that
moved (same first commit, the recorded root gone) takes its state directory along.

:func:`repository_key` is what rows of a shared store carry (findings, ledger events) so one
PostgreSQL store holds many repositories without mixing: the normalised ``origin`` URL when the
repository has one (every worker's clone of it agrees), else ``<root>@<first commit>``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from fleet.errors import ConfigError
from fleet.forge._git import output as _git

__all__ = ["HOME_DIR", "IDENTITY_FILE", "HomeMismatch", "RepoIdentity", "belongs_elsewhere",
           "check_home", "check_mirror_home", "check_store", "claim_home", "default_home",
           "exclude_home", "home_of", "identify", "recorded_identity", "repo_root",
           "repository_key", "state_cache", "store_key"]

HOME_DIR = ".fleet"
IDENTITY_FILE = "repository.json"
LEGACY_SETTINGS = "settings.json"


class HomeMismatch(ConfigError):
    """A state directory was given a repository other than the one it belongs to."""


@dataclass(frozen=True)
class RepoIdentity:
    """Who a repository is: its top-level directory, its first (root) commit, its ``origin``."""

    root: str
    first_commit: str = ""
    remote: str = ""
    store_key: str = ""  # as first recorded: a remote added later does not move the rows

    @property
    def key(self) -> str:
        if self.store_key:
            return self.store_key
        if self.remote:
            return normalise_remote(self.remote)
        return f"{self.root}@{self.first_commit[:12]}" if self.first_commit else self.root

    def describe(self) -> str:
        first = f"first commit {self.first_commit[:12]}" if self.first_commit else "no commit"
        return f"{self.root} ({first})"

    def same_repository(self, other: RepoIdentity) -> bool:
        if self.root != other.root:
            return False
        return not self.first_commit or not other.first_commit or (
            self.first_commit == other.first_commit)


def repo_root(path: Path | str = ".") -> Path | None:
    """The git top level ``path`` is inside, ``None`` when it is in no git repository."""
    where = Path(path)
    if not where.is_dir():
        return None
    top = _git(where, "rev-parse", "--show-toplevel")
    return Path(top).resolve() if top else None


def normalise_remote(url: str) -> str:
    """One spelling per remote: no scheme, user or ``.git``; ``host:path`` as ``host/path``
    (``git@github.com:o/r.git`` and ``https://github.com/o/r`` are both ``github.com/o/r``)."""
    text = url.strip().rstrip("/")
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    text = re.sub(r"^[^@/]+@", "", text)
    if ":" in text.split("/", 1)[0]:
        host, _, rest = text.partition(":")
        text = f"{host}/{rest}" if not rest.isdigit() else text
    return text.removesuffix(".git")


def identify(repo: Path | str) -> RepoIdentity:
    """The identity of the repository ``repo`` is in (a ``ConfigError`` when it is none)."""
    root = repo_root(repo)
    if root is None:
        raise ConfigError(f"{repo} is not a git repository: the fleet works on commits "
                          "(git init && git add -A && git commit -m initial)")
    roots = (_git(root, "rev-list", "--max-parents=0", "HEAD") or "").split()
    remote = _git(root, "config", "--get", "remote.origin.url") or ""
    return RepoIdentity(str(root), min(roots) if roots else "", remote)


def repository_key(repo: Path | str) -> str:
    """What a shared store's rows of ``repo`` carry (see the module docstring)."""
    return identify(repo).key


def default_home(repo: Path | str | None = None) -> Path:
    """``REPO/.fleet`` for the repository ``repo`` (default: the current directory) is in;
    ``<repo>/.fleet`` when it is in none. A repository named by URL (a ``str``) has a state
    directory of its own under the current directory's: ``.fleet/remotes/<name>-<hash>``
    (``fleet.forge.remote.remote_dirname``; its mirror in it), so two URLs swept from one
    directory never share one."""
    if isinstance(repo, str):
        from fleet.forge.remote import Remote, is_url, remote_dirname

        if is_url(repo):
            return default_home(None) / "remotes" / remote_dirname(Remote.parse(repo))
    where = Path(repo) if repo is not None else Path.cwd()
    root = repo_root(where)
    return (root or where.absolute()) / HOME_DIR


def exclude_home(root: Path, home: Path) -> bool:
    """Add ``home`` (when inside ``root``) to the repository's ``info/exclude`` so git, and the
    index's check for a clean checkout, never see the state directory. True when excluded."""
    try:
        rel = home.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    path = _git(root, "rev-parse", "--git-path", "info/exclude")
    if path is None:
        return False
    exclude = (root / path).resolve()
    line = f"/{rel.as_posix()}/"
    current = exclude.read_text().splitlines() if exclude.is_file() else []
    if line not in current:
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a") as out:
            prefix = "\n" if current and current[-1] else ""
            out.write(f"{prefix}# the fleet's state directory (fleet-pipelines)\n{line}\n")
    return True


def recorded_identity(home: Path) -> RepoIdentity | None:
    """The repository ``home`` belongs to: its ``repository.json``, else (a state directory from
    before that file) the ``FLEET_REPO`` its ``settings.json`` saved; ``None`` when neither."""
    path = home / IDENTITY_FILE
    if path.is_file():
        try:
            data = json.loads(path.read_text())
            return RepoIdentity(str(data["root"]), str(data.get("first_commit", "")),
                                str(data.get("remote", "")), str(data.get("key", "")))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}: not a repository record ({exc}); remove it to let "
                              "the next command record the repository again") from exc
    legacy = home / LEGACY_SETTINGS
    if legacy.is_file():
        try:
            saved = json.loads(legacy.read_text()).get("FLEET_REPO")
        except (ValueError, AttributeError):
            return None
        if saved:
            return RepoIdentity(str(Path(saved).resolve()))
    return None


def _write(home: Path, identity: RepoIdentity) -> None:
    tmp = home / f".{IDENTITY_FILE}.{os.getpid()}"
    record = {k: v for k, v in asdict(identity).items() if k != "store_key"}
    tmp.write_text(json.dumps({**record, "key": identity.key}, indent=1) + "\n")
    os.replace(tmp, home / IDENTITY_FILE)


def _moved(recorded: RepoIdentity, current: RepoIdentity) -> bool:
    """The repository was moved (or its directory renamed): same first commit, and nothing
    that is that repository is left at the recorded root."""
    if not recorded.first_commit or recorded.first_commit != current.first_commit:
        return False
    left = repo_root(recorded.root)
    return left is None or not identify(left).same_repository(recorded)


def belongs_elsewhere(recorded: RepoIdentity, current: RepoIdentity) -> bool:
    """State recorded for ``recorded`` is not ``current``'s: another repository, not the same
    one (nor the same one moved elsewhere)."""
    return not recorded.same_repository(current) and not _moved(recorded, current)


def state_cache(explicit: str, name: str) -> Path:
    """A cache the fleet keeps across runs (test venvs, base-tree runs): the directory the
    environment variable ``explicit`` names, else ``$FLEET_HOME/<name>``, else
    ``$XDG_CACHE_HOME/fleet/<name>`` (``~/.cache/fleet/<name>``)."""
    chosen = os.environ.get(explicit)
    if chosen:
        return Path(chosen)
    home = os.environ.get("FLEET_HOME")
    if home:
        return Path(home) / name
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fleet" / name


def check_home(home: Path, repo: Path | str) -> RepoIdentity:
    """The identity of the repository ``repo`` is in, as ``home`` records it (its store key);
    raise :class:`HomeMismatch` (one line naming both) when ``home`` belongs to another
    repository. Creates and writes nothing: for the commands that only read a state directory
    (``fleet plan``, ``fleet verify``, ``fleet rollback``, ``fleet ledger``)."""
    current = identify(repo)
    home = Path(home).resolve()
    recorded = recorded_identity(home) if home.is_dir() else None
    if recorded is not None and belongs_elsewhere(recorded, current):
        own = Path(current.root) / HOME_DIR
        hint = (f"it came with a copy of {recorded.root}: remove it for a fresh one, or pass "
                "another --home / FLEET_HOME" if home == own else
                f"use {own} (the default) or another --home / FLEET_HOME for it")
        raise HomeMismatch(f"state directory {home} belongs to the repository "
                           f"{recorded.describe()}, not to {current.describe()}: {hint}")
    if recorded is not None and recorded.store_key:
        current = dataclasses.replace(current, store_key=recorded.store_key)
    return current


def claim_home(home: Path, repo: Path | str) -> RepoIdentity:
    """Make ``home`` the state directory of the repository ``repo`` is in: create it, exclude it
    from git when it is inside the repository, record the repository the first time; raise
    :class:`HomeMismatch` (one line naming both) when it belongs to another repository."""
    current = check_home(home, repo)
    home = home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    exclude_home(Path(current.root), home)
    if recorded_identity(home) != current or not (home / IDENTITY_FILE).is_file():
        _write(home, current)
    return current


def check_mirror_home(home: Path, mirror: Path, url: str) -> None:
    """A sweep by URL works in its mirror under ``home`` (``fleet.forge.remote.mirror_of``):
    ``home`` recorded for any other repository (another URL's mirror, a checkout) is refused
    in one line naming both, before anything is cloned into it."""
    home = Path(home).resolve()
    recorded = recorded_identity(home) if home.is_dir() else None
    if recorded is None or Path(recorded.root) == Path(mirror).resolve():
        return
    raise HomeMismatch(f"state directory {home} belongs to the repository "
                       f"{recorded.describe()}, not to {url} (its mirror {mirror}): use "
                       f"{default_home(url)} (the default) or another --home / FLEET_HOME "
                       f"for {url}")


def home_of(repo: Path | str | None, home: Path | str | None = None) -> Path:
    """The state directory a command on ``repo`` uses: ``home`` (``--home``) when given, else
    ``$FLEET_HOME``, else the repository's own (:func:`default_home`)."""
    chosen = home or os.environ.get("FLEET_HOME")
    return Path(chosen).absolute() if chosen else default_home(repo)


def check_store(url: str, repo: Path | str) -> None:
    """A SQLite store (``sqlite:///…/fleet.db``) kept in another repository's state directory
    is that repository's: :class:`HomeMismatch`, one line naming both. A store elsewhere (or
    PostgreSQL, shared by design and kept apart by repository keys) passes."""
    if not url.startswith("sqlite:///"):
        return
    folder = Path(url[len("sqlite:///"):]).resolve().parent
    recorded = recorded_identity(folder) if (folder / IDENTITY_FILE).is_file() else None
    if recorded is None:
        return
    current = identify(repo)
    if belongs_elsewhere(recorded, current):
        raise HomeMismatch(f"store {url} is in the state directory {folder} of the repository "
                           f"{recorded.describe()}, not of {current.describe()}: use "
                           f"{Path(current.root) / HOME_DIR / 'fleet.db'} (the default) or a "
                           "shared PostgreSQL store")


def store_key(home: Path | str, repo: Path | str) -> str:
    """The key ``repo``'s rows carry in the store: as recorded in ``home`` when ``home`` is
    ``repo``'s state directory, else the repository's own (:func:`repository_key`: never the
    key of the repository another state directory belongs to); ``""`` when ``repo`` is no git
    repository."""
    try:
        current = identify(repo)
    except ConfigError:
        return ""
    recorded = None
    with contextlib.suppress(ConfigError):  # claim_home reports a damaged record
        recorded = recorded_identity(Path(home))
    if recorded is not None and recorded.store_key and not belongs_elsewhere(recorded, current):
        return recorded.store_key
    return current.key
