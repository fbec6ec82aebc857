"""Expression-level merge of one simple statement that both sides edited: a diff3 over its Python
tokens, taken only when the two sides' edits are *separated* by at least one operand (a name, a
number, a string) that neither changed: ``setup(version="2", install_requires=[...])`` with the
version edited on one side and a requirement added on the other. Edits that touch, overlap,
insert at one point or lie only a delimiter apart stay a conflict: the same token changed two
ways (``RATE = Decimal("0.21")`` vs ``"0.19"``), a name and a comment added after one token.
An edit of comments only (and the line breaks inside brackets) changes no code, so it needs no
operand between it and the other side's edit, only a token: the code is the other side's.

Formatting follows ours: a token neither side changed keeps ours' whitespace and line breaks,
a changed token comes with the whitespace of the side that changed it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from difflib import SequenceMatcher

from fleet import pyast
from fleet.merge._keywords import callee_of, inserted_twice, keywords_at_one_point

__all__ = ["Key", "merge_tokens"]

Key = tuple[int, str]
_SKIP = {tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT}
# Between the two sides' edits there must be an operand neither changed, not just a delimiter:
# an item inserted beside an item the other side rewrote is unsure (flask 89731d86b6d2: a
# classifier added next to ones the other side replaced).
_OPERANDS = {tokenize.NAME, tokenize.NUMBER, tokenize.STRING}
_OPEN, _CLOSE = {"(", "[", "{"}, {")", "]", "}"}
Element = tuple[int, int]  # (the display, call or statement holding it, the element's number)
_BLANK = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT}


def _elements(keys: list[Key]) -> tuple[list[Element], list[int]]:
    """Each token's own element (which comma-separated element of the innermost display, call
    or statement holding it: a comma counts as part of the element it ends, a bracket as part of
    the element outside it), and the innermost container open after each token."""
    stack: list[Element] = [(0, 0)]
    own: list[Element] = []
    open_after: list[int] = []
    for index, (kind, string) in enumerate(keys):
        if kind == tokenize.OP and string in _CLOSE and len(stack) > 1:
            stack.pop()
        own.append(stack[-1])
        if kind == tokenize.OP and string in _OPEN:
            stack.append((index + 1, 0))
        elif kind == tokenize.OP and string == ",":
            stack[-1] = (stack[-1][0], stack[-1][1] + 1)
        open_after.append(stack[-1][0])
    return own, open_after


def _commas(keys: list[Key]) -> int:
    """Commas outside any bracket the tokens themselves open: elements added or removed."""
    depth = count = 0
    for kind, string in keys:
        if kind == tokenize.OP and string in _OPEN:
            depth += 1
        elif kind == tokenize.OP and string in _CLOSE:
            depth -= 1
        elif kind == tokenize.OP and string == "," and depth <= 0:
            count += 1
    return count


def _beside_rewritten(
    keys_b: list[Key], changes: tuple[list[tuple[int, int, int, int]], ...], sides: list[list[Key]]
) -> bool:
    """One side adds or removes elements (a dict entry, an argument, a list item) right beside
    an element whose own tokens the other side edited: which of the two the new element belongs
    with is a guess (marshmallow f5ddb4f4e6b0: ``'Changelog': ...`` added after ``'Bug
    Reports': ...``, whose key the other side made ``'Issues'``; the humans put the new entry
    first). Edits nested deeper inside the neighbour (an item added to its list) do not count."""
    own, open_after = _elements(keys_b)

    def neighbours(start: int, end: int) -> set[Element]:
        container = open_after[start - 1] if start > 0 else 0
        left, right = start - 1, end
        while left >= 0 and keys_b[left][0] in _BLANK:
            left -= 1
        while right < len(keys_b) and keys_b[right][0] in _BLANK:
            right += 1
        return {
            own[index]
            for index in (left, right)
            if 0 <= index < len(own) and own[index][0] == container
        }

    for one, other in ((0, 1), (1, 0)):
        for i1, i2, j1, j2 in changes[one]:
            if _commas(sides[one][j1:j2]) == _commas(keys_b[i1:i2]):
                continue  # no element added or removed
            beside = neighbours(i1, i2)
            for t1, t2, _, _ in changes[other]:
                touched = {own[index] for index in range(t1, t2) if keys_b[index][0] not in _BLANK}
                if t1 == t2 and 0 < t1 < len(own) and own[t1 - 1] == own[t1]:
                    touched.add(own[t1])
                if touched & beside:
                    return True
    return False


def _calls(keys: list[Key]) -> list[tuple[int, int]]:
    """Each call's (index of the called name, index of its closing bracket)
    (:func:`_keywords.callee_of`)."""
    out: list[tuple[int, int]] = []
    stack: list[int] = []
    for index, (kind, string) in enumerate(keys):
        if kind == tokenize.OP and string in _OPEN:
            stack.append(index)
        elif kind == tokenize.OP and string in _CLOSE and stack:
            start = stack.pop()
            name = callee_of(keys, start) if string == ")" else None
            if name is not None:
                out.append((name, index))
    return out


def _callee_vs_arguments(
    keys_b: list[Key], changes: tuple[list[tuple[int, int, int, int]], ...]
) -> bool:
    """One side rewrote a call, its called name (or the bracket after it) and its arguments
    both, and the other side edited the arguments: they were written for the call the first side
    replaced (scrapy 66e1732248db: ``request.replace(url=u)`` made ``_build_redirect_request(
    request, url=u)`` on one side, ``cookies=None`` added on the other, which the new callee
    passes itself: a TypeError). A call only renamed (``f(a, b)`` made ``g(a, b)``) still takes
    the other side's arguments."""
    for name, close in _calls(keys_b):
        callee = [any(i1 <= name + 1 and i2 > name for i1, i2, _, _ in side) for side in changes]
        arguments = [
            any(
                i2 > name + 1 and i1 <= close and (i1, i2) != (name + 1, name + 1)
                for i1, i2, _, _ in side
            )
            for side in changes
        ]
        if arguments[0] and arguments[1] and (callee[0] or callee[1]):
            return True
    return False


