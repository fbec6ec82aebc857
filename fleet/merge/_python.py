"""Stage 2, the structural merge of a Python module (libcst), run only where lines conflict.

Members of a module or class are matched by identity (``_pykeys.identity``) and merged one by one;
the order of commutative members is merged separately from their content; a function body is
merged statement by statement. Whatever is unsure becomes a conflict around the smallest node
that holds it, and anything the stage cannot reason about at all (a parse failure, a symbol that
would be lost or duplicated) returns ``None`` so the caller keeps the line merge.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from fleet.errors import FleetError
from fleet.merge._bounds import MAX_FILE_BYTES, parsed_within_bounds
from fleet.merge._checks import unsure
from fleet.merge._diff3 import compose_disjoint, diff3
from fleet.merge._order import match_renames, resolve_order
from fleet.merge._pykeys import (
    Key,
    clear_code_cache,
    code,
    formatting_only,
    keyed,
    normalized,
    rule_for,
)
from fleet.merge._pytext import merge_decorators, multiline_strings, text_merge, token_merge
from fleet.merge._reduce import PLACEHOLDER_LINE, expand, reduce_unchanged
from fleet.merge._result import Clean, Conflicted, parse_conflicts
from fleet.merge._sets import merge_name_set
from fleet.merge.profile import LanguageProfile

SENTINEL = "__fleet_merge_"
_SENTINEL_LINE = re.compile(
    r"^([ \t]*)__fleet_merge_(\d+)_(ours|base|sep|theirs|raw)__[ \t]*(\r?\n|$)", re.MULTILINE
)
_MARKERS = {
    "ours": "<<<<<<< ours",
    "base": "||||||| base",
    "sep": "=======",
    "theirs": ">>>>>>> theirs",
}
_MARKER_PREFIXES = {"<" * 7, "|" * 7, "=" * 7, ">" * 7}
Stmts = Sequence[cst.BaseStatement]
Maps = list[dict[Key, cst.BaseStatement]]


class _Unsure(FleetError):
    """Internal: the structural stage cannot decide; the caller keeps the line merge."""


@dataclass
class _Context:
    profile: LanguageProfile
    module: cst.Module
    conflicts: int = 0
    depth: int = 0  # 0 while merging the module's own members
    raw: dict[int, str] = field(default_factory=dict)

    def raw_conflict(self, marked: str) -> list[cst.BaseStatement]:
        """A symbol's own line-merge conflict: git's markers, indented where the sentinel is."""
        number = self.conflicts
        self.conflicts += 1
        self.raw[number] = marked
        name = f"{SENTINEL}{number}_raw__"
        return [cst.SimpleStatementLine(body=[cst.Expr(cst.Name(name))])]

    def conflict(self, ours: Stmts, base: Stmts, theirs: Stmts) -> list[cst.BaseStatement]:
        """The three sides between sentinel statements, turned into markers after rendering."""
        number = self.conflicts
        self.conflicts += 1

        def mark(role: str) -> cst.BaseStatement:
            return cst.SimpleStatementLine(
                body=[cst.Expr(cst.Name(f"{SENTINEL}{number}_{role}__"))]
            )

        return [mark("ours"), *ours, mark("base"), *base, mark("sep"), *theirs, mark("theirs")]


def _emptied(node: cst.CSTNode) -> str:
    """The node's text without its block's statements: its "header" (decorators, signature,
    ``else``/``except`` branches and trailing comments included)."""
    body = getattr(node, "body", None)
    assert isinstance(body, cst.IndentedBlock)
    return code(node.with_changes(body=body.with_changes(body=[])))


def _merge_block(
    ctx: _Context, base: cst.CSTNode, ours: cst.CSTNode, theirs: cst.CSTNode, members: bool
) -> cst.BaseStatement | None:
    """Merge two edits of one compound statement: its header from the one side that changed it,
    its block member by member (classes) or statement by statement (everything else)."""
    blocks = [getattr(node, "body", None) for node in (base, ours, theirs)]
    if not all(isinstance(block, cst.IndentedBlock) for block in blocks):
        return None
    header_base, header_ours, header_theirs = (_emptied(n) for n in (base, ours, theirs))
    if header_ours == header_theirs or header_base == header_theirs:
        frame = ours
    elif header_base == header_ours:
        frame = theirs
    else:
        decorated = merge_decorators(base, ours, theirs)
        if decorated is None:
            return None
        frame = decorated
    bodies = [block.body for block in blocks if isinstance(block, cst.IndentedBlock)]
    if not members and header_ours != header_theirs and not isinstance(base, cst.FunctionDef):
        texts = [[code(stmt) for stmt in body] for body in bodies]
        if texts[0] != texts[1] != texts[2] != texts[0]:
            # One side changed what guards the block (a condition, a loop, a handler) and both
            # edited the block, differently: each side wrote its statements for its own header
            # (pytest cb732f7f490a: a new condition, and a guard it makes redundant). A
            # signature changed with its body is common and is merged.
            return None
    merge = merge_members if members else merge_statements
    ctx.depth += 1
    try:
        body = merge(ctx, *bodies)
    finally:
        ctx.depth -= 1
    frame_block = getattr(frame, "body", None)
    assert isinstance(frame_block, cst.IndentedBlock)
    result = frame.with_changes(body=frame_block.with_changes(body=body))
    assert isinstance(result, cst.BaseStatement)
    return result


def merge_node(
    ctx: _Context,
    base: cst.BaseStatement | None,
    ours: cst.BaseStatement,
    theirs: cst.BaseStatement,
) -> list[cst.BaseStatement]:
    """Merge the two sides' versions of one matched symbol (``base`` is None if both added it)."""
    text_ours, text_theirs = code(ours), code(theirs)
    if text_ours == text_theirs:
        return [ours]
    if base is None:
        if normalized(ours) is not None and normalized(ours) == normalized(theirs):
            return [ours]
        return ctx.conflict([ours], [], [theirs])
    text_base = code(base)
    if text_base == text_ours:
        return [theirs]
    if text_base == text_theirs:
        return [ours]
    rule = rule_for(ctx.profile, ours)
    if rule is not None and rule.strategy == "members":
        # Member by member first (each with its own line merge): rendering and parsing a whole
        # class for its line merge is the costly step, worth it only if members conflict.
        before = ctx.conflicts
        block = _merge_block(ctx, base, ours, theirs, members=True)
        if block is not None and ctx.conflicts == before:
            return [block]
        merged, _ = text_merge(ctx.module, base, ours, theirs)
        if merged is not None:
            return [merged]
        return [block] if block is not None else ctx.conflict([ours], [base], [theirs])
    merged, marked = text_merge(ctx.module, base, ours, theirs)
    if merged is not None:
        return [merged]
    if formatting_only(base, ours):
        return [theirs]
    if formatting_only(base, theirs):
        return [ours]
    result: cst.BaseStatement | None = None
    if rule is not None and rule.strategy in ("members", "statements"):
        result = _merge_block(ctx, base, ours, theirs, members=rule.strategy == "members")
    elif rule is not None and rule.strategy == "name_set":
        result = merge_name_set(base, ours, theirs)
    if result is None:
        result = token_merge(ctx.module, base, ours, theirs)
    if result is not None:
        return [result]
    if marked is not None and (ctx.depth == 0 or not multiline_strings(base, ours, theirs)):
        # git's own markers for this symbol are narrower than the whole symbol. Nested, they are
        # re-indented, which is exact unless a string spans lines (its inner lines would shift).
        return ctx.raw_conflict(marked)
    return ctx.conflict([ours], [base], [theirs])


