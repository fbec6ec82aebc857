"""The CPU each test costs, printed at the end of the run beside ``--durations``' wall times.

On this 2-core machine the suite's length is its CPU over the cores, not its longest test:
wall times say which tests waited, CPU says which tests to make cheaper. A test's CPU is what
its worker spent from the test's setup to the end of its teardown plus what the processes the
worker reaped in that time spent (``RUSAGE_CHILDREN``: a daemon the test started and waited
for counts, one it left to another test does not). It travels to the controller in the
teardown report's ``user_properties``; ``FLEET_TEST_CPU_TOP`` (default 30, 0: none) says how
many lines to print.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator

import pytest

KEY = "cpu_s"
_started: dict[str, float] = {}


def _spent() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _started[item.nodeid] = _spent()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield
    started = _started.pop(item.nodeid, None)
    if started is not None:
        item.user_properties.append((KEY, round(_spent() - started, 3)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    top = int(os.environ.get("FLEET_TEST_CPU_TOP", "30") or 0)
    costs: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "teardown":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == KEY:
                    costs[report.nodeid] = float(value)
    if top <= 0 or not costs:
        return
    terminalreporter.write_sep("=", f"most CPU, {top} tests (the worker and what it reaped)")
    for nodeid, cpu in sorted(costs.items(), key=lambda kv: -kv[1])[:top]:
        terminalreporter.write_line(f"{cpu:8.2f} CPU-s  {nodeid}")
    terminalreporter.write_line(
        f"{sum(costs.values()):8.1f} CPU-s in all {len(costs)} tests "
        f"({sum(sorted(costs.values())[-top:]):.1f} in the {top} above)"
    )
