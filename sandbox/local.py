"""``LocalSandbox``: no isolation at all — the command runs on the host as this user.

Only by explicit opt-in (``select_sandbox("local")`` or ``--unsafe-local``); every instance logs
a warning. It still honours the protocol where it can without isolation: the environment is
exactly ``env`` (plus PATH/HOME defaults), output caps, the deadline, rlimits, and the cgroups
when the host allows them, so a background process is still killed when ``run`` returns (without
cgroups, only those in the command's process group are — or, as root, every process of the
run's own uid, see ``_run_uid``).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from sandbox._common import effective_limits, sandbox_env, timed_probe_run, to_result
from sandbox._limits import create_cgroups, prelude, tree_killer
from sandbox._process import run_process
from sandbox._protocol import ExecResult, Limits, ProbeResult
from sandbox._quota import disk_quota, doctor_note
from sandbox._run_uid import run_uid_for

__all__ = ["LocalSandbox"]

log = logging.getLogger(__name__)


class LocalSandbox:
    """Runs commands directly on the host. Not a sandbox: opt-in for trusted commands only."""

    name = "local"
    strength = 0

    def __init__(self, *, use_cgroups: bool = True, warn: bool = True) -> None:
        self.use_cgroups = use_cgroups
        if warn:
            log.warning(
                "LocalSandbox: commands run WITHOUT isolation (host network, files, credentials)"
            )

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        limits: Limits | None = None,
    ) -> ExecResult:
        """Run ``argv`` on the host in ``cwd`` with exactly ``env`` (no isolation)."""
        lim, deadline = effective_limits(limits, timeout)
        with (
            tempfile.TemporaryDirectory(prefix="fleet-local-home-") as home,
            disk_quota(cwd, lim.disk_bytes) as quota,
        ):
            # no isolation: with a quota the command runs in the overlay of the worktree (as
            # root its cwd is the overlay's path: an absolute path to the worktree bypasses it;
            # not root, in a namespace where the overlay is at the worktree's path)
            where = quota.merged if quota is not None else cwd
            enter = quota.enter if quota is not None else []
            group = create_cgroups(lim) if self.use_cgroups else None
            run_uid = run_uid_for(lim) if group is None else None  # root without cgroups
            cmd = run_uid.local_argv(argv) if run_uid is not None else list(argv)
            check = group.limit_hit if group else (run_uid.limit_hit if run_uid else None)
            try:
                raw = run_process(
                    [*prelude(lim, group, run_uid=run_uid), *enter, *cmd],
                    env=sandbox_env(env, home=home),
                    cwd=str(where),
                    timeout=deadline,
                    output_cap=lim.output_bytes,
                    kill_tree=tree_killer(group, run_uid),
                    limit_check=check,
                )
                full = quota is not None and quota.full()
                return to_result(raw, backend=self.name, group=group, limit_exit=full)
            finally:
                if group is not None:
                    group.remove()
                if run_uid is not None:
                    run_uid.kill_all()
                    run_uid.restore_owner(cwd)

    def probe(self) -> ProbeResult:
        result, latency = timed_probe_run(self, ["true"], timeout=30)
        detail = f"no isolation; explicit opt-in only (--unsafe-local); {doctor_note()}"
        return ProbeResult(self.name, result.ok, detail, latency, self.strength)
