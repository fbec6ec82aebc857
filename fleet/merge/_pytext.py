"""Text-level helpers of the structural stage: git's line merge of one symbol, and what is safe
to do with the text of a nested symbol."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence

import libcst as cst

from fleet.merge._line import decode, encode, git_merge_file_bytes
from fleet.merge._pykeys import code
from fleet.merge._tokens import merge_tokens


def text_merge(
    module: cst.Module, base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> tuple[cst.BaseStatement | None, str | None]:
    """git's line merge of one symbol's text: the merged statement if clean and still one
    statement of its kind, else git's marker text when it conflicted."""
    plain = module.default_indent == "    " and module.default_newline == "\n"
    render = code if plain else module.code_for_node
    texts = [encode(render(node)) for node in (base, ours, theirs)]
    merged, conflicts = git_merge_file_bytes(*texts)
    if conflicts:
        return None, decode(merged)
    return _reparsed(module, decode(merged), (ours, theirs, base)), None


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
    node = parsed.body[0]
    lines = [*parsed.header, *node.leading_lines]
    return node.with_changes(leading_lines=indent_flags(lines, sides))


def token_merge(
    module: cst.Module, base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> cst.BaseStatement | None:
    """Both sides' edits of one simple statement combined token by token when an unchanged token
    separates them (``_tokens.merge_tokens``), else None."""
    if not all(isinstance(n, cst.SimpleStatementLine) for n in (base, ours, theirs)):
        return None
    plain = module.default_indent == "    " and module.default_newline == "\n"
    render = code if plain else module.code_for_node
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
