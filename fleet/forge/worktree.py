"""Per-unit workspaces: a ``git worktree`` on branch ``fleet/<campaign>/<unit>`` plus a scratch dir.

Workspaces live under the repository's git directory (``<git-common-dir>/fleet-worktrees/``), so
the user's checkout never sees them: its HEAD, index and working tree are never touched. Each
worktree is created *locked* with the owner's host and pid as the reason; ``gc(repo)`` removes
the worktrees whose owner is gone (a crash), scratch dirs without a worktree, and ``fleet/*``
branches that hold nothing beyond what other branches already have.

``workspace(repo, campaign, unit, base_commit)`` is a context manager: the worktree and its
scratch dir are removed when the block ends, on success and on failure (the branch too, unless
``keep_branch=True``).

Creating, removing and collecting workspaces is safe from many threads and processes at once:
git names a worktree's admin dir after the tree's basename (``.git/worktrees/tree<N>``) and
picks ``<N>`` racily, and ``git worktree prune`` can delete a half-made one, so every change of
the worktree set holds an exclusive ``flock`` on ``<git-common-dir>/fleet-worktrees.lock``
(re-entrant within a thread; milliseconds next to a unit's seconds). So does every other git
command that lists the worktrees: git 2.39 dies when an admin dir it listed is gone before it
reads it ("failed to read .git/worktrees/tree/commondir", "Invalid path", "bad object
worktrees/tree/HEAD"), and ``checkout <branch>``, ``branch -f``/``-D``, ``fetch`` (even into
``refs/remotes``), ``worktree list``/``unlock`` all list them: against two processes adding and
removing worktrees, 3-8% of each failed (300 tries each; ``commit``, ``merge``, ``push``,
``notes``, ``update-ref`` never). Callers run those under :func:`worktree_lock`.
Integration's merge tree is one more worktree of that set (:func:`scratch_tree`): same place,
same lock, same owner lock reason, so ``gc`` collects it after a crash.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fleet.errors import GitError
from fleet.forge._git import git, run
from fleet.types import Workspace

__all__ = [
    "GcReport",
    "branch_name",
    "checked_out_at",
    "checked_out_branches",
    "create_workspace",
    "gc",
    "remove_workspace",
    "scratch_tree",
    "workspace",
    "workspaces_root",
    "worktree_lock",
]

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_REASON = re.compile(r"fleet host=(?P<host>\S+) pid=(?P<pid>\d+)")
_held = threading.local()  # the lock files this thread holds (so gc inside create re-enters)


def workspace_diff(ws: Workspace) -> str:
    """The worktree's change against the unit's base commit, new files included. A hunk of a
    file in a legacy encoding (PEP 263) is not UTF-8: its bytes survive as surrogate escapes
    (``surrogateescape``), which the ledger and the gates keep losslessly."""
    git(ws.path, "add", "-A")
    return git(ws.path, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff",
               ws.base_commit, "--")


def branch_name(campaign: str, unit: str) -> str:
    return f"fleet/{_SAFE.sub('-', campaign)}/{_SAFE.sub('-', unit)}"


def workspaces_root(repo: str | Path) -> Path:
    repo = Path(repo).resolve()
    common = git(repo, "rev-parse", "--git-common-dir").strip()
    return (repo / common).resolve() / "fleet-worktrees"


@contextmanager
def worktree_lock(repo: str | Path) -> Iterator[None]:
    """Hold the repository's worktree lock: exclusive across processes *and* threads (each
    holder opens its own file description, which ``flock`` tells apart); re-entrant per thread.
    Held while the worktree set changes and while a git command lists it (module docstring)."""
    lock = workspaces_root(repo).with_name("fleet-worktrees.lock")
    held: set[Path] = _held.__dict__.setdefault("paths", set())
    if lock in held:
        yield
        return
    with lock.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        held.add(lock)
        try:
            yield
        finally:
            held.discard(lock)
            fcntl.flock(fh, fcntl.LOCK_UN)


def create_workspace(repo: str | Path, campaign: str, unit: str, base_commit: str) -> Workspace:
    """Add the unit's worktree (branch reset to ``base_commit``) and an empty scratch dir.
    Safe to call concurrently (threads or processes) for different units of one repository."""
    repo = Path(repo).resolve()
    base = git(repo, "rev-parse", "--verify", f"{base_commit}^{{commit}}").strip()
    with worktree_lock(repo):
        return _create(repo, campaign, unit, base)


def _create(repo: Path, campaign: str, unit: str, base: str) -> Workspace:
    branch = branch_name(campaign, unit)
    home = workspaces_root(repo) / f"{_SAFE.sub('-', campaign)}--{_SAFE.sub('-', unit)}"
    if home.exists():  # left by a crash: take it back only if its owner is gone
        gc(repo)
        if home.exists():
            raise GitError(f"workspace {home} is in use by a live fleet process")
    tree, scratch = home / "tree", home / "scratch"
    scratch.mkdir(parents=True)
    proc = run(repo, "worktree", "add", "--lock", "--reason", _owner(), "-B", branch, str(tree),
               base)
    if proc.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        raise GitError(f"git worktree add {tree} ({branch}): {proc.stderr.decode().strip()}")
    return Workspace(path=tree, branch=branch, base_commit=base, scratch=scratch, repo=repo)


def remove_workspace(ws: Workspace, *, delete_branch: bool = True) -> None:
    """Remove the worktree, its scratch dir and (by default) its branch. Idempotent; safe to
    call concurrently with other workspaces' creation and removal."""
    with worktree_lock(ws.repo):
        _drop_tree(ws.repo, ws.path)
        if delete_branch:
            run(ws.repo, "branch", "-D", ws.branch)


