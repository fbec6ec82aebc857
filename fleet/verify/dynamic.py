"""The gates that run code in the sandbox besides the impacted tests (:mod:`.impacted`):
test-first for bug-fix campaigns, and the type check where the target configures mypy."""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from fleet.types import Verdict
from fleet.verify._base_runs import base_key, cached_base_check, tree_id
from fleet.verify._patch import FilePatch, Trees, apply_patch, read
from fleet.verify.execution import PytestRun, run, run_pytest
from fleet.verify.gates import is_test_path
from fleet.verify.integrity import collect_tests
from sandbox import Sandbox

__all__ = ["gate_test_first", "gate_typecheck", "mypy_configured", "split_patch"]


def split_patch(patch: str, keep: set[str]) -> str:
    """The part of a git diff that touches the files in ``keep``."""
    blocks = re.split(r"(?m)^(?=diff --git )", patch)
    out = []
    for block in blocks:
        match = re.match(r"diff --git a/(\S+) b/(\S+)", block)
        if match and (match.group(1) in keep or match.group(2) in keep):
            out.append(block)
    return "".join(out)


def gate_test_first(
    trees: Trees, sandbox: Sandbox | None, files: Sequence[FilePatch], timeout_s: float = 300.0
) -> Verdict:
    """Bug fixes only: a new test that fails on the base (with only the test files applied)
    and passes with the whole patch."""
    test_files = [f for f in files if f.path.endswith(".py") and is_test_path(f.path)
                  and f.new_path is not None]
    new_tests: list[tuple[str, str]] = []
    for fp in test_files:
        try:
            before = set(collect_tests(read(trees.base, fp.old_path) or ""))
            after = set(collect_tests(read(trees.patched, fp.new_path) or ""))
        except SyntaxError:
            continue
        new_tests += [(fp.path, name.split(".")[-1]) for name in sorted(after - before)]
    if not new_tests:
        return Verdict("test_first", "reject", "a bug fix must add a regression test; none added")
    if sandbox is None:
        return Verdict("test_first", "unknown", "no sandbox: the regression test cannot be run")
    partial = trees.scratch("tests-only")
    ok, error = apply_patch(partial, split_patch(trees.patch, {f.path for f in test_files}))
    if not ok:
        return Verdict("test_first", "unknown", f"the test files alone do not apply: {error}")
    paths = sorted({p for p, _ in new_tests})
    on_base = run_pytest(sandbox, partial, paths, timeout_s)
    on_fix = run_pytest(sandbox, trees.patched, paths, timeout_s)
    names = [f"{p}::{n}" for p, n in new_tests]
    details = {"new_tests": names}

    def outcome(result: PytestRun, path: str, name: str) -> str:
        for key, value in result.outcomes.items():
            if key.startswith(f"{path}::") and key.endswith(f"::{name}"):
                return value
        return "missing"

    passes_on_base = [f"{p}::{n}" for p, n in new_tests if outcome(on_base, p, n) == "passed"]
    fails_with_fix = [f"{p}::{n}" for p, n in new_tests if outcome(on_fix, p, n) != "passed"]
    if fails_with_fix:
        return Verdict("test_first", "reject", "the regression test does not pass with the fix: "
                       + ", ".join(fails_with_fix), details)
    if len(passes_on_base) == len(new_tests):
        return Verdict("test_first", "reject", "the regression test already passes on the base "
                       "(it does not reproduce the bug): " + ", ".join(passes_on_base), details)
    return Verdict("test_first", "accept",
                   f"{', '.join(names)}: fails on the base, passes with the fix", details)


_MYPY_LINE = re.compile(r"^(?P<path>[^:\s]+\.py):\d+(?::\d+)?: error: (?P<msg>.*)$")


def mypy_configured(tree: Path) -> bool:
    if (tree / "mypy.ini").is_file() or (tree / ".mypy.ini").is_file():
        return True
    cfg = read(tree, "setup.cfg") or ""
    toml = read(tree, "pyproject.toml") or ""
    return "[mypy" in cfg or "[tool.mypy" in toml


def gate_typecheck(
    trees: Trees, sandbox: Sandbox | None, files: Sequence[FilePatch], timeout_s: float = 300.0
) -> Verdict:
    """Where the target configures mypy: no new mypy errors in the touched files."""
    if not mypy_configured(trees.base):
        return Verdict("typecheck", "accept", "the target configures no type checker",
                       {"skipped": True})
    if sandbox is None:
        return Verdict("typecheck", "unknown", "no sandbox: mypy cannot be run")
    paths = [f.new_path for f in files if f.new_path and f.new_path.endswith(".py")]
    if not paths:
        return Verdict("typecheck", "accept", "no Python file to check")
    argv = [sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context",
            "--no-color-output", "--cache-dir=/dev/null", "--show-error-codes"]
    errors: list[Counter[tuple[str, str]]] = []
    for tree in (trees.base, trees.patched):
        present = [p for p in paths if (tree / p).is_file()]
        result = None
        if present and tree == trees.base:  # the base's errors: once per tree and files
            key = base_key(tree_id(trees), sys.executable, sandbox.name, present, timeout_s,
                           "mypy")
            result = cached_base_check(key, partial(run, sandbox, tree, [*argv, *present],
                                                    timeout_s))
        elif present:
            result = run(sandbox, tree, [*argv, *present], timeout_s)
        found: Counter[tuple[str, str]] = Counter()
        if result is not None:
            if result.exit_code not in (0, 1):
                return Verdict("typecheck", "unknown", f"mypy failed: {result.stderr[-2000:]}")
            for line in result.stdout.splitlines():
                m = _MYPY_LINE.match(line)
                if m:
                    found[(m["path"], m["msg"])] += 1
        errors.append(found)
    new = errors[1] - errors[0]
    if new:
        listed = [f"{p}: {m}" for (p, m) in sorted(new)]
        return Verdict("typecheck", "reject", "new mypy errors: " + "; ".join(listed),
                       {"new": listed})
    return Verdict("typecheck", "accept", f"mypy: no new errors in {len(paths)} file(s)")