def _positional(keys: list[Key]) -> bool:
    """Do these tokens (an inserted or removed run of arguments) hold a positional argument:
    an element not ``name=...`` nor ``**...``?"""
    depth = 0
    element: list[Key] = []
    for key in [*keys, (tokenize.OP, ",")]:
        kind, string = key
        if kind == tokenize.OP and string in _OPEN:
            depth += 1
        elif kind == tokenize.OP and string in _CLOSE:
            depth -= 1
        if depth == 0 and key == (tokenize.OP, ","):
            words = [k for k in element if k[0] not in _BLANK]
            keyword_like = len(words) > 1 and words[0][0] == tokenize.NAME and words[1][1] == "="
            if words and not keyword_like and words[0][1] != "**":
                return True
            element = []
        else:
            element.append(key)
    return False


def _positions_shifted(
    keys_b: list[Key], changes: tuple[list[tuple[int, int, int, int]], ...], sides: list[list[Key]]
) -> bool:
    """Both sides add or remove positional arguments of one call: each wrote its arguments for
    its own positions, and the merge would shift one side's (conda 11973bda8aaf: ``"python"``
    inserted after ``"install"`` on one side, ``"favicon"`` appended on the other, two ways to
    give ``conda install`` a package; the humans kept one)."""
    _, open_after = _elements(keys_b)
    for name, close in _calls(keys_b):
        shifted = []
        for side_changes, keys_s in zip(changes, sides, strict=True):
            shifted.append(
                any(
                    name + 1 < i1
                    and i2 <= close
                    and open_after[i1 - 1] == name + 2  # the call's own arguments
                    and _commas(keys_s[j1:j2]) != _commas(keys_b[i1:i2])
                    and (_positional(keys_s[j1:j2]) or _positional(keys_b[i1:i2]))
                    for i1, i2, j1, j2 in side_changes
                )
            )
        if all(shifted):
            return True
    return False


