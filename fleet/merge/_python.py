"""Stage 2, the structural merge of a Python module (libcst), run only where lines conflict.

Members of a module or class are matched by identity (``_pykeys.identity``) and merged one by one;
the order of commutative members is merged separately from their content; a function body is
merged statement by statement. Whatever is unsure becomes a conflict around the smallest node
that holds it, and anything the stage cannot reason about at all (a parse failure, a symbol that
would be lost or duplicated) returns ``None`` so the caller keeps the line merge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import libcst as cst

from fleet.merge import _parsed
from fleet.merge._bounds import MAX_FILE_BYTES, parsed_within_bounds
from fleet.merge._checks import unsure
from fleet.merge._context import SENTINEL, Context, Unsure, render_markers
from fleet.merge._members import merge_members
from fleet.merge._pykeys import clear_code_cache, module_code, render_in
from fleet.merge._reduce import (
    PLACEHOLDER,
    PLACEHOLDER_LINE,
    Reduction,
    expand,
    reduce_unchanged,
)
from fleet.merge._result import Clean, Conflicted, parse_conflicts
from fleet.merge.profile import LanguageProfile

__all__ = ["structural_merge"]


def _module_part(module: cst.Module, part: str) -> str:
    """The module's header or footer lines as text, line by line: a module rendered with an
    empty body ends in a newline with or without one blank footer line, so a side's removal of
    the blank line ending the file looked like no change (PyTables ``213cb10dcb30``)."""
    lines: Sequence[cst.EmptyLine] = getattr(module, part)
    return "".join(render_in(module, line) for line in lines)


class _TailDropped(Exception):
    """libcst's tree of a text would not give the text back: lines at its end are lost."""


def _tail_at_risk(text: str) -> bool:
    """Whether ``text`` ends in two or more comment or blank lines with an indented comment
    among them. After a one-line compound statement (``class A: pass``, as the placeholder of a
    set-aside class or function is) libcst 1.9.0 keeps only the last of them: ``class A: pass``,
    ``        # a``, ``    # b`` parse to a module whose code has ``    # b`` alone. It dropped
    nine lines of commented-out code ending pyqtgraph ``087f271633c0``'s
    ``GradientEditorItem.py``, in every version, so in the merge too."""
    count = 0
    indented = False
    for line in reversed(text[-4096:].splitlines()):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        count += 1
        indented = indented or (stripped != "" and line[:1] in (" ", "\t"))
    return count >= 2 and indented


