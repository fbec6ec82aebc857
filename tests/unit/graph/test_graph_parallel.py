"""Extraction in threads (the C extractor parses without the GIL) gives the index that one
thread gives, on real code: the stdlib's asyncio and email packages."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import pytest

from fleet.graph import index
from fleet.graph._extract_native import available
from fleet.graph._fork import workers_for
from tests.unit.graph.graph_helpers import content

STDLIB = Path(sysconfig.get_paths()["stdlib"])
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("package", ["asyncio", "email"])
def test_threads_give_the_same_index(package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert available()  # CI builds the extension (FLEET_REQUIRE_NATIVE)
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "1")
    serial = index(STDLIB / package)
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "4")
    threaded = index(STDLIB / package)
    assert len(serial.files) > 20
    assert content(threaded) == content(serial)


def test_map_in_threads_reports_every_item_in_order_on_the_calling_thread() -> None:
    """Files are extracted by the caller and its helper threads; ``done`` sees every item once,
    in order, in the calling thread; an exception in a helper reaches the caller."""
    from fleet.graph._pool import map_in_threads

    caller = threading.get_ident()
    workers: set[int] = set()
    seen: list[tuple[int, int]] = []

    def square(x: int) -> int:
        workers.add(threading.get_ident())
        time.sleep(0.001)  # as a parse does, lets the other threads run
        return x * x

    def done(i: int, result: int) -> None:
        assert threading.get_ident() == caller
        seen.append((i, result))

    items = list(range(200))
    assert map_in_threads(square, items, 3, done) == [x * x for x in items]
    assert seen == [(x, x * x) for x in items]
    assert caller in workers

    def fail_on_77(x: int) -> int:
        if x == 77:
            raise ValueError("77")
        return x

    for threads in (1, 2, 4):
        with pytest.raises(ValueError, match="77"):
            map_in_threads(fail_on_77, items, threads)


def test_a_bad_thread_count_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from fleet.graph import IndexingError

    monkeypatch.setenv("FLEET_GRAPH_THREADS", "two")
    with pytest.raises(IndexingError, match="FLEET_GRAPH_THREADS='two'"):
        index(STDLIB / "json")


# Whether the resolution forks depends on the process: ``workers_for`` forks only when no other
# thread is alive (a child of a multi-threaded process may inherit a lock that no thread there
# will release). A pytest worker may hold threads that earlier tests left behind, each harmless
# where it is (an HTTP test server's handler still answering a slow request, AnyIO's idle worker
# threads, which linger for 10 s): CI's run of 3 December failed the forked checks below on
# them (``resolve_processes`` 1, not 3). So each forked index is built and compared in an
# interpreter of its own, as ``fleet index`` runs it, and the thread rule has its own test.


def _in_a_fresh_interpreter(check: str, *args: str, module: str = __name__) -> None:
    """Run ``check(*args)`` of ``module`` (this one by default) in a new interpreter; its
    assertion is this test's."""
    code = f"from {module} import {check}\n{check}(*{list(args)!r})\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{check}{args}:\n{done.stdout[-2000:]}{done.stderr[-6000:]}"


def _check_forked_resolution(package: str) -> None:
    os.environ["FLEET_GRAPH_THREADS"] = "1"
    serial = index(STDLIB / package)
    os.environ["FLEET_GRAPH_THREADS"] = "3"
    forked = index(STDLIB / package)
    assert (serial.resolve_processes, forked.resolve_processes) == (1, 3)
    # extracted in forked processes too (``_procs``): their stat signatures came back with them
    assert (serial.extract_processes, forked.extract_processes) == (1, 3)
    assert forked._stats == serial._stats
    assert [forked._data[p].record for p in forked.files] == [
        serial._data[p].record for p in serial.files]
    assert content(forked) == content(serial)
    assert forked._deps == serial._deps
    assert list(forked._refs) == list(serial._refs)
    for path, refs in forked._refs.items():
        assert list(refs) == list(serial._refs[path])


def _check_incremental_after_forked(scratch: str) -> None:
    import shutil

    repo = Path(scratch) / "lib"  # the package inside the root: ``email._policybase`` resolves
    shutil.copytree(STDLIB / "email", repo / "email")
    os.environ["FLEET_GRAPH_THREADS"] = "2"
    before = index(repo)
    source = repo / "email" / "_policybase.py"
    source.write_text(source.read_text().replace("class Policy(", "class PolicyRenamed("))
    again = index(repo, previous=before)
    assert again.resolve_processes == 2
    os.environ["FLEET_GRAPH_THREADS"] = "1"
    full = index(repo)
    assert content(again) == content(full)
    assert again._deps == full._deps


@pytest.mark.parametrize("package", ["asyncio", "email"])
def test_forked_resolution_gives_the_same_references_and_keys(package: str) -> None:
    """Files extracted and resolved in forked processes (``_procs``, ``_fork``): the same
    references, dependency keys, file records and graph as one process."""
    _in_a_fresh_interpreter("_check_forked_resolution", package)


def test_incremental_index_after_a_forked_one_equals_a_full_one(tmp_path: Path) -> None:
    """An incremental index whose re-resolved files are shared among processes (a base class
    renamed: every user re-resolved) equals a full index of the edited tree."""
    _in_a_fresh_interpreter("_check_incremental_after_forked", str(tmp_path))


def test_no_fork_while_another_thread_is_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a second thread alive the files resolve in this process, and the index is the same."""
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "1")
    serial = index(STDLIB / "email")
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="test-bystander", daemon=True)
    other.start()
    try:
        assert workers_for(1000, 3, forced=False) == 1
        assert workers_for(1000, 3, forced=True) == 1
        monkeypatch.setenv("FLEET_GRAPH_THREADS", "3")
        alongside = index(STDLIB / "email")
    finally:
        release.set()
        other.join()
    assert alongside.resolve_processes == 1
    assert content(alongside) == content(serial)
    assert alongside._deps == serial._deps
