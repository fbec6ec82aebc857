"""Small git helpers for integration: a scratch worktree and three-way file merges."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from fleet.errors import GitError

IDENTITY = {
    "GIT_AUTHOR_NAME": "fleet",
    "GIT_AUTHOR_EMAIL": "fleet@fleet.invalid",
    "GIT_COMMITTER_NAME": "fleet",
    "GIT_COMMITTER_EMAIL": "fleet@fleet.invalid",
}


def git(cwd: Path, *args: str, check: bool = True, input: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **IDENTITY},
                          capture_output=True, input=input, check=False)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} in {cwd}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode(errors="replace")


def show(repo: Path, commit: str, path: str) -> bytes | None:
    """The content of ``path`` at ``commit``, or ``None`` when it does not exist there."""
    proc = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True,
                          check=False)
    return proc.stdout if proc.returncode == 0 else None


def changed_paths(repo: Path, base: str, commit: str) -> list[str]:
    out = git(repo, "diff", "--name-only", "--no-renames", base, commit)
    return [line for line in out.splitlines() if line]


def merge_file(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """``git merge-file`` (the line stage): merged bytes, or ``None`` on a conflict."""
    with tempfile.TemporaryDirectory(prefix="fleet-merge-") as tmp:
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_bytes(data)
            paths.append(str(p))
        proc = subprocess.run(["git", "merge-file", "-p", *paths], capture_output=True,
                              check=False)
        if proc.returncode < 0 or proc.returncode >= 128:
            raise GitError(f"git merge-file failed: {proc.stderr.decode(errors='replace')}")
        return proc.stdout if proc.returncode == 0 else None
