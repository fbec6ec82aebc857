"""Metadata a reviewer wants on each materialization: counts, diff stats, verdicts, cost, ids."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from dagster import MetadataValue

from fleet.integrate import IntegrationResult, readable_evidence
from fleet.unit import UnitResult

__all__ = [
    "batch_metadata",
    "content_version",
    "integration_metadata",
    "link",
    "readable_evidence",
    "unit_metadata",
    "verdict_description",
]


def verdict_description(gate: str, status: str, evidence: str) -> str:
    """What the check shows as its outcome: the gate's verdict and the first line of why."""
    first = next((ln.strip() for ln in readable_evidence(evidence).splitlines() if ln.strip()),
                 "")
    said = {"accept": "accepted", "reject": "rejected"}.get(status, "could not judge")
    line = f"gate {gate} {said} the unit" + (f": {first}" if first else "")
    return line if len(line) <= 300 else line[:297] + "..."


def content_version(parts: Iterable[str]) -> str:
    """A data version for a set of identities (fingerprints, unit keys): equal sets, equal
    versions, so a re-materialization that found the same leaves nothing downstream stale."""
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()[:24]


def link(url: str, text: str | None = None) -> Any:
    """``MetadataValue.url`` (clickable in the UI) for a web or file URL, else plain text."""
    if url.startswith(("http://", "https://", "file://")):
        return MetadataValue.url(url)
    return text if text is not None else url


def unit_metadata(result: UnitResult) -> dict[str, Any]:
    added, removed = result.diff_stats
    verdicts = {v.gate: v.status for v in result.verdicts}
    md: dict[str, Any] = {
        "status": result.status,
        "rejected_by": result.rejected_by or "",
        "paths": ", ".join(result.paths),
        "lines_added": added,
        "lines_removed": removed,
        "verdicts": MetadataValue.json(verdicts),
        "tokens": result.cost.tokens,
        "cost_usd": result.cost.usd,
        "agent_s": round(result.agent_s, 3),
        "gates_s": round(result.gates_s, 3),
        "wall_s": round(result.wall_s, 3),
        "branch": result.branch or "",
        "commit": result.commit or "",
        "detail": result.detail[:500],
    }
    if result.patch:
        md["patch"] = MetadataValue.md(f"```diff\n{result.patch[:20000]}\n```")
    return md


def batch_metadata(results: Sequence[UnitResult]) -> dict[str, Any]:
    counts = Counter(r.status for r in results)
    return {
        "units": len(results),
        **{f"units_{status}": n for status, n in sorted(counts.items())},
        "rejected_by_gate": MetadataValue.json(
            dict(Counter(r.rejected_by for r in results if r.rejected_by))
        ),
        "agent_s_total": round(sum(r.agent_s for r in results), 3),
        "tokens": sum(r.cost.tokens for r in results),
    }


def integration_metadata(result: IntegrationResult) -> dict[str, Any]:
    return {
        "branch": result.branch,
        "base_commit": result.base_commit,
        "head": result.head,
        "merged": len(result.merged),
        "merged_units": MetadataValue.json(list(result.merged)),
        "semantic_conflicts": MetadataValue.json(list(result.semantic_conflicts)),
        "merge_conflicts": MetadataValue.json(list(result.merge_conflicts)),
        "stale": MetadataValue.json(list(result.stale)),
        "tests_passed": None if result.tests is None else result.tests.passed,
        "tests_collected": None if result.tests is None or result.tests.outcomes is None
        else len(result.tests.outcomes),
        # A failing combination is judged against the base: only what fails there and not on
        # the base is the patches' doing (the base run happens only when the combination fails).
        "base_tests_passed": None if result.base_tests is None else result.base_tests.passed,
        "new_failures": len(result.new_failures),
        "new_failure_tests": MetadataValue.json(list(result.new_failures[:200])),
        "test_runs": result.test_runs,
        "wall_s": round(result.wall_s, 3),
    }
