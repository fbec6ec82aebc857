"""The gates that run code in the sandbox: impacted tests before/after, test-first for bug-fix
campaigns, and the type check where the target configures mypy."""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from fleet.types import Verdict
from fleet.verify._patch import FilePatch, Trees, apply_patch, read
from fleet.verify.execution import PytestRun, run, run_pytest, target_python
from fleet.verify.gates import is_test_path
from fleet.verify.integrity import collect_tests
from sandbox import Sandbox

_BAD = ("failed", "error")
# The base commit's test outcomes, per (repo, commit, targets, backend): every patch on one base
# shares them (the corpus, a wave of units), so the "before" run happens once per target set.
_BASE_RUNS: dict[tuple[str, str, tuple[str, ...], str], PytestRun] = {}


def _dotted_names(path: str) -> set[str]:
    parts = path[: -len(".py")].split("/") if path.endswith(".py") else path.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts)) if parts[i:]}


def impacted_tests(
    tree: Path, touched: Iterable[str], files: Iterable[FilePatch], graph: Any = None
) -> tuple[list[str], str]:
    """Test files that reach a touched symbol, and how they were found.

    The files of ``graph.tests_reaching`` (with a ``SymbolGraph``) plus the test files that
    import a touched module or name a touched symbol. Test files the patch touches are always
    in. An empty list means: run the whole suite (nothing was found, so nothing is excused).
    """
    touched = sorted(set(touched))
    chosen = {f.path for f in files if f.path.endswith(".py") and is_test_path(f.path)}
    how = "imports and names"
    if graph is not None and hasattr(graph, "tests_reaching"):
        known = [s for s in touched if s in getattr(graph, "symbols", {})]
        chosen |= {str(t).split("::", 1)[0] for t in graph.tests_reaching(known)}
        how = "the graph, imports and names"
    # The names pass runs with a graph too: dynamic dispatch and operators hide edges from it.
    words: set[str] = set()
    for sym in touched:
        path, _, qual = sym.partition("::")
        words |= {n for n in _dotted_names(path) if "." in n or len(n) > 3}
        if qual and not qual.startswith("<"):
            words.add(qual.split(".")[0])
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(words))) + r")\b")
    for test in sorted(tree.rglob("*.py")):
        rel = test.relative_to(tree).as_posix()
        if rel.rsplit("/", 1)[-1] == "conftest.py" or not is_test_path(rel):
            continue
        if words and pattern.search(test.read_text(errors="replace")):
            chosen.add(rel)
    chosen = {c for c in chosen if c.endswith(".py") and c.rsplit("/", 1)[-1] != "conftest.py"}
    return sorted(chosen), how


