"""Run one host process to completion: capped output, a deadline, and a kill of its whole tree.

Every backend ends in a host process (bwrap, runsc, qemu, or the command itself for ``local``).
This module owns the event loop around it, a single thread with ``selectors`` over the two pipes
and a pidfd, so a run costs no polling latency and no helper threads.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "TRUNCATION_MARKER",
    "RawOutcome",
    "decode",
    "read_capped",
    "run_process",
    "signal_tree",
]

TRUNCATION_MARKER = "\n[... output truncated by the sandbox: {n} byte cap reached ...]\n"
_CHUNK = 65536
_DRAIN_AFTER_EXIT_S = 2.0


@dataclass
class RawOutcome:
    """What the host process did, before a backend maps it to an ``ExecResult``."""

    returncode: int
    stdout: bytes
    stderr: bytes
    wall_s: float
    timed_out: bool = False
    output_limited: bool = False
    limit_hit: bool = False
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


class _Capture:
    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.truncated = False

    def feed(self, data: bytes) -> bool:
        """Keep ``data`` up to the cap; return True once the cap is exceeded."""
        if self.cap is None:
            self.buf += data
            return False
        room = self.cap - len(self.buf)
        if len(data) > room:
            self.buf += data[: max(room, 0)]
            self.truncated = True
            return True
        self.buf += data
        return False

    def text(self) -> bytes:
        if self.truncated:
            return bytes(self.buf) + TRUNCATION_MARKER.format(n=self.cap).encode()
        return bytes(self.buf)


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float | None,
    output_cap: int | None,
    kill_tree: Callable[[subprocess.Popen[bytes]], None],
    limit_check: Callable[[], bool] | None = None,
    check_every_s: float = 0.1,
    stdin: int | None = subprocess.DEVNULL,
    pass_fds: Sequence[int] = (),
) -> RawOutcome:
    """Run ``argv``; stop it at ``timeout`` or when a stream passes ``output_cap`` bytes.

    ``kill_tree`` must kill the process and everything it started; it is called on timeout, on
    an output or resource limit, and once more after a normal exit so nothing outlives the run.
    ``limit_check`` is polled every ``check_every_s`` and returns True when a resource limit was
    hit (e.g. the cgroup's process limit), which ends the run as ``limit_hit``.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    assert proc.stdout is not None and proc.stderr is not None
    captures = {
        proc.stdout.fileno(): _Capture(output_cap),
        proc.stderr.fileno(): _Capture(output_cap),
    }
    outcome = RawOutcome(returncode=0, stdout=b"", stderr=b"", wall_s=0.0)
    pidfd = os.pidfd_open(proc.pid)
    sel = selectors.DefaultSelector()
    try:
        for fd in captures:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        sel.register(pidfd, selectors.EVENT_READ)
        deadline = None if timeout is None else start + timeout
        next_check = start + check_every_s
        exited = False
        drain_deadline: float | None = None
        while True:
            now = time.perf_counter()
            if not exited and deadline is not None and now >= deadline:
                outcome.timed_out = True
                kill_tree(proc)
                deadline = None
            if not exited and limit_check is not None and now >= next_check:
                next_check = now + check_every_s
                if limit_check():
                    outcome.limit_hit = True
                    kill_tree(proc)
                    limit_check = None
            if drain_deadline is not None and now >= drain_deadline:
                outcome.notes.append("output pipes still open after exit; closed them")
                break
            if not sel.get_map():
                break
            waits = [0.5]
            if deadline is not None:
                waits.append(deadline - now)
            if limit_check is not None and not exited:
                waits.append(next_check - now)
            if drain_deadline is not None:
                waits.append(drain_deadline - now)
            for key, _ in sel.select(max(min(waits), 0.0)):
                fd = int(key.fd)
                if fd == pidfd:
                    sel.unregister(pidfd)
                    proc.wait()
                    exited = True
                    # A daemon the command left behind may still hold the pipes: kill it.
                    kill_tree(proc)
                    drain_deadline = time.perf_counter() + _DRAIN_AFTER_EXIT_S
                    continue
                try:
                    data = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
                    continue
                if captures[fd].feed(data) and not outcome.output_limited:
                    outcome.output_limited = True
                    kill_tree(proc)
            if exited and len(sel.get_map()) == 0:
                break
    finally:
        sel.close()
        os.close(pidfd)
        if proc.poll() is None:
            kill_tree(proc)
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    outcome.returncode = proc.returncode
    return _finish(outcome, list(captures.values()), start)


def _finish(outcome: RawOutcome, caps: list[_Capture], start: float) -> RawOutcome:
    outcome.stdout = caps[0].text()
    outcome.stderr = caps[1].text()
    outcome.truncated = caps[0].truncated or caps[1].truncated
    outcome.wall_s = time.perf_counter() - start
    return outcome


def signal_tree(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Signal the process group the process leads (it was started in a new session)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        pass


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def read_capped(path: Path, cap: int | None) -> tuple[str, bool]:
    """The text of a file a guest wrote its output to ("" if it wrote none), cut at ``cap`` bytes
    with the same marker as a captured pipe; and whether it was cut."""
    if not path.exists():
        return "", False
    with path.open("rb") as f:
        data = f.read(cap + 1 if cap is not None else -1)
    if cap is not None and len(data) > cap:
        return decode(data[:cap]) + TRUNCATION_MARKER.format(n=cap), True
    return decode(data), False
