"""A target repository addressed by URL, for workers that share nothing but a git remote.

``Remote.parse(text)`` takes ``file://``, ``ssh://``, ``git://``, ``http(s)://``, scp-style
``user@host:path`` or a local path (read as ``file://``). Each worker keeps its own clone of it,
its *mirror*, under its own ``FLEET_HOME`` (``<home>/mirrors/<name>-<hash>``): a normal clone with
a detached checkout, so every ``refs/heads/*`` of the remote can be fetched into it as a local
branch and the worktree code (``fleet.forge.worktree``) works on it unchanged. Nothing here
assumes that two workers see one filesystem:

- :func:`checkout` is what a worker calls before it works on a repository given by URL: the
  synced mirror, with the remote that unit and integration branches go to recorded in the
  mirror's git config (``fleet.pushremote``: ``origin``, or ``fleet`` for a fleet-owned bare
  remote beside a read-only source); :func:`push_remote` reads it back (``None``: an ordinary
  local repository, the embedded default, where nothing is pushed);
- :func:`sync` clones the mirror, or fetches every branch of the remote into it; a local branch
  checked out in a unit's worktree is left alone, and local branches are never deleted (a unit
  branch may be committed but not pushed yet: ``fleet gc`` collects leftovers);
- :func:`push` publishes a unit's branch to the remote, with a lease on what the remote held
  (``--force-with-lease``): a worker whose view is stale (a zombie that lost its unit) is
  ``Refused``, never overwrites the branch another worker finished;
- :func:`fetch` brings the branches integration merges into the mirror; :func:`remote_heads`
  says what the remote holds (``git ls-remote``).

Several processes may share one ``FLEET_HOME`` (and so one mirror): cloning and fetching hold
a lock file beside the mirror. A URL that cannot be cloned, a remote that is down or refuses a
push for any reason other than the lease: ``RemoteError`` with one line naming the URL and git's
reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fleet.errors import FleetError
from fleet.forge._git import git, run
from fleet.forge._url import Remote, is_url
from fleet.forge.worktree import checked_out_branches, worktree_lock

__all__ = [
    "Pushed",
    "Refused",
    "Remote",
    "RemoteError",
    "checkout",
    "fetch",
    "head_branch",
    "is_url",
    "mirror_of",
    "mirror_path",
    "push",
    "push_notes",
    "push_remote",
    "remote_dirname",
    "remote_heads",
    "remote_refs",
    "remote_url",
    "sync",
    "working_repository",
]

PUSH_KEY = "fleet.pushremote"  # the mirror's git config: the remote branches go to
PUSH_NAME = "fleet"  # a fleet-owned remote beside a read-only source


class RemoteError(FleetError):
    """The remote could not be reached, cloned, fetched or pushed to (not a lease refusal)."""


@dataclass(frozen=True)
class Pushed:
    branch: str
    commit: str


@dataclass(frozen=True)
class Refused:
    """The remote's branch is not what the push expected (another worker moved it)."""

    branch: str
    reason: str


def remote_dirname(remote: Remote) -> str:
    """``<name>-<10 hex digits of its URL>``: the directory name of ``remote``'s mirror and of
    its default state directory (``fleet.home.default_home``)."""
    digest = hashlib.sha256(remote.url.encode()).hexdigest()[:10]
    return f"{remote.name}-{digest}"


def mirror_path(remote: Remote, home: Path) -> Path:
    """Where the worker whose state directory is ``home`` keeps its clone of ``remote``."""
    return home / "mirrors" / remote_dirname(remote)


def _line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:", "remote:"))]
    if fatal:  # git's first complaint names the cause; the last is "Could not read from..."
        return fatal[0]
    return (lines or ["no output"])[-1]


def _lock_path(mirror: Path) -> Path:
    return mirror.with_name(mirror.name + ".lock")


def checkout(url: str, home: Path, push_url: str = "") -> Path:
    """The worker's synced mirror of the repository at ``url`` (under ``home``), its push
    remote recorded: ``push_url`` (a fleet-owned remote) when it is given and differs from
    ``url``, else the repository's own remote. ``ConfigError`` for a text that is no URL,
    ``RemoteError`` for a remote that cannot be cloned or fetched from."""
    source = Remote.parse(url)
    target = Remote.parse(push_url) if push_url else None
    mirror = sync(source, home, push=None if target == source else target)
    if (target is None or target == source) and push_remote(mirror) != "origin":
        git(mirror, "config", PUSH_KEY, "origin")  # FLEET_REMOTE was dropped: the source's own
    return mirror