def gate_impacted_tests(
    trees: Trees,
    sandbox: Sandbox | None,
    touched: Iterable[str],
    files: Sequence[FilePatch],
    graph: Any = None,
    timeout_s: float = 300.0,
) -> Verdict:
    """A test passing before and failing (or vanished, or skipped) after rejects; so does a
    new test that fails."""
    if sandbox is None:
        return Verdict("impacted_tests", "unknown", "no sandbox: the tests cannot be run")
    targets, how = impacted_tests(trees.base, touched, files, graph)
    base_targets = [t for t in targets if (trees.base / t).is_file()]
    key = (str(trees.repo.resolve()), trees.base_sha, tuple(base_targets),
           f"{sandbox.name}:{target_python()}")
    before = _BASE_RUNS.get(key) or run_pytest(sandbox, trees.base, base_targets, timeout_s)
    if before.reported:
        _BASE_RUNS[key] = before
        while len(_BASE_RUNS) > 256:
            _BASE_RUNS.pop(next(iter(_BASE_RUNS)))
    after = run_pytest(sandbox, trees.patched,
                       [t for t in targets if (trees.patched / t).is_file()], timeout_s)
    scope = f"{len(targets)} test file(s) by {how}" if targets else "the whole suite"
    details: dict[str, Any] = {"targets": targets, "selected_by": how}
    for label, result in (("before", before), ("after", after)):
        if not result.reported:
            return Verdict("impacted_tests", "unknown",
                           f"pytest gave no report {label} the patch:\n{result.tail()}", details)
    problems = compare_runs(before, after)
    details.update(before=_summary(before), after=_summary(after), problems=problems)
    if problems:
        return Verdict("impacted_tests", "reject",
                       f"{scope}: " + "; ".join(problems) + f"\n{after.tail(15)}", details)
    if not before.outcomes and not after.outcomes:
        # pytest collected nothing (a repository without tests, or tests it does not find): an
        # empty run is no evidence for the patch, so it is not an accept.
        return Verdict(
            "impacted_tests", "unknown",
            f"{scope}: pytest collected no test before or after the patch: nothing checks "
            f"the patch\n{after.tail(5)}", details,
        )
    reaching = _reaching(graph, touched)
    if reaching and not any("passed" in (_outcome(before, t), _outcome(after, t))
                            for t in reaching):
        # The tests that exercise the patched code pass neither before nor after the patch (not
        # collected, a missing fixture or dependency): other tests passing says nothing about
        # it. (One that starts passing - an xfail the fix turns into XPASS - is evidence.)
        details["reaching"] = reaching[:50]
        return Verdict(
            "impacted_tests", "unknown",
            f"{scope}: none of the {len(reaching)} test(s) that reach the patched code passes, "
            f"before or after it ({_summary(before)} before, {_summary(after)} after): nothing "
            f"checks the patch\n{before.tail(15)}", details,
        )
    if before.outcomes and "passed" not in {*before.outcomes.values(), *after.outcomes.values()}:
        # Every impacted test errors, fails or is skipped before and after the patch (a missing
        # test dependency, a suite for another Python): a pass/fail comparison cannot tell
        # anything about the patch, so it must not count as evidence for it.
        return Verdict(
            "impacted_tests", "unknown",
            f"{scope}: no impacted test passes, before or after the patch ({_summary(before)} "
            f"before, {_summary(after)} after): nothing checks the patch\n{before.tail(15)}",
            details,
        )
    return Verdict(
        "impacted_tests", "accept",
        f"{scope}: {_summary(before)} before, {_summary(after)} after", details,
    )


def _reaching(graph: Any, touched: Iterable[str]) -> list[str]:
    """Test functions (symbol ids) that reach a touched symbol in the graph, if there is one."""
    if graph is None or not hasattr(graph, "tests_reaching"):
        return []
    known = [s for s in touched if s in getattr(graph, "symbols", {})]
    return list(graph.tests_reaching(known)) if known else []


def _outcome(result: PytestRun, test_id: str) -> str | None:
    """The best outcome pytest reported for the test function ``path::Qual.name`` (any of its
    parametrizations); ``None`` when it did not run."""
    path, _, qual = test_id.partition("::")
    name = qual.rsplit(".", 1)[-1]
    found = [o for key, o in result.outcomes.items()
             if key.partition("::")[0] == path and key.rsplit("::", 1)[-1].split("[")[0] == name]
    return "passed" if "passed" in found else (found[0] if found else None)


def compare_runs(before: PytestRun, after: PytestRun) -> list[str]:
    problems = []
    for test, outcome in sorted(before.outcomes.items()):
        if outcome != "passed":
            continue
        now = after.outcomes.get(test)
        if now in _BAD:
            problems.append(f"{_short(test)} passed before and {now} after")
        elif now is None:
            problems.append(f"{_short(test)} passed before and is gone after")
        elif now == "skipped":
            problems.append(f"{_short(test)} passed before and is skipped after")
    for test, outcome in sorted(after.outcomes.items()):
        if test not in before.outcomes and outcome in _BAD:
            problems.append(f"new test {_short(test)} {outcome}")
    return problems


def _short(key: str) -> str:
    file, _, rest = key.partition("::")
    return f"{file}::{rest.split('::')[-1]}"


def _summary(result: PytestRun) -> str:
    counts = Counter(result.outcomes.values())
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no tests"


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
        result = run(sandbox, tree, [*argv, *present], timeout_s) if present else None
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
