"""Stage 2, the structural merge of a Python module (libcst), run only where lines conflict.

Members of a module or class are matched by identity (``_pykeys.identity``) and merged one by one;
the order of commutative members is merged separately from their content; a function body is
merged statement by statement. Whatever is unsure becomes a conflict around the smallest node
that holds it, and anything the stage cannot reason about at all (a parse failure, a symbol that
would be lost or duplicated) returns ``None`` so the caller keeps the line merge.
"""

from __future__ import annotations

import libcst as cst

from fleet.merge import _parsed
from fleet.merge._bounds import MAX_FILE_BYTES, parsed_within_bounds
from fleet.merge._checks import unsure
from fleet.merge._context import SENTINEL, Context, Unsure, render_markers
from fleet.merge._members import merge_members
from fleet.merge._pykeys import clear_code_cache, code, module_code
from fleet.merge._reduce import PLACEHOLDER_LINE, expand, reduce_unchanged
from fleet.merge._result import Clean, Conflicted, parse_conflicts
from fleet.merge.profile import LanguageProfile

__all__ = ["structural_merge"]


def _module_part(module: cst.Module, part: str) -> str:
    return code(
        cst.Module(
            body=[],
            header=module.header if part == "header" else [],
            footer=module.footer if part == "footer" else [],
        )
    )


def _merge_texts(
    base: str, ours: str, theirs: str, profile: LanguageProfile
) -> tuple[str, dict[int, str]] | None:
    """The merged text, conflicts still as sentinel statements, and the raw conflict texts by
    sentinel number; None means "unsure"."""
    try:
        modules = [cst.parse_module(text) for text in (base, ours, theirs)]
    except (cst.ParserSyntaxError, RecursionError, ValueError, MemoryError):
        return None
    module_b, module_o, module_t = modules
    ctx = Context(profile, module_o)
    parts = {}
    for part in ("header", "footer"):
        texts = [_module_part(m, part) for m in modules]
        if texts[1] == texts[2] or texts[0] == texts[2]:
            parts[part] = getattr(module_o, part)
        elif texts[0] == texts[1]:
            parts[part] = getattr(module_t, part)
        else:
            return None
    try:
        body = merge_members(ctx, module_b.body, module_o.body, module_t.body)
        return module_code(module_o.with_changes(body=body, **parts)), ctx.raw
    except (Unsure, RecursionError):
        return None
    finally:
        clear_code_cache()


def structural_merge(
    base: str, ours: str, theirs: str, profile: LanguageProfile
) -> Clean | Conflicted | None:
    """The structural merge of three Python texts; ``None`` means "keep the line merge".

    Top-level segments unchanged in all three versions are set aside first (``_reduce``), so
    libcst parses only what changed; they are put back byte for byte in the result.
    """
    if any(SENTINEL in text or len(text) > MAX_FILE_BYTES for text in (base, ours, theirs)):
        return None
    reduction = reduce_unchanged(base, ours, theirs)
    texts = reduction[0] if reduction is not None else (base, ours, theirs)
    if not parsed_within_bounds(texts):
        return None  # libcst would crash or take too long on it: git's line merge stands
    merged = _merge_texts(*texts, profile)
    if merged is None:
        return None
    text, raw = merged
    if SENTINEL not in text and unsure(*texts, text) is not None:
        # Checked before the set-aside segments return: they are the same in every version.
        return None  # the result would be wrong in a way no one symbol's merge can see
    if reduction is not None:
        placeholders = PLACEHOLDER_LINE.findall(text)
        if SENTINEL not in text and sorted(placeholders) != sorted(reduction[1]):
            return None  # a set-aside segment would be lost or doubled: never in a clean result
        text = expand(text, reduction[1])
    if SENTINEL not in text:  # conflicts abandoned for a clean alternative leave no sentinel
        try:
            _parsed.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return Clean(text, stage="structural")
    marked = render_markers(text, raw)
    return Conflicted(marked, parse_conflicts(marked), stage="structural")
