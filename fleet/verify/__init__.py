"""Verification gates (applies, parses, lease scope, security lens, test integrity, impacted
tests, test-first, type check, reviewer): each a function returning a
:class:`fleet.types.Verdict` with evidence. ``run_gates(repo, patch, write_set, ...)`` runs them
all in order; ``decide(verdicts)`` folds them into accept / reject / unknown.
"""

from fleet.verify.reviewer import ClaudeReviewer, OfflineReviewer, ReviewInput
from fleet.verify.runner import GATES, GateOptions, decide, rejected_by, run_gates

__all__ = [
    "GATES",
    "ClaudeReviewer",
    "GateOptions",
    "OfflineReviewer",
    "ReviewInput",
    "decide",
    "rejected_by",
    "run_gates",
]
