"""The driver's shell line (``driver.shell_line``): git's line merge runs from git's own shell and
Python starts only when lines conflict. Real ``git merge`` runs through it: a clean line merge
that never starts the interpreter, a structural merge, a true conflict with git's labels, and
no temporary file left in the work tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fleet.merge import driver
from tests.unit.merge._branches import commit_branches, run_git

BASE = "import os\n\n\ndef f():\n    return 1\ndef g():\n    return 2\n"


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_git(repo, *args, check=check)


def _merge(repo: Path, ours: str, theirs: str, line: str) -> subprocess.CompletedProcess[str]:
    commit_branches(repo, BASE, ours, theirs, line=line)
    return _git(repo, "merge", "--no-edit", "theirs", check=False)


def _left_over(repo: Path) -> list[str]:
    return sorted(p.name for p in repo.iterdir() if p.name.startswith(".merge_file"))


def test_clean_line_merge_never_starts_python(git_repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "python-ran"
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 2\n")
    fake.chmod(0o755)
    ours = BASE.replace("return 1", "return 3")
    theirs = BASE.replace("return 2", "return 4")
    merge = _merge(git_repo, ours, theirs, driver.shell_line(python=str(fake)))
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert (git_repo / "mod.py").read_text() == BASE.replace("1", "3").replace("2", "4")
    assert not marker.exists()
    assert _left_over(git_repo) == []


def test_line_conflict_reaches_the_structural_stage(git_repo: Path) -> None:
    ours = BASE.replace("import os\n", "import os\nimport re\n").replace("return 1", "return 10")
    theirs = BASE.replace("import os\n", "import os\nimport sys\n")
    merge = _merge(git_repo, ours, theirs, driver.shell_line())
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert (git_repo / "mod.py").read_text() == (
        "import os\nimport re\nimport sys\n\n\ndef f():\n    return 10\ndef g():\n    return 2\n"
    )
    assert _left_over(git_repo) == []


def test_true_conflict_keeps_git_labelled_markers(git_repo: Path) -> None:
    ours, theirs = BASE.replace("return 1", "return 10"), BASE.replace("1", "20")
    merge = _merge(git_repo, ours, theirs, driver.shell_line())
    assert merge.returncode == 1
    text = (git_repo / "mod.py").read_text()
    assert "<<<<<<< HEAD\n" in text and ">>>>>>> theirs\n" in text
    assert "||||||| base\n" in text
    assert _left_over(git_repo) == []


def test_drop_removes_git_output_and_merges_as_always(tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("base.py", "ours.py", "theirs.py")]
    sides = (BASE, BASE.replace("1", "10"), BASE.replace("1", "20"))
    for path, text in zip(paths, sides, strict=True):
        path.write_text(text)
    leftover = tmp_path / "ours.py.fleet"
    leftover.write_text("git's -p output\n")
    status = driver.main(["--drop", str(leftover), *map(str, paths), "mod.py"])
    assert status == 1
    assert not leftover.exists()
    assert "<<<<<<< ours\n" in paths[1].read_text()


def test_help_prints_the_shell_line() -> None:
    assert driver.shell_line() in driver.help_text()


def _install(cwd: Path, *where: str) -> subprocess.CompletedProcess[str]:
    fleet = Path(sys.executable).with_name("fleet")  # the console script, as a user runs it
    return subprocess.run([str(fleet), "merge-driver", "--install", *where], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False)


def test_install_configures_the_shell_line_once_and_git_merges_through_it(
        git_repo: Path) -> None:
    ours = BASE.replace("import os\n", "import os\nimport re\n")
    theirs = BASE.replace("import os\n", "import os\nimport sys\n")
    commit_branches(git_repo, BASE, ours, theirs, line=None)  # git's own merge conflicts here
    (git_repo / ".gitattributes").write_text("*.md text")  # a user's, without a final newline
    (git_repo / "pkg").mkdir()
    first = _install(git_repo / "pkg")  # the repository around the current directory
    assert first.returncode == 0, first.stderr
    assert _git(git_repo, "config", "merge.fleet.driver").stdout.strip() == driver.shell_line()
    assert _git(git_repo, "config", "merge.fleet.name").stdout.strip() == (
        "fleet structural merge")
    again = _install(git_repo.parent, str(git_repo))  # named, and a second time
    assert again.returncode == 0, again.stderr
    assert "already had" in again.stdout and "added" in first.stdout
    assert (git_repo / ".gitattributes").read_text() == "*.md text\n*.py merge=fleet\n"
    merge = _git(git_repo, "merge", "--no-edit", "theirs", check=False)
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert (git_repo / "mod.py").read_text() == BASE.replace(
        "import os\n", "import os\nimport re\nimport sys\n")
    assert _left_over(git_repo) == []


def test_install_outside_a_repository_is_one_line(tmp_path: Path) -> None:
    done = _install(tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not in a git work tree" in lines[0], done.stderr
    assert not (tmp_path / ".gitattributes").exists()
    two = _install(tmp_path, "a", "b")  # one repository at a time, never read as a merge
    assert two.returncode == 2 and two.stderr.strip() == (
        "usage: fleet merge-driver --install [REPO]")
