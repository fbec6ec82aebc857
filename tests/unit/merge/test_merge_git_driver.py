"""The git merge driver: a real ``git merge`` of two branches through ``fleet merge-driver``."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.merge.driver import main
from tests.unit.merge._branches import commit_branches, run_git

BASE = "import os\n\n\ndef f():\n    return 1\ndef g():\n    return 2\n"


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_git(repo, *args, check=check)


def _branches(repo: Path, ours: str, theirs: str, driver: bool = True) -> None:
    command = f"{shlex.quote(sys.executable)} -m fleet_pipelines.cli merge-driver %O %A %B %P"
    commit_branches(repo, BASE, ours, theirs, line=command if driver else None)


def test_git_merge_through_the_driver_is_clean(git_repo: Path) -> None:
    ours = BASE.replace("import os\n", "import os\nimport re\n").replace("return 1", "return 10")
    theirs = BASE.replace("import os\n", "import os\nimport sys\n").replace(
        "def g():\n", "def g(x=0):\n"
    )
    _branches(git_repo, ours, theirs)
    merge = _git(git_repo, "merge", "--no-edit", "theirs", check=False)
    assert merge.returncode == 0, merge.stdout + merge.stderr
    merged = (git_repo / "mod.py").read_text()
    assert merged == (
        "import os\nimport re\nimport sys\n\n\ndef f():\n    return 10\ndef g(x=0):\n    return 2\n"
    )
    assert _git(git_repo, "status", "--porcelain").stdout == ""


def test_same_branches_conflict_without_the_driver(git_repo: Path) -> None:
    ours = BASE.replace("import os\n", "import os\nimport re\n")
    theirs = BASE.replace("import os\n", "import os\nimport sys\n")
    _branches(git_repo, ours, theirs, driver=False)
    assert _git(git_repo, "merge", "--no-edit", "theirs", check=False).returncode != 0


def test_true_conflict_through_the_driver_leaves_markers(git_repo: Path) -> None:
    ours = BASE.replace("return 1", "return 10")
    theirs = BASE.replace("return 1", "return 20")
    _branches(git_repo, ours, theirs)
    merge = _git(git_repo, "merge", "--no-edit", "theirs", check=False)
    assert merge.returncode == 1
    text = (git_repo / "mod.py").read_text()
    # git's labels: HEAD and the merged branch's name (here called "theirs").
    assert "<<<<<<< HEAD\n    return 10\n||||||| base\n    return 1\n=======\n" in text
    assert "    return 20\n>>>>>>> theirs\n" in text
    assert "UU mod.py" in _git(git_repo, "status", "--porcelain").stdout


def test_driver_protocol_exit_codes_and_result_file(tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("base", "ours", "theirs")]
    for path, text in zip(
        paths, (BASE, BASE.replace("1", "3"), BASE.replace("2", "4")), strict=True
    ):
        path.write_text(text)
    assert main([str(p) for p in paths] + ["pkg/mod.py"]) == 0
    assert paths[1].read_text() == BASE.replace("1", "3").replace("2", "4")
    paths[2].write_text(BASE.replace("1", "5"))
    assert main([str(p) for p in paths]) == 1
    assert paths[1].read_text().count("<<<<<<< ours") == 1
    assert main([]) == 2
    assert main([str(tmp_path / "missing"), str(paths[1]), str(paths[2]), "x.py"]) == 2


@pytest.mark.parametrize(
    ("ours", "theirs", "loaded"),
    [
        (BASE.replace("import os\n", "import re\n"), BASE.replace("def f", "def h"), []),
        (BASE + "X = 1\n", BASE + "Y = 2\n", ["libcst"]),
    ],
    ids=["lines-clean", "structural"],
)
def test_driver_imports_nothing_heavy(
    tmp_path: Path, ours: str, theirs: str, loaded: list[str]
) -> None:
    paths = [tmp_path / name for name in ("base", "ours", "theirs")]
    sides = (BASE, ours, theirs)
    for path, text in zip(paths, sides, strict=True):
        path.write_text(text)
    heavy = ("libcst", "dagster", "networkx", "typer", "tree_sitter")
    code = (
        "import sys\nfrom fleet_pipelines.cli import main\n"
        f"code = main(['merge-driver', *{[str(p) for p in paths]!r}, 'm.py'])\n"
        f"print(code, [m for m in {heavy!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"0 {loaded}"
