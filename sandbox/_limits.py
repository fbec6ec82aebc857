"""Resource limits for a host process tree: cgroups written directly, rlimits as the fallback.

There is no systemd here, so the groups are created by hand: cgroup v1 (memory nested under the
process's own memory group, pids, cpuacct) or v2 (a child of the process's own group when the
controllers are delegated; the v2 branch is tested inside the microVM guest, a real v2 kernel,
since this host binds every controller to v1). A process joins them before it execs the
sandbox, through a tiny ``/bin/sh`` prelude that also sets the rlimits (``ulimit``), so no
``preexec_fn`` runs in a threaded parent. As root without cgroups, ``_run_uid`` supplies the
process limit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import Popen, TimeoutExpired

from sandbox._process import signal_tree
from sandbox._protocol import Limits
from sandbox._run_uid import RunUid

__all__ = ["CGROUP_ROOT", "STALE_AFTER_S", "CgroupSet", "create_cgroups", "prelude", "tree_killer"]

CGROUP_ROOT = Path("/sys/fs/cgroup")
_PRELUDE = (
    'for f; do shift; [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done; {ulimits}exec "$@"'
)


def _own_paths() -> dict[str, str]:
    """Controller -> this process's cgroup path, from /proc/self/cgroup ("" key = v2)."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _read_kv(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class CgroupSet:
    """The cgroups of one run. ``procs_files`` are what the prelude writes its pid into."""

    version: int
    dirs: dict[str, Path] = field(default_factory=dict)
    cpu_limit_ns: int | None = None

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def _file(self, controller: str, name: str) -> Path | None:
        d = self.dirs.get("unified" if self.version == 2 else controller)
        return None if d is None else d / name

    def pids_limit_hit(self) -> bool:
        f = self._file("pids", "pids.events")
        return f is not None and _read_kv(f, "max") > 0

    def cpu_exceeded(self) -> bool:
        if self.cpu_limit_ns is None:
            return False
        if self.version == 1:
            f = self._file("cpuacct", "cpuacct.usage")
            used = None if f is None else _read_int(f)
        else:
            f = self._file("cpu", "cpu.stat")
            used = None if f is None else _read_kv(f, "usage_usec") * 1000
        return used is not None and used > self.cpu_limit_ns

    def limit_hit(self) -> bool:
        return self.pids_limit_hit() or self.cpu_exceeded()

    def oom_killed(self) -> bool:
        if self.version == 1:
            f = self._file("memory", "memory.oom_control")
            return f is not None and _read_kv(f, "oom_kill") > 0
        f = self._file("memory", "memory.events")
        return f is not None and _read_kv(f, "oom_kill") > 0

    def peak_memory(self) -> int | None:
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        f = self._file("memory", name)
        return None if f is None else _read_int(f)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        return found

    def kill_all(self, exclude: int | None = None) -> None:
        """SIGKILL every process in the groups but ``exclude`` until none is left (forks race
        the loop)."""
        if self.version == 2 and "unified" in self.dirs and exclude is None:
            kill_file = self.dirs["unified"] / "cgroup.kill"
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1")
        for _ in range(200):
            pids = self.pids() - {exclude}
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs.values():
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)  # zombies still leaving the group


_swept: set[Path] = set()
STALE_AFTER_S = 600


def _sweep_stale(parent: Path) -> None:
    """Remove groups left by runs whose process died before its cleanup (once per parent).

    ``rmdir`` refuses a group that still holds a process, so only empty, old ones go.
    """
    if parent in _swept:
        return
    _swept.add(parent)
    now = time.time()
    for old in parent.glob("fleet-sandbox-*"):
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > STALE_AFTER_S:
                old.rmdir()


def _mkgroup(parent: Path, name: str) -> Path | None:
    _sweep_stale(parent)
    try:
        d = parent / name
        d.mkdir()
        return d
    except OSError:
        return None


