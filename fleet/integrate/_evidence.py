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
_JUNIT = re.compile(r"^-+ generated xml file: .*-+\n?", re.MULTILINE)
_WARNING_LINE = re.compile(r"^\s*\S+:\d+: \w*Warning: ")


def _drop_warning_entries(text: str) -> str:
    """The entries of a warnings summary whose header was cut off (a gate keeps pytest's tail):
    a test id line followed by indented lines that report a ``...Warning:``."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i + 1
        while j < len(lines) and lines[j].startswith(" "):
            j += 1
        block = lines[i + 1:j]
        if "::" in lines[i] and not lines[i].startswith(" ") and block and any(
                _WARNING_LINE.match(b) for b in block):
            i = j
            continue
        out.extend(lines[i:j])
        i = j
    return "\n".join(out)


def readable_evidence(text: str, limit: int = 2000) -> str:
    """A gate's evidence for the UI: paths relative to the repository (no scratch-tree or other
    temporary prefixes), without pytest's warnings summary, at most ``limit`` characters."""
    text = _SCRATCH.sub("", text)
    text = _TEMP.sub("<tmp>/", text)
    text = _DOCS.sub("", _JUNIT.sub("", _WARNINGS.sub("", text)))
    text = _drop_warning_entries(text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
