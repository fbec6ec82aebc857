"""The CPU each test costs, printed at the end of the run beside ``--durations``' wall times.

On this 2-core machine the suite's length is its CPU over the cores, not its longest test:
wall times say which tests waited, CPU says which tests to make cheaper. A test's CPU is what
its worker spent from the test's setup to the end of its teardown ("own") plus what the
processes the worker reaped in that time spent ("reaped", ``RUSAGE_CHILDREN``). The second is
counted when a process is reaped, not while it runs: a process an earlier test or a fixture
started and left lands in the test during which it was reaped (``subprocess`` reaps finished
children whenever a new one starts), and a process nobody here reaps (a daemon that detached,
a sandbox server's children) is not counted at all. So read "reaped" of a test that starts no
long process with care; the total is the run's. It travels to the controller in the teardown
report's ``user_properties``; ``FLEET_TEST_CPU_TOP`` (default 30, 0: none) says how many lines
to print.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator

import pytest

KEY = "cpu_s"
_started: dict[str, tuple[float, float]] = {}


def _spent() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _started[item.nodeid] = _spent()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield
    started = _started.pop(item.nodeid, None)
    if started is not None:
        own, reaped = _spent()
        item.user_properties.append(
            (KEY, (round(own - started[0], 3), round(reaped - started[1], 3))))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    top = int(os.environ.get("FLEET_TEST_CPU_TOP", "30") or 0)
    costs: dict[str, tuple[float, float]] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "teardown":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == KEY:
                    own, reaped = value
                    costs[report.nodeid] = (float(own), float(reaped))
    if top <= 0 or not costs:
        return
    ranked = sorted(costs.items(), key=lambda kv: -sum(kv[1]))
    terminalreporter.write_sep("=", f"most CPU, {top} tests (CPU-s: all = own + reaped)")
    for nodeid, (own, reaped) in ranked[:top]:
        terminalreporter.write_line(f"{own + reaped:8.2f} = {own:7.2f} + {reaped:7.2f}  {nodeid}")
    shown = sum(sum(cost) for _, cost in ranked[:top])
    terminalreporter.write_line(
        f"{sum(sum(c) for c in costs.values()):8.1f} CPU-s in all {len(costs)} tests, "
        f"{shown:.1f} in the {min(top, len(ranked))} above; own "
        f"{sum(c[0] for c in costs.values()):.1f}, reaped {sum(c[1] for c in costs.values()):.1f}"
    )
