"""Text-level helpers of the structural stage: git's line merge of one symbol, and what is safe
to do with the text of a nested symbol."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher
from functools import partial
from typing import TypeVar, cast

import libcst as cst

from fleet.merge._diff3 import compose_disjoint, covered, diff3
from fleet.merge._line import decode, encode, git_merge_file_bytes
from fleet.merge._pykeys import code, normalized, render_in
from fleet.merge._result import (
    MARKER_BASE,
    MARKER_OURS,
    MARKER_SEP,
    MARKER_THEIRS,
    ConflictRegion,
    parse_conflicts,
)
from fleet.merge._tokens import merge_tokens

__all__ = [
    "explicit_indents",
    "formatting_kept",
    "header_merge",
    "held_lines",
    "held_merge",
    "indent_flags",
    "merge_decorators",
    "multiline_strings",
    "text_merge",
    "token_merge",
]


def text_merge(
    module: cst.Module, base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> tuple[cst.BaseStatement | None, str | None]:
    """git's line merge of one symbol's text: the merged statement if clean (or if each of its
    conflict regions is one side's lines holding the other's, ``held_lines``) and still one
    statement of its kind, else git's marker text when it conflicted."""
    plain = module.default_indent == "    " and module.default_newline == "\n"
    render = code if plain else partial(render_in, module)
    texts = [encode(render(node)) for node in (base, ours, theirs)]
    merged, conflicts = git_merge_file_bytes(*texts)
    if conflicts:
        marked = decode(merged)
        held = held_lines(marked, [decode(text) for text in texts])
        node = None if held is None else _reparsed(module, held, (ours, theirs, base))
        return (node, None) if node is not None else (None, marked)
    return _reparsed(module, decode(merged), (ours, theirs, base)), None


