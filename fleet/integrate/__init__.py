"""Integration: verified patches -> structural merge onto the latest base in lock order ->
fencing-token check -> tests on the combination -> bisect out a patch that breaks it.

``integrate(repo, patches, *, base_branch, branch, leases, ledger, run_tests, structural=None)
-> IntegrationResult``; ``pytest_runner(sandbox, tests)`` is the default ``SuiteRunner``;
``fast_forward(repo, base_branch, branch) -> SelfMerge`` is the local self-merge a campaign's
autonomy may allow; ``handover(campaign, repo, base_branch, ledger, forge, issue_refs)`` publishes
the last integration through the forge (full evidence body, a check run per gate on GitHub) and
self-merges through it. Every hand-over leaves a ledger checkpoint as a git note on the
integration commit (``handover_checkpoints(repo)`` reads them back for ``fleet ledger verify``).
"""

from fleet.integrate._evidence import readable_evidence
from fleet.integrate._integrate import (
    IntegrationResult,
    StructuralMerge,
    SuiteRun,
    SuiteRunner,
    fence_ok,
    handover_checkpoints,
    integrate,
)
from fleet.integrate._publish import Handover, handover, self_merge_message
from fleet.integrate._selfmerge import SelfMerge, fast_forward, self_merge_locally
from fleet.integrate._tests import pytest_runner

__all__ = [
    "Handover",
    "IntegrationResult",
    "SelfMerge",
    "StructuralMerge",
    "SuiteRun",
    "SuiteRunner",
    "fast_forward",
    "fence_ok",
    "handover",
    "handover_checkpoints",
    "integrate",
    "pytest_runner",
    "readable_evidence",
    "self_merge_locally",
    "self_merge_message",
]
