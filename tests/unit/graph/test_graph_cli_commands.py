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
