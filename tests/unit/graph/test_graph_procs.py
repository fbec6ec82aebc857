"""Extraction in forked processes (``_procs.map_in_processes``): every item once, in order, an
incremental index in processes equal to a full one, and a child that fails costs nothing but
time (a cold index extracted in processes equals one process's: test_graph_parallel.py).

A pytest worker may hold threads (see test_graph_parallel.py), and the map forks only when no
other thread is alive; so each check runs in an interpreter of its own, as ``fleet index`` does.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import threading
import time
from pathlib import Path

from tests.unit.graph.graph_helpers import content
from tests.unit.graph.test_graph_parallel import _in_a_fresh_interpreter

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def _square_tagged(x: int) -> tuple[int, int]:
    time.sleep(0.002)  # as an extraction does: the children get items before the caller is done
    return x * x, os.getpid()


def _check_every_item_once_in_order() -> None:
    from fleet.graph._procs import map_in_processes

    seen: list[tuple[int, int]] = []
    items = list(range(500))
    got = map_in_processes(_square_tagged, items, 3, lambda finished, i: seen.append((finished, i)))
    assert got is not None
    assert [square for square, _ in got] == [x * x for x in items]
    pids = {pid for _, pid in got}
    assert os.getpid() in pids and len(pids) >= 2, pids  # the caller and a child did some
    finished = [f for f, _ in seen]
    assert finished == sorted(finished) and finished[-1] <= len(items)
    assert all(pid == os.getpid() for _, pid in (got[i] for _, i in seen))  # progress: own items


def _check_a_failing_child_costs_only_time() -> None:
    from fleet.graph._procs import map_in_processes

    parent = os.getpid()

    def fails_in_a_child(x: int) -> int:
        time.sleep(0.001)
        if os.getpid() != parent and x % 7 == 3:
            raise ValueError(f"child failed on {x}")
        return x + 1

    def killed_in_a_child(x: int) -> int:
        time.sleep(0.001)
        if os.getpid() != parent and x == 40:
            os.kill(os.getpid(), 9)
        return x - 1

    items = list(range(300))
    assert map_in_processes(fails_in_a_child, items, 2) == [x + 1 for x in items]
    assert map_in_processes(killed_in_a_child, items, 3) == [x - 1 for x in items]
    # an exception in the caller's own share reaches the caller, and no child outlives it (the
    # caller fails on the first item it takes: with ``x > 20`` a loaded machine let the children
    # take every later item first, 6 Dec 2026, and nothing was raised)
    def fails_here(x: int) -> int:
        if os.getpid() == parent:
            raise KeyError(x)
        time.sleep(0.002)
        return x

    try:
        map_in_processes(fails_here, items, 2)
    except KeyError:
        pass
    else:
        raise AssertionError("the caller's exception was swallowed")
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pass  # no child left behind
    else:
        raise AssertionError("a child outlived the map")


def _check_incremental_forked_extraction(scratch: str) -> None:
    from fleet.graph import index

    repo = Path(scratch) / "lib"
    shutil.copytree(STDLIB / "email", repo / "email")
    os.environ["FLEET_GRAPH_THREADS"] = "2"
    before = index(repo)
    edited = sorted((repo / "email").glob("*.py"))[:12]
    for path in edited:  # a new function in each: 12 files extracted again, shared out
        path.write_text(path.read_text() + "\n\ndef added_here():\n    return len([])\n")
    again = index(repo, previous=before)
    assert again.extract_processes == 2
    os.environ["FLEET_GRAPH_THREADS"] = "1"
    full = index(repo)
    assert content(again) == content(full)
    assert again._deps == full._deps


def test_map_in_processes_gives_every_item_once_in_order() -> None:
    _in_a_fresh_interpreter("_check_every_item_once_in_order", module=__name__)


def test_a_failing_child_only_costs_time() -> None:
    """A child that raises or is killed: the caller does its items; an exception in the
    caller's own share is raised and the children are stopped."""
    _in_a_fresh_interpreter("_check_a_failing_child_costs_only_time", module=__name__)


def test_incremental_index_extracts_in_forked_processes(tmp_path: Path) -> None:
    _in_a_fresh_interpreter("_check_incremental_forked_extraction", str(tmp_path),
                            module=__name__)


def test_no_fork_while_another_thread_is_alive() -> None:
    from fleet.graph._procs import forkable, map_in_processes

    release = threading.Event()
    other = threading.Thread(target=release.wait, name="test-bystander", daemon=True)
    other.start()
    try:
        assert not forkable()
        assert map_in_processes(abs, [-1, -2, -3], 2) is None
    finally:
        release.set()
        other.join()
