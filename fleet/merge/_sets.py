"""Statements whose items are merged one by one (profile strategy ``name_set``): the names of
``from m import a, b`` and of ``__all__ = ["a", "b"]`` are sets (both sides' additions kept,
either side's removals applied); any other list or tuple of strings (``install_requires``, say)
is a sequence whose order matters, merged by a diff3 over its items, disjoint edits composed."""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

import libcst as cst
from libcst.helpers import get_full_name_for_node

from fleet.merge._diff3 import ascending, both_inserted, compose_disjoint, diff3
from fleet.merge._pykeys import render

__all__ = ["Item", "import_after_deletion", "import_union", "merge_name_set"]

Item = TypeVar("Item", cst.ImportAlias, cst.Element)


def _alias_key(alias: cst.ImportAlias) -> str:
    asname = alias.asname
    target = get_full_name_for_node(asname.name) if asname is not None else ""
    return f"{get_full_name_for_node(alias.name)} as {target}"


def _element_key(element: cst.Element) -> str:
    return str(element.value.evaluated_value) if isinstance(element.value, cst.SimpleString) else ""


def _sequence(
    base: Sequence[Item], ours: Sequence[Item], theirs: Sequence[Item], key: Callable[[Item], str]
) -> list[Item] | None:
    """The items in order: a diff3 over their keys, edits of different items composed even when
    adjacent, insertions of both sides at one point ours' first, or in sorted order when the
    list is sorted in all three (see ``_diff3.both_inserted``);
    ``None`` when both sides changed the same items."""
    keys = [[key(i) for i in items] for items in (base, ours, theirs)]
    if "" in keys[1] + keys[2]:
        return None
    out: list[Item] = []
    for chunk in diff3(*keys):
        if chunk.kind == "theirs":
            out.extend(theirs[slice(*chunk.theirs)])
        elif chunk.kind != "conflict":
            out.extend(ours[slice(*chunk.ours)])
        else:
            spans = (chunk.base, chunk.ours, chunk.theirs)
            composed = compose_disjoint(
                *(k[slice(*span)] for k, span in zip(keys, spans, strict=True))
            )
            if composed is None:
                key_b, key_o, key_t = (k[slice(*span)] for k, span in zip(keys, spans, strict=True))
                in_order = ascending(keys[0], keys[1], keys[2], chunk)
                composed = both_inserted(key_b, key_o, key_t, in_order=in_order)
            if composed is None:
                return None
            parts = {
                side: items[slice(*span)]
                for side, items, span in zip(
                    ("base", "ours", "theirs"), (base, ours, theirs), spans, strict=True
                )
            }
            out.extend(parts[side][index] for side, index in composed)
    # One item both sides inserted, each at its own place (esphome ``CODEOWNERS``: "@esphome/core"
    # added at the head by one side, at the end by the other): kept twice, it is a conflict.
    counts = [Counter(k) for k in keys]
    if any(n > max(counts[1][item], counts[2][item]) for item, n in Counter(map(key, out)).items()):
        return None
    return out


def _merge_items(
    base: Sequence[Item],
    ours: Sequence[Item],
    theirs: Sequence[Item],
    key: Callable[[Item], str],
    as_set: bool = True,
    wrapped: bool = True,
) -> list[Item] | None:
    """As a set: ours' items minus removals, plus theirs' additions after their predecessor and
    after ours' additions there (or in sorted position when ours' items are sorted). As a
    sequence: see :func:`_sequence`. Separators: :func:`_separated`; each string's text:
    :func:`_string_texts`."""
    keys_b, keys_o = {key(i) for i in base}, {key(i) for i in ours}
    keys_t = {key(i) for i in theirs}
    if not as_set:
        result = _sequence(base, ours, theirs, key)
        if result is None or not result or not ours:
            return None
        result = _string_texts(result, base, ours, theirs, key)
        return None if result is None else _separated(result, ours, key, base, theirs, wrapped)
    if len(keys_o) != len(ours) or len(keys_t) != len(theirs) or "" in keys_o | keys_t:
        return None  # duplicates or items that are not plain names
    shared = keys_b & keys_o & keys_t
    order_b, order_o, order_t = ([key(i) for i in side if key(i) in shared]
                                 for side in (base, ours, theirs))
    # theirs re-sorted the names (esphome 5e0f43cf7b9e): its order and layout lead, inside ours'
    # frame when that has brackets (a line break of theirs would not parse in a bare import)
    if wrapped and order_o == order_b != order_t:
        ours, theirs, keys_o, keys_t = theirs, ours, keys_t, keys_o
    removed = (keys_b - keys_o) | (keys_b - keys_t)
    result = [i for i in ours if key(i) not in removed]
    kept = [key(i) for i in result]
    keep_sorted = len(kept) > 1 and kept == sorted(kept)
    position = None
    for item in theirs:
        present = [key(i) for i in result]
        if key(item) in present:
            position = present.index(key(item)) + 1
        elif key(item) not in keys_b and key(item) not in keys_o:
            if keep_sorted:
                index = bisect.bisect(present, key(item))
            else:
                index = len(result) if position is None else position
                while index < len(result) and present[index] not in keys_b | keys_t:
                    index += 1  # ours' own additions at this place come first
            result.insert(index, item)
            position = index + 1
    if not result or not ours:
        return None
    result = _string_texts(result, base, ours, theirs, key)
    return None if result is None else _separated(result, ours, key, base, theirs, wrapped)


