"""The one way fleet runs git: a subprocess with fleet's identity, errors as ``GitError``.

Every fleet commit (a unit's patch, an integration commit, a rollback, the demo repository) is
made as :data:`IDENTITY`, so no commit depends on the machine's ``user.name``/``user.email``.
Output is decoded with ``surrogateescape``: a path or a diff in a legacy encoding keeps its bytes.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from fleet.errors import GitError

__all__ = [
    "IDENTITY",
    "add_note",
    "changed_paths",
    "git",
    "merge_file",
    "notes",
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
    cwd: str | Path, *args: str, input: bytes | None = None, check: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """``git *args`` in ``cwd`` as fleet; raw bytes out. ``check``: a non-zero exit raises
    ``GitError`` naming the command, the directory and git's message."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=_env(), input=input, capture_output=True, check=False
    )
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} in {cwd}: {_decode(proc.stderr).strip()}")
    return proc


def git(cwd: str | Path, *args: str, check: bool = True, input: bytes | None = None) -> str:
    """``git *args`` in ``cwd``; its standard output (``GitError`` on failure unless
    ``check=False``)."""
    return _decode(run(cwd, *args, input=input, check=check).stdout)


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
