"""Running pytest and friends through a ``Sandbox`` with an explicit, secret-free environment,
and reading pytest's per-test outcomes from its JUnit XML report. Public: the agents' tools,
integration's re-run of the tests and the CLI use it as well as the gates."""

from __future__ import annotations

import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.verify._plugins import blocked_plugins
from fleet.verify.layout import source_roots
from sandbox import EndReason, ExecResult, Limits, Sandbox

__all__ = [
    "REPORT",
    "PytestRun",
    "bare_args",
    "blocked_plugins",
    "collect_unlisted",
    "interpreter_name",
    "is_collection_key",
    "last_error_line",
    "parse_collection_errors",
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


def interpreter_name(python: str) -> str:
    """``python`` as one name for its interpreter: the first of ``python``, ``python3`` and
    ``python3.N`` in its directory that is the same file. A venv's ``python`` and ``python3``
    are one interpreter, and console scripts start one or the other (pip writes the name it ran
    as into each script it installs), so a verdict recorded by a run worker started as
    ``python3`` must read the same as one a ``fleet`` started as ``python`` compares it with. A
    path that does not exist is kept as given."""
    path = Path(python)
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return python
    versioned = sorted(p.name for p in path.parent.glob("python3.*")
                       if re.fullmatch(r"python3\.\d+", p.name))
    for name in ("python", "python3", *versioned):
        sibling = path.parent / name
        try:
            if sibling.resolve(strict=True) == real:
                return str(sibling)
        except (OSError, RuntimeError):
            continue
    return python


def sandbox_env(python: str | None = None, tree: Path | None = None) -> dict[str, str]:
    """The whole environment a sandboxed command gets (never the orchestrator's secrets), with
    ``python``'s directory (default :func:`target_python`) first on ``PATH`` and, for a command
    run in ``tree``, the tree's source roots (``src``: :func:`fleet.verify.layout.source_roots`)
    on ``PYTHONPATH``, relative to it, so the tree's code is imported, never an installed copy."""
    env = {
        "PATH": f"{Path(python or target_python()).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }
    roots = source_roots(tree) if tree is not None else ()
    if roots:
        env["PYTHONPATH"] = os.pathsep.join(roots)
    return env


@dataclass
class PytestRun:
    """Outcome per test id (``passed`` | ``failed`` | ``error`` | ``skipped``) of one run.

    ``collection_errors``: test file (or directory) -> the last line of its error, for what
    pytest could not collect (each also an ``error`` in ``outcomes``, see
    :func:`is_collection_key`) (an import that fails, a conftest below it that raises). A run that
    pytest aborted on a conftest before any test (``aborted_by`` = that conftest's path) or that
    ran past its deadline (``timed_out``; ``seen`` = the failures printed until then, the hung
    process tree killed by the sandbox) has no report."""

    outcomes: dict[str, str] = field(default_factory=dict)
    exit_code: int = 0
    output: str = ""
    reported: bool = False
    collection_errors: dict[str, str] = field(default_factory=dict)
    timed_out: bool = False
    wall_s: float = 0.0
    seen: list[str] = field(default_factory=list)
    aborted_by: str | None = None
    python: str = ""
    #: package -> [the file the tests imported it from, inside the tree or not] (``packages``)
    imported: dict[str, list[object]] = field(default_factory=dict)

    def tail(self, lines: int = 25) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])

    def why_unreported(self, timeout_s: float) -> str:
        """One line on why there is no report: a timeout (with the failures seen), a conftest
        that aborts pytest, or the last line pytest printed."""
        if self.timed_out:
            seen = f"; failures seen before: {', '.join(self.seen)}" if self.seen else ""
            return f"timed out after {timeout_s:g} s (the process tree was killed){seen}"
        if self.aborted_by:
            return f"{self.aborted_by} aborts pytest: {last_error_line(self.output)}"
        return f"pytest gave no report: {last_error_line(self.output)}"


