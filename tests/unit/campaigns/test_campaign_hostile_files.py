"""Issue 18, part 3: every reader of source files (index, matchers, codemods, gates) goes
through one function, ``fleet.graph.read_source``, that refuses what is not a regular file in
the repository: ``fleet plan`` used to follow a link to ``/dev/zero`` (MemoryError at 2.7 GB), hang
on a link to a FIFO, and end in a traceback on a dangling link or a loop."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleet.campaigns.spec import load_campaign
from fleet.graph import read_source
from fleet.plan import plan_campaign
from fleet.verify._patch import read
from tests.conftest import git

MODEL = '''from pydantic import BaseModel


class User(BaseModel):
    name: str

    class Config:
        extra = "forbid"


def dump(user: User) -> str:
    return user.json()
'''


@pytest.fixture
def hostile(git_repo: Path) -> Path:
    (git_repo / "models.py").write_text(MODEL)
    os.symlink("/dev/zero", git_repo / "zero.py")
    os.mkfifo(git_repo / "pipe")
    os.symlink("pipe", git_repo / "fifo.py")
    os.symlink("gone.py", git_repo / "dangling.py")
    os.symlink("loop.py", git_repo / "loop.py")
    os.symlink("/etc/hostname", git_repo / "outside.py")
    (git_repo / "huge.py").write_text("x = 1\n" * 200_000)  # 1.2 MB > the 1 MB cap
    git(git_repo, "add", "models.py", "zero.py", "fifo.py", "dangling.py", "loop.py",
        "outside.py", "huge.py")
    git(git_repo, "commit", "-qm", "hostile files")
    return git_repo


@pytest.mark.timeout(120)
def test_one_reader_refuses_links_fifos_and_oversized_files(hostile: Path) -> None:
    cases = {
        "zero.py": "symlink", "fifo.py": "symlink", "dangling.py": "symlink",
        "loop.py": "symlink", "outside.py": "symlink", "pipe": "not a regular file",
        "huge.py": "too large: 1200000 bytes > cap 1000000",
    }
    for path, reason in cases.items():
        assert read_source(hostile, path) == (None, reason), path
        assert read(hostile, path) is None  # the gates' reader is the same one
    data, reason = read_source(hostile, "models.py")
    assert data == MODEL.encode() and reason == ""


@pytest.mark.timeout(120)
def test_plan_with_query_matchers_skips_them_with_the_index_reason(hostile: Path) -> None:
    plan = plan_campaign(hostile, load_campaign("pydantic-v2"))
    found = sorted({(f.path, f.rule) for u in plan.units for f in u.findings})
    assert found == [("models.py", "v1-config-class"), ("models.py", "v1-model-dump")]
    skipped = {p: r.reason for p, r in plan.graph.files.items() if r.status == "skipped"}
    for path in ("zero.py", "fifo.py", "dangling.py", "loop.py", "outside.py"):
        assert skipped[path] == "symlink"
    assert skipped["huge.py"].startswith("too large")


@pytest.mark.timeout(120)
def test_plan_with_a_diagnostics_matcher_never_names_a_skipped_file_to_the_tool(
    hostile: Path,
) -> None:
    # ruff-up's matcher runs ruff over the graph's Python files: given zero.py (a link to
    # /dev/zero) ruff read it for 203 s up to 20.9 GB of memory, then the plan exited 2
    (hostile / "old.py").write_text("class Old(object):\n    pass\n")
    git(hostile, "add", "old.py")
    git(hostile, "commit", "-qm", "an UP004 site")
    plan = plan_campaign(hostile, load_campaign("ruff-up"))
    found = sorted({(f.path, f.rule) for u in plan.units for f in u.findings})
    assert found == [("old.py", "UP004")]
    assert plan.graph.files["zero.py"].reason == "symlink"
