"""``fleet merge`` output edge cases from an outside check: an unwritable ``-o`` used to end in a
traceback with exit 1 (which means "conflicted"), and non-UTF-8 text on stdout depended on the
locale's error handler. Also the git merge driver set up as README.md says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _fleet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", *args],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=60,
    )


def _three(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> list[str]:
    paths = []
    for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / f"{name}.py").write_bytes(data)
        paths.append(str(tmp_path / f"{name}.py"))
    return paths


def test_unwritable_output_is_exit_2_without_traceback(tmp_path: Path) -> None:
    files = _three(tmp_path, b"x = 1\n", b"x = 1\ny = 2\n", b"z = 0\nx = 1\n")
    out = _fleet("merge", *files, "-o", str(tmp_path / "no-such-dir" / "merged.py"))
    assert out.returncode == 2, out.stderr
    assert b"fleet merge: cannot write" in out.stderr and b"Traceback" not in out.stderr


def test_non_utf8_bytes_reach_stdout_unchanged_under_a_strict_locale(tmp_path: Path) -> None:
    files = _three(
        tmp_path,
        b"# caf\xe9\nx = 1\ny = 2\n",
        b"# caf\xe9\nx = 10\ny = 2\n",
        b"# caf\xe9\nx = 1\ny = 20\n",
    )
    out = _fleet("merge", *files, env={"PYTHONIOENCODING": "utf-8:strict"})
    assert out.returncode == 1, out.stderr  # same-adjacent-lines: a conflict, not a crash
    assert out.stdout.startswith(b"# caf\xe9\n<<<<<<< ours\n")
    assert b"x = 10\n" in out.stdout and b"y = 20\n" in out.stdout


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def test_readme_driver_setup_merges_different_functions(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    base = "def a(x):\n    y = x + 1\n    return y\n\n\ndef b(x):\n    z = x * 2\n    return z\n"
    (repo / "m.py").write_text(base)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "one")
    (repo / "m.py").write_text(base.replace("x + 1", "x + 100") + "\n\ndef c():\n    pass\n")
    _git(repo, "commit", "-qam", "one")
    _git(repo, "checkout", "-q", "main")
    (repo / "m.py").write_text(base.replace("x * 2", "x * 200") + "\n\ndef d():\n    pass\n")
    _git(repo, "commit", "-qam", "two")
    # exactly the README's three lines, with `fleet` on PATH
    _git(repo, "config", "merge.fleet.name", "fleet structural merge")
    _git(repo, "config", "merge.fleet.driver", "fleet merge-driver %O %A %B %P")
    (repo / ".gitattributes").write_text("*.py merge=fleet\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    merged = subprocess.run(
        ["git", "merge", "-q", "one", "-m", "merge"], cwd=repo, env=env, capture_output=True
    )
    assert merged.returncode == 0, merged.stderr
    text = (repo / "m.py").read_text()
    assert "x + 100" in text and "x * 200" in text
    assert "def c():" in text and "def d():" in text and "<<<<<<<" not in text