def _compare_operands(
    text: str, keys: list[Key], pieces: list[str]
) -> list[list[tuple[int, int]]]:
    """Each comparison of the statement ``text`` (its tokens ``keys``, ``pieces`` as
    :func:`_pieces` gives them): the token span (start, end) of each of its operands."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    starts, offset = [], 0
    for (_, string), piece in zip(keys, pieces, strict=True):
        offset += len(piece)
        starts.append(offset - len(string))
    lines = text.splitlines(keepends=True)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))

    def at(lineno: int, col: int) -> int:  # ``ast`` columns count UTF-8 bytes
        prefix = lines[lineno - 1].encode()[:col]
        return line_starts[lineno - 1] + len(prefix.decode(errors="ignore"))

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            spans = []
            for operand in (node.left, *node.comparators):
                low = at(operand.lineno, operand.col_offset)
                high = at(operand.end_lineno or operand.lineno, operand.end_col_offset or 0)
                inside = [index for index, start in enumerate(starts) if low <= start < high]
                if inside:
                    spans.append((inside[0], inside[-1] + 1))
            out.append(spans)
    return out


def _operands_reconciled(
    base: tuple[str, list[Key], list[str]],
    changes: tuple[list[tuple[int, int, int, int]], ...],
    sides: list[list[Key]],
) -> bool:
    """Both sides added to a different operand of one comparison, keeping its tokens: a method
    call or subscript after it, a call around it, something inside it. Each made the two
    operands agree its own way, and both ways at once compare something else again
    (jupyter_server 0e8bd97c7acb: ``str(found) == result`` made ``... == result.replace("/",
    os.sep)`` on one side and ``str(found).replace(os.sep, "/") == ...`` on the other, the same
    Windows fix twice; merged, it fails wherever the separator is not ``/``). A side that
    replaced an operand's tokens (a new expected value, a renamed attribute) does not count."""
    if not all(any(i1 == i2 for i1, i2, _, _ in side) for side in changes):
        return False  # a side inserted nothing
    text, keys_b, pieces_b = base
    for spans in _compare_operands(text, keys_b, pieces_b):
        added: list[set[int]] = []
        for side_changes, keys_s in zip(changes, sides, strict=True):
            operands = set()
            for i1, i2, j1, j2 in side_changes:
                new = [key for key in keys_s[j1:j2] if key[0] not in _BLANK]
                if i1 != i2 or not new:
                    continue
                for number, (start, end) in enumerate(spans):
                    if (start < i1 < end or (i1 == end and new[0][1] in _OPEN | {"."})
                            or (i1 == start and new[-1][1] == "(")):
                        operands.add(number)
            added.append(operands)
        if any(one != other for one in added[0] for other in added[1]):
            return True
    return False


