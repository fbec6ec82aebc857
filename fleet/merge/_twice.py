"""Whole-result checks: one edit both sides made, each at its own place, kept at both places.

- one statement both sides added to a function (Pillow ``bb324671270d``,
  ``Tests/test_file_mpo.py``: ``assert mpinfo is not None`` added inside a ``with`` block on one
  side and after it on the other; the merge asserted twice, the humans kept one);
- one trailer (``.to_dict()``) both sides inserted into one region of touching lines (ansible
  ``3c5fa22cacc3``: once where a name is bound, once where it is read);
- one augmented assignment each side added to a function in its own words, reading one variable
  (:func:`augmented_twice`: python-for-android ``f7cbb20b694b``, an include flag added twice).

Which place is meant is unknown, so the file conflicts. And text each side holds once, kept
twice (found by reading the earlier sets' clean results that differ from the humans', 5 Dec):

- one definition both sides added under two names (:func:`added_under_two_names`: in one scope,
  a definition only ours added and one only theirs added, equal but for their names;
  attrs ``870867759952``: ``@pytest.fixture(name="slots")`` as ``def slots`` on one side and
  ``def _slots`` on the other, registered twice; aiohttp ``bc6d87d20b72`` and poetry
  ``2a9c16adbedf``: one test added twice under two names; the humans kept one each time), or
  one function body added twice in any two scopes (napari ``02e98ced084b``: a method by one
  side, a function of the module by the other), or
  two functions with one description, their parameters and docstring (cython ``614d740c335e``),
  or at one place with bodies one or two identifiers apart (``_near_twin``: pyqtgraph
  ``6128c2dfba29``);
- a whole-line comment the result holds more often than both sides together account for
  (:func:`comments_not_kept`: more than ``ours + theirs - base`` and than either side): text
  the merge itself copied (scrapy ``2d9857b44127``: ours' ``# TODO`` above its new list item
  came out above each of 16 items, since fixed in ``_sets``; Pillow ``31a8da48eeb1``: a
  section comment above both sides' new classes, since kept once by ``_order.comment_once``).
  A net for copies no stage knows of yet. A comment both sides added anew (16 characters or
  more) is there as often as on the side that has it more: luigi ``d44492479a34``, one block
  added by both sides, its attribute named two ways, the comment above it kept twice. And the
  other way (:func:`comments_not_kept`): a
  comment line base, ours and theirs each hold once, with its indentation, that the result
  lacks (pyqtgraph ``087f271633c0``: nine commented-out lines at the end of a file dropped, one
  side having only removed the file's last blank line; ``3d8d5044dfcc``: two re-indented)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher

from fleet.merge._diff3 import diff3
from fleet.merge._doubled import (
    assigned_under_two_names,
    docstring_twice,
    entry_spelled_twice,
    primary_keys_doubled,
)
from fleet.merge._near_twin import near_twins
from fleet.merge._renamed_deleted import renamed_where_deleted

__all__ = [
    "added_twice",
    "added_under_two_names",
    "applied_twice",
    "comments_not_kept",
]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _trivial(stmt: ast.stmt) -> bool:
    """Statements any two edits may both write (``pass``, ``break``, a bare ``return``)."""
    if isinstance(stmt, ast.Pass | ast.Break | ast.Continue):
        return True
    if isinstance(stmt, ast.Return):
        return stmt.value is None or (
            isinstance(stmt.value, ast.Constant) and stmt.value.value is None
        )
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _simple(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A function's simple statements, those inside its compound statements included (not
    those of the functions and classes it defines)."""
    for stmt in body:
        if isinstance(stmt, _DEFS):
            continue
        blocks = [
            getattr(stmt, field, None) for field in ("body", "orelse", "finalbody", "handlers")
        ]
        blocks += [case.body for case in getattr(stmt, "cases", [])]
        if not any(isinstance(block, list) for block in blocks):
            yield stmt
            continue
        for block in blocks:
            if isinstance(block, list):
                for item in block:
                    yield from _simple(item.body if isinstance(item, ast.ExceptHandler) else [item])