def _has_comment(comma: cst.Comma | cst.MaybeSentinel) -> bool:
    return isinstance(comma, cst.Comma) and "#" in render(comma)


def _separated(
    result: list[Item],
    ours: Sequence[Item],
    key: Callable[[Item], str],
    base: Sequence[Item] = (),
    theirs: Sequence[Item] = (),
    wrapped: bool = True,
) -> list[Item] | None:
    """The items with separators. A comma holds the comment lines above the next item (scrapy
    ``2d9857b44127``: ours' new last item's comment), so the comma before an item is the one
    before it in ours, or in theirs where theirs changed a comment there and ours did not, or
    where only theirs has one and it holds a comment; else ours' layout (its most common
    comment-free comma, the last of those: scrapy ``f56eac8607d0``, theirs put the names on one
    line, ours' frame wraps them).
    Ours' last item's comma (a trailing comma or none) goes after the last. Theirs' commas that
    break the line are not taken when ours' frame has no brackets or parentheses (``wrapped``
    false: a bare ``from m import a, b``). None when both sides changed the comma before one
    item differently and one holds a comment, or when a comment one side added above an item
    would be lost."""

    def before(items: Sequence[Item]) -> dict[str, cst.Comma]:
        return {
            key(b): a.comma for a, b in itertools.pairwise(items) if isinstance(a.comma, cst.Comma)
        }

    mine, other, old = before(ours), before(theirs), before(base)
    if not wrapped:
        other = {name: c for name, c in other.items() if "\n" not in render(c)}
    plain = [c for c in mine.values() if not _has_comment(c)]
    # ours' usual comma: the one most of its items have (Medusa 78b0204e073a: ``'elitetracker',
    # 'privatehd'`` appended by theirs on one line, in a list ours writes several to a line,
    # went to a line of its own after ours' last comma, a line break), the last on a tie
    common = Counter(render(c) for c in plain)
    plain = [c for c in plain if common[render(c)] == max(common.values())]
    default = plain[-1] if plain else cst.Comma(cst.SimpleWhitespace(""), cst.SimpleWhitespace(" "))
    fixed = []
    used = set()
    # A base comment both sides moved onto their own new item (each inserted below it: xarray
    # ``df828b8a2f54``, ``# Exceptions`` in ``__all__``) stays once, where ours has it.
    placed = {render(mine[key(b)]) for _, b in itertools.pairwise(result) if key(b) in mine}
    moved = placed & {render(c) for c in old.values() if _has_comment(c)}
    for a, b in itertools.pairwise(result):
        name = key(b)
        texts = [render(c[name]) if name in c else None for c in (old, mine, other)]
        comma = mine.get(name)
        if comma is None:  # theirs' own layout only for the comment it brings, else ours'
            found = other.get(name)
            brings = found is not None and _has_comment(found) and render(found) not in moved
            comma = found if found is not None and brings else default
        if texts[1] is not None and texts[2] is not None and texts[1] != texts[2]:
            if texts[0] == texts[1] and "#" in f"{texts[0]}{texts[2]}":
                comma = other[name]  # theirs' comment there (a layout of theirs: ours' frame)
            elif texts[0] != texts[2] and "#" in texts[1] + texts[2]:
                return None
        used.add(name)
        fixed.append(a.with_changes(comma=comma))
    fixed.append(result[-1].with_changes(comma=ours[-1].comma))
    for side in (mine, other):
        for name, comma in side.items():
            added = name not in old or render(old[name]) != render(comma)
            if name not in used and _has_comment(comma) and added:
                return None
    return fixed


