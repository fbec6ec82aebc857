"""The CPU each test costs, printed at the end of the run beside ``--durations``' wall times.

On this 2-core machine the suite's length is its CPU over the cores, not its longest test:
wall times say which tests waited, CPU says which tests to make cheaper. Two measures:

- "tree": where cgroup v1's ``cpuacct`` hierarchy is mounted and writable (root here), each
  pytest process (each xdist worker) moves itself into a group of its own at start, which every
  process it starts inherits: daemons that detach, servers started with ``pg_ctl``, and the
  sandboxes' own groups (created as children of the caller's group, so counted in it). A test's
  tree CPU is what that whole tree spent from the test's setup to the end of its teardown,
  including processes an earlier test left running (they cost the cores while it ran).
- "own" + "reaped": the worker's own CPU in that time plus what the processes it reaped
  meanwhile spent (``RUSAGE_CHILDREN``). A process is counted in the test that reaps it, so a
  process an earlier test or a fixture started and left lands in whichever test reaps it
  (``subprocess`` reaps finished children whenever a new one starts), and one nobody here reaps
  is not counted. The only measure where the tree one is not available.

The figures travel to the controller in the teardown report's ``user_properties``;
``FLEET_TEST_CPU_TOP`` (default 30, 0: none) says how many tests to print, and as many test
files follow (each file's tests summed); ``FLEET_TEST_CPU_JSON=FILE`` also writes every test's
figures there (``{nodeid: [own, reaped, tree or null]}``).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox._limits import _own_paths

KEY = "cpu_s"
CPUACCT = Path("/sys/fs/cgroup/cpuacct")
_started: dict[str, tuple[float, float, float | None]] = {}
_group: list[Path] = []  # this process's own cpuacct group, once made


def _enter_group() -> None:
    """Move this process into a cpuacct group of its own (v1), if it can; else do nothing."""
    own = _own_paths().get("cpuacct")  # (the sandboxes make their groups under the same path)
    if own is None or not (CPUACCT / "cgroup.procs").exists():
        return
    group = CPUACCT / own.lstrip("/") / f"fleet-tests-{os.getpid()}"
    try:
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(f"{os.getpid()}\n")
    except OSError:
        with contextlib.suppress(OSError):
            group.rmdir()
        return
    _group.append(group)


def _leave_group() -> None:
    """Back to the parent group; the group itself goes once nothing is left in it."""
    for group in _group:
        with contextlib.suppress(OSError):
            (group.parent / "cgroup.procs").write_text(f"{os.getpid()}\n")
        # the empty groups of sandboxes whose runner a test killed (the product sweeps its
        # own after ten minutes: sandbox._limits._sweep_stale), then the group itself
        for child in group.glob("fleet-sandbox-*"):
            with contextlib.suppress(OSError):
                child.rmdir()
        with contextlib.suppress(OSError):
            group.rmdir()  # EBUSY while a process a test left behind still runs in it
    _group.clear()


def _tree_s() -> float | None:
    if not _group:
        return None
    try:
        return int((_group[0] / "cpuacct.usage").read_text()) / 1e9
    except (OSError, ValueError):
        return None


def _spent() -> tuple[float, float, float | None]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime, _tree_s()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        _enter_group()  # a process that runs tests: an xdist worker, or pytest without -n


def pytest_unconfigure(config: pytest.Config) -> None:
    _leave_group()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _started[item.nodeid] = _spent()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield
    started = _started.pop(item.nodeid, None)
    if started is not None:
        own, reaped, tree = _spent()
        tree_s = None if tree is None or started[2] is None else round(tree - started[2], 3)
        item.user_properties.append(
            (KEY, (round(own - started[0], 3), round(reaped - started[1], 3), tree_s)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    top = int(os.environ.get("FLEET_TEST_CPU_TOP", "30") or 0)
    costs: dict[str, tuple[float, float, float | None]] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "teardown":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == KEY:
                    own, reaped, tree = value
                    costs[report.nodeid] = (float(own), float(reaped),
                                            None if tree is None else float(tree))
    if (path := os.environ.get("FLEET_TEST_CPU_JSON")) and costs:
        Path(path).write_text(json.dumps(costs, indent=1, sort_keys=True) + "\n")
    if top <= 0 or not costs:
        return
    trees = all(cost[2] is not None for cost in costs.values())

    def total(cost: tuple[float, float, float | None]) -> float:
        return cost[2] if trees and cost[2] is not None else cost[0] + cost[1]

    ranked = sorted(costs.items(), key=lambda kv: -total(kv[1]))
    heading = "tree (own + reaped)" if trees else "own + reaped = all"
    terminalreporter.write_sep("=", f"most CPU, {top} tests (CPU-s: {heading})")
    for nodeid, cost in ranked[:top]:
        own, reaped = cost[0], cost[1]
        if trees:
            terminalreporter.write_line(
                f"{total(cost):8.2f} ({own:7.2f} + {reaped:7.2f})  {nodeid}")
        else:
            terminalreporter.write_line(
                f"{own:7.2f} + {reaped:7.2f} = {own + reaped:8.2f}  {nodeid}")
    shown = sum(total(cost) for _, cost in ranked[:top])
    own_all = sum(c[0] for c in costs.values())
    reaped_all = sum(c[1] for c in costs.values())
    measure = "the workers' trees" if trees else "own + reaped"
    terminalreporter.write_line(
        f"{sum(total(c) for c in costs.values()):8.1f} CPU-s in all {len(costs)} tests "
        f"({measure}), {shown:.1f} in the {min(top, len(ranked))} above; own {own_all:.1f}, "
        f"reaped {reaped_all:.1f}"
    )
    files: dict[str, list[float]] = {}
    for nodeid, cost in costs.items():
        tally = files.setdefault(nodeid.split("::", 1)[0], [0.0, 0])
        tally[0] += total(cost)
        tally[1] += 1
    terminalreporter.write_sep("=", f"most CPU, {top} test files (CPU-s, tests)")
    for name, (cpu_s, count) in sorted(files.items(), key=lambda kv: -kv[1][0])[:top]:
        terminalreporter.write_line(f"{cpu_s:8.2f} {count:5d}  {name}")