def _functions(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, list[ast.stmt]]]:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield from _functions(stmt.body, f"{prefix}{stmt.name}.")
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{stmt.name}", stmt.body
            yield from _functions(stmt.body, f"{prefix}{stmt.name}().")
        elif isinstance(stmt, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "finalbody"):
                yield from _functions(getattr(stmt, field, []), prefix)


def _counts(tree: ast.Module) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for name, body in _functions(tree.body):
        counter = out.setdefault(name, Counter())
        counter.update(ast.dump(stmt) for stmt in _simple(body) if not _trivial(stmt))
    return out


def added_twice(trees: list[ast.Module]) -> str | None:
    """In a function all four versions (base, ours, theirs, the result) define, a statement
    both sides added (each holds it more often than the base) that the result holds more often
    than either side: each added it at its own place. None when there is none. Also two
    docstrings of one definition, one value bound under two names, two primary keys, one entry
    spelled two ways (``_doubled``)."""
    base, ours, theirs, merged = (_counts(tree) for tree in trees)
    for name, counter in merged.items():
        if name not in base or name not in ours or name not in theirs:
            continue
        for text, count in counter.items():
            before, left, right = base[name][text], ours[name][text], theirs[name][text]
            # Both sides added it (not a statement the merge wrote from two edits of one).
            if min(left, right) > before and count > max(left, right):
                return f"a statement both sides added to {name} would be there {count} times"
    return (augmented_twice(trees) or docstring_twice(trees)  # the last three in ``_doubled``
            or assigned_under_two_names(trees) or primary_keys_doubled(trees)
            or entry_spelled_twice(trees))


def _augmented(tree: ast.Module) -> dict[str, list[ast.AugAssign]]:
    """Each function's augmented assignments (``x += ...``), nested blocks included."""
    return {name: [stmt for stmt in _simple(body) if isinstance(stmt, ast.AugAssign)]
            for name, body in _functions(tree.body)}