_SEEN = re.compile(r"^(\S+::\S+) (FAILED|ERROR)\b|^(FAILED|ERROR) (\S+::\S+)", re.M)
_CONFTEST = re.compile(r"while loading conftest '([^']+)'")


def last_error_line(output: str) -> str:
    """The line that says what went wrong: the last ``E   ...`` line (pytest's exception
    line), else the last non-empty line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    return (errors[-1] if errors else lines[-1] if lines else "no output")[:300]


_PROBE_MODULE = "fleet_imported_probe"
_IMPORTED = ".fleet-imported.json"
# A pytest plugin (any Python from 2.7 on) that writes where each named package was imported
# from at the end of the session, and whether that is inside the tree (the working directory).
_PROBE_SOURCE = """import json, os, sys
NAMES = %r
def pytest_sessionfinish(session):
    root = os.path.realpath(os.getcwd())
    out = {}
    for name in NAMES:
        path = getattr(sys.modules.get(name), "__file__", None)
        if path:
            path = os.path.realpath(path)
            out[name] = [path, path.startswith(root + os.sep)]
    with open(os.path.join(root, %r), "w") as handle:
        json.dump(out, handle)
"""


def run_pytest(
    sandbox: Sandbox, tree: Path, targets: Sequence[str], timeout_s: float = 300.0,
    python: str | None = None, packages: Sequence[str] = (),
) -> PytestRun:
    """pytest on ``targets`` (paths or node ids; all when empty) in ``tree`` through ``sandbox``,
    with ``python`` (default :func:`target_python`). ``packages``: names whose import origin the
    run records in :attr:`PytestRun.imported` (a plugin written into the tree for the run)."""
    python = python or target_python()
    report = tree / REPORT
    report.unlink(missing_ok=True)
    probe, imported = tree / f"{_PROBE_MODULE}.py", tree / _IMPORTED
    imported.unlink(missing_ok=True)
    if packages:
        probe.write_text(_PROBE_SOURCE % (sorted(packages), _IMPORTED))
    argv = [
        python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly",
        *(["-p", _PROBE_MODULE] if packages else []),
        # the fleet's own test plugins stay out of a target run on the fleet's interpreter
        *blocked_plugins(python, tree),
        # one test file that cannot be imported must not hide the others' outcomes
        "--continue-on-collection-errors",
        f"--junitxml={REPORT}", "-o", "junit_family=xunit1",
        *([] if targets else bare_args(tree)), *targets,
    ]
    result = collect_unlisted(run(sandbox, tree, argv, timeout_s, python), tree, targets,
                              lambda named: run(sandbox, tree, [*argv, *named], timeout_s, python))
    output = result.stdout + result.stderr
    run_ = PytestRun(exit_code=result.exit_code, output=output, wall_s=result.wall_s,
                     timed_out=result.reason is EndReason.TIMEOUT, python=python)
    run_.seen = sorted({m[1] or m[4] for m in _SEEN.finditer(output)})
    if report.is_file():
        text = report.read_text()
        report.unlink()
        if not run_.timed_out:
            try:
                run_.outcomes = parse_junit(text)
                run_.collection_errors = parse_collection_errors(text)
                run_.reported = True
            except ET.ParseError as exc:
                # pytest died while writing it (freezegun 0.3.15 with a broken fake clock left
                # an empty file): no report, said so, never a crash of the gate
                run_.outcomes, run_.collection_errors = {}, {}
                run_.output += f"\nE   pytest's JUnit report does not parse ({exc})"
    if not run_.reported and (m := _CONFTEST.search(output)):
        run_.aborted_by = _relative(tree, m[1])
    if packages:
        probe.unlink(missing_ok=True)
        try:
            found = json.loads(imported.read_text()) if imported.is_file() else {}
        except (OSError, ValueError):
            found = {}
        imported.unlink(missing_ok=True)
        run_.imported = {k: v for k, v in found.items()
                         if isinstance(v, list) and len(v) == 2} if isinstance(found, dict) else {}
    return run_


def is_collection_key(key: str, errors: dict[str, str]) -> bool:
    """``key`` of :attr:`PytestRun.outcomes` is the ``error`` entry of a collection error."""
    parts = key.split("::")
    return len(parts) == 3 and parts[1] == "" and (
        parts[0] in errors or parts[2].replace(".", "/") + ".py" in errors)


def _relative(tree: Path, path: str) -> str:
    """``path`` (as the sandbox saw it) relative to ``tree``: the longest suffix that exists."""
    parts = Path(path).parts
    for i in range(len(parts)):
        if (tree.joinpath(*parts[i:])).exists() and parts[i] != "/":
            return "/".join(parts[i:])
    return path


def collect_unlisted(result: ExecResult, tree: Path, targets: Sequence[str],
                     rerun: Callable[[list[str]], ExecResult]) -> ExecResult:
    """``result`` of a pytest run, or, when it was a bare run (no ``targets``) that collected
    nothing (exit 5), of ``rerun`` naming the test files pytest's default patterns miss."""
    if not targets and result.reason == "exited" and result.exit_code == 5:
        named = unlisted_test_files(tree)
        if named:
            return rerun(named)
    return result