def held_merge(
    module: cst.Module, base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> cst.BaseStatement | None:
    """One statement both sides edited, where git's line merge of its text conflicts only in
    regions that one side's lines hold (``held_lines``): that merge, else None. A clean line
    merge of the statement is not taken here (only the checked paths of ``merge_node`` do)."""
    plain = module.default_indent == "    " and module.default_newline == "\n"
    render = code if plain else partial(render_in, module)
    texts = [encode(render(node)) for node in (base, ours, theirs)]
    merged, conflicts = git_merge_file_bytes(*texts)
    if not conflicts:
        return None
    held = held_lines(decode(merged), [decode(text) for text in texts])
    return None if held is None else _reparsed(module, held, (ours, theirs, base))


def _indent(line: str) -> int | None:
    return None if not line.strip() else len(line) - len(line.lstrip())


def _deletion_held(parts: list[list[str]], held: list[tuple[str, int]]) -> bool:
    """For lines: the holding side deletes no line less indented than the lines the other side
    deleted (a decorator, a ``def``, an ``if`` whose inner lines the other side dropped: that
    is an edit of the statement the holder deleted, sanic ``055ad6bd6d13``)."""
    base = parts[0]
    ours_holds = held[0][0] == "ours" if held else not parts[1]
    holder, other = (parts[1], parts[2]) if ours_holds else (parts[2], parts[1])

    def deleted(side: list[str]) -> set[int]:
        matcher = SequenceMatcher(None, base, side, autojunk=False)
        return {
            index
            for tag, i1, i2, _, _ in matcher.get_opcodes()
            if tag == "delete"
            for index in range(i1, i2)
        }

    by_other = deleted(other)
    levels = [_indent(base[index]) for index in by_other]
    floor = min((level for level in levels if level is not None), default=None)
    if floor is None:
        return False
    for index in deleted(holder) - by_other:
        level = _indent(base[index])
        if level is not None and level < floor:
            return False
    return True


def held_lines(marked: str, inputs: Sequence[str], deletions: bool = False) -> str | None:
    """git's conflicted line merge ``marked`` resolved where every conflict region is one side's
    lines holding all of the other side's (``_diff3.covered``: the three equally long, the other
    side having at each line the base's or this side's): that side's lines. None if a region is
    changed two ways, or if an input has a line that reads as a conflict marker. Lines inside
    one statement, where git conflicts and no token rule applies (a docstring whose typo both
    sides fixed, one also rewording the next line: jinja ``a9895c88f69e``)."""
    markers = (MARKER_OURS, MARKER_BASE, MARKER_SEP, MARKER_THEIRS)
    if any(line.startswith(markers) for text in inputs for line in text.splitlines()):
        return None

    def held(region: ConflictRegion) -> str | None:
        texts = (region.base, region.ours, region.theirs)
        parts = [text.splitlines(keepends=True) for text in texts]
        holder = covered(parts[0], parts[1], parts[2], deletions=False)
        if holder is None and deletions:
            holder = covered(parts[0], parts[1], parts[2], deletions=True)
            if holder is not None and not _deletion_held(parts, holder):
                holder = None
        if holder is None:
            return None
        by_side = dict(zip(("base", "ours", "theirs"), parts, strict=True))
        return "".join(by_side[side][position] for side, position in holder)

    return _regions_resolved(marked, held)


def _regions_resolved(marked: str, resolve: Callable[[ConflictRegion], str | None]) -> str | None:
    """``marked`` with each conflict region replaced by ``resolve``'s text for it; None when
    ``resolve`` gives None for one."""
    lines = marked.splitlines(keepends=True)
    out: list[str] = []
    index = 0
    for region in parse_conflicts(marked):
        out.extend(lines[index : region.start_line - 1])
        index = region.end_line
        text = resolve(region)
        if text is None:
            return None
        out.append(text)
    out.extend(lines[index:])
    return "".join(out)


def formatting_kept(
    module: cst.Module, marked: str, side: str, taken: cst.BaseStatement,
    sides: tuple[cst.BaseStatement, ...],
) -> cst.BaseStatement | None:
    """One statement where ``side``'s program wins over the other side's formatting-only edit
    (``_pykeys.over_formatting``): git's conflicted line merge of it, ``marked``, each conflict
    region resolved to ``side``'s lines, so the other side's formatting outside those regions is
    kept too (angr ``cc88f5bdd50f``: a blank line theirs put above an ``if`` in a method whose
    code ours changed), when that is ``taken``'s program; else None (``taken`` whole)."""
    text = _regions_resolved(marked, lambda r: _overlaid(r, side))
    node = None if text is None else _reparsed(module, text, sides)
    if node is not None and normalized(node) != normalized(taken):
        text = _regions_resolved(marked, lambda r: r.ours if side == "ours" else r.theirs)
        node = None if text is None else _reparsed(module, text, sides)
    if node is None or normalized(node) is None or normalized(node) != normalized(taken):
        return None
    # the lines above it as ``over_formatting`` chose them (``_pykeys.leading_kept``)
    return node.with_changes(leading_lines=getattr(taken, "leading_lines", ()))


def _overlaid(region: ConflictRegion, side: str) -> str:
    """One conflict region of a statement where ``side``'s program wins over the other side's
    formatting: ``side``'s lines, and where ``side`` rewrote base's lines one for one, the
    other side's edits of blank lines ``side`` left as base had them (a blank line put in or
    taken out, a line of spaces emptied). Other formatting stays ``side``'s, line for line: in
    a function the humans keep one side's lines (``tests/fixtures/merge/quotes_vs_edit``).
    ansible-lint ``763a68e91653`` (fortieth set): theirs put a blank line between a test's
    docstring and the function it defines, ours changed that function's parameters on the next
    line; the region went to ours whole."""
    base = region.base.splitlines(keepends=True)
    changed = (region.ours if side == "ours" else region.theirs).splitlines(keepends=True)
    formatted = (region.theirs if side == "ours" else region.ours).splitlines(keepends=True)
    if len(changed) != len(base):
        return "".join(changed)
    out: list[str] = []
    matcher = SequenceMatcher(None, base, formatted, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        blank = not "".join(base[i1:i2] + formatted[j1:j2]).strip()
        if tag != "equal" and blank and changed[i1:i2] == base[i1:i2]:
            out.extend(formatted[j1:j2])
        else:
            out.extend(changed[i1:i2])
    return "".join(out)


def _reparsed(
    module: cst.Module, text: str, sides: tuple[cst.BaseStatement, ...]
) -> cst.BaseStatement | None:
    """``text`` parsed back into one statement of the kind of ``sides[0]``, else None."""
    try:
        parsed = cst.parse_module(text, config=module.config_for_parsing)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    if len(parsed.body) != 1 or parsed.footer or type(parsed.body[0]) is not type(sides[0]):
        return None
    node = explicit_indents(parsed, parsed.body[0], module.default_indent)
    lines = [*parsed.header, *node.leading_lines]
    return node.with_changes(leading_lines=indent_flags(lines, sides))


_Statement = TypeVar("_Statement", bound=cst.CSTNode)


class _ExplicitIndents(cst.CSTTransformer):
    def __init__(self, indent: str) -> None:
        super().__init__()
        self.indent = indent

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if updated_node.indent is not None:
            return updated_node
        return updated_node.with_changes(indent=self.indent)


def explicit_indents(parsed: cst.Module, node: _Statement, target: str) -> _Statement:
    """``node``, parsed alone as ``parsed``, for a module whose indentation is ``target``: each
    block that takes the snippet's own indentation (libcst's ``indent=None``) given it, when the
    snippet's differs. A function whose body is indented two spaces in a file that indents four
    elsewhere, parsed alone, reads two as its default and would be written with four (graphite-web
    ``3b7cb114dbed``, ``format_units``)."""
    if parsed.default_indent == target:
        return node
    explicit = node.visit(_ExplicitIndents(parsed.default_indent))
    assert isinstance(explicit, type(node))
    return cast(_Statement, explicit)


def token_merge(
    module: cst.Module, base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> cst.BaseStatement | None:
    """Both sides' edits of one simple statement combined token by token when an unchanged token
    separates them (``_tokens.merge_tokens``), else None."""
    if not all(isinstance(n, cst.SimpleStatementLine) for n in (base, ours, theirs)):
        return None
    plain = module.default_indent == "    " and module.default_newline == "\n"
    render = code if plain else partial(render_in, module)
    merged = merge_tokens(*(render(node) for node in (base, ours, theirs)))
    return None if merged is None else _reparsed(module, merged, (ours, theirs, base))


def indent_flags(
    lines: list[cst.EmptyLine], sides: tuple[cst.BaseStatement, ...]
) -> list[cst.EmptyLine]:
    """Blank and comment lines above a re-parsed nested statement: parsed at column 0 they all
    claim the block's indentation, so take each one's flag from the same line of a side (else a
    blank line gets none), or an empty line inside a class would gain trailing spaces."""

    def comment(line: cst.EmptyLine) -> str | None:
        return None if line.comment is None else line.comment.value

    result = []
    for index, line in enumerate(lines):
        flag = line.indent if line.comment is not None else False
        for side in sides:
            above: Sequence[cst.EmptyLine] = getattr(side, "leading_lines", ())
            if index < len(above) and comment(above[index]) == comment(line):
                flag = above[index].indent
                break
        result.append(line.with_changes(indent=flag))
    return result


def multiline_strings(*nodes: cst.CSTNode) -> bool:
    """Does any node's text hold a string spanning lines (or fail to tokenize)?"""
    for node in nodes:
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(code(node)).readline))
        except (tokenize.TokenError, SyntaxError):
            return True
        if any(t.type == tokenize.STRING and t.start[0] != t.end[0] for t in tokens):
            return True
    return False


def merge_decorators(
    base: cst.CSTNode, ours: cst.CSTNode, theirs: cst.CSTNode
) -> cst.CSTNode | None:
    """A ``def`` or ``class`` whose header both sides changed, when one side changed only its
    decorators, or both changed different decorators: the decorators merged as a sequence
    (``compose_disjoint``: edits of different decorators combine, two insertions at one point do
    not), the rest of the header (signature, bases, comments above) from the one side that
    changed it. None otherwise (both changed the signature, or both changed the decorators and
    one of them dropped some)."""
    nodes = (base, ours, theirs)
    if not all(isinstance(n, cst.FunctionDef | cst.ClassDef) for n in nodes):
        return None
    bare = [
        code(n.with_changes(decorators=[], body=n.body.with_changes(body=[])))  # type: ignore[attr-defined]
        for n in nodes
    ]
    if bare[1] != bare[0] and bare[2] != bare[0] and bare[1] != bare[2]:
        return None
    frame = theirs if bare[1] == bare[0] else ours
    lists = [list(n.decorators) for n in nodes]  # type: ignore[attr-defined]
    texts = [[code(d) for d in items] for items in lists]
    if texts[1] != texts[0] and texts[2] != texts[0] and min(map(len, texts[1:])) < len(texts[0]):
        # Both changed the decorators and one dropped some: what the other side's decorators
        # still assume is unknown (click 361915bbc3cc: a skip dropped beside a rewritten test).
        return None
    merged: list[cst.Decorator] = []
    for chunk in diff3(*texts):
        spans = (chunk.base, chunk.ours, chunk.theirs)
        parts = [items[slice(*span)] for items, span in zip(lists, spans, strict=True)]
        if chunk.kind == "theirs":
            merged.extend(parts[2])
        elif chunk.kind != "conflict":
            merged.extend(parts[1])
        else:
            composed = compose_disjoint(
                *(t[slice(*span)] for t, span in zip(texts, spans, strict=True))
            )
            if composed is None:
                return None
            by_side = dict(zip(("base", "ours", "theirs"), parts, strict=True))
            merged.extend(by_side[side][index] for side, index in composed)
    return frame.with_changes(decorators=merged)


def _signature_lines(text: str) -> list[str]:
    """The lines of a stub-bodied compound statement's own header (not its blank or comment
    lines, decorators or the ``pass``)."""
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line and line != "pass" and not line.startswith(("#", "@"))]


