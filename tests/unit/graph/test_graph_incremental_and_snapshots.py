"""Incremental re-indexing equals a full index after real edits, renames and deletions;
snapshots round-trip."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fleet.graph import SymbolGraph, index, load
from tests.unit.graph.graph_helpers import content, put


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)




def test_incremental_equals_full_after_edits_renames_deletions(git_repo: Path) -> None:
    put(git_repo, "pkg/__init__.py", "")
    put(git_repo, "pkg/core.py", "def base():\n    return 1\n\nclass Core:\n    pass\n")
    put(git_repo, "pkg/use.py", "from pkg.core import base\n\ndef use():\n    return base()\n")
    put(git_repo, "pkg/other.py", "from pkg import use\n\ndef other():\n    return use.use()\n")
    put(git_repo, "tests/test_use.py", "from pkg.use import use\n\ndef test_use():\n    use()\n")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "code")
    g0 = index(git_repo)
    before = content(g0)

    # nothing changed: same graph, and the unchanged files' data objects are reused
    same = index(git_repo, previous=g0)
    assert content(same) == before
    assert same._data["pkg/core.py"] is g0._data["pkg/core.py"]

    # a body-only edit
    put(git_repo, "pkg/use.py", "from pkg.core import base\n\ndef use():\n    return base() + 1\n")
    g1 = index(git_repo, previous=g0)
    assert g1._data["pkg/core.py"] is g0._data["pkg/core.py"]
    assert g1._data["pkg/use.py"] is not g0._data["pkg/use.py"]
    assert content(g1) == content(index(git_repo))
    assert content(g0) == before  # previous is left unchanged

    # an interface edit: a new function other files start to call
    put(git_repo, "pkg/core.py", "def base():\n    return 1\n\ndef extra():\n    return 2\n")
    put(git_repo, "pkg/other.py",
        "from pkg.core import extra\n\ndef other():\n    return extra()\n")
    g2 = index(git_repo, previous=g1)
    assert content(g2) == content(index(git_repo))
    assert g2.dependencies("pkg/other.py::other") == {"pkg/core.py::extra"}

    # a rename (git mv) and a deletion, committed
    git(git_repo, "mv", "pkg/core.py", "pkg/kernel.py")
    put(git_repo, "pkg/use.py", "from pkg.kernel import base\n\ndef use():\n    return base()\n")
    put(git_repo, "pkg/other.py", "def other():\n    return 0\n")
    os.remove(git_repo / "tests/test_use.py")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "rename and delete")
    g3 = index(git_repo, previous=g2)
    full = index(git_repo)
    assert content(g3) == content(full)
    assert "pkg/core.py" not in g3.files and "tests/test_use.py" not in g3.files
    assert g3.dependencies("pkg/use.py::use") == {"pkg/kernel.py::base"}


def test_snapshot_round_trip(tmp_path: Path) -> None:
    put(tmp_path / "r", "m.py", "import os\n\ndef f():\n    return os.getcwd()\n")
    g = index(tmp_path / "r")
    path = g.save(tmp_path / "snap" / "graph.pickle")
    back = load(path)
    assert content(back) == content(g)
    assert back.root == g.root and back.stats()["symbols"] == g.stats()["symbols"]
    assert SymbolGraph.load(path).resolve_dotted("m.f") == "m.py::f"
    # an incremental index can start from a loaded snapshot
    put(tmp_path / "r", "m.py", "import os\n\ndef f():\n    return os.getpid()\n")
    assert content(index(tmp_path / "r", previous=back)) == content(index(tmp_path / "r"))


def test_corrupt_snapshot_is_a_fleet_error(tmp_path: Path) -> None:
    from fleet.errors import FleetError

    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(FleetError, match=r"bad\.pickle"):
        load(bad)
