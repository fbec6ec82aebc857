"""One side wrapped a run of statements in a new compound statement (``with lock:``, ``if x:``,
``try:``), the other edited statements of that run, one for one: the other side's statements
go inside the new wrapper (synapse ``817ab1d3896e``: theirs put two statements under ``async
with self._is_partial_state_room_linearizer.queue(room_id):``, ours renamed ``success`` to
``new_stream_id`` in the second and in the ``if`` after them; the humans kept both).

The wrapper side must have changed nothing in the run but the wrapping (the new statement's
block is exactly the base's run, and the statements around it are the base's; blank lines
aside), and the other
side must hold as many statements as the base there, each still like the one it replaced (half
its characters, by ``difflib``): else which statement went where is a guess, and the run stays
a conflict. When the other side wrapped the one statement in the same statement too, its
version holds the whole wrapping: it is the merge. Used by ``_members.merge_statements``."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import libcst as cst

from fleet.merge._pykeys import code

__all__ = ["into_wrapper", "out_of_wrapper"]


def _bare(node: cst.CSTNode) -> str:
    """The node's text without blank lines: a blank line the wrapper side put around its new
    statement is no edit of its neighbour."""
    return "\n".join(line for line in code(node).splitlines() if line.strip())


def _wrapper(base: list[str], side: Sequence[cst.BaseStatement]) -> tuple[int, int] | None:
    """``(start, end)`` of the base run that ``side`` wrapped in its one new statement."""
    texts = [_bare(node) for node in side]
    start = 0
    while start < min(len(base), len(texts)) and base[start] == texts[start]:
        start += 1
    tail = 0
    while (tail < min(len(base), len(texts)) - start
           and base[len(base) - 1 - tail] == texts[len(texts) - 1 - tail]):
        tail += 1
    end = len(base) - tail
    if len(texts) != start + 1 + tail or end <= start:
        return None
    block = getattr(side[start], "body", None)
    if not isinstance(block, cst.IndentedBlock) or isinstance(side[start], cst.FunctionDef):
        return None  # a ``def`` made of the run is a function, not a guard
    inner = [_bare(node) for node in block.body]
    return (start, end) if inner == base[start:end] else None


def _header(node: cst.CSTNode) -> str | None:
    """A compound statement's text without its block's statements (kind, header, decorators)."""
    block = getattr(node, "body", None)
    if not isinstance(block, cst.IndentedBlock):
        return None
    return code(node.with_changes(body=block.with_changes(body=[])))


def _lines_above(
    edit: cst.BaseStatement, was: cst.BaseStatement, kept: cst.BaseStatement
) -> cst.BaseStatement:
    """``edit`` with the blank and comment lines above it that the wrapping side gave its copy
    ``kept`` of base's ``was``, where the editing side left base's: the blank line above base's
    first statement moves above the new wrapper, not inside it."""
    lines, before, wanted = (getattr(node, "leading_lines", None) for node in (edit, was, kept))
    if lines is None or before is None or wanted is None:
        return edit
    if [code(line) for line in lines] != [code(line) for line in before]:
        return edit
    return edit.with_changes(leading_lines=wanted)


def into_wrapper(
    base: Sequence[cst.BaseStatement],
    ours: Sequence[cst.BaseStatement],
    theirs: Sequence[cst.BaseStatement],
) -> list[cst.BaseStatement] | None:
    """The merged run, or None when it is not a wrapping on one side and edits on the other."""
    texts = [_bare(node) for node in base]
    for wrapping, editing in ((ours, theirs), (theirs, ours)):
        found = _wrapper(texts, wrapping)
        if found is None or len(editing) != len(base):
            continue
        start, end = found
        kind, header = type(wrapping[start]), _header(wrapping[start])
        alike = [_header(node) for node in editing[start:end] if type(node) is kind]
        if alike:
            # The editing side wrapped it in the same kind of statement too, and edited inside it
            # (eve e8b39170e20e: both put one assertion under ``with
            # self.app.test_request_context():``, theirs also gave it an argument): under the same
            # header its statement holds the wrapping side's whole change; nested in the wrapper
            # again it would be wrapped twice. Under another header, which goes outside is a guess.
            return list(editing) if end - start == 1 and alike == [header] else None
        edited = [_bare(node) for node in editing]
        if any(
            difflib.SequenceMatcher(None, old, new, autojunk=False).ratio() < 0.5
            for old, new in zip(texts, edited, strict=True)
        ):
            return None
        node = wrapping[start]
        block = getattr(node, "body", None)
        assert isinstance(block, cst.IndentedBlock)
        inside = block.with_changes(body=[
            _lines_above(edit, was, kept)
            for edit, was, kept in zip(editing[start:end], base[start:end], block.body, strict=True)
        ])
        wrapped = node.with_changes(body=inside)
        assert isinstance(wrapped, cst.BaseStatement)
        return [*editing[:start], wrapped, *editing[end:]]
    return None


def out_of_wrapper(
    base: Sequence[cst.BaseStatement],
    ours: Sequence[cst.BaseStatement],
    theirs: Sequence[cst.BaseStatement],
) -> list[cst.BaseStatement] | None:
    """The other way round: one side took the statements of one ``with`` (or ``if`` without
    ``else``) out of it, unchanged, and the other side edited inside it, its header unchanged:
    the other side's statements, out of the wrapper (conan ``1a5f7f471272``: theirs dropped
    ``with ...patch.object(OSInfo, ...):`` around a test's inner ``with``, ours dropped that
    inner ``with``; the two were taken for one edited ``with``, ours' edit lost). None when
    the run is not that."""
    if len(base) != 1 or not isinstance(base[0], cst.With | cst.If):
        return None
    node = base[0]
    if isinstance(node, cst.If) and node.orelse is not None:
        return None
    block = node.body
    header = _header(node)
    if not isinstance(block, cst.IndentedBlock) or header is None:
        return None
    inner = [_bare(stmt) for stmt in block.body]
    for unwrapping, editing in ((ours, theirs), (theirs, ours)):
        if [_bare(stmt) for stmt in unwrapping] != inner or len(editing) != 1:
            continue
        edited = editing[0]
        edited_block = getattr(edited, "body", None)
        if type(edited) is not type(node) or not isinstance(edited_block, cst.IndentedBlock):
            continue
        if _header(edited) != header:
            continue
        return list(edited_block.body)
    return None