def header_merge(base: cst.CSTNode, ours: cst.CSTNode, theirs: cst.CSTNode) -> cst.CSTNode | None:
    """A compound statement whose header (signature, condition, bases; decorators and the
    comments above included) both sides edited: the headers merged token by token
    (``_tokens.merge_tokens``: only edits an unchanged operand separates, or one side's edits
    holding the other's), each rendered with one ``pass`` for a block. Ours' node with the
    merged header, or None."""
    nodes = (base, ours, theirs)
    blocks = [getattr(node, "body", None) for node in nodes]
    if not all(isinstance(block, cst.IndentedBlock) for block in blocks):
        return None
    if any(getattr(node, "orelse", None) or getattr(node, "handlers", None) for node in nodes):
        return None  # other branches are blocks of their own
    decorators = [[code(d) for d in getattr(node, "decorators", ())] for node in nodes]
    if decorators[1] != decorators[0] and decorators[2] != decorators[0]:
        return None  # both changed the decorators: ``merge_decorators`` decides
    stub = [cst.SimpleStatementLine(body=[cst.Pass()])]
    texts = [
        code(node.with_changes(body=block.with_changes(body=stub)))  # type: ignore[union-attr]
        for node, block in zip(nodes, blocks, strict=True)
    ]
    merged = merge_tokens(*texts)
    if merged is None:
        return None
    known = {line.strip() for text in texts for line in text.splitlines()}
    if any(len(_signature_lines(text)) > 1 for text in texts) and any(
        line.strip() not in known for line in merged.splitlines()
    ):
        return None  # a header over several lines, rewrapped: two layouts spliced into a line
    try:
        parsed = cst.parse_module(merged)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    if len(parsed.body) != 1 or type(parsed.body[0]) is not type(ours):
        return None
    node = explicit_indents(parsed, parsed.body[0], "    ")  # ``code`` rendered the texts
    if not isinstance(getattr(node, "body", None), cst.IndentedBlock):
        return None
    lines = [*parsed.header, *node.leading_lines]
    sides = tuple(n for n in (ours, theirs, base) if isinstance(n, cst.BaseStatement))
    return node.with_changes(leading_lines=indent_flags(lines, sides))
