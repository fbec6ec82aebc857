"""Process groups fleet starts for an instance (a daemon, a code server): signal, stop, and
tell a live process of a name from a reused pid or a zombie."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

__all__ = ["alive", "die_with_parent", "is_process", "signal_group", "stop_group", "zombie"]


def stop_group(pid: int, grace_s: float = 5.0) -> None:
    """SIGTERM to the process group ``pid``, SIGKILL after ``grace_s``."""
    signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while alive(pid) and not zombie(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    signal_group(pid, signal.SIGKILL)


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def die_with_parent() -> None:
    """In the child: SIGTERM when the thread that started it ends, so a killed sweep or server
    leaves no daemon behind (another fleet process using it then starts its own)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)


def is_process(pid: int, name: bytes) -> bool:
    """``pid`` is a live process whose command line holds ``name``."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return name in cmdline and not zombie(pid)


def zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
