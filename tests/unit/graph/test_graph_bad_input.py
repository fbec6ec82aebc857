"""Bad input never crashes the index: each kind is fed and recorded with a reason."""

from __future__ import annotations

import os
from pathlib import Path

from fleet.graph import index


def test_bad_files_are_flagged_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("def ok():\n    return 1\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02def x(): pass\n" * 10)
    (tmp_path / "latin1.py").write_bytes("# caf\xe9\ndef f():\n    return 1\n".encode("latin-1"))
    (tmp_path / "broken.py").write_text(
        "def fine():\n    return 1\n\ndef broken(:\n    pass\n\nclass Later:\n    x = 1\n"
    )
    (tmp_path / "huge_generated.py").write_text("X = 1\n" * 200_000)
    (tmp_path / "minified.js").write_text("var a=1;" * 40_000)
    loop = tmp_path / "loop"
    loop.mkdir()
    os.symlink("..", loop / "again")  # a directory symlink loop
    os.symlink("good.py", tmp_path / "alias.py")
    depth = 400
    deep = "".join("    " * i + "if x:\n" for i in range(depth)) + "    " * depth + "y = 1\n"
    nested = "".join("    " * i + f"def f{i}():\n" for i in range(200)) + "    " * 200 + "pass\n"
    (tmp_path / "deep.py").write_text(deep + "\n" + nested + "x = " + "(" * 3000 + ")" * 3000)

    g = index(tmp_path, max_file_bytes=500_000)
    files = g.files
    assert files["good.py"].status == "ok"
    assert files["binary.py"].status == "skipped" and files["binary.py"].reason == "binary"
    assert files["latin1.py"].status == "partial" and "UTF-8" in files["latin1.py"].reason
    assert "latin1.py::f" in g.symbols
    assert files["broken.py"].status == "partial"
    assert {"broken.py::fine", "broken.py::Later"} <= set(g.symbols)
    assert files["huge_generated.py"].status == "skipped"
    assert "too large" in files["huge_generated.py"].reason
    assert files["minified.js"].status == "skipped"
    assert "minified" in files["minified.js"].reason
    assert files["alias.py"].status == "skipped" and files["alias.py"].reason == "symlink"
    assert not any(p.startswith("loop/") for p in files)
    assert files["deep.py"].status in {"ok", "partial"}
    assert "deep.py::" + ".".join(f"f{i}" for i in range(200)) in g.symbols
    stats = g.stats()
    assert stats["files_skipped"] == 4 and set(stats["skipped"]) == {
        "binary.py", "huge_generated.py", "minified.js", "alias.py"
    }
    g.lock_rank("good.py::ok")  # ranking works over whatever was kept


def test_a_git_work_tree_lists_tracked_and_untracked_files_but_not_ignored_ones(
        git_repo: Path) -> None:
    """Files come from ``git ls-files`` (through fleet.forge._git, the one git module):
    ``.gitignore`` is honoured, untracked files are indexed, a directory git does not
    know (not a work tree) falls back to the walk."""
    from fleet.forge._git import git
    from fleet.graph import source_files

    (git_repo / ".gitignore").write_text("build/\n*.gen.py\n")
    (git_repo / "tracked.py").write_text("def t():\n    return 1\n")
    git(git_repo, "add", "tracked.py", ".gitignore")
    git(git_repo, "commit", "-q", "-m", "tracked")
    (git_repo / "untracked.py").write_text("def u():\n    return 2\n")
    (git_repo / "build").mkdir()
    (git_repo / "build" / "out.py").write_text("def b():\n    return 3\n")
    (git_repo / "made.gen.py").write_text("def g():\n    return 4\n")
    assert source_files(git_repo) == ["tracked.py", "untracked.py"]
    assert set(index(git_repo).files) == {"tracked.py", "untracked.py"}
    (git_repo / ".git" / "HEAD").write_text("garbage\n")  # git refuses: the walk lists all
    assert source_files(git_repo) == ["build/out.py", "made.gen.py", "tracked.py",
                                      "untracked.py"]
