"""Stage 1, the line merge: identical to ``git merge-file --diff3``, and conflict parsing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fleet.merge import Clean, Conflicted, merge3, parse_conflicts
from fleet.merge._line import line_merge

BASE = "a\nb\nc\nd\ne\n"


def _git(tmp_path: Path, base: str, ours: str, theirs: str) -> tuple[str, int]:
    for name, text in (("o", ours), ("b", base), ("t", theirs)):
        (tmp_path / name).write_bytes(text.encode())
    proc = subprocess.run(
        [
            "git",
            "merge-file",
            "-p",
            "--diff3",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
            "o",
            "b",
            "t",
        ],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    return proc.stdout.decode(), proc.returncode


TRIPLES = [
    ("different lines", BASE, BASE.replace("a\n", "A\n"), BASE.replace("e\n", "E\n")),
    ("same line", BASE, BASE.replace("c\n", "X\n"), BASE.replace("c\n", "Y\n")),
    ("no final newline", "x\ny", "x\ny", "x\ny\nz"),
    ("ours unchanged", BASE, BASE, BASE + "f"),
    ("theirs unchanged", "p\nq", "p\nq\n", "p\nq"),
    ("both equal", BASE, "z\n", "z\n"),
    ("adjacent lines", BASE, BASE.replace("b\n", "B\n"), BASE.replace("c\n", "C\n")),
    ("non-ascii", "caf\xe9\n", "caf\xe9\nx\n", "y\ncaf\xe9\n"),
]


@pytest.mark.parametrize(("label", "base", "ours", "theirs"), TRIPLES)
def test_line_stage_equals_git(
    tmp_path: Path, label: str, base: str, ours: str, theirs: str
) -> None:
    expected, status = _git(tmp_path, base, ours, theirs)
    for result in (line_merge(base, ours, theirs), merge3(base, ours, theirs, "notes.txt")):
        if status == 0:
            assert isinstance(result, Clean), label
            assert result.text == expected
        else:
            assert isinstance(result, Conflicted), label
            assert result.text_with_markers == expected
            assert len(result.conflicts) == status


def test_clean_results_of_git_are_kept_for_python() -> None:
    base = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    ours = base.replace("return 1", "return 10")
    theirs = base.replace("return 2", "return 20")
    result = merge3(base, ours, theirs, "m.py")
    assert result == Clean(line_merge(base, ours, theirs).text, stage="line")  # type: ignore[union-attr]


def test_parse_conflicts_reads_diff3_markers() -> None:
    text = "a\n<<<<<<< ours\nX\n||||||| base\nc\n=======\nY\nZ\n>>>>>>> theirs\nd\n"
    (region,) = parse_conflicts(text)
    assert (region.start_line, region.end_line) == (2, 9)
    assert (region.ours, region.base, region.theirs) == ("X\n", "c\n", "Y\nZ\n")
    result = Conflicted(text, (region,))
    assert result.conflicted_lines == 8


def test_non_python_paths_stay_line_merges() -> None:
    base = "import os\n"
    result = merge3(base, base + "import re\n", base + "import sys\n", "requirements.txt")
    assert isinstance(result, Conflicted) and result.stage == "line"
