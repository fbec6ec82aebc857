"""``merge3``: the named stages in order, each falling back to the previous one's result."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from fleet.merge._line import line_merge
from fleet.merge._result import Clean, Conflicted, MergeResult
from fleet.merge.profile import profile_for


def merge3(base: str, ours: str, theirs: str, path: str) -> MergeResult:
    """Three-way merge of one file's texts.

    Stage ``line``: git's ``merge-file`` (diff3); a clean result is returned as is, so every clean
    result of git's is kept identical. Stage ``structural``, only where lines conflict and only for
    a language with a profile (Python): the syntax-tree merge. Its clean result always parses;
    when it is unsure it conflicts, and on any parse failure the line result is returned, as it
    is when a clean result keeps a spelling one side retired (``_migrated``). Between
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
    from fleet.merge._migrated import retired_spelling
    from fleet.merge._newlines import follow_newlines
    from fleet.merge._parsed import parsing_once
    from fleet.merge._python import structural_merge  # libcst only when needed

    # Both stages below parse the same texts: once each. The collector comes back on after the
    # trees are dropped: on with them alive, its first collection walked every one of them.
    with _collector_off(), parsing_once():
        structural = structural_merge(base, ours, theirs, profile)
        if isinstance(structural, Clean):
            # One side retired a spelling everywhere, the other adds uses: git's conflict. So is
            # a result Python's compiler refuses where the inputs compile, and one the checks
            # that read whole classes refuse (the reduced texts of ``_checks`` hold them in part).
            if (
                retired_spelling(base, ours, theirs, structural.text)
                or not _compiles_as_inputs(base, ours, theirs, structural.text)
                or _classes_unsure(base, ours, theirs, structural.text)
            ):
                return line
            return Clean(follow_newlines(base, ours, theirs, structural.text), structural.stage)
        held = held_file(base, ours, theirs, line)
        if held is not None and (
            retired_spelling(base, ours, theirs, held.text)
            or not _compiles_as_inputs(base, ours, theirs, held.text)
        ):
            return line
    if held is not None:
        return Clean(follow_newlines(base, ours, theirs, held.text), held.stage)
    if structural is None:
        return line
    if structural.conflicted_lines < line.conflicted_lines:
        return structural
    return line


def _classes_unsure(base: str, ours: str, theirs: str, merged: str) -> bool:
    """The checks that must read whole classes, which the reduced texts of ``_checks`` hold only
    in part: both sides extended one linear chain of subclasses from its last link (``_chain``),
    or a call of a dataclass does not fit the fields one side gave it (``_constructed``)."""
    from fleet.merge._chain import chain_forked
    from fleet.merge._constructed import constructor_misfit
    from fleet.merge._parsed import parse

    try:
        trees = [parse(text) for text in (base, ours, theirs, merged)]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return chain_forked(trees) is not None or constructor_misfit(trees) is not None


def _compiles_as_inputs(base: str, ours: str, theirs: str, merged: str) -> bool:
    """A clean result compiles, or fails to only where an input does too (``_parsed.compiles``;
    the inputs are compiled only when the result is not)."""
    from fleet.merge._parsed import compiles

    if compiles(merged):
        return True
    return not all(compiles(text) for text in (base, ours, theirs))


@contextmanager
def _collector_off() -> Iterator[None]:
    """The cyclic garbage collector off for one file's structural stages, on again after if it
    was on. libcst's parser and the checks make and drop hundreds of thousands of objects per
    file, which start collections over and over (a full one walks the whole heap) while
    nothing they make is cyclic garbage worth freeing mid-file: their trees are dropped whole at
    the end. libcst's parse of 459 reduced texts of held/tenth cases (2.7 MB): 5.3-6.1 CPU-s
    with the collector on, 3.3-3.8 off (5 December 2026, three interleaved rounds each)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def held_file(base: str, ours: str, theirs: str, line: Conflicted) -> Clean | None:
    """git's conflicted line merge of a whole Python file, each region one side's lines holding
    the other's (``_pytext.held_lines``), when the result parses and passes the whole-result
    checks (``_checks.unsure``): a module-level statement no symbol merge sees (a call's lines,
    a comment block), resolved as inside a symbol."""
    from fleet.merge._bounds import parse_within_bounds
    from fleet.merge._checks import unsure
    from fleet.merge._pytext import held_lines

    if any(parse_within_bounds(text) is None for text in (base, ours, theirs)):
        return None  # the bounds of the structural stage hold here too
    text = held_lines(line.text_with_markers, [base, ours, theirs], deletions=True)
    if text is None or parse_within_bounds(text) is None:
        return None
    if unsure(base, ours, theirs, text) is not None or _classes_unsure(base, ours, theirs, text):
        return None
    return Clean(text, "structural")


__all__ = ["Clean", "Conflicted", "MergeResult", "merge3"]
