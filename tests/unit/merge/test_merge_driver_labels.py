"""The merge driver's conflict markers carry git's labels (the branch names), not ours/theirs."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.merge._result import relabel
from fleet.merge.driver import main
from tests.unit.merge._branches import commit_branches, run_git

BASE = "import os\n\n\ndef f():\n    return 1\n"


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_git(repo, *args, check=check)


def _conflicting_branches(repo: Path, placeholders: str) -> None:
    """``main`` and ``feature/login`` change the same line of mod.py differently."""
    command = f"{shlex.quote(sys.executable)} -m fleet_pipelines.cli merge-driver {placeholders}"
    commit_branches(repo, BASE, BASE.replace("return 1", "return 10"),
                    BASE.replace("return 1", "return 20"), line=command, branch="feature/login")


@pytest.mark.parametrize("placeholders", ["%O %A %B %P", "%O %A %B %P %S %X %Y"])
def test_git_merge_markers_carry_the_branch_names(git_repo: Path, placeholders: str) -> None:
    # git 2.39 passes %S/%X/%Y through unexpanded (>= 2.44 expands them): both set-ups must give
    # the labels git itself writes for this merge.
    _conflicting_branches(git_repo, placeholders)
    merge = _git(git_repo, "merge", "--no-edit", "feature/login", check=False)
    assert merge.returncode == 1, merge.stdout + merge.stderr
    text = (git_repo / "mod.py").read_text()
    assert text == (
        "import os\n\n\ndef f():\n<<<<<<< HEAD\n    return 10\n||||||| base\n    return 1\n"
        "=======\n    return 20\n>>>>>>> feature/login\n"
    )
    assert "ours" not in text and "theirs" not in text


def _sides(tmp_path: Path) -> list[str]:
    paths = [tmp_path / name for name in ("base", "ours", "theirs")]
    for path, text in zip(
        paths, (BASE, BASE.replace("1", "10"), BASE.replace("1", "20")), strict=True
    ):
        path.write_text(text)
    return [str(p) for p in paths]


def test_expanded_labels_are_written_into_the_markers(tmp_path: Path) -> None:
    argv = _sides(tmp_path)
    assert main([*argv, "mod.py", "merged common ancestors", "HEAD", "origin/topic x"]) == 1
    text = Path(argv[1]).read_text()
    assert "<<<<<<< HEAD\n" in text and "||||||| merged common ancestors\n" in text
    assert text.endswith("    return 20\n>>>>>>> origin/topic x\n")


def test_without_labels_or_git_merge_the_markers_say_ours_and_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [k for k in os.environ if k.startswith("GITHEAD_")]:
        monkeypatch.delenv(name)
    argv = _sides(tmp_path)
    assert main([*argv, "mod.py", "%S", "%X", "%Y"]) == 1
    text = Path(argv[1]).read_text()
    assert "<<<<<<< ours\n" in text and "||||||| base\n" in text and ">>>>>>> theirs\n" in text
    assert main([*argv, "mod.py", "a", "b", "c", "extra"]) == 2


def test_relabel_rewrites_only_conflict_markers() -> None:
    text = (
        "x = '''\n>>>>>>> theirs\n'''\n<<<<<<< ours\r\nA\n||||||| base\nB\n=======\nC\n"
        ">>>>>>> theirs\n"
    )
    assert relabel(text, "HEAD", "anc", "topic") == (
        "x = '''\n>>>>>>> theirs\n'''\n<<<<<<< HEAD\r\nA\n||||||| anc\nB\n=======\nC\n"
        ">>>>>>> topic\n"
    )
