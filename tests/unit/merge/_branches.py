"""Real ``git merge`` set-up shared by the merge-driver tests: ``main`` and a branch that each
changed ``mod.py`` from one base, with a driver line configured for ``*.py``."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["commit_branches", "run_git"]


def run_git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` in ``repo`` with a test identity; the completed process."""
    identity = ["-c", "user.name=fleet test", "-c", "user.email=test@fleet.invalid"]
    return subprocess.run(
        ["git", *identity, *args], cwd=repo, capture_output=True, text=True, check=check
    )


def commit_branches(repo: Path, base: str, ours: str, theirs: str, *, line: str | None,
                    branch: str = "theirs") -> None:
    """Commit ``base`` as ``mod.py``, then ``theirs`` on ``branch`` and ``ours`` on ``main``
    (checked out at the end). ``line``: the ``merge.fleet.driver`` command, or None for git's
    own merge."""
    if line is not None:
        run_git(repo, "config", "merge.fleet.name", "fleet structural merge")
        run_git(repo, "config", "merge.fleet.driver", line)
        (repo / ".gitattributes").write_text("*.py merge=fleet\n")
    (repo / "mod.py").write_text(base)
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", "base")
    run_git(repo, "checkout", "-q", "-b", branch)
    (repo / "mod.py").write_text(theirs)
    run_git(repo, "commit", "-q", "-am", "theirs")
    run_git(repo, "checkout", "-q", "main")
    (repo / "mod.py").write_text(ours)
    run_git(repo, "commit", "-q", "-am", "ours")
