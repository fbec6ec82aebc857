"""``--test-python`` / ``$FLEET_TEST_PYTHON``: the target's tests run with the target's own
environment. Outside check on mkdocs 0.14: its tests import ``markdown``, which the fleet's venv
does not have, so every unit was "unsure"; with the project's venv the unit was verified (6
passed, 1 failed before and after) and the integration ran 38 tests. The sandboxes share that
environment read-only (it was invisible: bubblewrap and gVisor mount an empty /tmp)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from fleet.integrate import pytest_runner
from fleet.verify.execution import run_pytest, target_python
from fleet_pipelines.cli import main
from sandbox import Sandbox
from sandbox._common import toolchain_dirs

from .conftest import git

pytestmark = pytest.mark.sandbox


def _venv(root: Path, with_fleet_packages: bool) -> Path:
    """A real venv; with the fleet's site-packages on its path (a .pth file) plus a module
    that only it has."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip())
    if with_fleet_packages:
        (site / "fleet_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        (site / "only_in_target_env.py").write_text("VALUE = 42\n")
    return python


@pytest.fixture
def repo(git_repo: Path) -> Path:
    (git_repo / "tests").mkdir()
    (git_repo / "tests" / "test_env.py").write_text(
        "import only_in_target_env\n\n\ndef test_value():\n"
        "    assert only_in_target_env.VALUE == 42\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "a test needing the target's environment")
    return git_repo


def test_the_tests_run_with_the_target_interpreter(
    repo: Path, tmp_path: Path, bwrap_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLEET_TEST_PYTHON", raising=False)
    assert target_python() == sys.executable
    fleet_only = run_pytest(bwrap_sandbox, repo, [])
    assert set(fleet_only.outcomes.values()) == {"error"}  # only_in_target_env is missing
    python = _venv(tmp_path / "env", with_fleet_packages=True)  # under /tmp, like pytest's
    monkeypatch.setenv("FLEET_TEST_PYTHON", str(python))
    assert (tmp_path / "env").resolve() in toolchain_dirs()
    from sandbox import select_sandbox

    box = select_sandbox("bwrap")  # a new backend: its read-only paths include the venv
    assert run_pytest(box, repo, []).outcomes == {
        "tests/test_env.py::tests.test_env::test_value": "passed"}
    suite = pytest_runner(box)(repo)
    assert suite.passed and suite.outcomes is not None and len(suite.outcomes) == 1


def test_a_target_interpreter_without_pytest_is_refused_before_any_run(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, bwrap_sandbox: Sandbox,
) -> None:
    monkeypatch.delenv("FLEET_TEST_PYTHON", raising=False)
    bare = _venv(tmp_path / "bare", with_fleet_packages=False)
    home = tmp_path / "home"
    code = main(["sweep", str(repo), "-c", "datetime-utcnow", "--sandbox", "bwrap",
                 "--home", str(home), "--test-python", str(bare)])
    os.environ.pop("FLEET_TEST_PYTHON", None)  # the command sets it for its runs
    assert code == 2
    err = capsys.readouterr().err
    assert f"--test-python {bare}: `{bare} -m pytest --version` fails in the bwrap sandbox" in err
    assert "No module named pytest" in err
    assert not home.exists()
