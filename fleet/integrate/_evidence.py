"""Gate evidence as a reader wants it, in the PR body, the check runs and the Dagster UI."""

from __future__ import annotations

import re
import tempfile

__all__ = ["readable_evidence"]

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
