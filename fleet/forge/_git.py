"""The one way fleet runs git: a subprocess with fleet's identity, errors as ``GitError``.

Every fleet commit (a unit's patch, an integration commit, a rollback, the demo repository) is
made as :data:`IDENTITY`, so no commit depends on the machine's ``user.name``/``user.email``.
Output is decoded with ``surrogateescape``: a path or a diff in a legacy encoding keeps its bytes.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from fleet.errors import GitError

__all__ = [
    "IDENTITY",
    "add_note",
    "archive",
    "changed_paths",
    "commit_of",
    "git",
    "head_commit",
    "is_ancestor",
    "merge_file",
    "notes",
    "output",
    "run",
    "show",
]

IDENTITY = {
    "GIT_AUTHOR_NAME": "fleet",
    "GIT_AUTHOR_EMAIL": "fleet@fleet.invalid",
    "GIT_COMMITTER_NAME": "fleet",
    "GIT_COMMITTER_EMAIL": "fleet@fleet.invalid",
}


def _env() -> dict[str, str]:
    return {**os.environ, **IDENTITY}


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def run(
    cwd: str | Path, *args: str, input: bytes | None = None, check: bool = False,
    env: Mapping[str, str] | None = None, timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """``git *args`` in ``cwd`` as fleet (``env`` added to the environment); raw bytes out.
    ``check``: a non-zero exit raises ``GitError`` naming the command, the directory and git's
    message. ``timeout`` (seconds): ``subprocess.TimeoutExpired`` past it."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env={**_env(), **(env or {})}, input=input,
        capture_output=True, check=False, timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} in {cwd}: {_decode(proc.stderr).strip()}")
    return proc


def git(cwd: str | Path, *args: str, check: bool = True, input: bytes | None = None) -> str:
    """``git *args`` in ``cwd``; its standard output (``GitError`` on failure unless
    ``check=False``)."""
    return _decode(run(cwd, *args, input=input, check=check).stdout)


def output(cwd: str | Path, *args: str) -> str | None:
    """The stripped output of ``git *args`` in ``cwd``; ``None`` when git fails or ``cwd`` is
    no directory (for questions such as "which branch is checked out", where "none" is an
    answer, not a fault)."""
    try:
        proc = run(cwd, *args)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return _decode(proc.stdout).strip() if proc.returncode == 0 else None


def commit_of(repo: str | Path, rev: str) -> str | None:
    """The commit ``rev`` (a branch, tag, SHA or ``HEAD``) names in ``repo``; ``None`` when it
    names none."""
    return output(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") or None


def branch_commit(repo: Path, branch: str) -> str:
    """The commit at the head of ``branch`` in ``repo``. A branch (or repository) git does not
    know is a :class:`ConfigError` naming both, not a ``CalledProcessError`` from deep inside a
    step: the base branch comes from ``FLEET_BASE_BRANCH`` or the repository's checkout."""
    from fleet.errors import ConfigError

    if not repo.is_dir():
        raise ConfigError(f"the repository {repo} does not exist (base branch {branch!r})")
    done = run(repo, "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}")
    commit = done.stdout.decode().strip()
    if done.returncode != 0 or not commit:
        message = done.stderr.decode(errors="replace").strip()
        detail = message.splitlines()[0] if message else ""
        raise ConfigError(
            f"base branch {branch!r} does not exist in the repository {repo}"
            + (f" ({detail})" if detail else "")
            + "; set FLEET_BASE_BRANCH to one of its branches (e.g. the checked-out one)")
    return commit


def head_commit(repo: str | Path) -> str:
    """The commit at ``repo``'s HEAD; ``GitError`` naming ``repo`` when there is none (no such
    directory, no git checkout, no commit yet)."""
    if not Path(repo).is_dir():
        raise GitError(f"{repo}: no such directory (expected a git checkout)")
    return git(repo, "rev-parse", "HEAD").strip()


def is_ancestor(repo: str | Path, commit: str, of: str) -> bool:
    """``commit`` is ``of`` or one of its ancestors (``False`` too when either is unknown)."""
    return run(repo, "merge-base", "--is-ancestor", commit, of).returncode == 0


def archive(repo: str | Path, commit: str, dest: Path) -> None:
    """Write ``commit``'s tree to ``dest`` as a tar file (``git archive``)."""
    with dest.open("wb") as out:
        proc = subprocess.run(["git", "archive", "--format=tar", commit], cwd=repo, env=_env(),
                              stdout=out, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise GitError(f"git archive {commit} in {repo}: {_decode(proc.stderr).strip()}")


def show(repo: Path, commit: str, path: str) -> bytes | None:
    """The content of ``path`` at ``commit``, or ``None`` when it does not exist there."""
    proc = run(repo, "show", f"{commit}:{path}")
    return proc.stdout if proc.returncode == 0 else None


def changed_paths(repo: Path, base: str, commit: str) -> list[str]:
    out = git(repo, "diff", "--name-only", "--no-renames", "-z", base, commit)
    return [name for name in out.split("\0") if name]


def merge_file(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """``git merge-file`` (the line stage): merged bytes, or ``None`` on a conflict."""
    with tempfile.TemporaryDirectory(prefix="fleet-merge-") as tmp:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_bytes(data)
            paths.append(str(p))
        proc = run(tmp, "merge-file", "-p", *paths)
        if proc.returncode < 0 or proc.returncode >= 128:
            raise GitError(f"git merge-file failed: {_decode(proc.stderr)}")
        return proc.stdout if proc.returncode == 0 else None


def add_note(repo: Path, ref: str, commit: str, message: str) -> None:
    """Append ``message`` to the note of ``commit`` under the notes ``ref``."""
    git(repo, "notes", f"--ref={ref}", "append", "-m", message, commit)


def notes(repo: Path, ref: str) -> list[tuple[str, str]]:
    """``(commit, note text)`` of every note under ``ref`` (none when the ref does not exist)."""
    listed = run(repo, "notes", f"--ref={ref}", "list")
    if listed.returncode != 0:
        return []
    out: list[tuple[str, str]] = []
    for line in _decode(listed.stdout).splitlines():
        blob, _, commit = line.partition(" ")
        if commit:
            out.append((commit, git(repo, "cat-file", "blob", blob)))
    return out
