"""Members and statements: the recursive core of the structural stage.

A module's or class's members are matched by identity and merged one by one (``merge_members``;
their order by a diff3 over identities, see ``_order``), one symbol edited on both sides is
merged by ``merge_node``, and a block (a function body, an ``if``/``for``/``with``/``try``)
statement by statement (``merge_statements``). Whatever is unsure becomes a conflict around the
smallest node that holds it; what cannot be reasoned about raises ``Unsure``.
"""

from __future__ import annotations

import libcst as cst

from fleet.merge._branches import merge_if
from fleet.merge._context import Context, Maps, Stmts, Unsure
from fleet.merge._diff3 import compose_disjoint, diff3
from fleet.merge._group_head import GroupHeads
from fleet.merge._independent import independent_runs
from fleet.merge._names import added_alike, rebinds_what_other_uses, uses_what_other_removed
from fleet.merge._order import (
    blank_once,
    comment_once,
    fields_both_added,
    match_renames,
    ordered_fields,
    renamed_two_ways,
    resolve_order,
)
from fleet.merge._paired import merge_paired
from fleet.merge._pykeys import (
    Key,
    code,
    formatting_only,
    keyed,
    normalized,
    over_formatting,
    rule_for,
    same_change,
)
from fleet.merge._pytext import (
    formatting_kept,
    header_merge,
    held_merge,
    merge_decorators,
    multiline_strings,
    text_merge,
    token_merge,
)
from fleet.merge._reformatted import (
    after_deletion,
    apart,
    formatted_keys,
    formatted_members,
    reformatted,
    reformatting,
    within_blocks,
)
from fleet.merge._sets import import_union, merge_name_set
from fleet.merge._wrapped import into_wrapper, out_of_wrapper

__all__ = ["merge_members", "merge_node", "merge_statements"]


def _emptied(node: cst.CSTNode) -> str:
    """The node's text without its block's statements: its "header" (decorators, signature,
    ``else``/``except`` branches and trailing comments included)."""
    body = getattr(node, "body", None)
    assert isinstance(body, cst.IndentedBlock)
    return code(node.with_changes(body=body.with_changes(body=[])))


def _merge_block(
    ctx: Context, base: cst.CSTNode, ours: cst.CSTNode, theirs: cst.CSTNode, members: bool
) -> cst.BaseStatement | None:
    """Merge two edits of one compound statement: its header from the one side that changed it,
    its block member by member (classes) or statement by statement (everything else); an
    ``if`` with other branches branch by branch (``_branches``)."""
    nodes = (base, ours, theirs)
    if not members and all(isinstance(n, cst.If) and n.orelse is not None for n in nodes):
        ifs = (cst.ensure_type(base, cst.If), cst.ensure_type(ours, cst.If),
               cst.ensure_type(theirs, cst.If))
        return merge_if(ctx, ifs, _merge_block, merge_statements)
    blocks = [getattr(node, "body", None) for node in nodes]
    if not all(isinstance(block, cst.IndentedBlock) for block in blocks):
        return None
    header_base, header_ours, header_theirs = (_emptied(n) for n in (base, ours, theirs))
    if header_ours == header_theirs or header_base == header_theirs:
        frame = ours
    elif header_base == header_ours:
        frame = theirs
    else:
        decorated = merge_decorators(base, ours, theirs) or header_merge(base, ours, theirs)
        if decorated is None:
            return None
        frame = decorated
    bodies = [block.body for block in blocks if isinstance(block, cst.IndentedBlock)]
    if not members and header_ours != header_theirs and not isinstance(base, cst.FunctionDef):
        texts = [[code(stmt) for stmt in body] for body in bodies]
        if texts[0] != texts[1] != texts[2] != texts[0]:
            # One side changed what guards the block (a condition, a loop, a handler) and both
            # edited the block, differently: each side wrote its statements for its own header
            # (pytest cb732f7f490a: a new condition, a guard it makes redundant). Not a def's.
            return None
    merge = merge_members if members else merge_statements
    ctx.depth += 1
    outer = ctx.ordered_fields
    ctx.ordered_fields = isinstance(base, cst.ClassDef) and any(
        ordered_fields(header) for header in (header_base, header_ours, header_theirs)
    )
    try:
        body = merge(ctx, *bodies)
    finally:
        ctx.depth -= 1
        ctx.ordered_fields = outer
    frame_block = getattr(frame, "body", None)
    assert isinstance(frame_block, cst.IndentedBlock)
    result = frame.with_changes(body=frame_block.with_changes(body=body))
    assert isinstance(result, cst.BaseStatement)
    return result