def _variables(node: ast.AST) -> set[str]:
    """The names ``node`` reads, those it calls left out (``join(...)``)."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in called}


def augmented_twice(trees: list[ast.Module]) -> str | None:
    """In a function of all four versions, an augmented assignment to one target that each side
    added in its own words, the values reading one variable, both kept: one addition made
    twice (python-for-android ``f7cbb20b694b``: ``env['CFLAGS'] += ' -I{}/include'.format(
    openssl_dir)`` by ours, ``env['CFLAGS'] += ' -I' + join(openssl_dir, 'include')`` by theirs,
    the include path passed twice; the humans kept theirs')."""
    base, ours, theirs, merged = (_augmented(tree) for tree in trees)
    for name, statements in merged.items():
        if name not in base or name not in ours or name not in theirs:
            continue
        before = {ast.dump(stmt) for stmt in base[name]}
        targets = {ast.dump(stmt.target) for stmt in base[name]}
        added = [[stmt for stmt in side[name] if ast.dump(stmt) not in before
                  and ast.dump(stmt.target) not in targets] for side in (ours, theirs)]
        kept = {ast.dump(stmt) for stmt in statements}
        for left in added[0]:
            for right in added[1]:
                if (ast.dump(left.target) == ast.dump(right.target)
                        and ast.dump(left) != ast.dump(right)
                        and {ast.dump(left), ast.dump(right)} <= kept
                        and _variables(left.value) & _variables(right.value)):
                    return f"both sides added to {ast.unparse(left.target)} in {name}"
    return None


_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
# The smallest definition counted: attrs' fixture (a decorator call with two keywords, one
# parameter, ``return request.param``) has 15 nodes.
LEAST_NODES = 12


def _definitions(tree: ast.Module) -> dict[tuple[str, str], _Def]:
    """Each def/class of the module's and its classes' bodies by (scope, name)."""
    found: dict[tuple[str, str], _Def] = {}
    stack: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
    while stack:
        body, scope = stack.pop()
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[(scope, stmt.name)] = stmt
                if isinstance(stmt, ast.ClassDef):
                    stack.append((stmt.body, f"{scope}{stmt.name}."))
    return found


def _unnamed(node: _Def) -> str | None:
    """A definition without its name (decorators, arguments or bases, body), or None for one
    too small to tell a copy from a coincidence: fewer than :data:`LEAST_NODES` nodes
    (``def c(): pass`` beside ``def d(): pass`` is two stubs, not one definition twice)."""
    parts: list[ast.AST] = [*node.decorator_list, *node.body]
    if isinstance(node, ast.ClassDef):
        parts += [*node.bases, *node.keywords]
    else:
        parts.append(node.args)
    if sum(1 for part in parts for _ in ast.walk(part)) < LEAST_NODES:
        return None
    return "\n".join(ast.dump(part) for part in parts)


def _described(node: _Def) -> str | None:
    """A function by what it says it does: its parameters and its docstring (whitespace
    folded), when the docstring says something (40 characters at least). Two functions both
    sides added with one description are one helper written twice (cython ``614d740c335e``:
    ``parse_python_code`` and ``py_parse_code``, one docstring, bodies a few lines apart)."""
    if isinstance(node, ast.ClassDef):
        return None
    doc = ast.get_docstring(node, clean=True)
    if doc is None or len(doc) < 40:
        return None
    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
    return ",".join(params) + "\n" + " ".join(doc.split())


def added_under_two_names(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring); also one definition
    deleted on one side and renamed and changed on the other (``_renamed_deleted``)."""
    base, ours, theirs, merged = (_definitions(tree) for tree in trees)
    only_ours = [
        (key, node)
        for key, node in ours.items()
        if key not in base and key not in theirs and key in merged
    ]
    only_theirs = [
        (key, node)
        for key, node in theirs.items()
        if key not in base and key not in ours and key in merged
    ]
    if not only_ours or not only_theirs:
        return renamed_where_deleted(trees)
    shapes: dict[tuple[str, type, str], str] = {}
    for (scope, name), node in only_ours:
        for shape in (_unnamed(node), _described(node)):
            if shape is not None:
                shapes.setdefault((scope, type(node), shape), name)
    for (scope, name), node in only_theirs:
        for shape in (_unnamed(node), _described(node)):
            twin = None if shape is None else shapes.get((scope, type(node), shape))
            if twin is not None:
                return f"both sides added one definition under two names: {twin} and {name}"
    bodies = {shape: name for (_, name), node in only_ours if (shape := _body(node))}
    for (_, name), node in only_theirs:
        twin = bodies.get(_body(node) or "")
        if twin is not None:
            return f"both sides added one function body under two names: {twin} and {name}"
    return near_twins(trees) or renamed_where_deleted(trees)


def _body(node: _Def) -> str | None:
    """A function's statements without its docstring, whatever its name, signature and scope
    (napari ``02e98ced084b``: one helper added by theirs as a method, by ours as a typed
    function of the module under another name), when 30 nodes or more; else None."""
    if isinstance(node, ast.ClassDef):
        return None
    body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
    if sum(1 for stmt in body for _ in ast.walk(stmt)) < 30:
        return None
    return "\n".join(ast.dump(stmt) for stmt in body)


def _comments(text: str) -> Counter[str]:
    return Counter(
        stripped for line in text.splitlines() if (stripped := line.strip()).startswith("#")
    )


def _comment_lines(text: str) -> Counter[str]:
    """Each whole-line comment of 8 characters or more, with its indentation."""
    return Counter(
        line.rstrip()
        for line in text.splitlines()
        if (stripped := line.strip()).startswith("#") and len(stripped) >= 8
    )


def comments_not_kept(texts: list[str]) -> str | None:
    """``texts``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_comments(text) for text in texts)
    for comment, count in merged.items():
        each = ours[comment], theirs[comment]
        if count > max(*each, sum(each) - base[comment]):
            return f"the merge repeats the comment {comment[:60]!r} ({count} times)"
        if not base[comment] and min(each) and count > max(each) and len(comment) >= 16:
            return f"both sides added the comment {comment[:60]!r}; the merge keeps it twice"
    lines = [_comment_lines(text) for text in texts]
    for line, count in lines[0].items():
        if count == lines[1][line] == lines[2][line] == 1 and not lines[3][line]:
            return f"the merge loses the comment line {line.strip()[:60]!r} every side keeps"
    return None


