"""The live children of a process, read from /proc: what tests check a process started (or no
longer runs)."""

from __future__ import annotations

import os
from pathlib import Path


def children(parent: int | None = None) -> list[tuple[int, list[str]]]:
    """``(pid, argv)`` of every live (not zombie) child of ``parent`` (default: this
    process)."""
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
        except (OSError, IndexError):
            continue
        if int(stat[1]) == parent and stat[0] != "Z":
            found.append((int(entry.name), argv))
    return found
