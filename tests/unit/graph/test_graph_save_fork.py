"""A snapshot written by a forked child while the caller computes the summary
(fleet/graph/_save_fork.py): the same bytes as a save done in the caller; a child that fails or
is killed raises one line naming the snapshot and leaves the previous one in place, no temp file
behind; one process wanted (``FLEET_GRAPH_THREADS=1``) or a small graph: saved in the caller.
``fleet index -o`` with a snapshot it cannot write fails with one line before indexing. The
checks that fork run in a fresh interpreter (pytest's own threads would forbid the fork)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.graph import SnapshotError, SymbolGraph, check_writable, index
from tests.unit.graph.graph_helpers import content, put
from tests.unit.graph.test_graph_parallel import _in_a_fresh_interpreter

FLEET = [sys.executable, "-m", "fleet_pipelines.cli"]


def _repo(root: Path) -> Path:
    put(root, "pkg/__init__.py", "")
    put(root, "pkg/a.py", "from pkg.b import helper\n\n\ndef run():\n    return helper()\n")
    put(root, "pkg/b.py", "class Base:\n    def helper(self):\n        return 1\n\n\n"
        "def helper():\n    return Base().helper()\n")
    return root


def _check_forked_save(scratch: str) -> None:
    from fleet.graph import save_started

    tmp = Path(scratch)
    graph = index(_repo(tmp / "repo"))
    os.environ["FLEET_GRAPH_THREADS"] = "2"
    forked = save_started(graph, tmp / "forked.pickle", "repo-key", min_files=0)
    assert forked.forked and forked.pid != os.getpid()
    graph.stats()  # what ``fleet index`` computes meanwhile
    assert forked.wait() == tmp / "forked.pickle"
    graph.save(tmp / "here.pickle", "repo-key")
    assert (tmp / "forked.pickle").read_bytes() == (tmp / "here.pickle").read_bytes()
    again = SymbolGraph.load(tmp / "forked.pickle", repository="repo-key")
    assert content(again) == content(graph)

    # one process wanted, or fewer files than the threshold: saved here, before it returns
    os.environ["FLEET_GRAPH_THREADS"] = "1"
    one = save_started(graph, tmp / "one.pickle", min_files=0)
    assert not one.forked and (tmp / "one.pickle").exists()
    os.environ["FLEET_GRAPH_THREADS"] = "2"
    small = save_started(graph, tmp / "small.pickle")  # 4 files < MIN_FILES
    assert not small.forked and (tmp / "small.pickle").exists()

    # the child cannot write its temp file (a directory stands there): one line, and the
    # snapshot already there is left as it was
    target = tmp / "forked.pickle"
    before = target.read_bytes()
    (tmp / "forked.pickle.tmp").mkdir()
    failing = save_started(graph, target, "repo-key", min_files=0)
    assert failing.forked
    try:
        failing.wait()
    except SnapshotError as exc:
        message = str(exc)
    else:
        raise AssertionError("a save that could not write its file did not fail")
    assert message.startswith(f"could not write the graph snapshot {target}: ")
    assert "\n" not in message and "directory" in message.lower(), message
    assert target.read_bytes() == before
    (tmp / "forked.pickle.tmp").rmdir()

    # killed mid-save: an error naming the signal, no temp file, a snapshot that loads
    killed = save_started(graph, target, "repo-key", min_files=0)
    assert killed.pid is not None
    os.kill(killed.pid, signal.SIGKILL)
    try:
        killed.wait()
    except SnapshotError as exc:
        assert "killed by signal 9" in str(exc) and str(target) in str(exc), exc
    # (a child that finished before the signal arrived has saved: no error, nothing to check)
    assert not (tmp / "forked.pickle.tmp").exists()
    assert content(SymbolGraph.load(target, repository="repo-key")) == content(graph)

    # cancelled (the caller interrupted): the child stopped and reaped, no temp file
    cancelled = save_started(graph, tmp / "cancelled.pickle", min_files=0)
    pid = cancelled.pid
    assert pid is not None
    cancelled.cancel()
    assert not cancelled.forked and not (tmp / "cancelled.pickle.tmp").exists()
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # reaped already: no zombie left
    else:
        raise AssertionError(f"child {pid} was not reaped")


def test_a_snapshot_saved_by_a_forked_child(tmp_path: Path) -> None:
    _in_a_fresh_interpreter("_check_forked_save", str(tmp_path), module=__name__)


def test_check_writable_names_the_snapshot_and_leaves_nothing(tmp_path: Path) -> None:
    fresh = tmp_path / "new" / "deeper" / "graph.pickle"
    check_writable(fresh)  # a folder the save will make: nothing made now
    assert not (tmp_path / "new").exists()
    (tmp_path / "file").write_text("")
    for bad, why in ((tmp_path / "file" / "graph.pickle", "not a directory"),
                     (tmp_path, "it is a directory")):
        with pytest.raises(SnapshotError) as caught:
            check_writable(bad)
        assert str(caught.value).startswith(f"could not write the graph snapshot {bad}: ")
        assert why in str(caught.value).lower()
    with pytest.raises(SnapshotError, match="Permission denied"):
        check_writable(Path("/proc/sys/graph.pickle"))  # read-only for everyone, root too


def test_index_with_a_snapshot_it_cannot_write_fails_before_indexing(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    (tmp_path / "file").write_text("")
    for out in (tmp_path / "file" / "graph.pickle", tmp_path):
        done = subprocess.run([*FLEET, "index", str(repo), "-o", str(out),
                               "--progress-every", "0"],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 2, done
        assert done.stdout == ""
        assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr  # one line
        assert done.stderr.startswith(f"could not write the graph snapshot {out}: ")
        assert "Traceback" not in done.stderr


def test_a_save_done_here_that_fails_raises_one_line_and_keeps_the_snapshot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fleet.graph import save_started

    monkeypatch.setenv("FLEET_GRAPH_THREADS", "1")  # one process wanted: saved here
    graph = index(_repo(tmp_path / "repo"))
    target = tmp_path / "graph.pickle"
    graph.save(target)
    before = target.read_bytes()
    (tmp_path / "graph.pickle.tmp").mkdir()  # where the save writes first
    with pytest.raises(SnapshotError) as caught:
        save_started(graph, target, min_files=0)
    assert str(caught.value).startswith(f"could not write the graph snapshot {target}: ")
    assert "\n" not in str(caught.value)
    assert target.read_bytes() == before
