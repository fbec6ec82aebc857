"""`fleet index` and `fleet graph show`, run as the real console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FLEET = [sys.executable, "-m", "fleet_pipelines.cli"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FLEET, *args], capture_output=True, text=True, timeout=120)


def test_index_and_show(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg/__init__.py").write_text("")
    (repo / "pkg/a.py").write_text("from pkg.b import helper\n\ndef run():\n    return helper()\n")
    (repo / "pkg/b.py").write_text("def helper():\n    return 1\n")
    (repo / "bin.py").write_bytes(b"\0\0\0")
    (repo / "test_a.py").write_text("from pkg.a import run\n\ndef test_run():\n    run()\n")

    text = run("index", str(repo))
    assert text.returncode == 0, text.stderr
    assert "resolved 100.0%" in text.stdout and "bin.py: binary" in text.stdout
    assert "(Python: C walk)" in text.stdout  # the extension is built here (CI requires it)

    snap = tmp_path / "graph.pickle"
    res = run("index", str(repo), "--json", "--out", str(snap))
    assert res.returncode == 0, res.stderr
    stats = json.loads(res.stdout)
    assert stats["files"] == 5 and stats["files_skipped"] == 1
    assert stats["skipped"] == {"bin.py": "binary"}
    assert stats["symbols"] == 7 and stats["resolved_share"] == 1.0
    assert stats["python_extractor"] == "C walk"
    assert snap.exists()

    show = run("graph", "show", "pkg.b.helper", "--snapshot", str(snap), "--json")
    assert show.returncode == 0, show.stderr
    info = json.loads(show.stdout)
    assert info["id"] == "pkg/b.py::helper"
    assert "pkg/a.py::run" in info["direct_dependents"]
    assert info["tests_reaching"] == ["test_a.py::test_run"]
    assert info["rank"] < json.loads(
        run("graph", "show", "run", "--repo", str(repo), "--json").stdout
    )["rank"]

    human = run("graph", "show", "pkg/a.py::run", "--repo", str(repo))
    assert human.returncode == 0 and "pkg/b.py::helper" in human.stdout
    missing = run("graph", "show", "nope", "--repo", str(repo))
    assert missing.returncode == 1 and "no symbol" in missing.stderr
    bad = run("index", str(tmp_path / "absent"))
    assert bad.returncode == 2


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg/__init__.py").write_text("")
    (repo / "pkg/a.py").write_text(
        "from pkg.b import Helper\n\n\nclass Runner(Helper):\n    def run(self):\n"
        "        return super().help() + Helper().help()\n")
    (repo / "pkg/b.py").write_text("class Helper:\n    def help(self):\n        return 1\n")
    return repo


def test_index_off_a_terminal_prints_progress_lines_with_the_phase(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    res = run("index", str(repo), "--progress-every", "0", "-o", str(tmp_path / "g.pickle"))
    assert res.returncode == 0, res.stderr
    phases = [line.split()[0] for line in res.stderr.splitlines()]
    assert [p for p in phases if p not in ("index",)] == ["resolve", "graph", "save", "done"]
    assert "index    3/3 files (100%)" in res.stderr
    assert "files      3" in res.stdout  # the summary stays on stdout
    quiet = run("index", str(repo), "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_index_on_a_terminal_shows_the_phase_after_the_files(tmp_path: Path) -> None:
    import os
    import pty

    repo = _repo(tmp_path)
    main, secondary = pty.openpty()
    try:
        res = subprocess.run([*FLEET, "index", str(repo), "-o", str(tmp_path / "g.pickle")],
                             stdout=subprocess.PIPE, stderr=secondary, text=True, timeout=120,
                             env={**os.environ, "COLUMNS": "120", "TERM": "xterm"})
        os.close(secondary)
        screen = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
    finally:
        os.close(main)
    assert res.returncode == 0
    # rich's last frame before the transient bar is cleared names the phase it ended in
    assert b"saving" in screen, screen[-2000:]


def test_graph_edges_json_on_stdout_and_to_a_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    res = run("graph", "edges", str(repo), "--json")
    assert res.returncode == 0, res.stderr
    edges = json.loads(res.stdout)
    assert {"src": "pkg/a.py::Runner.run", "dst": "pkg/b.py::Helper.help", "line": 6,
            "kind": "calls"} in edges
    assert {"src": "pkg/a.py::Runner", "dst": "pkg/b.py::Helper", "line": 4,
            "kind": "inherits"} in edges
    assert all(set(e) == {"src", "dst", "line", "kind"} for e in edges)
    out = tmp_path / "edges.json"
    written = run("graph", "edges", str(repo), "-o", str(out))
    assert written.returncode == 0 and written.stdout == ""
    assert json.loads(out.read_text()) == edges
    lines = run("graph", "edges", str(repo)).stdout.splitlines()
    assert "pkg/a.py::Runner.run\tpkg/b.py::Helper.help\t6\tcalls" in lines