def merge_node(
    ctx: Context,
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
        union = import_union(ours, theirs)
        return [union] if union is not None else ctx.conflict([ours], [], [theirs])
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
    taken = over_formatting(base, ours, theirs)
    if taken is not None:
        side = "theirs" if formatting_only(base, ours) else "ours"
        kept = marked and formatting_kept(ctx.module, marked, side, taken, (ours, theirs, base))
        kept, changing = kept or taken, 2 if side == "theirs" else 1
        if rule is not None and rule.strategy == "statements":  # (webob 8f8fc888c23a)
            parts = ([base], [kept], [theirs]) if changing == 1 else ([base], [ours], [kept])
            return within_blocks(ctx, parts, _merge_block, changing) or [kept]
        return [kept]
    same = same_change([base], [ours], [theirs])
    if same is not None:
        return same
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


def _resolve_key(ctx: Context, key: Key, maps: Maps) -> list[cst.BaseStatement]:
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
    after = after_deletion(base, kept)
    if after is not None:
        return after
    return ctx.conflict([ours] if ours else [], [base], [theirs] if theirs else [])


def _deletion(ctx: Context, key: Key, maps: Maps) -> tuple[list[cst.BaseStatement], bool]:
    """A base symbol this chunk drops: nothing if deleted unchanged, a conflict if the other side
    modified it. The flag says whether the key is settled here (a move is settled elsewhere)."""
    base, ours, theirs = (mapping.get(key) for mapping in maps)
    assert base is not None
    if ours is not None and theirs is not None:
        return [], False
    kept = ours or theirs
    if kept is None:
        return [], True
    after = after_deletion(base, kept)
    if after is not None:
        return after, True
    return ctx.conflict([ours] if ours else [], [base], [theirs] if theirs else []), True


def merge_members(ctx: Context, base: Stmts, ours: Stmts, theirs: Stmts) -> list[cst.BaseStatement]:
    """Merge a module's or a class's members: order by a diff3 over identities, content per
    symbol. Raises ``Unsure`` if a symbol would be duplicated or silently lost."""
    versions = match_renames(keyed(ctx.profile, [base, ours, theirs]))
    maps = [dict(items) for items in versions]
    keys = [[key for key, _ in items] for items in versions]
    everywhere = set(maps[0]) & set(maps[1]) & set(maps[2])
    orders = [[key for key in key_list if key in everywhere] for key_list in keys]
    if orders[0] != orders[1] and orders[0] != orders[2] and orders[1] != orders[2]:
        raise Unsure("both sides reordered the same members differently")
    out: list[cst.BaseStatement] = []
    emitted: set[Key] = set()
    settled: set[Key] = set()
    heads = GroupHeads(maps)
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
        elif changing := reformatting((part_b, part_o, part_t), maps):
            # one side only reformatted what the other changed or deleted: the other's change,
            # the first's format (an unnamed statement changed: merged inside, ``_reformatted``)
            inside = formatted_members(ctx, (part_b, part_o, part_t), maps, changing, merge_node)
            settled.update((*part_b, *part_o, *part_t) if inside else (*part_o, *part_t))
            if inside:
                heads.reset()
                out.extend(inside)
                continue
            chosen = formatted_keys((part_b, part_o, part_t), maps, changing)
        elif fields_both_added(part_b, part_o, part_t, maps, ctx.ordered_fields):
            chosen = None  # where both sides' fields meet, their order is unknown
        elif renamed_two_ways(part_b, part_o, part_t, maps):
            chosen = None  # one definition renamed two ways: both copies would be kept
        else:
            chosen = resolve_order(ctx.profile, part_b, part_o, part_t, maps)
            if chosen is None:
                composed = compose_disjoint(part_b, part_o, part_t)
                if composed is not None:
                    parts = {"base": part_b, "ours": part_o, "theirs": part_t}
                    chosen = [parts[side][index] for side, index in composed]
        if chosen is None:
            nested = _nested_block(ctx, part_b, part_o, part_t, maps, members=True)
            paired = nested is None and merge_paired(  # each statement of a run merged alone
                ctx, (part_b, part_o, part_t), maps, _nested_block, members=True)
            heads.reset()
            if nested is not None or paired:
                out.extend([nested] if nested is not None else paired or [])
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
                heads.emitted(out, key, pieces, 0 if done else -1)
                out.extend(pieces)
                if done:
                    settled.add(key)
        moved: dict[tuple[str, ...], int] = {}
        for key in chosen:
            if key in emitted:
                raise Unsure(f"symbol {key} would be duplicated")
            emitted.add(key)
            pieces = _resolve_key(ctx, key, maps)
            side = (key in maps[1]) + 2 * (key in maps[2])  # 1 ours, 2 theirs, 3 both
            if key not in maps[0] and side < 3 and pieces:
                pieces[0] = comment_once(pieces[0], side, moved, maps[0])
                pieces[0] = blank_once(pieces[0], side, moved, maps)
            heads.emitted(out, key, pieces, side)
            out.extend(pieces)
    base_map, ours_map, theirs_map = maps
    for key in set(ours_map) | set(theirs_map):
        if key in emitted or key in settled:
            continue
        kept = ours_map.get(key) or theirs_map.get(key)
        deleted = key in base_map and (key not in ours_map or key not in theirs_map)
        if not (deleted and kept is not None and code(kept) == code(base_map[key])):
            raise Unsure(f"symbol {key} would be lost")
    return out


def _nested_block(
    ctx: Context,
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
        merged = token_merge(ctx.module, nodes[0], nodes[1], nodes[2])
        return merged if merged is not None else held_merge(ctx.module, *nodes)
    return _merge_block(ctx, nodes[0], nodes[1], nodes[2], members=members)


def merge_statements(
    ctx: Context, base: Stmts, ours: Stmts, theirs: Stmts
) -> list[cst.BaseStatement]:
    """Merge an ordered statement list: a diff3 over statement texts; different statements
    edited on each side compose even when adjacent (at one point: independent assignments); one
    compound statement edited on both is merged inside; the rest conflicts around the overlap."""
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
        if reformatted(part_b, part_o) or reformatted(part_b, part_t):
            # one side only reformatted what the other changed or deleted: the other's whole,
            # unless the lines merge cleanly, or compound statements merge inside
            changing = 2 if reformatted(part_b, part_o) else 1
            inside = apart((part_b, part_o, part_t), changing) or within_blocks(
                ctx, (part_b, part_o, part_t), _merge_block, changing)
            out.extend(inside or (part_t if changing == 2 else part_o))
            continue
        same = same_change(part_b, part_o, part_t)
        if same is not None:
            out.extend(same)
            continue
        text_parts = [t[slice(*span)] for t, span in zip(texts, spans, strict=True)]
        composed = compose_disjoint(*text_parts, one_point=independent_runs)
        both = composed is not None and {"ours", "theirs"} <= {side for side, _ in composed}
        if (
            composed is not None
            and not uses_what_other_removed(text_parts, texts)
            and not (both and added_alike(text_parts))
            and not (both and rebinds_what_other_uses(text_parts, composed))
        ):
            parts = {"base": part_b, "ours": part_o, "theirs": part_t}
            out.extend(parts[side][index] for side, index in composed)
            continue
        unwrapped = out_of_wrapper(part_b, part_o, part_t)  # one side's wrapper taken away
        if unwrapped is not None:
            out.extend(unwrapped)
            continue
        maps = [
            {token: node for token, node in zip(tok[slice(*span)], part, strict=True)}
            for tok, span, part in zip(tokens, spans, (part_b, part_o, part_t), strict=True)
        ]
        keys_b, keys_o, keys_t = (list(m) for m in maps)
        nested = _nested_block(ctx, keys_b, keys_o, keys_t, maps, members=False)
        paired = nested is None and merge_paired(
            ctx, (keys_b, keys_o, keys_t), maps, _nested_block, members=False)
        if nested is not None or paired:
            out.extend([nested] if nested is not None else paired or [])
            continue
        wrapped = into_wrapper(part_b, part_o, part_t)  # one side's new guard around the run
        out.extend(wrapped if wrapped is not None else ctx.conflict(part_o, part_b, part_t))
    return out
