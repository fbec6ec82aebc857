"""Metadata a reviewer wants on each materialization: counts, diff stats, verdicts, cost, ids."""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from dagster import MetadataValue

from fleet.integrate import IntegrationResult
from fleet.unit import UnitResult

# The gates run pytest in scratch trees (``fleet.verify._patch.Trees``: <tmp>/fleet-verify-*/base
# or /patched): a reader wants the repository path, not where the tree happened to be.
_SCRATCH = re.compile(r"(?:/[^\s'\"():]*)?/fleet-verify-[^/\s]+/[^/\s]+/")
_TEMP = re.compile("(?:" + "|".join(re.escape(d) for d in sorted(
    {tempfile.gettempdir(), "/tmp", "/var/tmp"}, key=len, reverse=True)) + r")/[^\s'\"():]+/")
# pytest's end-of-run warnings of the target's own tests: noise beside the gate's verdict
_WARNINGS = re.compile(r"^=+ warnings summary =+$.*?(?=^=+ |^-- Docs: .*$\n?|\Z)",
                       re.MULTILINE | re.DOTALL)
_DOCS = re.compile(r"^-- Docs: https://docs\.pytest\.org/\S+\n?", re.MULTILINE)


def readable_evidence(text: str, limit: int = 2000) -> str:
    """A gate's evidence for the UI: paths relative to the repository (no scratch-tree or other
    temporary prefixes), without pytest's warnings summary, at most ``limit`` characters."""
    text = _SCRATCH.sub("", text)
    text = _TEMP.sub("<tmp>/", text)
    text = _DOCS.sub("", _WARNINGS.sub("", text))
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
