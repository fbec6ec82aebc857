"""The judge of ``merge_history.py``: one replayed case's outcome against the humans' merge.

``classify`` runs git's line merge and the stages ``fleet merge-driver`` runs after it, and sorts
the result (see ``merge_history``'s docstring for the outcomes). A clean result that differs from
the humans' is sorted by what explains the difference: the humans edited beyond both sides
(``human_beyond``), undid an edit nothing contested (``human_override``, symbol by symbol and,
inside a class or a compound statement in all five versions, part by part), or put independent
definitions in another order (``order_only``); nothing else explains it (``clean_wrong``). A
clean result Python's compiler refuses where the humans' compiles is ``clean_wrong`` whatever
it reads like: equal syntax trees up to the order of imports hid a ``from __future__`` import
put below another import (dask ``68253caf1a8c``, counted resolved until 6 December 2026).
"""

from __future__ import annotations

import ast
import copy
import time
from collections import Counter

from _merge_order import _same_statements, order_only

from fleet.merge import Clean
from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage
from fleet.merge._parsed import compiles
from fleet.merge.equivalence import canonical_dump, same_program


def _line(line: str) -> str:
    """A line as compared across versions: indentation and the quote style ignored."""
    return line.strip().replace("'", '"')


def _beyond_lines(actual: str, inputs: tuple[str, str, str]) -> set[str]:
    """Lines the humans wrote more often than any input has them, or dropped although both
    sides kept them (stripped of indentation)."""

    def count(text: str) -> Counter[str]:
        return Counter(_line(line) for line in text.splitlines() if line.strip())

    human = count(actual)
    base, ours, theirs = (count(text) for text in inputs)
    more = {line for line, n in human.items() if n > max(base[line], ours[line], theirs[line])}
    less = {line for line in ours if human[line] < min(ours[line], theirs[line])}
    return more | less


def _segment(text: str, stmt: ast.stmt) -> str:
    """A statement's source with its decorators (ast's starts at ``def``; pydantic c7ee03f41137)."""
    start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    if start == stmt.lineno:
        return ast.get_source_segment(text, stmt) or ""
    return "".join(text.splitlines(keepends=True)[start - 1 : stmt.end_lineno]).rstrip("\n")


def _top_level(text: str, sources: bool = False) -> dict[str, str]:
    """Top-level statements by a name (def/class/assign target, each name an import binds, else
    the canonical dump) -> their text: an import as one ``import`` per name, or, with
    ``sources``, each statement's own source lines (to look for the lines the humans wrote)."""
    tree = ast.parse(text)
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            key = f"def {stmt.name}"
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            # One "symbol" per name bound, whatever statement binds it: a rewritten import
            # (another module, names split or joined) keeps its key.
            for alias in stmt.names:
                single = (
                    ast.Import([alias])
                    if isinstance(stmt, ast.Import)
                    else ast.ImportFrom(stmt.module, [alias], stmt.level)
                )
                bound = f"binds {alias.asname or alias.name.split('.')[0]}"
                own = ast.get_source_segment(text, stmt) if sources else None
                out[bound] = out.get(bound, "") + (own or ast.unparse(single)) + "\n"
            continue
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            key = f"assign {ast.dump(stmt.targets[0])}"
        else:
            key = canonical_dump(ast.unparse(stmt)) or ast.dump(stmt)
        # One per line: glued together, two statements would not parse and never compare equal.
        out[key] = out.get(key, "") + _segment(text, stmt) + "\n"
    return out


