"""The default test runner of integration: pytest in the sandbox, in the combined tree."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.integrate._integrate import SuiteRun, SuiteRunner

if TYPE_CHECKING:
    from sandbox import Sandbox


def pytest_runner(sandbox: Sandbox, tests: Sequence[str] = (), timeout: float = 600.0,
                  python: str = sys.executable) -> SuiteRunner:
    """A ``SuiteRunner`` running ``python -m pytest -q [tests]`` in ``sandbox`` (all tests when
    ``tests`` is empty). Exit code 5 (no tests collected) counts as passed."""

    def run(tree: Path) -> SuiteRun:
        argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
               "HOME": "/tmp", "LANG": "C.UTF-8"}
        res = sandbox.run(argv, cwd=tree, env=env, timeout=timeout)
        passed = res.ok or (res.reason == "exited" and res.exit_code == 5)
        return SuiteRun(passed=passed, output=(res.stdout + res.stderr)[-8000:],
                       wall_s=res.wall_s)

    return run
