"""A run of several statements that both sides edited, one for one: merged statement by
statement, where before the run was one conflict unless it was a single statement.

Statements that are not definitions or named assignments have no identity but their text, so
two adjacent ones that both sides edited make one conflicting run (sqlfluff ``83b372ebd546``:
``postgres_dialect.add(...)`` and ``postgres_dialect.replace(...)`` next to each other, a
keyword argument added to the first by one side and grammars to the second by both). When the
run has as many statements in base, ours and theirs, and the statements at each position share
their head (what a call calls, what an assignment binds, a compound statement's first line),
each head once in the run, the statements at one position are one statement edited: each is
merged alone (``_members._nested_block``), and what cannot be is a conflict of that statement
only."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import libcst as cst

from fleet.merge._context import Context
from fleet.merge._pykeys import code

__all__ = ["head", "merge_paired"]

Nested = Callable[..., cst.BaseStatement | None]  # ``_members._nested_block``


def head(node: cst.BaseStatement) -> str | None:
    """What identifies one statement across edits of it, None for a statement that has none."""
    if isinstance(node, cst.SimpleStatementLine):
        if len(node.body) != 1:
            return None
        inner = node.body[0]
        if isinstance(inner, cst.Expr):
            value = inner.value.expression if isinstance(inner.value, cst.Await) else inner.value
            return f"call {code(value.func)}" if isinstance(value, cst.Call) else None
        if isinstance(inner, cst.Assign):
            return "assign " + ", ".join(code(t.target) for t in inner.targets)
        if isinstance(inner, cst.AnnAssign | cst.AugAssign):
            return f"assign {code(inner.target)}"
        return None
    lines = [line.strip() for line in code(node).splitlines()]
    first = next((line for line in lines if line and not line.startswith(("#", "@"))), None)
    return f"{type(node).__name__} {first}" if first else None


def merge_paired(
    ctx: Context,
    parts: Sequence[Sequence[Any]],
    maps: Sequence[Mapping[Any, cst.BaseStatement]],
    nested: Nested,
    members: bool,
) -> list[cst.BaseStatement] | None:
    """The run ``parts`` (keys into ``maps``, base's, ours' and theirs') merged position by
    position, or None when it is not one run of the same statements edited (see the module
    docstring)."""
    part_b, part_o, part_t = parts
    if not len(part_b) == len(part_o) == len(part_t) > 1:
        return None
    nodes = [[m[key] for key in part] for m, part in zip(maps, parts, strict=True)]
    heads = [[head(node) for node in side] for side in nodes]
    if None in heads[0] or not heads[0] == heads[1] == heads[2]:
        return None
    if len(set(heads[0])) != len(heads[0]):
        return None  # two statements of one head: which is which is a guess
    out: list[cst.BaseStatement] = []
    for index, (key_b, key_o, key_t) in enumerate(zip(part_b, part_o, part_t, strict=True)):
        base, ours, theirs = (side[index] for side in nodes)
        text_b, text_o, text_t = code(base), code(ours), code(theirs)
        if text_o == text_t or text_b == text_t:
            out.append(ours)
        elif text_b == text_o:
            out.append(theirs)
        else:
            merged = nested(ctx, [key_b], [key_o], [key_t], maps, members=members)
            out.extend([merged] if merged is not None else ctx.conflict([ours], [base], [theirs]))
    return out
