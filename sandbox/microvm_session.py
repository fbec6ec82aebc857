"""``MicroVMSession``: one microVM serving many commands over one worktree (one per work unit).

Under TCG a boot costs seconds, so an agent that runs dozens of commands on one unit should boot
once. The session boots the same guest as ``MicroVMSandbox`` with a ``session`` flag; its init
then watches the control share for request directories ``rN/`` (``limits.sh``, ``run.sh``, then
``ready``) and answers each in place (``stdout``, ``stderr``, ``exit``, ``limit``, ``peak``).
Each command gets its own guest cgroup, killed when it returns, so nothing it left running
survives into the next command; its timeout is enforced in the guest (``timeout -s KILL``) and,
should the guest stop answering, on the host by killing the VM (the session is then dead).

It implements the ``Sandbox`` protocol, with one restriction: ``cwd`` must be the session's
worktree or inside it.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from sandbox._common import effective_limits, sandbox_env
from sandbox._guest_image import GuestImageError, guest_image
from sandbox._protocol import EndReason, ExecResult, Limits
from sandbox.microvm import GUEST_OVERHEAD_MB, MicroVMSandbox

__all__ = ["BOOT_TIMEOUT_S", "HOST_GRACE_S", "MicroVMSession"]

BOOT_TIMEOUT_S = 180.0
HOST_GRACE_S = 30.0  # beyond a command's timeout before the host gives up on the guest
_POLL_S = 0.02


class MicroVMSession:
    """A booted microVM over ``worktree``; use as a context manager, then ``run`` commands."""

    name = "microvm"

    def __init__(
        self,
        worktree: Path,
        sandbox: MicroVMSandbox | None = None,
        memory_bytes: int = 2 * 1024**3,
    ) -> None:
        self.box = sandbox or MicroVMSandbox()
        self.worktree = worktree.resolve()
        self.memory_bytes = memory_bytes
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._qemu: subprocess.Popen[bytes] | None = None
        self._console: Path | None = None
        self._next = 0

    @property
    def ctl(self) -> Path:
        assert self._tmp is not None, "the session is not started"
        return Path(self._tmp.name) / "ctl"

    def start(self) -> MicroVMSession:
        """Boot the VM (returns once it is ready to take commands)."""
        if self.box.vmm() != "qemu" or self.box.transport() != "9p":
            raise ValueError("a MicroVMSession needs QEMU with the 9p transport (a live share)")
        self._tmp = tempfile.TemporaryDirectory(prefix="fleet-microvm-session-")
        self.ctl.mkdir()
        (self.ctl / "session").write_text("1\n")
        (self.ctl / "setup.sh").write_text(self.box.mounts_script(self.worktree))
        self._console = Path(self._tmp.name) / "console.log"
        mem_mb = GUEST_OVERHEAD_MB + self.memory_bytes // 1024**2
        argv = self.box.qemu_argv(
            guest_image(), self.box.accelerator(), self.ctl, self.worktree, mem_mb
        )
        with self._console.open("wb") as console:
            self._qemu = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                start_new_session=True, env={"PATH": "/usr/bin:/bin"},
            )  # fmt: skip
        # A first no-op command proves the guest is up and answering.
        first = self.run(["/bin/true"], self.worktree, timeout=BOOT_TIMEOUT_S)
        if not first.ok:
            self.close()
            raise GuestImageError(f"the session's guest did not start: {first.stderr[-500:]}")
        return self

    def __enter__(self) -> MicroVMSession:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        limits: Limits | None = None,
    ) -> ExecResult:
        """Run ``argv`` in the booted guest with ``cwd`` inside the session's worktree."""
        if self._qemu is None or self._qemu.poll() is not None:
            raise GuestImageError(f"the microVM session is not running: {self._console_tail()}")
        work = cwd.resolve()
        if work != self.worktree and not work.is_relative_to(self.worktree):
            raise ValueError(f"{work} is outside the session's worktree {self.worktree}")
        lim, deadline = effective_limits(limits, timeout)
        n, self._next = self._next, self._next + 1
        req = self.ctl / f"r{n}"
        req.mkdir()
        limits_sh, run_sh = self.box.command_scripts(
            argv, work, sandbox_env(env), lim, f"/sys/fs/cgroup/c{n}", timeout=deadline
        )
        (req / "limits.sh").write_text(limits_sh)
        (req / "run.sh").write_text(run_sh)
        start = time.perf_counter()
        (req / "ready").write_text("1\n")
        give_up = None if deadline is None else start + deadline + HOST_GRACE_S
        while not (req / "exit").exists():
            if self._qemu.poll() is not None:
                raise GuestImageError(f"the microVM session died: {self._console_tail()}")
            if give_up is not None and time.perf_counter() > give_up:
                self.close()  # the guest stopped answering: the session cannot go on
                return self._timed_out(time.perf_counter() - start)
            time.sleep(_POLL_S)
        wall = time.perf_counter() - start
        result = self.box._result(False, wall, b"", req, lim)
        if deadline is not None and result.exit_code == 137 and result.reason is EndReason.EXITED:
            # SIGKILL with no limit recorded: timeout(1) fired if the guest clock says so
            elapsed = (req / "elapsed").read_text().strip() if (req / "elapsed").exists() else ""
            if elapsed.isdigit() and int(elapsed) >= max(1, round(deadline)) - 1:
                return _replace_reason(result, EndReason.TIMEOUT)
        return result

    def _timed_out(self, wall: float) -> ExecResult:
        return ExecResult(137, "", "", wall, None, EndReason.TIMEOUT, self.name)

    def _console_tail(self) -> str:
        if self._console is None or not self._console.exists():
            return ""
        return self._console.read_bytes()[-1500:].decode("utf-8", "replace")

    def close(self) -> None:
        """Ask the guest to power off; kill QEMU if it does not within a few seconds."""
        if self._qemu is not None:
            if self._qemu.poll() is None and self._tmp is not None:
                with contextlib.suppress(OSError):
                    (self.ctl / "stop").write_text("1\n")
                try:
                    self._qemu.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self._qemu.kill()
                    self._qemu.wait()
            self._qemu = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _replace_reason(result: ExecResult, reason: EndReason) -> ExecResult:
    from dataclasses import replace

    return replace(result, reason=reason)
