"""``run_gates``: every gate on one patch against a repository's base commit, in order,
cheap structural gates first. The door that ``fleet verify``, the unit runner and the planted
corpus all go through."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.protocols import Reviewer
from fleet.types import Verdict, VerdictStatus
from fleet.verify._patch import Trees, parse_patch
from fleet.verify.compat import gate_compat
from fleet.verify.dynamic import gate_test_first, gate_typecheck
from fleet.verify.gates import gate_applies, gate_lease_scope, gate_parses, touched_symbols
from fleet.verify.impacted import gate_impacted_tests
from fleet.verify.integrity import gate_test_integrity
from fleet.verify.reviewer import OfflineReviewer, ReviewInput, gate_review
from fleet.verify.security import gate_security
from sandbox import Sandbox

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = ["GATES", "GateOptions", "decide", "rejected_by", "run_gates"]

log = logging.getLogger(__name__)

GATES = (
    "applies", "parses", "lease_scope", "security", "compat", "test_integrity",
    "impacted_tests", "test_first", "typecheck", "review",
)


@dataclass(frozen=True)
class GateOptions:
    """How to run the gates. ``bugfix`` turns on test-first; ``fail_fast`` skips the gates
    that run code once a cheap gate has rejected (their verdict would not change the outcome)."""

    bugfix: bool = False
    campaign: str = ""
    fail_fast: bool = True
    timeout_s: float = 300.0
    reviewer: Reviewer | None = None
    skip: frozenset[str] = field(default_factory=frozenset)


def run_gates(
    repo: Path,
    patch: str,
    write_set: Sequence[str] | None,
    *,
    base: str = "HEAD",
    sandbox: Sandbox | None = None,
    graph: SymbolGraph | None = None,
    options: GateOptions | None = None,
) -> list[Verdict]:
    """Every gate's verdict on ``patch`` (a unified git diff) against ``repo`` at ``base``.

    ``write_set`` = the unit's write-leased symbol ids (``None``: lease scope is ``unknown``).
    ``sandbox`` runs the tests and mypy (``None``: those gates are ``unknown``). ``graph`` (a
    ``SymbolGraph`` of the base) selects the impacted tests; without it they are found by
    imports and names. Never raises for a bad patch: that is a ``reject`` verdict.
    """
    opts = options or GateOptions()
    verdicts: list[Verdict] = []
    try:
        files = parse_patch(patch)
    except ValueError as exc:
        return [Verdict("applies", "reject", f"not a unified diff: {exc}")]
    with Trees(repo, patch, base) as trees:
        verdicts.append(gate_applies(trees))
        if not verdicts[-1].passed:
            return verdicts
        verdicts.append(gate_parses(trees, files))
        if not verdicts[-1].passed:
            return verdicts
        touched: set[str] = set()
        for fp in files:
            touched |= set(touched_symbols(trees, fp))

        def wanted(gate: str) -> bool:
            return gate not in opts.skip

        if wanted("lease_scope"):
            verdicts.append(gate_lease_scope(trees, files, write_set))
        if wanted("security"):
            verdicts.append(gate_security(trees, files))
        if wanted("compat"):
            verdicts.append(gate_compat(trees, files))
        if wanted("test_integrity"):
            verdicts.append(gate_test_integrity(trees, files))
        cheap_rejected = any(v.status == "reject" for v in verdicts)
        if opts.fail_fast and cheap_rejected:
            return verdicts
        if wanted("impacted_tests"):
            verdicts.append(
                gate_impacted_tests(trees, sandbox, touched, files, graph, opts.timeout_s)
            )
        if opts.bugfix and wanted("test_first"):
            verdicts.append(gate_test_first(trees, sandbox, files, opts.timeout_s))
        if wanted("typecheck"):
            verdicts.append(gate_typecheck(trees, sandbox, files, opts.timeout_s))
        if opts.fail_fast and any(v.status == "reject" for v in verdicts):
            return verdicts
        if wanted("review"):
            item = ReviewInput(patch, files, tuple(write_set or ()), opts.campaign,
                               tuple(verdicts))
            verdicts.append(gate_review(opts.reviewer or OfflineReviewer(), item))
    return verdicts


def decide(verdicts: Sequence[Verdict]) -> VerdictStatus:
    """``accept`` when every gate accepts; ``reject`` when any rejects; else ``unknown``."""
    if any(v.status == "reject" for v in verdicts):
        return "reject"
    if verdicts and all(v.passed for v in verdicts):
        return "accept"
    return "unknown"


def rejected_by(verdicts: Sequence[Verdict]) -> list[str]:
    return [v.gate for v in verdicts if v.status == "reject"]
