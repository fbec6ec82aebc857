"""Verification gates (applies, parses, lease scope, security lens, test integrity, impacted
tests, test-first, type check, reviewer): each a function returning a
:class:`fleet.types.Verdict` with evidence. ``run_gates(repo, patch, write_set, ...)`` runs them
all in order; ``decide(verdicts)`` folds them into accept / reject / unknown. ``parse_patch``
(a unified diff -> ``FilePatch`` per file) and ``export_tree`` (a commit's files into a
directory) are the patch helpers other packages use.
"""

from fleet.verify._patch import FilePatch, export_tree, parse_patch
from fleet.verify.reviewer import ClaudeReviewer, OfflineReviewer, ReviewInput
from fleet.verify.runner import GATES, GateOptions, decide, rejected_by, run_gates

__all__ = [
    "GATES",
    "ClaudeReviewer",
    "FilePatch",
    "GateOptions",
    "OfflineReviewer",
    "ReviewInput",
    "decide",
    "export_tree",
    "parse_patch",
    "rejected_by",
    "run_gates",
]
