"""A vendored subset of a real project (tests/fixtures/projects/) as a git repository of its own,
and its test suite run with this environment's Python: the set-up of the pydantic-v2 tests on
jsf and openapi-schema-pydantic."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import git

__all__ = ["committed_copy", "git", "run_suite"]


def committed_copy(subset: Path, repo: Path, message: str) -> str:
    """``subset`` copied to ``repo`` and committed there as ``main``; the commit."""
    shutil.copytree(subset, repo, ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def run_suite(path: Path, tests: str) -> tuple[set[str], str]:
    """Run the suite under ``path/tests`` (only ``path`` on the import path, its own conftest
    files alone); the failed and erroring test ids (or modules), and pytest's summary line."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
         "--confcutdir", str(path), "-W", "ignore::DeprecationWarning", tests],
        cwd=path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(path), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    out = proc.stdout + proc.stderr
    failed = set(re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M))
    return {f for f in failed if "::" in f or f.endswith(".py")}, out.strip().splitlines()[-1]
