"""Keyword arguments both sides added at one point of a call: both kept, ours first, when each
side's insertion is whole ``name=value`` arguments of a call (not a ``def``'s parameters, not
``dict(...)``, whose keywords are its keys' order), their names new and distinct, no value
calls something stateful (``_independent.STATEFUL``), and no new word is shared by both sides'
names (one setting passed two ways): a keyword's place in a call is no meaning. Seen in real
history: sqlfluff ``83b372ebd546`` (a grammar each side added to ``postgres_dialect.add(...)``;
the humans kept both, ours first there and theirs first in other merges of those files) and
synapse ``a5616fbf2dc4`` (``extra_content=...`` and ``thread_id=None`` added to one call). Used
by ``_tokens.merge_tokens``; the equivalence of results sorts such keywords (``equivalence``).

And :func:`inserted_twice`: the same code both sides inserted at two places of one statement is
one change made two ways (cobbler ``8543cff22e81``: ``or self.mirror.startswith("https://")``
added to one condition after its first operand by ours and after its last by theirs; merged, the
test was there twice; the humans kept it once)."""

from __future__ import annotations

import keyword
import tokenize

from fleet.merge._independent import STATEFUL
from fleet.merge._near_twin import words

__all__ = ["ORDERED_CALLEES", "callee_of", "inserted_twice", "keywords_at_one_point"]

Key = tuple[int, str]
ORDERED_CALLEES = frozenset({"dict", "OrderedDict", "defaultdict", "Counter"})
_OPEN, _CLOSE = {"(", "[", "{"}, {")", "]", "}"}
# what may join an inserted operand to its neighbours: not part of what was inserted
_JOINS = frozenset({",", "or", "and", "+", "-", "*", "|", "&", "."})
_LAYOUT = (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE)
Change = tuple[int, int, int, int]  # base tokens [i1, i2) made the side's [j1, j2)


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
    bracket = _bracket(keys, point)
    name = None if bracket is None else callee_of(keys, bracket)
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
    # So are two values made of one new variable (angr 4c10dba21907: ``clinic=clinic`` by ours,
    # ``ail_graph=clinic.graph`` by theirs, whose commit removed the passing of ``clinic``).
    read = {string for kind, string in keys_b if kind == tokenize.NAME}
    return not new_o & new_t and not (_values_read(ours) & _values_read(theirs)) - read


def _values_read(run: list[Key]) -> set[str]:
    """The variables the values of ``run``'s keyword arguments read: names not after a ``.``, not
    a keyword's own name, not called (``Ref("x")`` each side uses is a helper), nor ``self``."""
    out = set()
    for at, (kind, string) in enumerate(run):
        after = run[at + 1][1] if at + 1 < len(run) else ""
        if (kind == tokenize.NAME and not keyword.iskeyword(string)
                and string not in ("self", "cls") and after not in ("=", "(")
                and (at == 0 or run[at - 1][1] != ".")):
            out.add(string)
    return out


def _core(run: list[Key]) -> tuple[Key, ...]:
    """``run`` without layout and without the joining tokens at either end."""
    tokens = [k for k in run if k[0] not in _LAYOUT]
    while tokens and tokens[0][1] in _JOINS:
        tokens = tokens[1:]
    while tokens and tokens[-1][1] in _JOINS:
        tokens = tokens[:-1]
    return tuple(tokens)


def _slid(base: list[Key], point: int, run: list[Key]) -> dict[tuple[Key, ...], set[int]]:
    """The cores of ``run`` inserted at ``point`` of ``base``, slid left and right as far as the
    tokens around allow (a diff may cut an insertion anywhere in a repeated pattern: ``"b") or
    x.startswith(`` for `` or x.startswith("b")``), each with the points it can stand at."""
    out: dict[tuple[Key, ...], set[int]] = {}
    for step in (-1, 1):
        at, tokens = point, list(run)
        while tokens:
            out.setdefault(_core(tokens), set()).add(at)
            if step < 0 and at > 0 and tokens[-1] == base[at - 1]:
                at, tokens = at - 1, [base[at - 1], *tokens[:-1]]
            elif step > 0 and at < len(base) and tokens[0] == base[at]:
                at, tokens = at + 1, [*tokens[1:], base[at]]
            else:
                break
    return out


def _bracket(keys: list[Key], point: int) -> int | None:
    """The index of the innermost bracket open at ``point`` of ``keys``, if any."""
    stack: list[int] = []
    for index, (kind, string) in enumerate(keys[:point]):
        if kind == tokenize.OP and string in _OPEN:
            stack.append(index)
        elif kind == tokenize.OP and string in _CLOSE and stack:
            stack.pop()
    return stack[-1] if stack else None


def inserted_twice(base: list[Key], ours: tuple[list[Key], list[Change]],
                   theirs: tuple[list[Key], list[Change]]) -> bool:
    """Both sides inserted (replacing nothing) the same code with an operand at two different
    places: three tokens or more, or any such code inside one bracket (esphome
    ``47e4b02023b0``: ``"@esphome/core"`` added to ``CODEOWNERS = ["@OttoWinter"]`` first by
    ours, last by theirs). ``ours`` and ``theirs`` are each side's tokens and its changes of
    ``base``. (A lone ``None`` or ``"utf-8"`` each side passed to another call is two edits.)"""
    def inserted(keys: list[Key], changes: list[Change]) -> dict[tuple[Key, ...], set[int]]:
        out: dict[tuple[Key, ...], set[int]] = {}
        for i1, i2, j1, j2 in changes:
            if i1 == i2:
                for core, points in _slid(base, i1, keys[j1:j2]).items():
                    if any(kind in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
                           for kind, _ in core):
                        out.setdefault(core, set()).update(points)
        return out

    def one_bracket(left: set[int], right: set[int]) -> bool:
        brackets = {_bracket(base, point) for point in left}
        return bool(brackets & {_bracket(base, point) for point in right} - {None})

    by_ours, by_theirs = inserted(*ours), inserted(*theirs)
    return any(core in by_theirs and not points & by_theirs[core]
               and (len(core) >= 3 or one_bracket(points, by_theirs[core]))
               for core, points in by_ours.items())
