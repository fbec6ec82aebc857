"""A target in the ``src`` layout (``src/mylib/__init__.py``). Outside check on WebOb 1.8.7 (from
its PyPI sdist, datetime-utcnow campaign): every test file failed at collection in the worktree
(``No module named 'webob'``: its developers import it through an editable install of their own
checkout), so the impacted-tests gate said "could not judge" and a fix that raises ``TypeError``
for a tz-aware expiry stayed "unsure" instead of rejected. Where the sandbox could see the
developer's checkout or an installed copy, the tests imported that instead of the patched tree:
a false accept. The tree's source roots now go first on ``PYTHONPATH``."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from fleet.integrate import pytest_runner
from fleet.types import Verdict
from fleet.verify import GateOptions, run_gates
from fleet.verify.execution import run_pytest, sandbox_env
from fleet.verify.layout import source_roots
from sandbox import LocalSandbox, Sandbox
from tests.conftest import commit_files

from .conftest import edit_diff

LIB = "def double(x):\n    return 2 * x\n"
TESTS = ("from mylib import double\n\n\n"
         "def test_double():\n    assert double(2) == 4\n\n\n"
         "def test_zero():\n    assert double(0) == 0\n")
DYNAMIC = GateOptions(fail_fast=False, skip=frozenset({"review"}))
SRC = {"src/mylib/__init__.py": LIB, "tests/test_mylib.py": TESTS}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _venv_seeing(venv: Path, installed: Path) -> Path:
    """The python of a venv at ``venv`` with pytest (from the fleet's own environment) and the
    package copy in ``installed`` on its path, as a ``.pth`` of an install puts it there."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    purelib = Path(site.stdout.strip())
    (purelib / "tools.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (purelib / "__editable__.mylib.pth").write_text(f"{installed}\n")
    return python


def _impacted(verdicts: list[Verdict]) -> Verdict:
    return next(v for v in verdicts if v.gate == "impacted_tests")


def _double_broken(repo: Path, path: str, python: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """The impacted-tests verdict on a patch that breaks ``double`` in ``path``, the tests run
    by ``python`` alone (the local backend: the sandbox sees what that interpreter sees)."""
    monkeypatch.setenv("FLEET_TEST_PYTHON", str(python))
    monkeypatch.setenv("FLEET_TEST_PYTHONS", "target")
    broken = edit_diff(repo, path, LIB.replace("2 * x", "2 * x + 1"))
    return _impacted(run_gates(repo, broken, [f"{path}::double"],
                               sandbox=LocalSandbox(warn=False), options=DYNAMIC))


@pytest.mark.parametrize(("files", "roots"), [
    ({"pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["lib"]\n',
      "lib/a/__init__.py": ""}, ("lib",)),
    ({"pyproject.toml": '[tool.setuptools]\npackage-dir = {"" = "code"}\n',
      "code/a.py": ""}, ("code",)),
    ({"pyproject.toml": '[tool.poetry]\npackages = [{include = "a", from = "source"}]\n',
      "source/a/__init__.py": ""}, ("source",)),
    ({"pyproject.toml": '[tool.hatch.build.targets.wheel]\npackages = ["pkgs/a"]\n',
      "pkgs/a/__init__.py": ""}, ("pkgs",)),
    ({"pyproject.toml": '[tool.pdm.build]\npackage-dir = "py"\n', "py/a.py": ""}, ("py",)),
    ({"setup.cfg": "[options]\npackage_dir =\n    =lib\n", "lib/a.py": ""}, ("lib",)),
    ({"setup.cfg": "[options.packages.find]\nwhere = python\n", "python/a/__init__.py": ""},
     ("python",)),
    ({"setup.py": "from setuptools import setup, find_packages\n"
                  "setup(name='a', package_dir={'': 'src'}, packages=find_packages('src'))\n",
      "src/a/__init__.py": ""}, ("src",)),
    ({"setup.py": "import setuptools\n"
                  "setuptools.setup(packages=setuptools.find_packages(where='lib'))\n",
      "lib/a/__init__.py": ""}, ("lib",)),
    # nothing declared: a src directory with a package or a module, as setuptools finds it
    ({"src/a/__init__.py": ""}, ("src",)),
    ({"src/a.py": ""}, ("src",)),
    # a flat layout, a src directory without code, declarations outside the tree or missing
    ({"a/__init__.py": "", "setup.py": "setup(packages=find_packages())\n"}, ()),
    ({"src/README": ""}, ()),
    ({"setup.cfg": "[options]\npackage_dir =\n    =/usr/lib\n"}, ()),
    ({"pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["../up", ".", "gone"]\n'},
     ()),
    ({"pyproject.toml": "not = [toml", "setup.py": "def (:\n", "setup.cfg": "[broken\n"}, ()),
])
def test_source_roots_come_from_the_projects_own_packaging(
        tmp_path: Path, files: dict[str, str], roots: tuple[str, ...]) -> None:
    assert source_roots(_write(tmp_path, files)) == roots


def test_the_roots_go_on_pythonpath_relative_to_the_tree(tmp_path: Path) -> None:
    flat = _write(tmp_path / "flat", {"mylib.py": LIB})
    assert "PYTHONPATH" not in sandbox_env(sys.executable, flat)
    assert "PYTHONPATH" not in sandbox_env(sys.executable)
    tree = _write(tmp_path / "two", {"pyproject.toml": (
        '[tool.setuptools.packages.find]\nwhere = ["src", "plugins"]\n'),
        "src/a/__init__.py": "", "plugins/b.py": ""})
    assert sandbox_env(sys.executable, tree)["PYTHONPATH"] == "src:plugins"


@pytest.mark.sandbox
def test_a_src_layout_projects_tests_judge_the_patch(
        git_repo: Path, bwrap_sandbox: Sandbox) -> None:
    repo = commit_files(git_repo, SRC, "init")
    broken = edit_diff(repo, "src/mylib/__init__.py", LIB.replace("2 * x", "2 * x + 1"))
    got = _impacted(run_gates(repo, broken, ["src/mylib/__init__.py::double"],
                              sandbox=bwrap_sandbox, options=DYNAMIC))
    assert got.status == "reject", got
    assert "tests/test_mylib.py::test_double passed before and failed after" in got.evidence
    assert got.details["before"] == "2 passed"
    same = edit_diff(repo, "src/mylib/__init__.py", LIB.replace("2 * x", "x + x"))
    got = _impacted(run_gates(repo, same, ["src/mylib/__init__.py::double"],
                              sandbox=bwrap_sandbox, options=DYNAMIC))
    assert got.status == "accept", got
    assert "ModuleNotFoundError" not in got.evidence
    run = run_pytest(bwrap_sandbox, repo, [])
    assert sorted(run.outcomes.values()) == ["passed", "passed"], run.tail()
    suite = pytest_runner(bwrap_sandbox)(repo)
    assert suite.passed and suite.outcomes is not None and len(suite.outcomes) == 2


def test_an_installed_copy_of_the_package_never_stands_in_for_the_tree(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The target interpreter has the unpatched package on its path (an editable install of
    the developer's checkout, here a ``.pth`` naming a copy of it) and the sandbox sees it, as
    the local backend sees everything: the patch that breaks ``double`` must still fail."""
    repo = commit_files(git_repo, SRC, "init")
    installed = _write(tmp_path / "checkout", {"src/mylib/__init__.py": LIB}) / "src"
    python = _venv_seeing(tmp_path / "venv", installed)
    probe = subprocess.run([str(python), "-c", "import mylib; print(mylib.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, check=True,
                           env={"PATH": os.environ["PATH"]})
    assert probe.stdout.strip() == str(installed / "mylib" / "__init__.py")
    got = _double_broken(repo, "src/mylib/__init__.py", python, monkeypatch)
    assert got.status == "reject", got
    assert "tests/test_mylib.py::test_double passed before and failed after" in got.evidence


def test_a_layout_fleet_cannot_read_is_unknown_when_the_tests_import_an_installed_copy(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """httplib2 0.18.1 computes its layout (``package_dir={"": "python%s" % sys.version_info[0]}``):
    no source root is read, and the tests import whatever copy the interpreter has. Each run of
    the patched tree now records where the patched packages were imported from: not the tree
    means the patched code did not run, whatever passed."""
    setup = "import sys\nsetup(package_dir={'': 'python%s' % sys.version_info[0]})\n"
    repo = commit_files(git_repo, {"setup.py": setup, "python3/mylib/__init__.py": LIB,
                                   "tests/test_mylib.py": TESTS}, "init")
    assert source_roots(repo) == ()
    installed = _write(tmp_path / "site", {"mylib/__init__.py": LIB})
    python = _venv_seeing(tmp_path / "venv", installed)
    got = _double_broken(repo, "python3/mylib/__init__.py", python, monkeypatch)
    assert got.status == "unknown", got
    where = str((installed / "mylib" / "__init__.py").resolve())
    assert f"the tests imported mylib from {where}, not from the patched tree" in got.evidence
    assert not list(repo.glob("fleet_imported_probe*")) and not (repo / ".fleet-imported.json"
                                                                 ).exists()


def test_the_patched_packages_are_the_trees_top_level_ones(tmp_path: Path) -> None:
    from fleet.verify.impacted import patched_packages

    _write(tmp_path, {"python3/mylib/sub/__init__.py": "", "python3/mylib/__init__.py": "",
                      "examples/json/__init__.py": "", "scripts/tool.py": "",
                      "src/other/__init__.py": ""})
    assert patched_packages(tmp_path, ["python3/mylib/sub/x.py", "examples/json/__init__.py",
                                       "scripts/tool.py", "src/other/y.py", "setup.py"]) == [
        "mylib", "other"]
