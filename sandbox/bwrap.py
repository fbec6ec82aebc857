"""``BwrapSandbox``: bubblewrap with every namespace unshared.

What the command sees: the system directories read-only (``/usr``, ``/etc`` minus its secrets,
the ``/lib*`` and ``/bin`` links), the interpreter's toolchain read-only, a private ``/proc`` and
``/dev``, tmpfs over ``/tmp``, ``/home``, ``/root`` and the host home, and the worktree read-write
at its host path. No network (a fresh network namespace has only its own loopback), a cleared
environment, no capabilities, uid 65534 in a user namespace where the kernel allows one.
The whole tree runs in its own cgroups (memory, pids, cpu accounting) and dies with the run: the
command is pid 2 of a fresh pid namespace, so when it exits everything it left behind is killed.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox._common import (
    SANDBOX_HOME,
    effective_limits,
    find_binary,
    host_home,
    sandbox_env,
    timed_probe_run,
    to_result,
    toolchain_dirs,
    via_shell,
)
from sandbox._limits import create_cgroups, prelude, tree_killer
from sandbox._process import run_process
from sandbox._protocol import ExecResult, Limits, ProbeResult
from sandbox._quota import disk_quota, doctor_note
from sandbox._run_uid import BWRAP_CAPS, RunUid, run_uid_for

__all__ = [
    "NOBODY",
    "SECRET_PATHS",
    "SYSTEM_DIRS",
    "BwrapConfig",
    "BwrapSandbox",
    "create_and_remove_cgroup",
]

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Files and directories under the read-only system that hold host secrets: masked.
SECRET_PATHS = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/sudoers",
    "/etc/sudoers.d",
)
NOBODY = 65534


@dataclass
class BwrapConfig:
    """How ``BwrapSandbox`` builds its mount table.

    ``readonly_paths`` are extra host paths shared read-only (default: the interpreter's venv and
    base prefix). ``unprivileged`` runs the command as uid 65534 in a user namespace; ``None``
    means "when the kernel allows it" (probed once).
    """

    binary: str = "bwrap"
    readonly_paths: list[Path] = field(default_factory=toolchain_dirs)
    unprivileged: bool | None = None
    use_cgroups: bool = True


@functools.cache
def _userns_works(binary: str) -> bool:
    try:
        out = subprocess.run(
            [
                binary,
                "--unshare-all",
                "--unshare-user",
                "--uid",
                str(NOBODY),
                "--ro-bind",
                "/",
                "/",
                "--",
                "/bin/true",
            ],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


class BwrapSandbox:
    """Runs each command in a fresh bubblewrap sandbox (see the module docstring)."""

    name = "bwrap"
    strength = 10

    def __init__(self, config: BwrapConfig | None = None) -> None:
        self.config = config or BwrapConfig()

    def _binary(self) -> str:
        return find_binary(self.config.binary, "bubblewrap")

    def _unprivileged(self, binary: str) -> bool:
        if self.config.unprivileged is not None:
            return self.config.unprivileged
        return _userns_works(binary)

    def command(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        run_uid: RunUid | None = None,
        source: Path | None = None,
        scratch_bytes: int | None = None,
    ) -> list[str]:
        """The bwrap argv for one command (without the limits prelude). ``source``: what is
        bound at the worktree's path (the disk quota's overlay of it; default the worktree).
        ``scratch_bytes``: the size of each private tmpfs (``/tmp``, the home): the disk quota.

        With ``run_uid`` (root without cgroups) there is no user namespace: bwrap keeps just the
        capabilities ``setpriv`` needs to become the run's uid, which then keeps only
        CAP_DAC_OVERRIDE and CAP_FOWNER, so RLIMIT_NPROC binds the command.
        """
        binary = self._binary()
        if run_uid is None:
            args = [binary, "--unshare-all"]
        else:  # --unshare-all tries a user namespace, where the run's uid would not be mapped
            args = [binary, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
            args += ["--unshare-cgroup-try"]
        args += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
        if run_uid is not None:
            args += ["--cap-drop", "ALL"]
            for cap in BWRAP_CAPS:
                args += ["--cap-add", cap]
            argv = [*run_uid.setpriv_argv(), *argv]
        elif self._unprivileged(binary):
            args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
        else:
            args += ["--cap-drop", "ALL"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        for d in SYSTEM_DIRS:
            p = Path(d)
            if p.is_symlink():
                args += ["--symlink", str(p.readlink()), d]
            elif p.is_dir():
                args += ["--ro-bind", d, d]
        for secret in SECRET_PATHS:
            p = Path(secret)
            if p.is_dir() and not p.is_symlink():
                args += ["--tmpfs", secret, "--remount-ro", secret]
            elif p.exists():
                args += ["--ro-bind", "/dev/null", secret]
        size = [] if scratch_bytes is None else ["--size", str(max(scratch_bytes, 1 << 20))]
        args += ["--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/tmp"]
        home = str(host_home())
        for hidden in dict.fromkeys(["/home", "/root", home, "/run", "/var", "/srv", "/mnt"]):
            args += [*size, "--tmpfs", hidden]
        args += ["--perms", "0777", "--dir", SANDBOX_HOME]
        for ro in self.config.readonly_paths:
            if ro.exists():
                args += ["--ro-bind", str(ro), str(ro)]
        work = str(cwd.resolve())
        args += ["--bind", str(source or work), work, "--chdir", work, "--", *argv]
        return args

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        limits: Limits | None = None,
    ) -> ExecResult:
        """Run ``argv`` in a fresh sandbox with ``cwd`` (the worktree) bound read-write."""
        lim, deadline = effective_limits(limits, timeout)
        group = create_cgroups(lim) if self.config.use_cgroups else None
        run_uid = run_uid_for(lim) if group is None else None  # root without cgroups
        check = group.limit_hit if group else (run_uid.limit_hit if run_uid else None)
        try:
            # bwrap drops the capabilities inside its own namespaces (nested in the quota's)
            with disk_quota(cwd, lim.disk_bytes, drop_caps=False) as quota:
                source = quota.merged if quota is not None else None
                enter = quota.enter if quota is not None else []
                cmd = self.command(
                    via_shell(argv), cwd, sandbox_env(env), run_uid, source, lim.disk_bytes
                )
                try:
                    raw = run_process(
                        [*prelude(lim, group, run_uid=run_uid), *enter, *cmd],
                        env={"PATH": "/usr/bin:/bin"},
                        timeout=deadline,
                        output_cap=lim.output_bytes,
                        kill_tree=tree_killer(group, run_uid),
                        limit_check=check,
                    )
                finally:
                    if run_uid is not None:
                        run_uid.kill_all()  # nothing may hold the overlay when it goes
                full = quota is not None and quota.full()
                return to_result(raw, backend=self.name, group=group, limit_exit=full)
        finally:
            if group is not None:
                group.remove()
            if run_uid is not None:
                run_uid.kill_all()
                run_uid.restore_owner(cwd)

    def probe(self) -> ProbeResult:
        """Works if the binary exists and ``true`` runs in a sandbox; measures that start."""
        try:
            binary = self._binary()
        except FileNotFoundError as exc:
            return ProbeResult(self.name, False, str(exc), strength=self.strength)
        try:
            result, latency = timed_probe_run(self, ["true"], timeout=30)
        except OSError as exc:
            return ProbeResult(self.name, False, f"{binary} failed: {exc}", strength=self.strength)
        if not result.ok:
            detail = f"`true` failed in bwrap: {result.stderr.strip()[:300]}"
            return ProbeResult(self.name, False, detail, latency, self.strength)
        mode = (
            "uid 65534 in a user namespace" if self._unprivileged(binary) else "root, caps dropped"
        )
        cg = "cgroups" if create_and_remove_cgroup() else "rlimits only"
        if cg != "cgroups" and os.getuid() == 0:
            cg += " (as root: the command runs as a per-run uid so RLIMIT_NPROC binds it)"
        detail = f"{binary}: {mode}, limits via {cg}; {doctor_note()}"
        return ProbeResult(self.name, True, detail, latency, 10)


def create_and_remove_cgroup() -> bool:
    group = create_cgroups(Limits())
    if group is None:
        return False
    group.remove()
    return True