def create_cgroups(limits: Limits) -> CgroupSet | None:
    """Create the groups for one run and write the limits; ``None`` if cgroups are not usable."""
    name = f"fleet-sandbox-{uuid.uuid4().hex[:12]}"
    own = _own_paths()
    unified = CGROUP_ROOT / "cgroup.controllers"
    if unified.exists():
        return _create_v2(limits, name, own.get("", "/"))
    group = CgroupSet(version=1)
    for controller in ("memory", "pids", "cpuacct"):
        mount = CGROUP_ROOT / controller
        if not (mount / "cgroup.procs").exists():
            continue
        parent = mount / own.get(controller, "/").lstrip("/")
        d = _mkgroup(parent, name)
        if d is not None:
            group.dirs[controller] = d
    if "memory" not in group.dirs or "pids" not in group.dirs:
        group.remove()
        return None
    try:
        if limits.memory_bytes is not None:
            (group.dirs["memory"] / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
            memsw = group.dirs["memory"] / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                memsw.write_text(str(limits.memory_bytes))
        if limits.processes is not None:
            (group.dirs["pids"] / "pids.max").write_text(str(limits.processes))
    except OSError:
        group.remove()
        return None
    if limits.cpu_s is not None and "cpuacct" in group.dirs:
        group.cpu_limit_ns = int(limits.cpu_s * 1e9)
    return group


def _create_v2(limits: Limits, name: str, own: str) -> CgroupSet | None:
    parent = CGROUP_ROOT / own.lstrip("/")
    try:
        delegated = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError:
        return None
    if not {"memory", "pids"} <= delegated:
        return None
    d = _mkgroup(parent, name)
    if d is None:
        return None
    group = CgroupSet(version=2, dirs={"unified": d})
    try:
        if limits.memory_bytes is not None:
            (d / "memory.max").write_text(str(limits.memory_bytes))
            with contextlib.suppress(OSError):
                (d / "memory.swap.max").write_text("0")
        if limits.processes is not None:
            (d / "pids.max").write_text(str(limits.processes))
    except OSError:
        group.remove()
        return None
    group.cpu_limit_ns = None if limits.cpu_s is None else int(limits.cpu_s * 1e9)
    return group


def prelude(
    limits: Limits, group: CgroupSet | None, *, rlimits: bool = True, run_uid: RunUid | None = None
) -> list[str]:
    """``/bin/sh`` argv that joins ``group``, sets rlimits, then execs the argv appended to it.

    Without cgroups the rlimits carry the memory (address space) and process limits too.
    ``rlimits=False`` for backends whose host processes are the sandbox machinery itself (runsc,
    qemu) and that apply the rlimits inside. RLIMIT_NPROC is useless for host root (the kernel
    exempts uid 0, even mapped into a user namespace), so as root without cgroups the command
    runs as a per-run uid (``run_uid``, see ``_run_uid``) that the limit does bind.
    """
    ulimits: list[str] = []
    if rlimits:
        if limits.cpu_s is not None:
            # soft limit -> SIGXCPU (reported as a limit); hard limit one second later -> SIGKILL
            soft = max(1, int(limits.cpu_s + 0.999))
            ulimits.append(f"ulimit -t {soft + 1} && ulimit -S -t {soft}")
        if limits.file_bytes is not None:
            ulimits.append(f"ulimit -f {max(1, limits.file_bytes // 512)}")
    if group is None and rlimits:
        if limits.memory_bytes is not None:
            ulimits.append(f"ulimit -v {max(1, limits.memory_bytes // 1024)}")
        if limits.processes is not None and (os.getuid() != 0 or run_uid is not None):
            ulimits.append(f"ulimit -p {limits.processes}")
    text = "".join(f"{u} || exit 125; " for u in ulimits)
    files = [] if group is None else group.procs_files
    return ["/bin/sh", "-c", _PRELUDE.format(ulimits=text), "sh", *files, "--"]


def tree_killer(
    group: CgroupSet | None, run_uid: RunUid | None = None
) -> Callable[[Popen[bytes]], None]:
    """Kill the process group of the run and, with cgroups, every process in its groups (with a
    run uid, every process of that uid)."""

    def kill(proc: Popen[bytes]) -> None:
        if run_uid is not None and proc.poll() is None:
            # The uid's processes first, while our child (unshare, bwrap) lives to reap them.
            run_uid.kill_all()
            with contextlib.suppress(TimeoutExpired):
                proc.wait(timeout=0.2)
        if group is not None and proc.poll() is None:
            # Children first, so the direct child (bwrap's monitor, runsc) reaps them: killed
            # first, its orphans would go to PID 1, which does not reap them on every machine.
            group.kill_all(exclude=proc.pid)
            with contextlib.suppress(TimeoutExpired):
                proc.wait(timeout=0.2)
        signal_tree(proc)
        if group is not None:
            group.kill_all()
        if run_uid is not None:
            run_uid.kill_all()

    return kill
