"""``from m import a, b``: the imported names are a set (profile strategy ``import_set``)."""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node


def _parts(node: cst.BaseStatement) -> tuple[cst.ImportFrom, list[cst.ImportAlias]] | None:
    if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1):
        return None
    inner = node.body[0]
    if not isinstance(inner, cst.ImportFrom) or isinstance(inner.names, cst.ImportStar):
        return None
    return inner, list(inner.names)


def _alias_key(alias: cst.ImportAlias) -> str:
    asname = alias.asname
    target = get_full_name_for_node(asname.name) if asname is not None else ""
    return f"{get_full_name_for_node(alias.name)} as {target}"


def merge_import_from(
    base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> cst.BaseStatement | None:
    """Union of the names each side added, minus the names either side removed; ours' order and
    formatting, theirs' additions after their predecessor. ``None`` if not a plain name list or
    if the statements differ in anything but their names."""
    parsed = [_parts(node) for node in (base, ours, theirs)]
    if any(p is None for p in parsed):
        return None
    (_, names_b), (stmt_o, names_o), (_, names_t) = parsed  # type: ignore[misc]
    keys_b = {_alias_key(a) for a in names_b}
    keys_o = {_alias_key(a) for a in names_o}
    keys_t = {_alias_key(a) for a in names_t}
    removed = (keys_b - keys_o) | (keys_b - keys_t)
    result = [a for a in names_o if _alias_key(a) not in removed]
    position = None
    for alias in names_t:
        key = _alias_key(alias)
        present = [_alias_key(a) for a in result]
        if key in present:
            position = present.index(key) + 1
        elif key not in keys_b and key not in keys_o:
            index = len(result) if position is None else position
            result.insert(index, alias)
            position = index + 1
    if not result:
        return None
    separators = [a.comma for a in names_o[:-1] if isinstance(a.comma, cst.Comma)]
    separator = (
        separators[-1] if separators else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    last_comma = names_o[-1].comma
    fixed = [a.with_changes(comma=separator) for a in result[:-1]]
    fixed.append(result[-1].with_changes(comma=last_comma))
    if len(fixed) > 1 and stmt_o.lpar is None and isinstance(last_comma, cst.Comma):
        return None  # a bare trailing comma outside parentheses would not parse
    merged = stmt_o.with_changes(names=fixed)
    assert isinstance(ours, cst.SimpleStatementLine)
    return ours.with_changes(body=[merged])