def _string_texts(
    result: list[Item],
    base: Sequence[Item],
    ours: Sequence[Item],
    theirs: Sequence[Item],
    key: Callable[[Item], str],
) -> list[Item] | None:
    """Each string item's text merged three ways: items matched by their value may still differ
    in how they are written (quotes, a prefix): one side's change is kept (scrapy
    ``2d9857b44127``: theirs re-quoted every item), None when both changed one differently."""

    def texts(items: Sequence[Item]) -> dict[str, str] | None:
        out: dict[str, str] = {}
        for item in items:
            value = item.value if isinstance(item, cst.Element) else None
            if not isinstance(value, cst.SimpleString):
                return None
            if out.setdefault(key(item), value.value) != value.value:
                return None  # one value written two ways in one version
        return out

    found = [texts(items) for items in (base, ours, theirs)]
    if found[0] is None or found[1] is None or found[2] is None:
        return result if all(isinstance(i, cst.ImportAlias) for i in result) else None
    merged = []
    for item in result:
        text_b, text_o, text_t = (texts_.get(key(item)) for texts_ in found if texts_ is not None)
        want = text_o if text_o is not None else text_t
        if text_o is not None and text_t is not None and text_o != text_t:
            if text_b == text_o:
                want = text_t
            elif text_b != text_t:
                return None
        value = item.value if isinstance(item, cst.Element) else None
        if isinstance(value, cst.SimpleString) and want is not None and want != value.value:
            item = item.with_changes(value=value.with_changes(value=want))
        merged.append(item)
    return merged


def _small(node: cst.BaseStatement) -> cst.BaseSmallStatement | None:
    if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
        return node.body[0]
    return None


def _frame(node: cst.BaseStatement) -> str:
    """The statement with its items replaced by one placeholder: what is not the set. Blank
    lines above it are layout, not part of it (scrapy ``3e634c77969b``: theirs' imports added
    above took the blank line before ``from scrapy.utils.log import (...)``); comments are."""
    inner = _small(node)
    assert isinstance(node, cst.SimpleStatementLine)
    node = node.with_changes(
        leading_lines=[line for line in node.leading_lines if line.comment is not None]
    )
    if isinstance(inner, cst.ImportFrom):
        space = inner.whitespace_after_import
        if isinstance(space, cst.SimpleWhitespace) and not space.value:  # ``import(a)``
            space = cst.SimpleWhitespace(" ")  # (nipype 33d0664ca6d9: libcst refused it bare)
        bare: cst.BaseSmallStatement = inner.with_changes(
            names=[cst.ImportAlias(name=cst.Name("_"))], lpar=None, rpar=None,
            whitespace_after_import=space,
        )
    else:
        assert isinstance(inner, cst.Assign) and isinstance(inner.value, cst.List | cst.Tuple)
        bare = inner.with_changes(value=cst.Name("_"))
    return render(node.with_changes(body=[bare]))