def _resolve_key(ctx: _Context, key: Key, maps: Maps) -> list[cst.BaseStatement]:
    base, ours, theirs = (mapping.get(key) for mapping in maps)
    if key[0] == "anon":
        node = ours or theirs or base
        assert node is not None
        return [node]
    if ours is not None and theirs is not None:
        return merge_node(ctx, base, ours, theirs)
    kept = ours or theirs
    assert kept is not None
    if base is None:
        return [kept]
    if code(kept) == code(base):
        return []  # deleted by the other side, unchanged here
    return ctx.conflict([ours] if ours else [], [base], [theirs] if theirs else [])


def _deletion(ctx: _Context, key: Key, maps: Maps) -> tuple[list[cst.BaseStatement], bool]:
    """A base symbol this chunk drops: nothing if deleted unchanged, a conflict if the other side
    modified it. The flag says whether the key is settled here (a move is settled elsewhere)."""
    base, ours, theirs = (mapping.get(key) for mapping in maps)
    assert base is not None
    if ours is not None and theirs is not None:
        return [], False
    kept = ours or theirs
    if kept is None or code(kept) == code(base):
        return [], True
    return ctx.conflict([ours] if ours else [], [base], [theirs] if theirs else []), True


def merge_members(
    ctx: _Context, base: Stmts, ours: Stmts, theirs: Stmts
) -> list[cst.BaseStatement]:
    """Merge a module's or a class's members: order by a diff3 over identities, content per
    symbol. Raises ``_Unsure`` if a symbol would be duplicated or silently lost."""
    versions = match_renames(keyed(ctx.profile, [base, ours, theirs]))
    maps = [dict(items) for items in versions]
    keys = [[key for key, _ in items] for items in versions]
    everywhere = set(maps[0]) & set(maps[1]) & set(maps[2])
    orders = [[key for key in key_list if key in everywhere] for key_list in keys]
    if orders[0] != orders[1] and orders[0] != orders[2] and orders[1] != orders[2]:
        raise _Unsure("both sides reordered the same members differently")
    out: list[cst.BaseStatement] = []
    emitted: set[Key] = set()
    settled: set[Key] = set()
    for chunk in diff3(*keys):
        part_b, part_o, part_t = (
            key_list[slice(*span)]
            for key_list, span in zip(keys, (chunk.base, chunk.ours, chunk.theirs), strict=True)
        )
        chosen: list[Key] | None
        if chunk.kind == "theirs":
            chosen = part_t
        elif chunk.kind != "conflict":
            chosen = part_o
        else:
            chosen = resolve_order(ctx.profile, part_b, part_o, part_t, maps)
            if chosen is None:
                composed = compose_disjoint(part_b, part_o, part_t)
                if composed is not None:
                    parts = {"base": part_b, "ours": part_o, "theirs": part_t}
                    chosen = [parts[side][index] for side, index in composed]
        if chosen is None:
            nested = _nested_block(ctx, part_b, part_o, part_t, maps, members=True)
            if nested is not None:
                out.append(nested)
                settled.update((*part_b, *part_o, *part_t))
                continue
            nodes = [
                [m[key] for key in part]
                for m, part in zip(maps, (part_b, part_o, part_t), strict=True)
            ]
            out.extend(ctx.conflict(nodes[1], nodes[0], nodes[2]))
            settled.update((*part_b, *part_o, *part_t))
            continue
        for key in part_b:
            if key not in chosen:
                pieces, done = _deletion(ctx, key, maps)
                out.extend(pieces)
                if done:
                    settled.add(key)
        for key in chosen:
            if key in emitted:
                raise _Unsure(f"symbol {key} would be duplicated")
            emitted.add(key)
            out.extend(_resolve_key(ctx, key, maps))
    base_map, ours_map, theirs_map = maps
    for key in set(ours_map) | set(theirs_map):
        if key in emitted or key in settled:
            continue
        kept = ours_map.get(key) or theirs_map.get(key)
        deleted = key in base_map and (key not in ours_map or key not in theirs_map)
        if not (deleted and kept is not None and code(kept) == code(base_map[key])):
            raise _Unsure(f"symbol {key} would be lost")
    return out