def bare_args(tree: Path) -> list[str]:
    """Options of a whole-suite run: none (pytest's own collection), or, when the target does
    not configure pytest's collection (``python_files``, ``testpaths``) and holds test files
    that pytest's default patterns miss, ``python_files`` with those files' paths added (pytest
    matches a pattern with a ``/`` against the path's tail). WTForms 2.3.3 keeps its tests in
    ``tests/fields.py``, ``tests/validators.py``, ...: a bare ``pytest`` collected one file (an
    extension's, which errors) and the integration's run said "tests fail, but no new failure"
    having run none of them. (Naming the files beside ``.`` does not work: pytest 8 drops an
    argument inside another.)"""
    if _configures_collection(tree):
        return []
    from fleet.verify.integrity import holds_tests

    missed = [f for f in unlisted_test_files(tree)
              if not _DEFAULT_FILES.fullmatch(f.rsplit("/", 1)[-1]) and not any(
                  c.isspace() for c in f) and holds_tests(tree, f, unsure=False)]
    return ["-o", "python_files=test_*.py *_test.py " + " ".join(missed)] if missed else []


_DEFAULT_FILES = re.compile(r"test_.*\.py|.*_test\.py")
_PYTEST_SECTIONS = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def _configures_collection(tree: Path) -> bool:
    """The target's pytest configuration names its test files or paths (each file read as
    :func:`fleet.verify._patch.read` reads a target's file: never a link or a device)."""
    import configparser
    import tomllib

    from fleet.verify._patch import read

    keys = ("python_files", "testpaths")
    for name, section in _PYTEST_SECTIONS:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(read(tree, name) or "")
        except configparser.Error:
            continue
        if parser.has_section(section) and any(parser.has_option(section, k) for k in keys):
            return True
    try:
        data = tomllib.loads(read(tree, "pyproject.toml") or "")
    except tomllib.TOMLDecodeError:
        return False
    options = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
    return isinstance(options, dict) and any(k in options for k in keys)


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


def run(sandbox: Sandbox, tree: Path, argv: Sequence[str], timeout_s: float,
        python: str | None = None) -> ExecResult:
    return sandbox.run(
        argv, cwd=tree, env=sandbox_env(python, tree), timeout=timeout_s,
        limits=Limits(wall_s=timeout_s),
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


def parse_collection_errors(text: str) -> dict[str, str]:
    """Test file or directory -> the last line of its collection error, from a JUnit report
    (pytest writes one ``<testcase classname="">`` with ``collection failure`` each; an older
    pytest names the module dotted and gives no ``file``)."""
    out: dict[str, str] = {}
    for case in ET.fromstring(text).iter("testcase"):
        error = case.find("error")
        if case.get("classname") or error is None or "collection" not in error.get("message", ""):
            continue
        path = case.get("file") or case.get("name", "").replace(".", "/") + ".py"
        out[path] = last_error_line(error.text or error.get("message") or "")
    return out
