"""Running pytest and friends through a ``Sandbox`` with an explicit, secret-free environment,
and reading pytest's per-test outcomes from its JUnit XML report."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox import ExecResult, Limits, Sandbox

REPORT = ".fleet-junit.xml"


def sandbox_env() -> dict[str, str]:
    """The whole environment a sandboxed command gets (never the orchestrator's secrets)."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


@dataclass
class PytestRun:
    """Outcome per test id (``passed`` | ``failed`` | ``error`` | ``skipped``) of one run."""

    outcomes: dict[str, str] = field(default_factory=dict)
    exit_code: int = 0
    output: str = ""
    reported: bool = False

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])


def run_pytest(
    sandbox: Sandbox, tree: Path, targets: Sequence[str], timeout_s: float = 300.0
) -> PytestRun:
    """pytest on ``targets`` (paths or node ids; all when empty) in ``tree`` through ``sandbox``."""
    report = tree / REPORT
    report.unlink(missing_ok=True)
    argv = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
        # one test file that cannot be imported must not hide the others' outcomes
        "--continue-on-collection-errors",
        f"--junitxml={REPORT}", "-o", "junit_family=xunit1", *targets,
    ]
    result = run(sandbox, tree, argv, timeout_s)
    run_ = PytestRun(exit_code=result.exit_code, output=result.stdout + result.stderr)
    if report.is_file():
        run_.reported = True
        run_.outcomes = parse_junit(report.read_text())
        report.unlink()
    return run_


def run(sandbox: Sandbox, tree: Path, argv: Sequence[str], timeout_s: float) -> ExecResult:
    return sandbox.run(
        argv, cwd=tree, env=sandbox_env(), timeout=timeout_s, limits=Limits(wall_s=timeout_s)
    )


def parse_junit(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for case in ET.fromstring(text).iter("testcase"):
        key = f"{case.get('file') or case.get('classname', '')}::{case.get('classname', '')}"
        key = f"{key}::{case.get('name', '')}"
        if case.find("failure") is not None:
            outcome = "failed"
        elif case.find("error") is not None:
            outcome = "error"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        # a test that failed in setup and teardown appears twice: the worst outcome wins
        if out.get(key) not in ("failed", "error"):
            out[key] = outcome
    return out
