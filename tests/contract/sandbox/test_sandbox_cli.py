"""``fleet sandbox run`` / ``doctor`` and ``select_sandbox``, as a user and other engineers call
them: a real console script over real backends."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import resolve_sandbox, select_sandbox

pytestmark = pytest.mark.sandbox

FLEET = [sys.executable, "-m", "fleet_pipelines.cli"]


def _fleet(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*FLEET, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )  # fmt: skip


def test_run_exits_with_the_commands_code_and_streams(worktree: Path) -> None:
    out = _fleet(
        "sandbox", "run", "--backend", "bwrap", "--workdir", str(worktree), "--",
        "/bin/sh", "-c", "cat hello.txt; echo oops >&2; exit 3", cwd=worktree,
    )  # fmt: skip
    assert out.returncode == 3, out.stderr
    assert out.stdout == "hello from the worktree\n"
    assert "oops" in out.stderr


def test_run_reports_a_timeout(worktree: Path) -> None:
    out = _fleet(
        "sandbox", "run", "-b", "bwrap", "-w", str(worktree), "--timeout", "1", "--",
        "/bin/sleep", "30", cwd=worktree,
    )  # fmt: skip
    assert out.returncode == 137
    assert "timeout" in out.stderr


def test_local_needs_explicit_opt_in(worktree: Path) -> None:
    refused = _fleet("sandbox", "run", "-b", "local", "--", "/bin/true", cwd=worktree)
    assert refused.returncode == 2 and "--unsafe-local" in refused.stderr
    allowed = _fleet(
        "sandbox", "run", "--unsafe-local", "--", "/bin/sh", "-c", "exit 4", cwd=worktree
    )
    assert allowed.returncode == 4
    assert "WITHOUT isolation" in allowed.stderr


def test_doctor_lists_every_backend_with_latency(tmp_path: Path) -> None:
    out = _fleet("sandbox", "doctor", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for name in ("microvm", "gvisor", "bwrap", "local"):
        assert any(line.startswith(name) for line in lines), out.stdout
    assert any(line.startswith("bwrap") and " ms " in line for line in lines)
    assert any(line.startswith("auto: ") for line in lines)


def test_auto_picks_the_strongest_working_backend_and_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    selection = resolve_sandbox("auto")
    working = [p.backend for p in selection.probes if p.available]
    assert working == [selection.sandbox.name]  # the ladder stops at the first that works
    assert selection.sandbox.name in {"microvm", "gvisor", "bwrap"}
    assert selection.reason.startswith(f"{selection.sandbox.name} is the strongest")
    with caplog.at_level(logging.INFO, logger="sandbox.select"):
        box = select_sandbox("auto")
    assert box.name == selection.sandbox.name
    assert selection.sandbox.name in caplog.text
