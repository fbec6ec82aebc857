"""Integration: verified patches -> structural merge onto the latest base in lock order ->
fencing-token check -> tests on the combination -> bisect out a patch that breaks it.

``integrate(repo, patches, *, base_branch, branch, leases, ledger, run_tests, structural=None)
-> IntegrationResult``; ``pytest_runner(sandbox, tests)`` is the default ``SuiteRunner``;
``fast_forward(repo, base_branch, branch) -> SelfMerge`` is the self-merge a campaign's autonomy
may allow.
"""

from fleet.integrate._integrate import (
    IntegrationResult,
    StructuralMerge,
    SuiteRun,
    SuiteRunner,
    fence_ok,
    integrate,
)
from fleet.integrate._selfmerge import SelfMerge, fast_forward
from fleet.integrate._tests import pytest_runner

__all__ = [
    "IntegrationResult",
    "SelfMerge",
    "StructuralMerge",
    "SuiteRun",
    "SuiteRunner",
    "fast_forward",
    "fence_ok",
    "integrate",
    "pytest_runner",
]