def _by_url(text: str, environ: Mapping[str, str] | None) -> tuple[str, Path, str] | None:
    """``(url, home, push url)`` when the repository argument ``text`` is worked on in a mirror
    (a URL, or any repository with ``$FLEET_REMOTE``), ``None`` for a plain local path."""
    import os

    from fleet.home import default_home

    env = os.environ if environ is None else environ
    push_url = env.get("FLEET_REMOTE", "").strip()
    if not is_url(text) and not push_url:
        return None
    url = text if is_url(text) else Path(text).resolve().as_uri()
    # a URL's default state is its own (default_home); a path with $FLEET_REMOTE keeps the
    # current directory's, as before
    own = default_home(text if is_url(text) else None)
    return url, Path(env.get("FLEET_HOME") or own).resolve(), push_url


def mirror_of(text: str | Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where :func:`working_repository` works for ``text``, without fetching anything (``fleet
    gc`` after a crash): the path itself, or this process's mirror path of the URL."""
    target = _by_url(str(text), environ)
    return Path(text) if target is None else mirror_path(Remote.parse(target[0]), target[1])


def working_repository(text: str | Path, environ: Mapping[str, str] | None = None) -> Path:
    """The local repository a command works on for the repository argument ``text``: a local
    path as it is (nothing pushed: the embedded default); a URL, or any repository when
    ``$FLEET_REMOTE`` is set, this process's synced mirror under ``$FLEET_HOME`` (else, for a
    URL, its own state directory under the current directory's ``.fleet/remotes``, see
    ``fleet.home.default_home``)."""
    from fleet.home import exclude_home, repo_root

    target = _by_url(str(text), environ)
    if target is None:
        return Path(text)
    root = repo_root(Path.cwd())
    if root is not None:  # a default home inside the checkout of the current directory
        target[1].mkdir(parents=True, exist_ok=True)
        exclude_home(root, target[1])  # (a mirror in it must not show up in its git status)
    return checkout(*target)


def sync(remote: Remote, home: Path, push: Remote | None = None) -> Path:
    """The worker's mirror of ``remote``, cloned on first use, else with every branch of the
    remote fetched into it (its ``refs/remotes/origin/*`` pruned; local branches updated, but
    never one checked out in a worktree and never deleted; the checkout stays detached so no
    branch is ever the current one, its HEAD at the remote's HEAD branch). With ``push``, the
    ``fleet/*`` branches come from that remote (named ``fleet`` in the mirror), which is where
    units and integration push; without it, the push remote recorded by :func:`checkout` stays
    (a new mirror pushes to ``origin``). Returns the mirror's path."""
    from fleet.locks import hold

    mirror = mirror_path(remote, home)
    mirror.parent.mkdir(parents=True, exist_ok=True)
    with hold(_lock_path(mirror), f"syncing {remote.url}"):
        if not (mirror / ".git").is_dir():
            _clone(remote, mirror)
        _clear_stale_locks(mirror)
        names = ["origin"]
        if push is not None:
            names.append(PUSH_NAME)
            if run(mirror, "remote", "get-url", PUSH_NAME).returncode != 0:
                git(mirror, "remote", "add", PUSH_NAME, push.url)
            else:
                git(mirror, "remote", "set-url", PUSH_NAME, push.url)
        if push is not None or push_remote(mirror) is None:  # a plain sync keeps the choice
            git(mirror, "config", PUSH_KEY, names[-1])
        for name in names:
            url = remote.url if name == "origin" else push.url if push else ""
            spec = ("+refs/heads/*:refs/remotes/origin/*" if name == "origin"
                    else f"+refs/heads/fleet/*:refs/remotes/{name}/fleet/*")
            with worktree_lock(mirror):  # git's fetch lists the worktrees
                proc = run(mirror, "fetch", "--quiet", "--prune", name, spec,
                           "+refs/notes/*:refs/notes/*")
            if proc.returncode != 0:
                raise RemoteError(f"cannot fetch from {url}: {_line(proc.stderr)}")
        _update_branches(mirror, names)
        # HEAD follows the remote's HEAD branch; the checked-out files stay as they are (a
        # reader may be indexing them): where they no longer match, readers take an export
        head = git(mirror, "rev-parse", "--verify", "refs/remotes/origin/HEAD^{commit}").strip()
        git(mirror, "update-ref", "--no-deref", "HEAD", head)
    return mirror


STALE_LOCK_S = 120.0  # git holds a ref lock for milliseconds; older ones are a killed fetch's


def _clear_stale_locks(mirror: Path) -> None:
    """The ref locks a fetch killed with -9 left (``refs/remotes/**.lock``, ``refs/notes/**.lock``,
    ``packed-refs.lock``): git refuses every later fetch over them ("Unable to create ... .lock:
    File exists"). Only old ones, under the mirror lock that every fetch of ours holds."""
    import time

    git_dir = mirror / ".git"
    stale = time.time() - STALE_LOCK_S
    candidates = [git_dir / "packed-refs.lock", *(git_dir / "refs" / "remotes").rglob("*.lock"),
                  *(git_dir / "refs" / "notes").rglob("*.lock")]
    for lock in candidates:
        try:
            if lock.stat().st_mtime < stale:
                lock.unlink()
        except FileNotFoundError:
            continue


def _clone(remote: Remote, mirror: Path) -> None:
    import shutil

    tmp = mirror.with_name(mirror.name + ".cloning")
    if tmp.exists():  # left by a clone that was killed
        shutil.rmtree(tmp)
    proc = run(mirror.parent, "clone", "--quiet", "--no-checkout", remote.url, str(tmp))
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RemoteError(f"cannot clone {remote.url}: {_line(proc.stderr)}")
    if run(tmp, "rev-parse", "--verify", "--quiet", "origin/HEAD").returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RemoteError(f"cannot clone {remote.url}: the repository has no commit")
    git(tmp, "checkout", "--quiet", "--detach", "origin/HEAD")
    tmp.rename(mirror)


def _refs(repo: Path, prefix: str) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    pairs = (line.split(" ", 1) for line in out.splitlines() if line.strip())
    return {ref.removeprefix(prefix): sha for ref, sha in pairs}


def _update_branches(mirror: Path, names: list[str]) -> None:
    """Local branches = what the remotes hold (``fleet/*`` from the push remote), except a
    branch checked out in a worktree (a unit at work on it): under the worktree lock."""

    wanted = {b: sha for b, sha in _refs(mirror, "refs/remotes/origin/").items() if b != "HEAD"}
    if len(names) > 1:
        wanted.update(_refs(mirror, f"refs/remotes/{names[-1]}/"))
    with worktree_lock(mirror):
        local = _refs(mirror, "refs/heads/")
        busy = checked_out_branches(mirror)
        lines = [f"update refs/heads/{b} {sha}\n" for b, sha in sorted(wanted.items())
                 if local.get(b) != sha and b not in busy]
        if lines:
            git(mirror, "update-ref", "--stdin", input="".join(lines).encode())


def push_remote(repo: Path) -> str | None:
    """The git remote of ``repo`` that unit and integration branches are pushed to (as
    :func:`checkout` recorded it), ``None`` for an ordinary repository (nothing is pushed)."""
    proc = run(repo, "config", "--get", PUSH_KEY)
    name = proc.stdout.decode().strip()
    return name or None


def head_branch(url: str) -> str | None:
    """The branch the remote's HEAD names (``git ls-remote --symref``), ``None`` when it cannot
    be asked (the steps that fetch from it then say why)."""
    proc = run(Path.cwd(), "ls-remote", "--symref", url, "HEAD")
    for line in proc.stdout.decode().splitlines() if proc.returncode == 0 else []:
        target, _, name = line.partition("\t")
        if target.startswith("ref: refs/heads/") and name == "HEAD":
            return target.removeprefix("ref: refs/heads/")
    return None


def remote_url(repo: Path, name: str) -> str:
    return git(repo, "remote", "get-url", name).strip()


def remote_heads(repo: Path, branches: list[str], remote: str = "origin") -> dict[str, str]:
    """What ``remote`` holds of ``branches`` now (one ``git ls-remote``): branch -> commit, a
    branch it does not have left out. ``RemoteError`` when it cannot be reached."""
    found = remote_refs(repo, [f"refs/heads/{b}" for b in branches], remote)
    return {ref.removeprefix("refs/heads/"): sha for ref, sha in found.items()}


def remote_refs(repo: Path, refs: list[str], remote: str = "origin") -> dict[str, str]:
    """``refs`` (full names) as ``remote`` holds them: ref -> object, absent ones left out."""
    if not refs:
        return {}
    proc = run(repo, "ls-remote", remote, *refs)
    if proc.returncode != 0:
        raise RemoteError(f"cannot list the refs of {remote_url(repo, remote)}: "
                          f"{_line(proc.stderr)}")
    out: dict[str, str] = {}
    for line in proc.stdout.decode().splitlines():
        sha, _, ref = line.partition("\t")
        if ref in refs:
            out[ref] = sha
    return out


def push_notes(repo: Path, ref: str, commit: str, message: str, remote: str,
               attempts: int = 5) -> None:
    """Append ``message`` to the note of ``commit`` under the notes ``ref`` *on the remote*:
    the remote's notes are fetched, the note appended, and pushed under a lease on what was
    fetched; when another worker pushed notes in between, again (``attempts`` times)."""
    from fleet.forge._git import add_note

    for _ in range(attempts):
        have = remote_refs(repo, [ref], remote).get(ref)
        if have is not None:
            with worktree_lock(repo):  # git's fetch lists the worktrees
                proc = run(repo, "fetch", "--quiet", remote, f"+{ref}:{ref}")
            if proc.returncode != 0:
                raise RemoteError(f"cannot fetch {ref} from {remote_url(repo, remote)}: "
                                  f"{_line(proc.stderr)}")
        else:
            run(repo, "update-ref", "-d", ref)
        add_note(repo, ref, commit, message)
        notes = git(repo, "rev-parse", ref).strip()
        if isinstance(push(repo, ref, have, commit=notes, remote=remote, ref=ref), Pushed):
            return
    raise RemoteError(f"cannot push {ref} to {remote_url(repo, remote)}: other workers kept "
                      f"moving it ({attempts} attempts)")


def push(mirror: Path, branch: str, expect: str | None, *, commit: str | None = None,
         remote: str = "origin", ref: str | None = None) -> Pushed | Refused:
    """Publish ``commit`` (default: ``branch`` of ``mirror``) as ``branch`` of ``remote``
    (``ref``: another ref than ``refs/heads/<branch>``, e.g. a notes ref), only if the remote's
    ref is still ``expect`` (a commit; ``None``: it must not exist there yet)."""
    target = ref or f"refs/heads/{branch}"
    if commit is None:
        commit = git(mirror, "rev-parse", "--verify", f"{target}^{{commit}}").strip()
    lease = f"--force-with-lease={target}:{expect or ''}"
    proc = run(mirror, "push", "--porcelain", lease, remote, f"{commit}:{target}")
    if proc.returncode == 0:
        # git decides "up to date" before it checks the lease: another push that put this very
        # commit there (two integrations of the same units in the same second build the same
        # commit) is not ours to record, unless we expected it there
        same = [ln for ln in proc.stdout.decode("utf-8", "replace").splitlines()
                if ln.startswith("=\t") and ln.split("\t")[1].endswith(f":{target}")]
        if same and expect != commit:
            return Refused(branch, f"the remote's {branch} is no longer {expect or 'absent'}: "
                                   f"another push put this very commit there")
        return Pushed(branch, commit)
    out = proc.stdout.decode("utf-8", "replace")
    if "[rejected]" in out and "stale info" in out:
        return Refused(branch, f"the remote's {branch} is no longer {expect or 'absent'}")
    if "[rejected]" in out:
        return Refused(branch, _line(proc.stdout + b"\n" + proc.stderr))
    url = remote_url(mirror, remote)
    raise RemoteError(f"push of {branch} to {url} failed: {_push_reason(proc.stdout, proc.stderr)}")


def _push_reason(stdout: bytes, stderr: bytes) -> str:
    """One line of why the remote refused a push: git's verdict on the ref (``remote rejected
    (pre-receive hook declined)``) and what the remote said (a hook's message), else git's
    last error line."""
    verdicts = [ln.split("\t")[-1].strip("[] ") for ln in
                stdout.decode("utf-8", "replace").splitlines() if ln.startswith("!")]
    said = [ln.strip().removeprefix("remote:").strip()
            for ln in stderr.decode("utf-8", "replace").splitlines()
            if ln.startswith("remote:") and ln.removeprefix("remote:").strip()]
    if verdicts:
        verdict = verdicts[0].replace("] (", " (")
        return verdict + (f": {'; '.join(said)[:300]}" if said else "")
    return _line(stderr)


def fetch(mirror: Path, branches: list[str], remote: str = "origin") -> dict[str, str]:
    """Fetch ``branches`` from the mirror's ``remote`` (forced, into its tracking refs
    ``refs/remotes/<remote>/*``: a local branch checked out in a unit's worktree is never moved
    under it); returns each branch's commit, whose objects are now in the mirror. A branch the
    remote does not have is a ``RemoteError`` naming it."""
    if not branches:
        return {}
    specs = [f"+refs/heads/{b}:refs/remotes/{remote}/{b}" for b in branches]
    with worktree_lock(mirror):  # git's fetch lists the worktrees (fleet.forge.worktree)
        proc = run(mirror, "fetch", "--quiet", remote, *specs)
    if proc.returncode != 0:
        raise RemoteError(f"cannot fetch {', '.join(branches)} from "
                          f"{remote_url(mirror, remote)}: {_line(proc.stderr)}")
    return {b: git(mirror, "rev-parse", f"refs/remotes/{remote}/{b}").strip() for b in branches}
