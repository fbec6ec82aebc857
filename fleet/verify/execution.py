"""Running pytest and friends through a ``Sandbox`` with an explicit, secret-free environment,
and reading pytest's per-test outcomes from its JUnit XML report. Public: the agents' tools,
integration's re-run of the tests and the CLI use it as well as the gates."""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox import ExecResult, Limits, Sandbox

__all__ = [
    "REPORT",
    "PytestRun",
    "collect_unlisted",
    "parse_junit",
    "run",
    "run_pytest",
    "sandbox_env",
    "target_python",
    "unlisted_test_files",
]

REPORT = ".fleet-junit.xml"


def target_python() -> str:
    """The interpreter that runs the target's tests: ``$FLEET_TEST_PYTHON`` (the target's own
    environment, where its dependencies are installed, e.g. ``/src/app/.venv/bin/python``; it
    needs pytest), else the fleet's own."""
    return os.environ.get("FLEET_TEST_PYTHON") or sys.executable


def sandbox_env() -> dict[str, str]:
    """The whole environment a sandboxed command gets (never the orchestrator's secrets)."""
    return {
        "PATH": f"{Path(target_python()).parent}:/usr/local/bin:/usr/bin:/bin",
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
        target_python(), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
        # one test file that cannot be imported must not hide the others' outcomes
        "--continue-on-collection-errors",
        f"--junitxml={REPORT}", "-o", "junit_family=xunit1", *targets,
    ]
    result = collect_unlisted(run(sandbox, tree, argv, timeout_s), tree, targets,
                              lambda named: run(sandbox, tree, [*argv, *named], timeout_s))
    run_ = PytestRun(exit_code=result.exit_code, output=result.stdout + result.stderr)
    if report.is_file():
        run_.reported = True
        run_.outcomes = parse_junit(report.read_text())
        report.unlink()
    return run_


def collect_unlisted(result: ExecResult, tree: Path, targets: Sequence[str],
                     rerun: Callable[[list[str]], ExecResult]) -> ExecResult:
    """``result`` of a pytest run, or, when it was a bare run (no ``targets``) that collected
    nothing (exit 5), of ``rerun`` naming the test files pytest's default patterns miss."""
    if not targets and result.reason == "exited" and result.exit_code == 5:
        named = unlisted_test_files(tree)
        if named:
            return rerun(named)
    return result


def unlisted_test_files(tree: Path) -> list[str]:
    """The test files (``fleet.verify.gates.is_test_path``, without ``conftest.py`` and
    ``__init__.py``) to name when a bare ``pytest`` collects nothing: pytest's default
    ``python_files`` (``test_*.py``, ``*_test.py``) miss a root ``tests.py`` (itsdangerous
    0.24), a Django app's ``tests.py`` and ``tests/*_tests.py`` (mkdocs 0.14), which it does
    collect when named. Hidden and virtualenv directories are not searched."""
    from fleet.verify.gates import is_test_path

    found: list[str] = []
    for path in tree.rglob("*.py"):
        rel = path.relative_to(tree)
        if any(part.startswith(".") or part in ("venv", "node_modules", "site-packages")
               for part in rel.parts[:-1]):
            continue
        if rel.name not in ("conftest.py", "__init__.py") and is_test_path(rel.as_posix()):
            found.append(rel.as_posix())
    return sorted(found)


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