def merge_name_set(
    base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> cst.BaseStatement | None:
    """Merge the item sets of ``from m import ...`` or of an assignment of a list or tuple of
    strings (``__all__``). ``None`` when it is neither, when items repeat or are not plain
    names, or when theirs changed anything but the items (a comment, say) unlike ours."""
    inners = [_small(node) for node in (base, ours, theirs)]
    if all(
        isinstance(i, cst.ImportFrom) and not isinstance(i.names, cst.ImportStar) for i in inners
    ):
        stmts = [i for i in inners if isinstance(i, cst.ImportFrom)]
        lists = [list(s.names) for s in stmts if not isinstance(s.names, cst.ImportStar)]
        wrapped = stmts[1].lpar is not None
        names = _merge_items(lists[0], lists[1], lists[2], _alias_key, True, wrapped)
        if names is None:
            return None
        if len(names) > 1 and stmts[1].lpar is None and isinstance(names[-1].comma, cst.Comma):
            return None  # a bare trailing comma outside parentheses would not parse
        merged: cst.BaseSmallStatement = stmts[1].with_changes(names=names)
    elif all(
        isinstance(i, cst.Assign) and isinstance(i.value, cst.List | cst.Tuple) for i in inners
    ):
        assigns = [i for i in inners if isinstance(i, cst.Assign)]
        values = [a.value for a in assigns if isinstance(a.value, cst.List | cst.Tuple)]
        if len({type(v) for v in values}) != 1 or (
            not values[1].lpar and isinstance(values[1], cst.Tuple)
        ):
            return None
        elements = [[e for e in v.elements if isinstance(e, cst.Element)] for v in values]
        if any(len(e) != len(v.elements) for e, v in zip(elements, values, strict=True)):
            return None  # starred elements
        targets = [t.target for t in assigns[1].targets]
        as_set = (
            len(targets) == 1 and isinstance(targets[0], cst.Name) and targets[0].value == "__all__"
        )
        items = _merge_items(elements[0], elements[1], elements[2], _element_key, as_set)
        if items is None:
            return None
        merged = assigns[1].with_changes(value=values[1].with_changes(elements=items))
    else:
        return None
    frame_b, frame_o, frame_t = (_frame(node) for node in (base, ours, theirs))
    if frame_t not in (frame_b, frame_o):
        return None
    assert isinstance(ours, cst.SimpleStatementLine)
    return ours.with_changes(body=[merged])


def _from_import(node: cst.BaseStatement | None) -> cst.ImportFrom | None:
    inner = _small(node) if node is not None else None
    if isinstance(inner, cst.ImportFrom) and not isinstance(inner.names, cst.ImportStar):
        return inner
    return None


def _aliases(inner: cst.ImportFrom) -> list[cst.ImportAlias]:
    assert not isinstance(inner.names, cst.ImportStar)
    return list(inner.names)


def _with_names(
    node: cst.BaseStatement, inner: cst.ImportFrom, names: list[cst.ImportAlias]
) -> cst.BaseStatement | None:
    fixed = _separated(names, _aliases(inner), _alias_key)
    if fixed is None:
        return None
    if inner.lpar is None and isinstance(fixed[-1].comma, cst.Comma):
        return None  # a bare trailing comma outside parentheses would not parse
    assert isinstance(node, cst.SimpleStatementLine)
    return node.with_changes(body=[inner.with_changes(names=fixed)])


def import_after_deletion(base: cst.BaseStatement, kept: cst.BaseStatement) -> bool:
    """One side deleted ``from m import ...`` and the other only removed some of its names: as
    bindings, both removals hold, so the statement goes (marshmallow b1e3d69f3036: ``pprint``
    dropped from the import on one side, the whole import on the other). A name the kept side
    added keeps it a conflict: a deleted import is often a module moved or emptied (httpx
    45b893fb0cdd: ``ConcurrencyBackend`` added to ``from ..interfaces import`` on one side,
    that import dropped on the other, where ``ConcurrencyBackend`` moved to another module)."""
    inners = [_from_import(node) for node in (base, kept)]
    if inners[0] is None or inners[1] is None or _frame(base) != _frame(kept):
        return False  # not such an import, or a comment or the module changed as well
    keys_b = {_alias_key(alias) for alias in _aliases(inners[0])}
    return all(_alias_key(a) in keys_b for a in _aliases(inners[1]))


def import_union(ours: cst.BaseStatement, theirs: cst.BaseStatement) -> cst.BaseStatement | None:
    """Both sides added ``from m import ...`` of one module with different names: ours'
    statement with theirs' other names after them (in sorted place when ours' are sorted).
    ``None`` when it is not that, when anything but the names differs, or names repeat."""
    inners = [_from_import(node) for node in (ours, theirs)]
    if inners[0] is None or inners[1] is None or _frame(ours) != _frame(theirs):
        return None
    names_o, names_t = _aliases(inners[0]), _aliases(inners[1])
    keys_o, keys_t = [_alias_key(a) for a in names_o], [_alias_key(a) for a in names_t]
    if len(set(keys_o)) != len(keys_o) or len(set(keys_t)) != len(keys_t):
        return None
    result = list(names_o)
    keep_sorted = len(keys_o) > 1 and keys_o == sorted(keys_o)
    for alias, key in zip(names_t, keys_t, strict=True):
        if key in keys_o:
            continue
        present = [_alias_key(a) for a in result]
        result.insert(bisect.bisect(present, key) if keep_sorted else len(result), alias)
    return _with_names(ours, inners[0], result)
