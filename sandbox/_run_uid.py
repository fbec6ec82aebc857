"""A process limit for root without cgroups: run the command as a fresh, unprivileged host uid.

The kernel ignores RLIMIT_NPROC for uid 0 (and for CAP_SYS_RESOURCE/CAP_SYS_ADMIN), even when
root is mapped to another uid inside a user namespace. So when the sandbox runs as root and no
cgroup can hold the run, the command is started through ``setpriv`` as a uid of its own (random,
in a range no account uses), with RLIMIT_NPROC set: the kernel then refuses the fork past the
limit for that uid, whatever the command does. The command keeps only CAP_DAC_OVERRIDE and
CAP_FOWNER (ambient), so it can still edit the worktree's root-owned files; everything else it
sees is read-only or private tmpfs in bwrap. Files it creates are chowned back to the worktree's
owner after the run. Being at the limit is observed by counting the uid's tasks (every process of
that uid is this run's), and ``kill_all`` kills them all by uid.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox._protocol import Limits

UID_FIRST, UID_SPAN = 2_000_000_000, 100_000_000
KEPT_CAPS = ("dac_override", "fowner")
BWRAP_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_OVERRIDE", "CAP_FOWNER")


@dataclass(frozen=True)
class RunUid:
    """The uid one run's command runs as, and its process (task) limit."""

    uid: int
    limit: int
    setpriv: str

    def setpriv_argv(self) -> list[str]:
        """Prefix for the command: become ``uid`` keeping only ``KEPT_CAPS`` (ambient)."""
        caps = ",".join(f"+{c}" for c in KEPT_CAPS)
        return [
            self.setpriv, f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
            f"--inh-caps=-all,{caps}", f"--ambient-caps={caps}", f"--bounding-set=-all,{caps}",
            "--",
        ]  # fmt: skip

    def _pids(self, *, zombies: bool = False) -> list[int]:
        """Processes of the uid; zombies too if asked (they still count for RLIMIT_NPROC)."""
        found = []
        with contextlib.suppress(OSError):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    with contextlib.suppress(OSError, IndexError):
                        if entry.stat().st_uid != self.uid:
                            continue
                        stat = Path(entry.path, "stat").read_text()
                        if zombies or stat.rsplit(")", 1)[1].split()[0] != "Z":
                            found.append(int(entry.name))
        return found

    def tasks(self) -> int:
        """Threads of every process of the uid: what RLIMIT_NPROC counts."""
        total = 0
        for pid in self._pids(zombies=True):
            with contextlib.suppress(OSError, ValueError, IndexError):
                status = Path(f"/proc/{pid}/status").read_text()
                total += int(status.split("\nThreads:", 1)[1].split()[0])
        return total

    def limit_hit(self) -> bool:
        return self.tasks() >= self.limit

    def kill_all(self) -> None:
        """SIGKILL every process of the uid until none is left.

        Killing pid by pid races a fork bomb (each kill frees a slot for a new fork), so a
        helper running as the uid calls ``kill(-1, SIGKILL)``: the kernel signals every process
        of the uid in one pass under the task list lock, which no fork can slip past.
        """
        for _ in range(50):
            if not self._pids():
                return
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(
                    ["/bin/sh", "-c", "kill -KILL -1"], user=self.uid, group=self.uid,
                    extra_groups=[], env={"PATH": "/usr/bin:/bin"}, timeout=10,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
            for pid in self._pids():  # and by pid, should the helper not have run
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def local_argv(self, argv: Sequence[str]) -> list[str]:
        """For ``LocalSandbox``: ``argv`` as the uid, in a fresh pid namespace whose init (a
        shell waiting for the command) reaps orphans.

        Without it a fork bomb's orphans would go to the host's PID 1, which does not reap on
        every machine (it does not here). When the command ends, the shell exits with its status
        and the kernel kills and reaps whatever the namespace still holds. (bwrap has its own
        pid namespace.)
        """
        unshare = shutil.which("unshare", path="/usr/bin:/bin")
        if unshare is None:
            return [*self.setpriv_argv(), *argv]
        waiter = ["/bin/sh", "-c", '"$@" & wait $!', "sh"]
        return [unshare, "--pid", "--fork", "--kill-child", "--", *self.setpriv_argv(), *waiter,
                *argv]  # fmt: skip

    def restore_owner(self, root: Path) -> None:
        """Give what the command created under ``root`` back to the owner of ``root``."""
        try:
            owner = os.stat(root)
        except OSError:
            return
        for dirpath, dirnames, filenames in os.walk(root):
            for name in (*dirnames, *filenames):
                path = os.path.join(dirpath, name)
                with contextlib.suppress(OSError):
                    if os.lstat(path).st_uid == self.uid:
                        os.lchown(path, owner.st_uid, owner.st_gid)


def run_uid_for(limits: Limits, *, enabled: bool = True) -> RunUid | None:
    """A ``RunUid`` when we are root and a process limit is asked for (and setpriv exists)."""
    if not enabled or os.getuid() != 0 or limits.processes is None:
        return None
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
    if setpriv is None:
        return None
    return RunUid(UID_FIRST + random.randrange(UID_SPAN), limits.processes, setpriv)


__all__ = ["BWRAP_CAPS", "RunUid", "run_uid_for"]