def _pieces(text: str) -> tuple[list[Key], list[str], str] | None:
    """The statement's tokens as keys (type, string), each token's text with the whitespace and
    line continuations before it, and what follows the last token; None if it does not
    tokenize."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    keys: list[Key] = []
    pieces: list[str] = []
    previous = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _SKIP:
                continue
            end = starts[token.end[0] - 1] + token.end[1]
            keys.append((token.type, token.string))
            pieces.append(text[previous:end])
            previous = end
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return keys, pieces, text[previous:]


def _changes(base: list[Key], side: list[Key]) -> list[tuple[int, int, int, int]]:
    matcher = SequenceMatcher(None, base, side, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _matched(base: list[Key], side: list[Key]) -> dict[int, int]:
    matcher = SequenceMatcher(None, base, side, autojunk=False)
    return {
        block.a + k: block.b + k
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    }


def _notes(keys: list[Key]) -> bool:
    """Are these tokens (an edit's base and new tokens) only comments and the line breaks
    inside brackets? Such an edit changes no code, so it composes with an edit of the other side
    any token away: the code is the other side's (trio 77cd6099ef5c: ``# noqa: PT012`` added
    after ``with pytest.raises(KeyError):``, ``as excinfo`` added before the colon)."""
    return bool(keys) and all(kind in (tokenize.COMMENT, tokenize.NL) for kind, _ in keys)


def _one_statement(text: str) -> bool:
    try:
        return len(pyast.parse(text).body) == 1
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def merge_tokens(base: str, ours: str, theirs: str) -> str | None:
    """The statement with both sides' token edits, or None when they are not separated by an
    unchanged token, or when the result is not one statement of the same kind as ours'."""
    parsed = [_pieces(text) for text in (base, ours, theirs)]
    if any(p is None for p in parsed):
        return None
    (keys_b, pieces_b, _), (keys_o, pieces_o, tail_o), (keys_t, pieces_t, _) = (
        p for p in parsed if p is not None
    )
    ours_changes, theirs_changes = _changes(keys_b, keys_o), _changes(keys_b, keys_t)
    # The same edit made by both sides (one license string rewritten alike) is made once.
    theirs_edits = {(t1, t2, tuple(keys_t[u1:u2])) for t1, t2, u1, u2 in theirs_changes}
    same = {
        (o1, o2)
        for o1, o2, p1, p2 in ours_changes
        if (o1, o2, tuple(keys_o[p1:p2])) in theirs_edits
    }
    if not ours_changes or not theirs_changes:
        return None  # one side did not change it: not a merge of two edits
    if len(same) == len(ours_changes) and ours_changes != theirs_changes:
        return theirs if _one_statement(theirs) else None  # theirs made ours' edits and more
    theirs_changes = [c for c in theirs_changes if (c[0], c[1]) not in same]
    if inserted_twice(keys_b, (keys_o, ours_changes), (keys_t, theirs_changes)):
        return None
    if not theirs_changes:
        return ours if _one_statement(ours) else None  # ours made theirs' edits and more
    for o1, o2, p1, p2 in ours_changes:
        if (o1, o2) in same:
            continue
        for t1, t2, u1, u2 in theirs_changes:
            between = keys_b[o2:t1] if o2 <= t1 else keys_b[t2:o1]
            if o1 == o2 == t1 == t2 and keywords_at_one_point(
                keys_b, o1, keys_o[p1:p2], keys_t[u1:u2]
            ):
                continue  # keyword arguments each side added at one point of a call
            if not (o2 < t1 or t2 < o1):
                return None  # touching, overlapping or at one point
            notes = _notes(keys_b[o1:o2] + keys_o[p1:p2]) or _notes(keys_b[t1:t2] + keys_t[u1:u2])
            if not notes and not any(k[0] in _OPERANDS for k in between):
                return None  # only a delimiter apart
    if _beside_rewritten(keys_b, (ours_changes, theirs_changes), [keys_o, keys_t]):
        return None
    ours_own = [c for c in ours_changes if (c[0], c[1]) not in same]
    if _callee_vs_arguments(keys_b, (ours_own, theirs_changes)):
        return None
    if _positions_shifted(keys_b, (ours_own, theirs_changes), [keys_o, keys_t]):
        return None
    if _operands_reconciled((base, keys_b, pieces_b), (ours_own, theirs_changes),
                            [keys_o, keys_t]):
        return None
    in_ours = _matched(keys_b, keys_o)
    edits = sorted(  # at one point, ours' first
        [(i1, i2, 0, j1, j2, pieces_o) for i1, i2, j1, j2 in ours_changes]
        + [(i1, i2, 1, j1, j2, pieces_t) for i1, i2, j1, j2 in theirs_changes]
    )
    out: list[str] = []
    position, after_theirs, in_theirs = 0, -1, _matched(keys_b, keys_t)

    def unchanged(upto: int) -> None:
        for index in range(position, upto):
            if index == after_theirs and index in in_theirs:  # spaced as theirs' edit before it
                out.append(pieces_t[in_theirs[index]])  # (hy 9c28e0292d1a: ``compiler. Hy...``)
            else:
                out.append(pieces_o[in_ours[index]] if index in in_ours else pieces_b[index])

    for i1, i2, side, j1, j2, pieces in edits:
        unchanged(i1)
        out.extend(pieces[j1:j2])
        position, after_theirs = i2, (i2 if side == 1 else -1)
    unchanged(len(keys_b))
    merged = "".join(out) + tail_o
    try:
        trees = [pyast.parse(text) for text in (ours, merged)]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    kinds = [[type(stmt) for stmt in tree.body] for tree in trees]
    repeated = any(  # a keyword both sides added to one call, or one the call had
        len(names := [k.arg for k in n.keywords if k.arg]) != len(set(names))
        for n in ast.walk(trees[1]) if isinstance(n, ast.Call)
    )
    return merged if len(kinds[1]) == 1 and kinds[0] == kinds[1] and not repeated else None
