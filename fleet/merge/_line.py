"""Stage 1, the line merge: ``git merge-file -p --diff3``.

Calling git itself (~2-4 ms) keeps every clean result identical to git's by construction; an
in-process diff3 would have to reproduce xdiff's matching heuristics exactly to promise that.
The merge driver hands git the files git gave it; ``merge3`` writes its texts to a private
temporary directory (made with ``os`` alone: ``tempfile`` costs the driver's start-up more than
the merge).

It runs git itself rather than through ``fleet.forge._git``: importing that module loads 46
modules (``fleet.forge``'s package, ``fleet.types``, ``tempfile``, ``pathlib``...) against 20
here, and its ``merge_file`` has neither ``--diff3``, the labels nor the conflict text this stage
returns. The driver's clean path does not import this module at all (``driver._git_in_place``).
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

from fleet.errors import GitError

if TYPE_CHECKING:  # the driver's clean path needs none of it (dataclasses costs its start-up)
    from fleet.merge._result import MergeResult

__all__ = [
    "LABELS",
    "as_result",
    "decode",
    "encode",
    "git_merge_file_bytes",
    "git_merge_file_paths",
    "line_merge",
]

LABELS = ("ours", "base", "theirs")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def git_merge_file_paths(base: str, ours: str, theirs: str) -> tuple[bytes, int]:
    """Run ``git merge-file -p --diff3`` on three files (none is modified); return (merged
    bytes, number of conflicts). Raises :class:`GitError` when git cannot run or fails."""
    command = ["git", "merge-file", "-p", "--diff3"]
    for label in LABELS:
        command += ["-L", label]
    try:
        proc = subprocess.run([*command, ours, base, theirs], capture_output=True, check=False)
    except OSError as exc:
        raise GitError(f"{' '.join(command)}: {exc}") from exc
    if proc.returncode < 0 or proc.returncode > 127:
        raise GitError(f"{' '.join(command)} exited {proc.returncode}: {decode(proc.stderr)}")
    return proc.stdout, proc.returncode


def _private_dir() -> str:
    root = os.environ.get("TMPDIR") or "/tmp"
    for _ in range(100):
        path = os.path.join(root, f"fleet-merge-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path
    raise GitError(f"cannot create a temporary directory under {root}")


def git_merge_file_bytes(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int]:
    """``git merge-file -p --diff3`` of three byte strings; see :func:`git_merge_file_paths`."""
    folder = _private_dir()
    paths = [os.path.join(folder, name) for name in ("base", "ours", "theirs")]
    try:
        for path, data in zip(paths, (base, ours, theirs), strict=True):
            with open(path, "wb") as handle:
                handle.write(data)
        return git_merge_file_paths(*paths)
    except OSError as exc:
        raise GitError(f"cannot write the merge's temporary files: {exc}") from exc
    finally:
        for path in paths:
            if os.path.exists(path):
                os.remove(path)
        os.rmdir(folder)


def as_result(merged: bytes, conflicts: int) -> MergeResult:
    """git's output as a ``Clean | Conflicted`` value (stage ``line``)."""
    from fleet.merge._result import Clean, Conflicted, parse_conflicts

    text = decode(merged)
    if conflicts == 0:
        return Clean(text, stage="line")
    return Conflicted(text, parse_conflicts(text), stage="line")


def line_merge(base: str, ours: str, theirs: str) -> MergeResult:
    """The git line merge of three texts as a ``Clean | Conflicted`` value (stage ``line``)."""
    return as_result(*git_merge_file_bytes(encode(base), encode(ours), encode(theirs)))
