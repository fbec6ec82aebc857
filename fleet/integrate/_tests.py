"""The default test runner of integration: pytest in the sandbox, in the combined tree."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.integrate._integrate import SuiteRun, SuiteRunner
from fleet.verify._exec import REPORT, parse_junit

if TYPE_CHECKING:
    from sandbox import Sandbox


def pytest_runner(sandbox: Sandbox, tests: Sequence[str] = (), timeout: float = 600.0,
                  python: str = sys.executable) -> SuiteRunner:
    """A ``SuiteRunner`` running ``python -m pytest -q [tests]`` in ``sandbox`` (all tests when
    ``tests`` is empty). Exit code 5 (no tests collected) counts as passed. Each test's outcome
    comes back too (a JUnit report), so a combination is judged against the base's own
    failures."""

    def run(tree: Path) -> SuiteRun:
        report = tree / REPORT
        report.unlink(missing_ok=True)
        argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "--continue-on-collection-errors", f"--junitxml={REPORT}",
                "-o", "junit_family=xunit1", *tests]
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
               "HOME": "/tmp", "LANG": "C.UTF-8"}
        res = sandbox.run(argv, cwd=tree, env=env, timeout=timeout)
        passed = res.ok or (res.reason == "exited" and res.exit_code == 5)
        outcomes = None
        if report.is_file():
            try:
                outcomes = parse_junit(report.read_text(errors="replace"))
            except ET.ParseError:
                outcomes = None
            report.unlink()
        return SuiteRun(passed=passed, output=(res.stdout + res.stderr)[-8000:],
                       wall_s=res.wall_s, outcomes=outcomes)

    return run
