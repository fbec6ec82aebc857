"""The ``Sandbox`` protocol and its value types."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["EndReason", "ExecResult", "Limits", "ProbeResult", "Sandbox"]


class EndReason(enum.StrEnum):
    EXITED = "exited"
    TIMEOUT = "timeout"
    KILLED_BY_LIMIT = "killed_by_limit"


@dataclass(frozen=True)
class Limits:
    """Resource limits for one command; ``None`` means the backend's default (no limit for
    ``disk_bytes``). ``disk_bytes`` bounds everything the command writes into its worktree
    (``sandbox._quota``: a size-limited overlay, where the backend can mount one); ``file_bytes``
    each single file."""

    wall_s: float | None = None
    cpu_s: float | None = None
    memory_bytes: int | None = 2 * 1024**3
    processes: int | None = 256
    output_bytes: int | None = 1024**2
    file_bytes: int | None = 256 * 1024**2
    disk_bytes: int | None = 1024**3


@dataclass(frozen=True)
class ExecResult:
    """What one command did. ``stdout``/``stderr`` are truncated with a marker past the cap."""

    exit_code: int
    stdout: str
    stderr: str
    wall_s: float
    peak_memory_bytes: int | None
    reason: EndReason
    backend: str
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.reason is EndReason.EXITED and self.exit_code == 0


@runtime_checkable
class Sandbox(Protocol):
    """Runs one command in isolation.

    Contract: no network; no host credentials (the environment is exactly ``env``); the only
    writable paths are ``workdir`` and a private tmp; nothing the command started is left running
    when ``run`` returns. Raises ``OSError``-derived errors only for infrastructure faults (the
    backend's binary vanished); a command that fails, times out or hits a limit is an
    ``ExecResult`` with the matching ``reason``.
    """

    name: str

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        limits: Limits | None = None,
    ) -> ExecResult:
        """Run ``argv`` with ``cwd`` (the worktree, shared read-write) as its working dir."""
        ...


@dataclass(frozen=True)
class ProbeResult:
    """Whether a backend works on this machine, why, and how long one ``true`` took in it."""

    backend: str
    available: bool
    detail: str
    start_latency_s: float | None = None
    strength: int = 0