def _nested_block(
    ctx: _Context,
    base: list,
    ours: list,
    theirs: list,
    maps: Maps,
    members: bool,
) -> cst.BaseStatement | None:
    """Both sides edited the same one compound statement: merge inside it if the profile allows."""
    if not (len(base) == len(ours) == len(theirs) == 1):
        return None
    nodes = [mapping[part[0]] for mapping, part in zip(maps, (base, ours, theirs), strict=True)]
    kinds = {type(node).__name__ for node in nodes}
    if len(kinds) != 1 or kinds.pop() not in {*ctx.profile.blocks, "SimpleStatementLine"}:
        return None
    if isinstance(nodes[0], cst.FunctionDef | cst.ClassDef):
        return None  # symbols are merged by identity, not here
    if isinstance(nodes[0], cst.SimpleStatementLine):
        return token_merge(ctx.module, nodes[0], nodes[1], nodes[2])
    return _merge_block(ctx, nodes[0], nodes[1], nodes[2], members=members)


def merge_statements(
    ctx: _Context, base: Stmts, ours: Stmts, theirs: Stmts
) -> list[cst.BaseStatement]:
    """Merge an ordered statement list: a diff3 over statement texts; different statements
    edited on each side compose even when adjacent; one compound statement edited on both sides
    is merged inside; anything else conflicts around the overlapping statements only."""
    versions = [[(code(node), node) for node in body] for body in (base, ours, theirs)]
    tokens: list[list[Key]] = [
        [(text, str(index)) for index, (text, _) in enumerate(v)] for v in versions
    ]
    # Tokens are texts; the index only disambiguates the maps below, so compare by text alone.
    texts = [[text for text, _ in v] for v in versions]
    lists = [list(body) for body in (base, ours, theirs)]
    out: list[cst.BaseStatement] = []
    for chunk in diff3(*texts):
        spans = (chunk.base, chunk.ours, chunk.theirs)
        part_b, part_o, part_t = (
            body[slice(*span)] for body, span in zip(lists, spans, strict=True)
        )
        if chunk.kind == "theirs":
            out.extend(part_t)
            continue
        if chunk.kind != "conflict":
            out.extend(part_o)
            continue
        text_parts = [t[slice(*span)] for t, span in zip(texts, spans, strict=True)]
        composed = compose_disjoint(*text_parts)
        if composed is not None:
            parts = {"base": part_b, "ours": part_o, "theirs": part_t}
            out.extend(parts[side][index] for side, index in composed)
            continue
        maps = [
            {token: node for token, node in zip(tok[slice(*span)], part, strict=True)}
            for tok, span, part in zip(tokens, spans, (part_b, part_o, part_t), strict=True)
        ]
        keys_b, keys_o, keys_t = (list(m) for m in maps)
        nested = _nested_block(ctx, keys_b, keys_o, keys_t, maps, members=False)
        if nested is not None:
            out.append(nested)
            continue
        out.extend(ctx.conflict(part_o, part_b, part_t))
    return out


def _render_markers(text: str, raw: dict[int, str]) -> str:
    """Sentinel statements -> diff3 marker lines; a ``raw`` one -> git's marker text for it."""

    def marker(match: re.Match[str]) -> str:
        indent, number, role, newline = match.groups()
        if role == "raw":
            return "".join(
                line if line in ("\n", "\r\n") or line[:7] in _MARKER_PREFIXES else indent + line
                for line in raw[int(number)].splitlines(keepends=True)
            )
        return _MARKERS[role] + (newline or "\n")

    return _SENTINEL_LINE.sub(marker, text)


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
    ctx = _Context(profile, module_o)
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
        return module_o.with_changes(body=body, **parts).code, ctx.raw
    except (_Unsure, RecursionError):
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
            ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return Clean(text, stage="structural")
    marked = _render_markers(text, raw)
    return Conflicted(marked, parse_conflicts(marked), stage="structural")