def _strings_squeezed(text: str) -> str | None:
    """The canonical dump with the whitespace inside every string constant squeezed to one
    space (a blank line added to a docstring), None if it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = " ".join(node.value.split())
    return canonical_dump(ast.unparse(tree))


def human_beyond(merged: str, actual: str, inputs: tuple[str, str, str]) -> bool:
    """Every top-level symbol where ``merged`` and ``actual`` differ shows the humans editing
    beyond both sides: a line they wrote more often than any input has it, or a line both sides
    kept and they dropped (see ``_beyond_lines``)."""
    squeezed = _strings_squeezed(merged)
    if squeezed is not None and squeezed == _strings_squeezed(actual):
        return True  # the humans changed only whitespace inside strings: no line shows it
    beyond = _beyond_lines(actual, inputs)
    if not beyond:
        return False
    ours, theirs = _top_level(merged), _top_level(actual)
    differing = [
        k for k in set(ours) | set(theirs) if not same_program(ours.get(k, ""), theirs.get(k, ""))
    ]
    lines = _top_level(merged, sources=True), _top_level(actual, sources=True)
    return bool(differing) and all(
        any(
            _line(line) in beyond
            for line in (lines[0].get(k, "") + "\n" + lines[1].get(k, "")).splitlines()
        )
        for k in differing
    )


def _single(text: str) -> ast.stmt | None:
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return body[0] if len(body) == 1 else None


def _header(node: ast.stmt) -> str:
    """A compound statement without its block and decorators (signature, bases, condition,
    other branches kept): the decorators are a part of their own, as the merge treats them."""
    emptied = copy.copy(node)
    emptied.body, emptied.decorator_list = [ast.Pass()], []  # type: ignore[attr-defined]
    return ast.unparse(emptied)


def _members(body: list[ast.stmt]) -> tuple[dict[str, str], list[str]]:
    """A class body's members by name (as ``_top_level`` keys them) -> text, and the order of
    its attributes (whose order is meaning in an enum or a dataclass)."""
    out: dict[str, str] = {}
    order: list[str] = []
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            key = f"def {stmt.name}"
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            key = "assign " + ast.unparse(
                stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            )
            order.append(key)
        else:
            key = canonical_dump(ast.unparse(stmt)) or ast.dump(stmt)
        out[key] = out.get(key, "") + ast.unparse(stmt) + "\n"
    return out, order


def _uncontested(base: str, ours: str, theirs: str, mine: str, human: str) -> bool:
    """``mine`` and ``human`` differ in one symbol only where the humans undid an edit nothing
    contested: exactly one side changed the symbol and ``mine`` holds it as that side has it; or,
    for a class or compound statement in all five, its header and its members (a class, matched
    by name, attributes in the humans' order) or its statements (equally many in all five) are
    each the same or such an edit (httpx 4e58ae69e95d: ``-> "Event"`` made ``-> Event`` by one
    side, the body changed by the other, the humans kept the first side's whole function)."""
    if same_program(mine, human):
        return True
    ours_same, theirs_same = same_program(ours, base), same_program(theirs, base)
    if ours_same != theirs_same and same_program(mine, theirs if ours_same else ours):
        return True
    nodes = [_single(text) for text in (base, ours, theirs, mine, human)]
    kinds = {type(node) for node in nodes}
    if None in kinds or len(kinds) != 1 or not isinstance(nodes[0], _COMPOUND):
        return False
    headers = [_header(node) for node in nodes if node is not None]
    if headers == [ast.unparse(node) for node in nodes if node is not None]:
        return False  # already bare headers (a ``pass`` body): nothing smaller to compare
    decorators = ["\n".join(map(ast.unparse, getattr(n, "decorator_list", []))) for n in nodes]
    if not (_uncontested(*headers) and _uncontested(*decorators)):  # pytest 7250a1a59f76
        return False
    bodies: list[list[ast.stmt]] = [getattr(node, "body", []) for node in nodes]
    if isinstance(nodes[0], ast.ClassDef):
        keyed = [_members(body) for body in bodies]
        maps = [members for members, _ in keyed]
        fields_mine, fields_human = keyed[3][1], keyed[4][1]
        if [k for k in fields_mine if k in fields_human] != [
            k for k in fields_human if k in fields_mine
        ]:
            return False  # the order of attributes is meaning: not an undone edit
        return all(
            _uncontested(*(members.get(key, "") for members in maps))
            for key in set(maps[3]) | set(maps[4])
        )
    texts = ["\n".join(ast.unparse(stmt) for stmt in body) for body in bodies]
    if same_program(texts[3], texts[4]):
        return True
    if len({len(body) for body in bodies}) != 1:
        return False
    return all(
        _uncontested(*(ast.unparse(body[index]) for body in bodies))
        for index in range(len(bodies[0]))
    )


_COMPOUND = (
    ast.ClassDef,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
)


def human_moved(merged: str, actual: str, inputs: tuple[str, str, str]) -> bool:
    """``merged`` holds the humans' module statements, and once every statement the humans
    moved against the inputs is left out, the rest stands in the humans' order. A statement is
    moved when, with some other statement, ``merged`` has the two in an input's order and the
    humans in an order no input has (xarray bac77ee2a942, ``doc/conf.py``: theirs added
    ``autodoc_type_aliases = napoleon_type_aliases`` below ``napoleon_type_aliases = {...}``;
    the humans moved it above, where the name is not bound yet). Two statements no input holds
    together (both sides' additions at one point) never count as moved."""
    same = _same_statements(merged, actual)
    if same is None:
        return False
    _, dumps, place = same
    orders = []
    for text in inputs:
        try:
            body = ast.parse(text).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        orders.append({canonical_dump(ast.unparse(stmt)): i for i, stmt in enumerate(body)})
    moved: set[str | None] = set()
    for i, first in enumerate(dumps[0]):
        for second in dumps[0][i + 1 :]:
            if place[first] < place[second]:
                continue
            holding = [o for o in orders if first in o and second in o]
            if any(o[first] < o[second] for o in holding) and not any(
                o[first] > o[second] for o in holding
            ):
                moved.update((first, second))
    rest = [[dump for dump in body if dump not in moved] for body in dumps]
    return bool(moved) and rest[0] == rest[1]


def human_override(merged: str, actual: str, inputs: tuple[str, str, str]) -> bool:
    """Every top-level symbol where ``merged`` and ``actual`` differ either shows the humans
    editing beyond both sides (see :func:`human_beyond`) or is one that only one side changed
    (added, edited or deleted; the other side has it as the base has it), which ``merged`` holds
    exactly as that side has it: the humans undid an edit that nothing contested."""
    beyond = _beyond_lines(actual, inputs)
    mine, human = _top_level(merged), _top_level(actual)
    own = _top_level(merged, sources=True), _top_level(actual, sources=True)
    base, ours, theirs = (_top_level(text) for text in inputs)
    differing = [
        k for k in set(mine) | set(human) if not same_program(mine.get(k, ""), human.get(k, ""))
    ]

    def explained(key: str) -> bool:
        texts = [version.get(key, "") for version in (base, ours, theirs, mine, human)]
        if _uncontested(*texts):
            return True
        if key.startswith("binds ") and texts[4].count("\n") > max(
            text.count("\n") for text in texts[:3]
        ):
            return True  # the humans bind the name more often than any input: beyond both
        if key.startswith("binds ") and not texts[4] and texts[0] == texts[1] == texts[2] == (
            texts[3]
        ):
            # Every version binds the name by the same import (one per name: each side may have
            # rewritten the statement holding it) and so does the merge; the humans dropped it.
            # webargs 38423b57faad, twine f630a4ff8321 (twenty-fourth set).
            return True
        lines = (own[0].get(key, "") + "\n" + own[1].get(key, "")).splitlines()
        return any(_line(line) in beyond for line in lines)

    return bool(differing) and all(explained(k) for k in differing)


def classify(base: str, ours: str, theirs: str, actual: str) -> tuple[str, str, float, float]:
    """(outcome, fleet stage, fleet seconds, git seconds) of one case (see the module docstring)."""
    start = time.perf_counter()
    git = line_merge(base, ours, theirs)
    git_seconds = time.perf_counter() - start
    start = time.perf_counter()
    # What ``fleet merge-driver`` does after its own ``git merge-file`` (git's result is shared,
    # so the driver's time is git's plus this).
    result = after_line_stage(base, ours, theirs, "case.py", git)
    fleet_seconds = git_seconds + time.perf_counter() - start
    stage = f"{type(result).__name__.lower()}:{result.stage}"
    if isinstance(git, Clean):  # the humans' result is compared only when fleet's differs
        if isinstance(result, Clean) and result.text == git.text:
            return "git_clean", stage, fleet_seconds, git_seconds
        worse = same_program(git.text, actual)
        return ("worse" if worse else "git_clean_changed"), stage, fleet_seconds, git_seconds
    if canonical_dump(actual) is None:
        return "unparsable", stage, fleet_seconds, git_seconds  # nothing to compare with
    if not isinstance(result, Clean):
        return "conflict", stage, fleet_seconds, git_seconds
    if not compiles(result.text) and compiles(actual):
        # Equal syntax trees up to the order of imports can still be a module Python refuses
        # (a ``from __future__`` import below another: dask 68253caf1a8c was counted resolved).
        return "clean_wrong", stage, fleet_seconds, git_seconds
    if same_program(result.text, actual):
        return "resolved", stage, fleet_seconds, git_seconds
    if human_beyond(result.text, actual, (base, ours, theirs)) or human_moved(
        result.text, actual, (base, ours, theirs)
    ):
        return "clean_human_beyond", stage, fleet_seconds, git_seconds
    if human_override(result.text, actual, (base, ours, theirs)):
        return "clean_human_override", stage, fleet_seconds, git_seconds
    if order_only(result.text, actual):
        return "clean_order", stage, fleet_seconds, git_seconds
    return "clean_wrong", stage, fleet_seconds, git_seconds
