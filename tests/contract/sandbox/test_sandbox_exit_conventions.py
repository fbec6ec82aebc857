"""Shell exit-code conventions across backends, and ``fleet sandbox run`` refusing a bad
workdir: regressions from an outside check (bwrap used to exit 1 and gVisor 128 for a missing
command; a missing workdir gave a traceback under ``local`` and runsc's "cannot read client sync
file" under gVisor)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import Sandbox

pytestmark = pytest.mark.sandbox


@pytest.mark.backends("fast_all")
def test_missing_command_exits_127_and_non_executable_126(box: Sandbox, worktree: Path) -> None:
    missing = box.run(["/nonexistent/tool"], worktree, timeout=60)
    assert missing.exit_code == 127, missing
    assert "not found" in missing.stderr
    on_path = box.run(["no-such-command-anywhere"], worktree, timeout=60)
    assert on_path.exit_code == 127, on_path
    script = worktree / "script.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    refused = box.run(["./script.sh"], worktree, timeout=60)
    assert refused.exit_code == 126, refused
    script.chmod(0o755)
    ran = box.run(["./script.sh", "a b"], worktree, timeout=60)
    assert (ran.exit_code, ran.stdout) == (0, "ran\n")
    args = box.run(["/bin/sh", "-c", 'printf "%s|" "$@"', "sh", "a b", "$HOME", "*"], worktree)
    assert args.stdout == "a b|$HOME|*|"  # arguments pass through the wrapper verbatim


@pytest.mark.parametrize("name", ["bwrap", "local"])
def test_run_refuses_a_workdir_that_is_not_a_directory(tmp_path: Path, name: str) -> None:
    (tmp_path / "file.txt").write_text("x")
    root = str(Path(__file__).resolve().parents[3])
    for workdir in (tmp_path / "missing", tmp_path / "file.txt"):
        out = subprocess.run(
            [sys.executable, "-m", "fleet_pipelines.cli", "sandbox", "run", "-b", name,
             "--unsafe-local", "-w", str(workdir), "--", "true"],
            capture_output=True, text=True, timeout=60, cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": root},
        )  # fmt: skip
        assert out.returncode == 2, out.stderr
        assert "is not a directory" in out.stderr and "Traceback" not in out.stderr


def test_gvisor_probe_reports_what_coreutils_stat_does_inside(tmp_path: Path) -> None:
    """The doctor's gVisor line warns exactly when `stat` (statx with AT_NO_AUTOMOUNT, as
    coreutils ls/stat call it) fails inside this runsc."""
    from sandbox.gvisor import STATX_WARNING, GVisorSandbox

    box = GVisorSandbox()
    probe = box.probe()
    if not probe.available:
        pytest.skip(f"gvisor does not work here: {probe.detail}")
    stat = box.run(["/bin/sh", "-c", "stat / >/dev/null"], tmp_path, timeout=60)
    assert (STATX_WARNING in probe.detail) == (stat.exit_code != 0), (probe.detail, stat)
    listed = box.run(["python3", "-c", "import os; print(sorted(os.listdir('.')))"], tmp_path)
    assert listed.exit_code == 0 and listed.stdout == "[]\n"  # Python works either way
