"""The default test runner of integration: pytest in the sandbox, in the combined tree."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.integrate._integrate import SuiteRun, SuiteRunner
from fleet.verify.execution import (
    REPORT,
    bare_args,
    blocked_plugins,
    collect_unlisted,
    parse_junit,
    sandbox_env,
    target_python,
)

if TYPE_CHECKING:
    from sandbox import Sandbox

__all__ = ["pytest_runner"]


def pytest_runner(sandbox: Sandbox, tests: Sequence[str] = (), timeout: float = 600.0,
                  python: str | None = None) -> SuiteRunner:
    """A ``SuiteRunner`` running ``python -m pytest -q [tests]`` in ``sandbox`` (all tests when
    ``tests`` is empty; when a bare pytest collects nothing, the root ``tests.py`` / ``test.py``
    that its default patterns miss are named). Exit code 5 (no tests collected) counts as passed,
    with empty ``outcomes``: the caller tells "passed" from "nothing ran". Each test's outcome
    comes back too (a JUnit report), so a combination is judged against the base's own
    failures."""

    interpreter = python or target_python()  # $FLEET_TEST_PYTHON: the target's environment

    def run(tree: Path) -> SuiteRun:
        report = tree / REPORT
        report.unlink(missing_ok=True)
        argv = [interpreter, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                # the fleet's own test plugins stay out of a target run on the fleet's interpreter
                *blocked_plugins(interpreter, tree),
                "--continue-on-collection-errors", f"--junitxml={REPORT}",
                "-o", "junit_family=xunit1", *([] if tests else bare_args(tree)), *tests]
        # the gates' environment: the same PATH, and the tree's source roots on PYTHONPATH
        env = sandbox_env(interpreter, tree)
        res = collect_unlisted(
            sandbox.run(argv, cwd=tree, env=env, timeout=timeout), tree, tests,
            lambda named: sandbox.run([*argv, *named], cwd=tree, env=env, timeout=timeout))
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
