"""An ``if`` statement with ``elif``/``else`` branches that both sides edited: each branch merged
on its own, where before the other branches counted as the statement's header, so that two
edits of the ``else`` block (or one of the ``if`` block and one of the ``else`` block, both
on one side) made the whole statement a conflict (synapse ``a5616fbf2dc4``: a keyword argument
added by each side to one call in the ``else`` block, one side also editing the ``if`` block).

A branch only one side changed is that side's; a branch both changed is merged statement by
statement (an ``elif`` as an ``if`` of its own, recursively), but only while no side changed
the condition above it: each side wrote its ``else`` for the conditions it had (the rule
``_members._merge_block`` applies to a block and its own header). Used by ``_merge_block``,
which passes itself and ``merge_statements`` in (they live in ``_members``)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from fleet.merge._context import Context, Stmts
from fleet.merge._pykeys import code

__all__ = ["merge_if"]

MergeBlock = Callable[
    [Context, cst.CSTNode, cst.CSTNode, cst.CSTNode, bool], cst.BaseStatement | None
]
MergeStatements = Callable[[Context, Stmts, Stmts, Stmts], list[cst.BaseStatement]]


def _else(
    ctx: Context, branches: list[cst.Else], merge_statements: MergeStatements
) -> cst.Else | None:
    blocks = [branch.body for branch in branches]
    if not all(isinstance(block, cst.IndentedBlock) for block in blocks):
        return None
    heads = [code(branch.with_changes(body=cst.IndentedBlock(body=[]))) for branch in branches]
    if heads[1] == heads[2] or heads[0] == heads[2]:
        frame = branches[1]
    elif heads[0] == heads[1]:
        frame = branches[2]
    else:
        return None  # the comments above ``else:`` edited two ways
    bodies = [block.body for block in blocks if isinstance(block, cst.IndentedBlock)]
    ctx.depth += 1
    try:
        body = merge_statements(ctx, *bodies)
    finally:
        ctx.depth -= 1
    frame_block = frame.body
    assert isinstance(frame_block, cst.IndentedBlock)
    return frame.with_changes(body=frame_block.with_changes(body=body))


def merge_if(
    ctx: Context,
    nodes: tuple[cst.If, cst.If, cst.If],
    merge_block: MergeBlock,
    merge_statements: MergeStatements,
) -> cst.BaseStatement | None:
    """Base's, ours' and theirs' ``if`` merged branch by branch, or None (a conflict of the
    whole statement) when a branch cannot be."""
    branches = [node.orelse for node in nodes]
    if len({type(branch) for branch in branches}) != 1:
        return None  # an ``else`` made an ``elif`` (or dropped) on one side
    texts = [code(branch) if branch is not None else "" for branch in branches]
    branch: cst.If | cst.Else | None
    if texts[1] == texts[2] or texts[0] == texts[2]:
        branch = branches[1]
    elif texts[0] == texts[1]:
        branch = branches[2]
    else:
        tests = [code(node.test) for node in nodes]
        if not tests[0] == tests[1] == tests[2]:
            return None  # a condition changed above a branch both sides edited
        elifs = [b for b in branches if isinstance(b, cst.If)]
        if len(elifs) == 3:
            merged = merge_block(ctx, elifs[0], elifs[1], elifs[2], False)
            branch = merged if isinstance(merged, cst.If) else None
        else:
            branch = _else(ctx, [b for b in branches if isinstance(b, cst.Else)], merge_statements)
        if branch is None:
            return None
    heads = [node.with_changes(orelse=None) for node in nodes]
    head = merge_block(ctx, heads[0], heads[1], heads[2], False)
    if not isinstance(head, cst.If):
        return None
    return head.with_changes(orelse=branch)
