"""Helpers shared by the backends: the sandbox environment and the mapping to ``ExecResult``."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox._limits import CgroupSet
from sandbox._process import RawOutcome, decode
from sandbox._protocol import EndReason, ExecResult, Limits, Sandbox

__all__ = [
    "SANDBOX_HOME",
    "default_path",
    "effective_limits",
    "exit_code_of",
    "find_binary",
    "host_home",
    "sandbox_env",
    "timed_probe_run",
    "to_result",
    "toolchain_dirs",
    "via_shell",
]

SANDBOX_HOME = "/home/sandbox"
_LIMIT_SIGNALS = {signal.SIGXCPU, signal.SIGXFSZ}


def toolchain_dirs() -> list[Path]:
    """The directories of the running interpreter (venv and base prefix), shared read-only; and
    those of ``$FLEET_TEST_PYTHON`` (the target's own environment its tests run with: its venv
    directory and its real interpreter's prefix)."""
    raws = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    target = os.environ.get("FLEET_TEST_PYTHON")
    if target:
        raws += [str(Path(target).absolute().parent.parent),
                 str(Path(target).resolve().parent.parent)]
    dirs: list[Path] = []
    for raw in raws:
        p = Path(raw).resolve()
        if not any(p == d or p.is_relative_to(d) for d in dirs):
            dirs = [d for d in dirs if not d.is_relative_to(p)] + [p]
    return dirs


def default_path() -> str:
    venv_bin = str(Path(sys.prefix) / "bin")
    base_bin = str(Path(sys.base_prefix).resolve() / "bin")
    parts = [venv_bin, base_bin, "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    return ":".join(dict.fromkeys(parts))


def sandbox_env(env: Mapping[str, str] | None, home: str = SANDBOX_HOME) -> dict[str, str]:
    """Exactly ``env`` plus PATH/HOME/LANG/TMPDIR defaults where ``env`` does not set them."""
    base = {"PATH": default_path(), "HOME": home, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
    base.update(env or {})
    return base


def via_shell(argv: Sequence[str]) -> list[str]:
    """``argv`` exec'd by ``/bin/sh`` inside the sandbox, so that a missing command exits 127
    and a non-executable one 126 (the shell convention) instead of the launcher's own code."""
    return ["/bin/sh", "-c", 'exec "$@"', "sh", *argv]


def exit_code_of(returncode: int) -> int:
    """Shell convention: a process killed by signal N exits with 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def to_result(
    raw: RawOutcome,
    *,
    backend: str,
    group: CgroupSet | None = None,
    limit_exit: bool = False,
) -> ExecResult:
    """Map a host process outcome to an ``ExecResult`` with the reason it ended."""
    code = exit_code_of(raw.returncode)
    oom = group is not None and (
        group.oom_killed() or group.pids_limit_hit() or group.cpu_exceeded()
    )
    signalled = code - 128 if code > 128 else 0
    if raw.timed_out:
        reason = EndReason.TIMEOUT
    elif raw.output_limited or raw.limit_hit or oom or limit_exit or signalled in _LIMIT_SIGNALS:
        reason = EndReason.KILLED_BY_LIMIT
    else:
        reason = EndReason.EXITED
    return ExecResult(
        exit_code=code,
        stdout=decode(raw.stdout),
        stderr=decode(raw.stderr),
        wall_s=raw.wall_s,
        peak_memory_bytes=group.peak_memory() if group is not None else None,
        reason=reason,
        backend=backend,
        truncated=raw.truncated,
    )


def effective_limits(limits: Limits | None, timeout: float | None) -> tuple[Limits, float | None]:
    """Resolve the limits and the wall-clock deadline (the smaller of timeout and wall_s).

    Every backend calls this before it starts anything, so a ``timeout`` or ``limits.wall_s``
    that is zero, negative or NaN is refused here with ``ValueError`` naming the argument (a
    deadline that has already passed would otherwise report ``timeout`` with exit code 0)."""
    lim = limits or Limits()
    for name, value in (("timeout", timeout), ("limits.wall_s", lim.wall_s)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    walls = [t for t in (timeout, lim.wall_s) if t is not None]
    return lim, (min(walls) if walls else None)


def host_home() -> Path:
    return Path(os.path.expanduser("~")).resolve()


def find_binary(binary: str, apt_package: str) -> str:
    """The absolute path of a backend's binary, or ``FileNotFoundError`` naming what to install."""
    found = shutil.which(binary)
    if found is None:
        raise FileNotFoundError(f"{binary} not found: apt-get install {apt_package}")
    return found


def timed_probe_run(
    sandbox: Sandbox, argv: Sequence[str], timeout: float
) -> tuple[ExecResult, float]:
    """Run ``argv`` once in a throw-away work dir: the probe's check, and its start latency."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fleet-probe-") as work:
        result = sandbox.run(list(argv), Path(work), timeout=timeout)
    return result, time.perf_counter() - start
