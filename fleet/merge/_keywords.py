"""Keyword arguments both sides added at one point of a call: both kept, ours first, when each
side's insertion is whole ``name=value`` arguments of a call (not a ``def``'s parameters, not
``dict(...)``, whose keywords are its keys' order), their names new and distinct, no value
calls something stateful (``_independent.STATEFUL``), and no new word is shared by both sides'
names (one setting passed two ways): a keyword's place in a call is no meaning. Seen in real
history: sqlfluff ``83b372ebd546`` (a grammar each side added to ``postgres_dialect.add(...)``;
the humans kept both, ours first there and theirs first in other merges of those files) and
synapse ``a5616fbf2dc4`` (``extra_content=...`` and ``thread_id=None`` added to one call). Used
by ``_tokens.merge_tokens``; the equivalence of results sorts such keywords (``equivalence``)."""

from __future__ import annotations

import keyword
import tokenize

from fleet.merge._independent import STATEFUL
from fleet.merge._near_twin import words

__all__ = ["ORDERED_CALLEES", "callee_of", "keywords_at_one_point"]

Key = tuple[int, str]
ORDERED_CALLEES = frozenset({"dict", "OrderedDict", "defaultdict", "Counter"})
_OPEN, _CLOSE = {"(", "[", "{"}, {")", "]", "}"}


def callee_of(keys: list[Key], bracket: int) -> int | None:
    """The index of the name a call calls when ``keys[bracket]`` is a call's ``(``: a name right
    before it that is not a keyword (``print (x)``, ``if (...)``) nor the name a ``def`` or
    ``class`` defines (parameters and bases, whose order is meaning); else None."""
    name = bracket - 1
    if keys[bracket][1] != "(" or name < 0:
        return None
    kind, string = keys[name]
    if kind != tokenize.NAME or keyword.iskeyword(string):
        return None
    if name > 0 and keys[name - 1][1] in ("def", "class"):
        return None
    return name


def _call_at(keys: list[Key], point: int) -> str | None:
    """The called name when ``point`` (an index into ``keys``) lies directly inside a call's
    parentheses (not nested in a bracket within them), else None."""
    stack: list[int] = []
    for index, (kind, string) in enumerate(keys[:point]):
        if kind == tokenize.OP and string in _OPEN:
            stack.append(index)
        elif kind == tokenize.OP and string in _CLOSE and stack:
            stack.pop()
    name = callee_of(keys, stack[-1]) if stack else None
    return None if name is None else keys[name][1]


def _keyword_names(run: list[Key]) -> list[str] | None:
    """The names of the ``name=value`` arguments that ``run`` (inserted tokens) is made of, with
    a comma before or after; None when it holds anything else."""
    tokens = [k for k in run if k[0] not in (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE)]
    if not tokens or (tokens[0][1] != "," and tokens[-1][1] != ","):
        return None
    if tokens[0][1] == ",":
        tokens = tokens[1:]
    if tokens and tokens[-1][1] == ",":
        tokens = tokens[:-1]
    elements: list[list[Key]] = [[]]
    depth = 0
    for kind, string in tokens:
        if kind == tokenize.OP and string in _OPEN:
            depth += 1
        elif kind == tokenize.OP and string in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        if depth == 0 and (kind, string) == (tokenize.OP, ","):
            elements.append([])
            continue
        elements[-1].append((kind, string))
        if depth == 0 and string == "=" and len(elements[-1]) != 2:
            return None  # a second ``=`` (a lambda's default) or a positional ``a == b``...
    names: list[str] = []
    for element in elements:
        if len(element) < 3 or element[0][0] != tokenize.NAME or element[1][1] != "=":
            return None
        if keyword.iskeyword(element[0][1]):
            return None
        for at, (kind, string) in enumerate(element[2:-1], start=2):
            if kind == tokenize.NAME and string in STATEFUL and element[at + 1][1] == "(":
                return None
        names.append(element[0][1])
    return names if depth == 0 else None


def keywords_at_one_point(
    keys_b: list[Key], point: int, ours: list[Key], theirs: list[Key]
) -> bool:
    """Both sides inserted ``ours`` and ``theirs`` at ``point`` of the base's tokens: may both
    go there, ours first? (See the module docstring; a keyword repeated elsewhere in the call is
    caught by the merged statement's own check.)"""
    callee = _call_at(keys_b, point)
    if callee is None or callee in ORDERED_CALLEES:
        return False
    names_o, names_t = _keyword_names(ours), _keyword_names(theirs)
    if not names_o or not names_t or set(names_o) & set(names_t):
        return False
    # Two keywords that bring in one new word are one setting passed two ways (conan
    # c60946255569: ``strict_lockfile=not args.lockfile_nostrict`` by ours and
    # ``strict=args.lockfile_strict`` by theirs, two designs of one option; the humans kept one).
    known = {word for kind, string in keys_b if kind == tokenize.NAME for word in words(string)}
    new_o = {word for name in names_o for word in words(name)} - known
    new_t = {word for name in names_t for word in words(name)} - known
    return not new_o & new_t
