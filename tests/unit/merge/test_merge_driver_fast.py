"""The driver's fast line (``python -S .../_run_driver.py``): a real ``git merge`` through it,
git's bytes kept on a clean line merge, the structural stage still reached (``site`` loaded only
then), and nothing but the interpreter's own start-up imported when lines merge cleanly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fleet.merge import driver
from tests.unit.merge._branches import commit_branches, run_git

BASE = "import os\n\n\ndef f():\n    return 1\ndef g():\n    return 2\n"


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_git(repo, *args, check=check)


def _commit_branches(repo: Path, ours: str, theirs: str) -> None:
    commit_branches(repo, BASE, ours, theirs, line=f"{driver.fast_command()} %O %A %B %P")


def test_fast_line_merges_structurally_under_git_merge(git_repo: Path) -> None:
    ours = BASE.replace("import os\n", "import os\nimport re\n").replace("return 1", "return 10")
    theirs = BASE.replace("import os\n", "import os\nimport sys\n")
    _commit_branches(git_repo, ours, theirs)
    merge = _git(git_repo, "merge", "--no-edit", "theirs", check=False)
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert (git_repo / "mod.py").read_text() == (
        "import os\nimport re\nimport sys\n\n\ndef f():\n    return 10\ndef g():\n    return 2\n"
    )


def test_fast_line_leaves_git_labelled_markers_on_a_true_conflict(git_repo: Path) -> None:
    _commit_branches(git_repo, BASE.replace("return 1", "return 10"), BASE.replace("1", "20"))
    merge = _git(git_repo, "merge", "--no-edit", "theirs", check=False)
    assert merge.returncode == 1
    text = (git_repo / "mod.py").read_text()
    assert "<<<<<<< HEAD\n" in text and ">>>>>>> theirs\n" in text


def test_fast_line_imports_nothing_when_lines_merge_cleanly(tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("base", "ours", "theirs")]
    sides = (BASE, BASE.replace("return 1", "return 3"), BASE.replace("return 2", "return 4"))
    for path, text in zip(paths, sides, strict=True):
        path.write_bytes(text.encode())
    expected = subprocess.run(
        ["git", "merge-file", "-p", "--diff3", *map(str, (paths[1], paths[0], paths[2]))],
        capture_output=True,
        check=True,
    ).stdout
    script = str(Path(driver.__file__).resolve().parent / "_run_driver.py")

    def imported(*command: str) -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-S", "-X", "importtime", *command], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
        return {line.rsplit("|", 1)[1].strip() for line in lines}

    start_up = imported("-c", "import os, sys")  # the two the driver needs
    own = {"__future__", "fleet", "fleet.errors", "fleet.merge", "fleet.merge.driver"}
    assert imported(script, *map(str, paths), "m.py") - start_up == own
    assert paths[1].read_bytes() == expected
