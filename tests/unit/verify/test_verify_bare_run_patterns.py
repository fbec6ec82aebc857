"""A whole-suite run collects the test files pytest's default patterns miss. Outside check on
WTForms 2.3.3 (its PyPI sdist, the TestCase-aliases campaign): its tests live in
``tests/fields.py``, ``tests/validators.py``, ... (a runner of its own); a bare ``pytest``
collected only ``tests/ext_appengine/test_ndb.py``, which errors, and the integration's run
reported "tests fail, but no new failure" having run none of the 183 tests that pass. Now those
files join ``python_files`` when the target configures no collection of its own."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fleet.integrate import pytest_runner
from fleet.verify.execution import bare_args, run_pytest
from sandbox import Sandbox
from tests.conftest import commit_files

CASE = ("from lib import double\n\n\n"
        "class TestDouble:\n"
        "    def test_two(self):\n        assert double(2) == 4\n\n"
        "    def test_zero(self):\n        assert double(0) == 0\n")
FILES = {
    "lib.py": "def double(x):\n    return 2 * x\n",
    "tests/__init__.py": "",
    "tests/fields.py": CASE,
    "tests/common.py": "HELPER = 1\n",  # no test: never named
    "tests/ext/test_gae.py": "import gaetest_common\n",  # what pytest does collect: errors
}


def test_the_missed_files_join_python_files(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert bare_args(tmp_path) == ["-o", "python_files=test_*.py *_test.py tests/fields.py"]
    for name, text in (("pytest.ini", "[pytest]\ntestpaths = tests\n"),
                       ("setup.cfg", "[tool:pytest]\npython_files = *.py\n"),
                       ("tox.ini", "[pytest]\npython_files = check_*.py\n"),
                       ("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = ['t']\n")):
        (tmp_path / name).write_text(text)
        assert bare_args(tmp_path) == [], name  # the target's own collection is kept
        (tmp_path / name).unlink()
    (tmp_path / "tests" / "fields.py").rename(tmp_path / "tests" / "test_fields.py")
    assert bare_args(tmp_path) == []  # nothing missed


@pytest.mark.sandbox
def test_a_whole_suite_run_runs_them(git_repo: Path, bwrap_sandbox: Sandbox) -> None:
    repo = commit_files(git_repo, FILES, "init")
    run = run_pytest(bwrap_sandbox, repo, [])
    assert Counter(run.outcomes.values()) == {"passed": 2, "error": 1}, run.tail()
    suite = pytest_runner(bwrap_sandbox)(repo)
    assert suite.outcomes is not None
    assert Counter(suite.outcomes.values()) == {"passed": 2, "error": 1}, suite.output


def test_a_configuration_file_that_is_a_device_link_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fields.py").write_text(CASE)
    (tmp_path / "tox.ini").symlink_to("/dev/zero")  # read as it is, it never ends
    (tmp_path / "pyproject.toml").symlink_to("/dev/zero")
    assert bare_args(tmp_path) == ["-o", "python_files=test_*.py *_test.py tests/fields.py"]