# One token of a line, for comparing edits inside a region of lines: a one-line string whole
# (dask 501a293d6be6: ``".html"`` added to two neighbouring strings is no trailer), a word or
# one character.
_TOKEN = re.compile(r"""[rRbBuUfF]{0,2}(?:"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|\w+|[^\w\s]""")
_COMMENT = re.compile(r"#[^\n]*")


def _tokens(lines: Sequence[str]) -> list[str]:
    return _TOKEN.findall(_COMMENT.sub("", "".join(lines)))


def _trailers(base: list[str], side: list[str]) -> set[tuple[str, ...]]:
    """The runs of tokens ``side`` only inserts into ``base`` that apply something to the value
    before them: an attribute or a method call (``.to_dict()``), a call or a subscript."""
    out: set[tuple[str, ...]] = set()
    matcher = SequenceMatcher(None, base, side, autojunk=False)
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if op != "insert" or j2 - j1 < 2:
            continue
        # The same insertion slid along equal tokens (``a).to_dict()`` read as ``).to_dict(``
        # inserted after ``a``): every placement counts.
        while j1 > 0 and side[j1 - 1] == side[j2 - 1]:
            j1, j2 = j1 - 1, j2 - 1
        while True:
            run = tuple(side[j1:j2])
            if run[0] in ".([" and any(token.isidentifier() for token in run):
                out.add(run)
            if j2 >= len(side) or side[j1] != side[j2]:
                break
            j1, j2 = j1 + 1, j2 + 1
    return out


def _count(tokens: list[str], run: tuple[str, ...]) -> int:
    size = len(run)
    return sum(1 for i in range(len(tokens) - size + 1) if tuple(tokens[i : i + size]) == run)


def applied_twice(base: str, ours: str, theirs: str, merged: str) -> str | None:
    """Both sides inserted the same trailer (``.to_dict()``) at two places of one region of
    touching lines, and the result holds it more often than either side: the same conversion
    applied twice (ansible ``3c5fa22cacc3``, ``tacp_instance.py``: ``.to_dict()`` added to the
    call that binds ``instance_properties`` on one side and to its use on the other; the merge
    called ``to_dict`` on the dict). None when there is none."""
    texts = [text.splitlines(keepends=True) for text in (base, ours, theirs)]
    regions: list[tuple[list[str], list[str], list[str]]] = []
    current: tuple[list[str], list[str], list[str]] | None = None
    for chunk in diff3(*texts):
        if chunk.kind == "stable":
            current = None
            continue
        if current is None:
            current = ([], [], [])
            regions.append(current)
        spans = (chunk.base, chunk.ours, chunk.theirs)
        for part, lines, span in zip(current, texts, spans, strict=True):
            part.extend(lines[span[0] : span[1]])
    runs: set[tuple[str, ...]] = set()
    for region_base, region_ours, region_theirs in regions:
        in_base = _tokens(region_base)
        ours_runs = _trailers(in_base, _tokens(region_ours))
        if ours_runs:  # theirs' diff only where ours inserted a trailer: both must have
            runs |= ours_runs & _trailers(in_base, _tokens(region_theirs))
    if not runs:
        return None
    whole = [_tokens(text.splitlines(keepends=True)) for text in (ours, theirs, merged)]
    for run in sorted(runs):
        left, right, count = (_count(tokens, run) for tokens in whole)
        if count > max(left, right):
            return f"{''.join(run)} inserted by both sides would be applied {count} times"
    return None
