"""``GVisorSandbox``: ``runsc --network=none run --bundle`` with a generated OCI bundle.

The bundle's root is an empty read-only directory; the command sees the system directories bound
read-only (``/etc`` with its secret files masked), the interpreter's toolchain read-only, tmpfs
``/tmp`` and ``/home/sandbox``, and the worktree read-write at its host path. gVisor's own kernel
(the sentry) serves every syscall, so the host kernel is not the attack surface; the command runs
as the host user id with no capabilities. The runsc processes run inside this run's cgroups
(memory, cpu accounting), and the OCI config carries the rlimits and resources. The process
limit holds inside: the sentry enforces ``RLIMIT_NPROC`` on its tasks, and a watcher inside
reports reaching it (the host's pids cgroup bounds runsc's own host tasks as a backstop).

Known limit of the packaged runsc (2022-12): ``statx`` fails with EINVAL on bind mounts, so GNU
``ls -l``/``stat`` print "Invalid argument" there; Python, git and pytest use ``stat`` and work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox._common import (
    SANDBOX_HOME,
    effective_limits,
    find_binary,
    sandbox_env,
    timed_probe_run,
    to_result,
    toolchain_dirs,
    via_shell,
)
from sandbox._limits import CgroupSet, create_cgroups, prelude
from sandbox._process import run_process, signal_tree
from sandbox._protocol import ExecResult, Limits, ProbeResult
from sandbox._quota import disk_quota, doctor_note
from sandbox.bwrap import SECRET_PATHS, SYSTEM_DIRS

__all__ = [
    "HOST_TASKS_PER_PROCESS",
    "HOST_THREADS",
    "LIMIT_MARK",
    "RUNSC_TASKS",
    "STATX_WARNING",
    "STATX_WARNING_TAG",
    "GVisorConfig",
    "GVisorSandbox",
]

HOST_THREADS = 8192
RUNSC_TASKS = 128
HOST_TASKS_PER_PROCESS = 20


@dataclass
class GVisorConfig:
    """``readonly_paths``: extra host paths shared read-only (default: the interpreter's)."""

    binary: str = "runsc"
    readonly_paths: list[Path] = field(default_factory=toolchain_dirs)
    state_dir: Path = field(
        default_factory=lambda: Path(tempfile.gettempdir()) / f"fleet-runsc-{os.getuid()}"
    )
    platform: str | None = None  # runsc's default (ptrace on this runsc; systrap on newer)
    use_cgroups: bool = True


def _bind(src: str, dst: str, *, ro: bool) -> dict[str, Any]:
    return {
        "destination": dst,
        "type": "bind",
        "source": src,
        "options": ["rbind", "ro" if ro else "rw", "nosuid", "nodev"],
    }


def _tmpfs(dst: str, mode: str = "1777") -> dict[str, Any]:
    return {
        "destination": dst,
        "type": "tmpfs",
        "source": "tmpfs",
        "options": ["nosuid", "nodev", f"mode={mode}"],
    }


LIMIT_MARK = "fleet-sandbox: the process limit was reached"
# The container's init when there is a process limit: it runs the command as its child, reaps
# every orphan, and counts the sandbox's processes (sentry tasks, as /proc inside shows them)
# without forking; at the limit it says so on stderr and kills them all, so the run ends as
# killed_by_limit the way the pids cgroup ends it on the other backends.
_WATCH = (
    "import os, signal, sys, time\n"
    "limit, argv = int(sys.argv[1]), sys.argv[2:]\n"
    "main = os.fork()\n"
    "if main == 0:\n"
    "    for sig in (signal.SIGPIPE, signal.SIGXFSZ):\n"  # Python ignores them; a command not
    "        signal.signal(sig, signal.SIG_DFL)\n"  # (ignored signals survive exec)
    "    os.execv(argv[0], argv)\n"
    "def done(code):\n"
    "    try:\n"
    "        os.kill(-1, signal.SIGKILL)\n"
    "    except ProcessLookupError:\n"
    "        pass\n"
    "    os._exit(code)\n"
    "while True:\n"
    "    try:\n"
    "        while True:\n"
    "            pid, status = os.waitpid(-1, os.WNOHANG)\n"
    "            if pid == 0:\n"
    "                break\n"
    "            if pid == main:\n"
    "                code = os.waitstatus_to_exitcode(status)\n"
    "                done(128 - code if code < 0 else code)\n"
    "    except ChildProcessError:\n"
    "        pass\n"
    "    if sum(1 for e in os.scandir('/proc') if e.name.isdigit()) - 1 >= limit:\n"
    f"        os.write(2, b'\\n{LIMIT_MARK}\\n')\n"
    "        done(128 + signal.SIGKILL)\n"
    "    time.sleep(0.02)\n"
)

STATX_WARNING_TAG = "no-statx-no-automount"
STATX_WARNING = (
    "this runsc rejects statx(AT_NO_AUTOMOUNT): coreutils ls/stat fail inside "
    "(Python, git and pytest work); a newer runsc fixes it"
)
_STATX_CHECK = f"stat / >/dev/null 2>&1 || echo {STATX_WARNING_TAG}; true"


class GVisorSandbox:
    """Runs each command in a fresh gVisor container (see the module docstring)."""

    name = "gvisor"
    strength = 20

    def __init__(self, config: GVisorConfig | None = None) -> None:
        self.config = config or GVisorConfig()

    def _binary(self) -> str:
        return find_binary(self.config.binary, "runsc")

    def _watcher(self) -> str | None:
        """The interpreter that runs the process-limit watcher inside, if the sandbox sees it."""
        exe = Path(sys.executable).resolve()
        visible = any(exe.is_relative_to(ro) for ro in self.config.readonly_paths)
        return str(exe) if visible or any(exe.is_relative_to(d) for d in SYSTEM_DIRS) else None

    def oci_config(
        self,
        bundle: Path,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        lim: Limits,
        source: Path | None = None,
    ) -> dict[str, Any]:
        """The OCI runtime config for one command; creates the bundle's empty rootfs. With a
        process limit, a watcher is the container's init: it ends the run, saying so on stderr,
        when the sandbox's processes reach the limit. ``source``: what is bound at the
        worktree's path (the disk quota's overlay of it; default the worktree)."""
        rootfs = bundle / "rootfs"
        rootfs.mkdir()
        watcher = self._watcher() if lim.processes is not None else None
        watch = watcher is not None
        if watch:
            # one line of argv (exec of the repr), as the command's own ps would show it
            argv = [str(watcher), "-I", "-S", "-c", f"exec({_WATCH!r})", str(lim.processes), *argv]
        empty = bundle / "empty"
        empty.write_text("")
        mounts: list[dict[str, Any]] = [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            _tmpfs("/tmp"),
            _tmpfs(SANDBOX_HOME),
        ]
        for d in SYSTEM_DIRS:
            p = Path(d)
            if p.is_symlink():
                (rootfs / d.lstrip("/")).symlink_to(p.readlink())
            elif p.is_dir():
                mounts.append(_bind(d, d, ro=True))
        for secret in SECRET_PATHS:
            p = Path(secret)
            if p.is_dir() and not p.is_symlink():
                mounts.append(_tmpfs(secret, "0755"))
            elif p.exists():
                mounts.append(_bind(str(empty), secret, ro=True))
        for ro in self.config.readonly_paths:
            if ro.exists():
                mounts.append(_bind(str(ro), str(ro), ro=True))
        work = str(cwd.resolve())
        mounts.append(_bind(str(source or work), work, ro=False))
        for m in mounts:
            if m["type"] == "bind":
                (rootfs / m["destination"].lstrip("/")).mkdir(parents=True, exist_ok=True)
        rlimits = [{"type": "RLIMIT_NOFILE", "hard": 4096, "soft": 4096}]
        if lim.cpu_s is not None:
            n = max(1, int(lim.cpu_s + 0.999))
            rlimits.append({"type": "RLIMIT_CPU", "hard": n, "soft": n})
        if lim.file_bytes is not None:
            rlimits.append({"type": "RLIMIT_FSIZE", "hard": lim.file_bytes, "soft": lim.file_bytes})
        if lim.processes is not None:
            # The sentry enforces RLIMIT_NPROC on its own tasks (runsc ignores the OCI pids
            # resource with --ignore-cgroups): one more for the limit watcher.
            nproc = lim.processes + (1 if watch else 0)
            rlimits.append({"type": "RLIMIT_NPROC", "hard": nproc, "soft": nproc})
        resources: dict[str, Any] = {}
        if lim.memory_bytes is not None:
            resources["memory"] = {"limit": lim.memory_bytes}
        if lim.processes is not None:
            resources["pids"] = {"limit": lim.processes}
        caps: dict[str, list[str]] = {
            k: [] for k in ("bounding", "effective", "inheritable", "permitted", "ambient")
        }
        return {
            "ociVersion": "1.0.0",
            "process": {
                "terminal": False,
                "user": {"uid": os.getuid(), "gid": os.getgid()},
                "args": list(argv),
                "env": [f"{k}={v}" for k, v in env.items()],
                "cwd": work,
                "capabilities": caps,
                "rlimits": rlimits,
                "noNewPrivileges": True,
            },
            "root": {"path": "rootfs", "readonly": True},
            "hostname": "sandbox",
            "mounts": mounts,
            "linux": {
                "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")],
                "resources": resources,
            },
        }

    def _runsc(self, binary: str) -> list[str]:
        # The run's own cgroups hold every runsc process; runsc must not make more of them.
        args = [binary, "--root", str(self.config.state_dir), "--network=none", "--ignore-cgroups"]
        if self.config.platform:
            args.append(f"--platform={self.config.platform}")
        return args

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        limits: Limits | None = None,
    ) -> ExecResult:
        """Run ``argv`` in a fresh gVisor container with ``cwd`` bound read-write."""
        binary = self._binary()
        lim, deadline = effective_limits(limits, timeout)
        self.config.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        container = f"fleet-{uuid.uuid4().hex[:16]}"
        with (
            tempfile.TemporaryDirectory(prefix="fleet-oci-") as tmp,
            disk_quota(cwd, lim.disk_bytes, userns=False) as quota,  # runsc runs as root
        ):
            bundle = Path(tmp)
            source = quota.merged if quota is not None else None
            config = self.oci_config(bundle, via_shell(argv), cwd, sandbox_env(env), lim, source)
            (bundle / "config.json").write_text(json.dumps(config))
            runsc = self._runsc(binary)
            # Processes inside gVisor are sentry tasks, but under the ptrace platform each one
            # costs ~18 host tasks (stub + tracer threads; measured with pids.peak), and runsc
            # itself ~90: bound the host side accordingly, so a fork bomb ends on the limit
            # within a second instead of loading the host with thousands of traced tasks.
            host_pids = HOST_THREADS
            if lim.processes is not None:
                host_pids = min(HOST_THREADS, RUNSC_TASKS + HOST_TASKS_PER_PROCESS * lim.processes)
            host = dataclasses.replace(lim, processes=host_pids)
            group = create_cgroups(host) if self.config.use_cgroups else None
            try:
                raw = run_process(
                    [
                        *prelude(lim, group, rlimits=False),
                        *runsc,
                        "run",
                        "--bundle",
                        str(bundle),
                        container,
                    ],
                    env={"PATH": "/usr/bin:/bin"},
                    timeout=deadline,
                    output_cap=lim.output_bytes,
                    kill_tree=self._killer(runsc, container, group),
                    limit_check=None if group is None else group.limit_hit,
                )
                hit = LIMIT_MARK.encode() in raw.stderr[-4096:]
                hit = hit or (quota is not None and quota.full())
                return to_result(raw, backend=self.name, group=group, limit_exit=hit)
            finally:
                self._cleanup(runsc, container, group)

    def _killer(
        self, runsc: list[str], container: str, group: CgroupSet | None
    ) -> Callable[[subprocess.Popen[bytes]], None]:
        def kill(proc: subprocess.Popen[bytes]) -> None:
            signal_tree(proc)
            if group is not None:
                group.kill_all()  # every runsc process (sentry, gofer) is in the group
            elif proc.poll() is None:
                with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                    subprocess.run(
                        [*runsc, "kill", "--all", container, "KILL"],
                        capture_output=True,
                        timeout=5,
                    )

        return kill

    def _cleanup(self, runsc: list[str], container: str, group: CgroupSet | None) -> None:
        if group is not None:
            group.remove()
        if any(self.config.state_dir.glob(f"{container}*")):
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(
                    [*runsc, "delete", "--force", container], capture_output=True, timeout=30
                )

    def probe(self) -> ProbeResult:
        """Works if runsc exists and ``true`` runs in a container; measures that start."""
        try:
            binary = self._binary()
        except FileNotFoundError as exc:
            return ProbeResult(self.name, False, str(exc), strength=self.strength)
        try:
            # One container run, as cheap as `true`: it also notes whether this runsc supports
            # statx(AT_NO_AUTOMOUNT); old ones (Debian's 20221219) answer EINVAL, so coreutils
            # `ls`/`stat` fail inside while Python and the rest work.
            result, latency = timed_probe_run(self, ["/bin/sh", "-c", _STATX_CHECK], timeout=60)
        except OSError as exc:
            return ProbeResult(self.name, False, f"{binary}: {exc}", strength=self.strength)
        if not result.ok:
            detail = f"`true` failed in runsc: {(result.stderr or result.stdout).strip()[-300:]}"
            return ProbeResult(self.name, False, detail, latency, self.strength)
        detail = f"{binary} --network=none; {doctor_note()}"
        if STATX_WARNING_TAG in result.stdout:
            detail += f"; {STATX_WARNING}"
        return ProbeResult(self.name, True, detail, latency, self.strength)