def _merge_texts(
    base: str, ours: str, theirs: str, profile: LanguageProfile
) -> tuple[str, dict[int, str]] | None:
    """The merged text, conflicts still as sentinel statements, and the raw conflict texts by
    sentinel number; None means "unsure". Raises :class:`_TailDropped` when libcst would lose
    the lines ending one of the texts (:func:`_tail_at_risk`)."""
    try:
        modules = [cst.parse_module(text) for text in (base, ours, theirs)]
    except (cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
        return None
    for text, module in zip((base, ours, theirs), modules, strict=True):
        if _tail_at_risk(text) and render_in(module, module) != text:
            raise _TailDropped
    module_b, module_o, module_t = modules
    ctx = Context(profile, module_o)
    parts = {}
    for part in ("header", "footer"):
        texts = [_module_part(m, part) for m in modules]
        if texts[1] == texts[2] or texts[0] == texts[2]:
            parts[part] = getattr(module_o, part)
        elif texts[0] == texts[1]:
            parts[part] = getattr(module_t, part)
        elif not "".join(texts).strip():
            parts[part] = getattr(module_o, part)  # blank lines changed two ways: ours'
        else:
            return None
    try:
        body = merge_members(ctx, module_b.body, module_o.body, module_t.body)
        return module_code(module_o.with_changes(body=body, **parts)), ctx.raw
    except (Unsure, RecursionError):
        return None
    finally:
        clear_code_cache()


def _in_conflict(text: str, names: dict[str, tuple[str, str, str]]) -> bool:
    """Whether a one-sided placeholder of ``names`` sits between a conflict's sentinels (its
    text would differ per side there)."""
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(SENTINEL):
            inside = stripped.endswith(("_ours__", "_base__", "_sep__"))
        elif inside and PLACEHOLDER in stripped:
            found = PLACEHOLDER_LINE.match(line + "\n")
            if found is not None and found.group(1) in names:
                return True
    return False


def _merge_reduced(
    reduction: Reduction, profile: LanguageProfile
) -> tuple[tuple[str, dict[int, str]] | None, Reduction]:
    """The merge of ``reduction.texts``; of ``reduction.checked`` instead when a member only
    one side changed ended up in a conflict (its text differs per side there) or more or less
    than once in the result."""
    merged = _merge_texts(*reduction.texts, profile)
    if merged is None or not reduction.sides:
        return merged, reduction
    text, raw = merged
    found = Counter(PLACEHOLDER_LINE.findall(text))
    if (
        all(found[name] == 1 for name in reduction.sides)
        and not any(PLACEHOLDER in conflict for conflict in raw.values())
        and not (SENTINEL in text and _in_conflict(text, reduction.sides))
    ):
        return merged, reduction
    plain = Reduction(reduction.checked, reduction.checked, reduction.originals, {})
    return _merge_texts(*plain.texts, profile), plain


def structural_merge(
    base: str, ours: str, theirs: str, profile: LanguageProfile
) -> Clean | Conflicted | None:
    """The structural merge of three Python texts; ``None`` means "keep the line merge".

    Top-level and class-level segments unchanged in all three versions are set aside first
    (``_reduce``), so libcst parses only what changed; so are the named ones only one side
    changed, whose text the result takes from that side. They are put back byte for byte in the
    result, and the whole-result checks read every member one side changed.
    """
    if any(SENTINEL in text or len(text) > MAX_FILE_BYTES for text in (base, ours, theirs)):
        return None
    whole = Reduction((base, ours, theirs), (base, ours, theirs), {}, {})  # nothing set aside
    reduction = reduce_unchanged(base, ours, theirs) or whole
    if not parsed_within_bounds(reduction.checked):
        return None  # libcst would crash or take too long on it: git's line merge stands
    try:
        merged, reduction = _merge_reduced(reduction, profile)
    except _TailDropped:  # a placeholder's one line before the file's last lines: none then
        try:
            merged, reduction = _merge_reduced(whole, profile)
        except _TailDropped:  # the file's own one-line statement before them
            return None
    if merged is None:
        return None
    if reduction.sides and SENTINEL not in merged[0]:
        try:  # a member put back where it does not fit the indentation libcst rendered there
            _parsed.parse(reduction.expand_sides(merged[0]))  # (spyder 80d852f502f7)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            reduction = Reduction(reduction.checked, reduction.checked, reduction.originals, {})
            try:
                merged = _merge_texts(*reduction.texts, profile)  # as before: with them in
            except _TailDropped:
                return None
            if merged is None:
                return None
    text = reduction.expand_sides(merged[0])
    raw = merged[1]
    if SENTINEL not in text:
        if sorted(PLACEHOLDER_LINE.findall(text)) != sorted(reduction.originals):
            return None  # a set-aside segment would be lost or doubled: never in a clean result
        # Checked before the set-aside segments return: they are the same in every version.
        if unsure(*reduction.checked, text) is not None:
            return None  # the result would be wrong in a way no one symbol's merge can see
    text = expand(text, reduction.originals)
    if SENTINEL not in text:  # conflicts abandoned for a clean alternative leave no sentinel
        try:
            _parsed.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return Clean(text, stage="structural")
    # git's own conflict text (``raw``) comes from the texts with members set aside: their
    # placeholders are put back there too (cython 6953f90bfe5b: ``__fleet_keep_301__ = 0`` was
    # left in the result where ``is_pyobject = 0`` stood)
    marked = expand(render_markers(text, raw), reduction.originals)
    return Conflicted(marked, parse_conflicts(marked), stage="structural")
