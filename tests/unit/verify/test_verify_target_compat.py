"""Issue 17, defect 3, on real code: PyJWT 2.0.0 (``setup.cfg python_requires = >=3.6``; its
``jwt/api_jwt.py`` calls ``datetime.utcnow()``). The utcnow fix used to write ``from datetime
import UTC`` (3.11+) into it, and only mypy noticed. Now the codemod spells ``timezone.utc`` for
a target below 3.11, and the ``compat`` gate rejects a patch that needs a newer Python than the
target's floor (vermin), naming the construct and where the floor was read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fleet.campaigns.codemods import apply_codemod, target_params
from fleet.verify import GateOptions, run_gates
from fleet.verify.compat import needs
from fleet.verify.target import interpreters, supported_pythons
from sandbox import Sandbox
from tests.conftest import git

PYJWT = Path(__file__).resolve().parents[2] / "fixtures" / "projects" / "pyjwt-2.0.0"
CALL = "jwt/api_jwt.py::PyJWT._validate_claims"


@pytest.fixture
def pyjwt(git_repo: Path) -> Path:
    for item in PYJWT.iterdir():
        copy = shutil.copytree if item.is_dir() else shutil.copy
        copy(item, git_repo / item.name)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "PyJWT 2.0.0 sdist")
    return git_repo


def _patch(repo: Path, code: str) -> str:
    (repo / "jwt" / "api_jwt.py").write_text(code)
    diff = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    return diff


def test_the_target_pythons_are_read_from_its_metadata(tmp_path: Path) -> None:
    got = supported_pythons(PYJWT)
    assert got.floor == (3, 6)
    assert got.sources == ("setup.cfg python_requires>=3.6",)
    (tmp_path / "setup.py").write_text(
        'from setuptools import setup\nsetup(name="x", python_requires=">=3.7, <4")\n')
    assert supported_pythons(tmp_path).floor == (3, 7)
    (tmp_path / "setup.py").write_text(
        "setup(classifiers=['Programming Language :: Python :: 3.8',\n"
        "                   'Programming Language :: Python :: 3.9'])\n")
    (tmp_path / "tox.ini").write_text("[tox]\nenvlist = py38,py39,py310\n")
    assert supported_pythons(tmp_path).versions == ((3, 8), (3, 9), (3, 10))
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.9"\n')
    assert supported_pythons(tmp_path).floor == (3, 9)  # the specifier decides
    present = interpreters(supported_pythons(PYJWT))
    assert present.get((3, 6), "").endswith("/bin/python3.6")  # pyenv has 3.6-3.13 here


def test_the_utcnow_fix_spells_timezone_utc_below_3_11() -> None:
    source = (PYJWT / "jwt" / "api_jwt.py").read_text()
    params = target_params("datetime-utcnow", PYJWT)
    assert params == {"min_python": "3.6"}
    code = apply_codemod("datetime-utcnow", source, params, path="jwt/api_jwt.py").code  # type: ignore[union-attr]
    assert "from datetime import datetime, timedelta, timezone\n" in code  # in the order
    assert "timegm(datetime.now(timezone.utc).utctimetuple())" in code
    assert "UTC" not in code.replace("utctimetuple", "")
    assert needs(code)[0] is not None and needs(code)[0] <= (3, 6)  # type: ignore[operator]
    module = apply_codemod("datetime-utcnow", "import datetime\nx = datetime.datetime.utcnow()\n",
                           params, path="m.py").code  # type: ignore[union-attr]
    assert module == "import datetime\nx = datetime.datetime.now(datetime.timezone.utc)\n"
    django = ("from datetime import datetime\nfrom django.utils import timezone\n"
              "x = datetime.utcnow()\n")
    left = apply_codemod("datetime-utcnow", django, params, path="m.py")
    assert left.code == django  # type: ignore[union-attr]


def test_compat_rejects_a_patch_that_needs_3_11_on_a_3_6_target(pyjwt: Path) -> None:
    source = (pyjwt / "jwt" / "api_jwt.py").read_text()
    new = apply_codemod("datetime-utcnow", source, {}, path="jwt/api_jwt.py").code  # type: ignore[union-attr]
    assert "from datetime import UTC, datetime, timedelta" in new  # what the fix used to write
    options = GateOptions(skip=frozenset({"impacted_tests", "review", "typecheck"}))
    write = [CALL, "jwt/api_jwt.py::<module>"]
    verdicts = {v.gate: v for v in run_gates(pyjwt, _patch(pyjwt, new), write, options=options)}
    got = verdicts["compat"]
    assert got.status == "reject", got
    assert got.evidence.startswith(
        "the patch raises the minimum Python above 3.6, the oldest the target supports "
        "(setup.cfg python_requires>=3.6): jwt/api_jwt.py needs Python 3.11 (3.5 before): "
        "L4 C5: 'datetime.UTC' member (3.11)")
    fixed = apply_codemod("datetime-utcnow", source, target_params("datetime-utcnow", pyjwt),
                          path="jwt/api_jwt.py").code  # type: ignore[union-attr]
    verdicts = {v.gate: v for v in run_gates(pyjwt, _patch(pyjwt, fixed),
                                             [CALL, "jwt/api_jwt.py::<module>"], options=options)}
    assert verdicts["compat"].status == "accept", verdicts["compat"]
    assert verdicts["compat"].evidence == ("1 Python file(s) still run on 3.6+ (setup.cfg "
                                           "python_requires>=3.6)")


@pytest.mark.sandbox
def test_the_timezone_utc_fix_passes_pyjwts_own_tests(pyjwt: Path, bwrap: Sandbox) -> None:
    source = (pyjwt / "jwt" / "api_jwt.py").read_text()
    fixed = apply_codemod("datetime-utcnow", source, target_params("datetime-utcnow", pyjwt),
                          path="jwt/api_jwt.py").code  # type: ignore[union-attr]
    options = GateOptions(fail_fast=False, skip=frozenset({"review", "typecheck"}))
    verdicts = {v.gate: v for v in run_gates(pyjwt, _patch(pyjwt, fixed),
                                             [CALL, "jwt/api_jwt.py::<module>"], sandbox=bwrap,
                                             options=options)}
    assert [v.status for v in verdicts.values()] == ["accept"] * len(verdicts), verdicts
    assert "passed" in verdicts["impacted_tests"].evidence


@pytest.mark.sandbox
def test_the_tests_run_on_every_interpreter_given_and_a_failure_names_it(
    git_repo: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``FLEET_TEST_PYTHONS``: the impacted tests run before and after on each interpreter; a
    test that breaks on one of them only rejects, naming that interpreter."""
    import sys

    base_python = str(Path(sys.base_prefix) / "bin" / "python3")  # pyenv's, with pytest
    (git_repo / "lib.py").write_text("def where():\n    return 'x'\n")
    (git_repo / "test_lib.py").write_text(
        "import sys\n\nfrom lib import where\n\n\ndef test_where():\n"
        "    assert where() == 'x' or sys.prefix == sys.base_prefix\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "lib")
    (git_repo / "lib.py").write_text("def where():\n    return 'y'\n")
    patch = git(git_repo, "diff")
    git(git_repo, "checkout", "-q", "--", ".")
    monkeypatch.setenv("FLEET_TEST_PYTHONS", f"{sys.executable}:{base_python}")
    [got] = [v for v in run_gates(git_repo, patch, ["lib.py::where"], sandbox=bwrap,
                                  options=GateOptions(fail_fast=False, skip=frozenset({"review"})))
             if v.gate == "impacted_tests"]
    assert got.status == "reject", got
    assert got.details["pythons"] == [sys.executable, base_python]
    assert got.evidence.startswith(f"[{sys.executable}] 1 test file(s) by imports and names: "
                                   "test_lib.py::test_where passed before and failed after")
    assert f"[{base_python}]" not in got.evidence  # it passes there


@pytest.mark.sandbox
def test_a_changed_test_helper_without_tests_needs_not_run_itself(
    pyjwt: Path, bwrap: Sandbox
) -> None:
    """Found running the datetime-utcnow campaign on PyJWT 2.0.0: its unit for
    ``tests/utils.py`` (a helper, ``utc_timestamp()``, no tests of its own) was ``unknown`` by
    "a changed test file must itself run". The tests that use the helper are its evidence."""
    path = "tests/utils.py"
    source = (pyjwt / path).read_text()
    fixed = apply_codemod("datetime-utcnow", source, target_params("datetime-utcnow", pyjwt),
                          path=path).code  # type: ignore[union-attr]
    (pyjwt / path).write_text(fixed)
    patch = git(pyjwt, "diff")
    git(pyjwt, "checkout", "-q", "--", ".")
    options = GateOptions(fail_fast=False, skip=frozenset({"review", "typecheck"}))
    [got] = [v for v in run_gates(pyjwt, patch, [f"{path}::utc_timestamp", f"{path}::<module>"],
                                  sandbox=bwrap, options=options) if v.gate == "impacted_tests"]
    assert got.status == "accept", got
    assert "passed" in got.evidence