@contextmanager
def workspace(
    repo: str | Path, campaign: str, unit: str, base_commit: str, *, keep_branch: bool = False
) -> Iterator[Workspace]:
    ws = create_workspace(repo, campaign, unit, base_commit)
    try:
        yield ws
    finally:
        remove_workspace(ws, delete_branch=not keep_branch)


def _owner() -> str:
    """The lock reason of a worktree: who owns it (``gc`` removes it once that process is gone)."""
    return f"fleet host={socket.gethostname()} pid={os.getpid()}"


def _drop_tree(repo: Path, tree: Path) -> None:
    """Remove the worktree ``tree`` and its home; the caller holds the worktree lock."""
    run(repo, "worktree", "remove", "--force", "--force", str(tree))
    shutil.rmtree(tree.parent, ignore_errors=True)
    run(repo, "worktree", "prune")


@contextmanager
def scratch_tree(repo: str | Path, purpose: str, commit: str) -> Iterator[Path]:
    """A detached worktree at ``commit`` for ``purpose`` (integration's merge tree), registered
    like a unit's: under :func:`workspaces_root`, locked with its owner, added and removed under
    the worktree lock. After a crash (kill -9) ``gc`` -- and the next ``scratch_tree`` of the
    repository, which first collects dead owners' trees -- removes it."""
    repo = Path(repo).resolve()
    with worktree_lock(repo):
        _gc_trees(repo, dry_run=False)
        home = workspaces_root(repo) / f"{_SAFE.sub('-', purpose)}--{uuid.uuid4().hex[:12]}"
        tree = home / "tree"
        home.mkdir(parents=True)
        proc = run(repo, "worktree", "add", "--lock", "--reason", _owner(), "--detach",
                   str(tree), commit)
        if proc.returncode != 0:
            shutil.rmtree(home, ignore_errors=True)
            raise GitError(f"git worktree add {tree}: {proc.stderr.decode().strip()}")
    try:
        yield tree
    finally:
        with worktree_lock(repo):
            _drop_tree(repo, tree)


@dataclass
class GcReport:
    removed_worktrees: list[str] = field(default_factory=list)
    removed_scratch: list[str] = field(default_factory=list)
    removed_branches: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def _alive(host: str, pid: int) -> bool:
    if host != socket.gethostname():
        return True  # another machine's: not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _worktrees(repo: Path) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in [*git(repo, "worktree", "list", "--porcelain").splitlines(), ""]:
        if not line:
            if current:
                out.append(current)
            current = {}
            continue
        key, _, value = line.partition(" ")
        current[key] = value
    return out


def checked_out_branches(repo: Path) -> set[str]:
    """The branches checked out in ``repo``'s worktrees (the main one and linked ones)."""
    with worktree_lock(repo):
        return {wt["branch"].removeprefix("refs/heads/") for wt in _worktrees(repo)
                if wt.get("branch")}


def checked_out_at(repo: Path, branch: str) -> Path | None:
    """The worktree of ``repo`` (the main checkout or a linked one) that has ``branch`` checked
    out, or ``None``."""
    with worktree_lock(repo):
        for wt in _worktrees(repo):
            if wt.get("branch") == f"refs/heads/{branch}":
                return Path(wt["worktree"])
    return None


def gc(repo: str | Path, *, dry_run: bool = False) -> GcReport:
    """Remove what crashed fleet processes left behind; never touches the main checkout."""
    repo = Path(repo).resolve()
    with worktree_lock(repo):
        return _gc(repo, dry_run)


def _gc(repo: Path, dry_run: bool) -> GcReport:
    report = _gc_trees(repo, dry_run)
    _gc_branches(repo, dry_run, report)
    return report


def _gc_trees(repo: Path, dry_run: bool, report: GcReport | None = None) -> GcReport:
    """The worktrees (unit and integration) whose owner is gone, and homes without a tree."""
    root = workspaces_root(repo)
    report = report if report is not None else GcReport()
    run(repo, "worktree", "prune")
    live_homes: set[Path] = set()
    for wt in _worktrees(repo):
        path = Path(wt.get("worktree", ""))
        if root not in path.parents:
            continue  # the main checkout or a worktree that is not ours
        match = _REASON.search(wt.get("locked", ""))
        if match and _alive(match["host"], int(match["pid"])):
            report.kept.append(str(path))
            live_homes.add(path.parent)
            continue
        report.removed_worktrees.append(str(path))
        if not dry_run:
            run(repo, "worktree", "remove", "--force", "--force", str(path))
            shutil.rmtree(path.parent, ignore_errors=True)
    if root.is_dir():
        for home in sorted(root.iterdir()):
            if home not in live_homes and str(home / "tree") not in report.removed_worktrees:
                report.removed_scratch.append(str(home))
                if not dry_run:
                    shutil.rmtree(home, ignore_errors=True)
    run(repo, "worktree", "prune")
    return report


def _gc_branches(repo: Path, dry_run: bool, report: GcReport) -> None:
    """``fleet/*`` branches not checked out that hold nothing other branches do not."""
    checked_out = {wt.get("branch", "") for wt in _worktrees(repo)}
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/fleet/").split()
    others = [
        r for r in git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/").split()
        if not r.startswith("refs/heads/fleet/")
    ]
    for ref in refs:
        if ref in checked_out:
            continue
        unique = run(repo, "rev-list", "--count", ref, "--not", *others)
        if unique.returncode == 0 and unique.stdout.strip() == b"0":
            report.removed_branches.append(ref.removeprefix("refs/heads/"))
            if not dry_run:
                run(repo, "branch", "-D", ref.removeprefix("refs/heads/"))
        else:
            report.kept.append(ref.removeprefix("refs/heads/"))
