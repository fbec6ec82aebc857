"""``merge3``: the named stages in order, each falling back to the previous one's result."""

from __future__ import annotations

from fleet.merge._line import line_merge
from fleet.merge._result import Clean, Conflicted, MergeResult
from fleet.merge.profile import profile_for


def merge3(base: str, ours: str, theirs: str, path: str) -> MergeResult:
    """Three-way merge of one file's texts.

    Stage ``line``: git's ``merge-file`` (diff3); a clean result is returned as is, so every clean
    result of git's is kept identical. Stage ``structural``, only where lines conflict and only for
    a language with a profile (Python): the syntax-tree merge. Its clean result always parses;
    when it is unsure it conflicts, and on any parse failure the line result is returned. Between
    two conflicted results the one with fewer conflicted lines wins (git's on a tie).

    Never raises for conflicts (they are a value); raises ``fleet.errors.GitError`` only when git
    itself cannot run.
    """
    if ours == theirs:
        return Clean(ours, stage="line")
    if base == ours:
        return Clean(theirs, stage="line")
    if base == theirs:
        return Clean(ours, stage="line")
    return after_line_stage(base, ours, theirs, path, line_merge(base, ours, theirs))


def after_line_stage(
    base: str, ours: str, theirs: str, path: str, line: MergeResult
) -> MergeResult:
    """The stages after the line merge, given its result ``line`` (see :func:`merge3`)."""
    if isinstance(line, Clean):
        return line
    profile = profile_for(path)
    if profile is None:
        return line
    from fleet.merge._python import structural_merge  # libcst only when needed

    structural = structural_merge(base, ours, theirs, profile)
    if structural is None:
        return line
    if isinstance(structural, Clean):
        return structural
    if structural.conflicted_lines < line.conflicted_lines:
        return structural
    return line


__all__ = ["Clean", "Conflicted", "MergeResult", "merge3"]
