"""Ends what a test process started when that process dies without cleaning up.

A session fixture's finalizer does not run when pytest (or an xdist worker) is killed or
interrupted hard: Ctrl-C in ``make test`` left the workers' throwaway PostgreSQL servers and the
distributed tests' celery workers running, parented to init. ``reap_with_owner`` starts a small
detached watcher (this file run as a script, nothing imported from the tests) that holds a pidfd
on the owner (the calling process) and one on the target: when the target ends first it exits;
when the owner ends first it signals the target (its process group when asked), waits for it and
removes a directory. The pidfds make it safe against PID reuse: a target that ended is never
signalled by number. A normal teardown calls ``Reaper.cancel()``.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["Reaper", "reap_with_owner"]


class Reaper:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def cancel(self) -> None:
        """The owner cleans up itself: end the watcher."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def reap_with_owner(target_pid: int, sig: int = signal.SIGKILL, group: bool = False,
                    remove: Path | None = None) -> Reaper:
    """Watch this process: if it ends while ``target_pid`` still runs, send ``sig`` to the
    target (to its process group with ``group``), wait up to 30 s for it, then remove
    ``remove``."""
    argv = [sys.executable, "-S", __file__, str(os.getpid()), str(target_pid), str(int(sig)),
            "1" if group else "0", str(remove or "")]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    return Reaper(proc)


def _watch(owner_pid: int, target_pid: int, sig: int, group: bool, remove: str) -> None:
    try:
        owner = os.pidfd_open(owner_pid)
        target = os.pidfd_open(target_pid)
    except ProcessLookupError:
        return
    ready, _, _ = select.select([owner, target], [], [])
    if target in ready:
        return  # the target ended first: nothing to do
    if select.select([target], [], [], 0)[0]:
        return  # it ended meanwhile
    try:
        if group:
            os.killpg(target_pid, sig)  # (the leader still runs: its group id is its own)
        else:
            signal.pidfd_send_signal(target, sig)
    except ProcessLookupError:
        pass
    select.select([target], [], [], 30.0)
    if remove:
        time.sleep(0.2)
        shutil.rmtree(remove, ignore_errors=True)


if __name__ == "__main__":
    _watch(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1",
           sys.argv[5])
