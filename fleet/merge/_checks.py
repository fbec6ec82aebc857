"""Checks a structural clean result must pass, else the file conflicts: no wrong clean merge.

The structural stage merges symbol by symbol; these checks look at the whole result against the
three inputs for what no single symbol's merge can see:

- a *binding* (an imported name, an assignment target, a ``def``/``class`` name, in the module or
  in a class) that the result binds more often than either side does: two rewrites of one import
  kept side by side (``from flaskr.flaskr import app`` and ``from .flaskr import app``);
- an imported name whose source (``from m import x as name``) both sides changed differently;
- an assignment whose value both sides changed differently, unless the value is a display or a
  call whose elements the two sides changed disjointly and the result holds exactly both edits;
- a name the result reads but binds nowhere, that an input did bind: one side removed it (an
  import, a helper) while the other added a use of it; the same inside one function, for a
  name that function bound in an input (a parameter one side removed); a name an input with a
  star import read without binding it counts as bound there (trio ``00ba1ca0aaec``: one side
  replaced ``from m import *`` by the names it used, the other added uses of other names);
- the counts above are asked of the statements inside ``if``/``try``/``with`` blocks too, and
  of each function's own bindings (one statement both sides added kept twice);
- a binding one side removed and the other left as it was, still in the result;
- a binding (in the module or a class) both sides have, missing from the result: two
  duplicated imports of one module, each side deleting another one (yarl ``cf982b039dee``);
- a name the result binds only inside ``if TYPE_CHECKING:`` and reads when it runs (outside
  annotations), where no input did: one side moved an import under ``TYPE_CHECKING``, the other
  added a call of it (mkdocs ``9d56fa21d9ef``);
- one statement both sides added to a function, each at its own place, kept at both
  (``_twice.py``: Pillow ``bb324671270d``), and one trailer (``.to_dict()``) both sides inserted
  at two places of one region of touching lines (ansible ``3c5fa22cacc3``);
- a version spelled as parts (``MAJOR``/``MINOR``/``MICRO``) whose parts the two sides changed
  into a version neither side has (``_version_parts.py``: kivy ``bb00aa60d135``);
- a call passing a keyword that the function it calls, defined in the file, no longer accepts
  where an input's definition did (``_calls.py``: sentry-python ``6e412d7f28c6``);
- a class left abstract (an inherited ``@abstractmethod`` implemented nowhere) that every input
  having it has concrete (``_abstract.py``: mitmproxy ``4791fbd906b1``);
- a name a function reads where nothing binds it any more, while every input bound it wherever
  it was read (``_unbound.py``: distributed ``57e8d3f1d1e8``);
- an attribute one side added, stored on ``self`` outside the ``__slots__`` the other side
  completed (``_slots.py``: python-telegram-bot ``86bec4ad0278``);
- a write into an attribute the result binds to a read-only ``MappingProxyType``
  (``_readonly.py``: python-telegram-bot ``d6e49e8a6bb2``).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

from fleet.merge import _parsed
from fleet.merge._abstract import abstract_made
from fleet.merge._calls import keyword_dropped
from fleet.merge._commented_twin import live_and_commented
from fleet.merge._constructed import constructor_misfit
from fleet.merge._crossed import (
    added_beside_moved,
    call_misfit,
    decorator_dropped,
    kind_changed,
    twins_both_dropped,
    value_bypassed,
)
from fleet.merge._diff3 import ascending, both_inserted, compose_disjoint, diff3
from fleet.merge._kept_alias import alias_dropped
from fleet.merge._readonly import proxy_written
from fleet.merge._rebound import rebound_before_edit
from fleet.merge._sides_agree import agreed_lost, builtin_base_lost, param_unread, union_doubled
from fleet.merge._slots import slot_added_outside
from fleet.merge._twice import added_twice, added_under_two_names, applied_twice, comments_not_kept
from fleet.merge._unbound import BLOCKS as _BLOCKS
from fleet.merge._unbound import BUILTINS as _BUILTINS
from fleet.merge._unbound import flat as _flat
from fleet.merge._unbound import lost_local as _lost_local
from fleet.merge._unbound import module_lost as _module_lost
from fleet.merge._unbound import names as _names
from fleet.merge._version_parts import version_parts_combined

__all__ = ["Bindings", "unsure"]

Bindings = dict[str, list[str]]




def _scopes(body: list[ast.stmt], prefix: str = "") -> Iterator[tuple[str, list[ast.stmt]]]:
    """(scope, its statements) for the module, each class and each function (``f()``). A
    function's are its body's own statements only: the branches of an ``if`` inside a function
    each binding one name are ordinary (xarray ``74922387ab4a``: both sides added branches)."""
    yield prefix, body if prefix.endswith("().") else list(_flat(body))
    for stmt in _flat(body):
        if isinstance(stmt, ast.ClassDef):
            yield from _scopes(stmt.body, f"{prefix}{stmt.name}.")
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _scopes(stmt.body, f"{prefix}{stmt.name}().")


def _bindings(body: list[ast.stmt]) -> tuple[Bindings, dict[str, ast.expr]]:
    """name -> sources of its bindings in one scope (imports: what is imported; assignments: the
    value's dump; definitions: their kind), and name -> the value of its one assignment."""
    out: Bindings = {}
    values: dict[str, ast.expr] = {}
    for stmt in body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                source = alias.name if alias.asname else alias.name.split(".")[0]
                out.setdefault(name, []).append(f"import {source}")
        elif isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name != "*":
                    name = alias.asname or alias.name
                    out.setdefault(name, []).append(f"from {module} import {alias.name}")
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.setdefault(stmt.name, []).append(type(stmt).__name__)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                name = targets[0].id
                out.setdefault(name, []).append(f"= {ast.dump(stmt.value)}")
                values[name] = stmt.value
    return out, values


def _elements(node: ast.expr) -> tuple[str, list[str]] | None:
    """A display's or a call's frame and its elements as dumps, for an element-wise merge."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return type(node).__name__, [ast.dump(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return "Dict", [
            ast.dump(k) + ":" + ast.dump(v) if k is not None else "**" + ast.dump(v)
            for k, v in zip(node.keys, node.values, strict=True)
        ]
    if isinstance(node, ast.Call):
        return "Call " + ast.dump(node.func), [ast.dump(a) for a in node.args] + [
            ast.dump(k) for k in node.keywords
        ]
    return None


def _exact_combination(values: list[ast.expr | None], name: str) -> bool:
    """The merged value holds exactly both sides' disjoint element edits of the base value (in
    order; as a set for the strings of ``__all__``)."""
    if any(value is None for value in values):
        return False
    parts = [_elements(value) for value in values if value is not None]
    if any(part is None for part in parts) or len({part[0] for part in parts if part}) != 1:
        return False
    base, ours, theirs, merged = (part[1] for part in parts if part is not None)
    if name == "__all__" and all(
        isinstance(value, ast.List | ast.Tuple | ast.Set)
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)
        for value in values
    ):  # what ``from m import *`` exports is a set
        b, o, t = set(base), set(ours), set(theirs)
        expected = (o | t) - (b - o) - (b - t)
        return len(merged) == len(set(merged)) and set(merged) == expected
    strings = all(
        isinstance(value, ast.List | ast.Tuple | ast.Set)
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)
        for value in values
    )
    if strings:  # compared by their values, so that insertions at one point can be told apart
        base, ours, theirs, merged = (
            [str(e.value) for e in value.elts if isinstance(e, ast.Constant)]
            for value in values
            if isinstance(value, ast.List | ast.Tuple | ast.Set)
        )
    combined: list[str] = []
    for chunk in diff3(base, ours, theirs):
        if chunk.kind == "conflict":
            spans = (chunk.base, chunk.ours, chunk.theirs)
            pieces: dict[str, list[str]] = {
                side: items[slice(*span)]
                for side, items, span in zip(
                    ("base", "ours", "theirs"), (base, ours, theirs), spans, strict=True
                )
            }
            composed = compose_disjoint(pieces["base"], pieces["ours"], pieces["theirs"])
            if composed is None and strings:
                composed = both_inserted(
                    pieces["base"],
                    pieces["ours"],
                    pieces["theirs"],
                    in_order=ascending(base, ours, theirs, chunk),
                )
            if composed is None:
                return False
            combined.extend(pieces[side][index] for side, index in composed)
            continue
        source = theirs if chunk.kind == "theirs" else ours
        span = chunk.theirs if chunk.kind == "theirs" else chunk.ours
        combined.extend(source[span[0] : span[1]])
    return combined == merged


def _scope_problem(bodies: list[list[ast.stmt]], scope: str) -> str | None:
    found = [_bindings(b) for b in bodies]
    (base, _), (ours, _), (theirs, _), (merged, merged_values) = found
    values = [pair[1] for pair in found]
    if not scope.endswith("()."):
        # Both sides bind it, so the result must: the structural stage sees only the segments
        # that changed, and the uses of a lost import may all lie in the set-aside rest (yarl
        # cf982b039dee: two duplicated imports, one deleted by each side, both gone).
        lost = sorted((set(ours) & set(theirs)) - set(merged))
        if lost:
            return f"{scope}{lost[0]}, bound by both sides, would no longer be bound"
    for name, sources in merged.items():
        sides = [side.get(name, []) for side in (base, ours, theirs)]
        if len(sources) > max(len(sides[1]), len(sides[2])):
            return f"{scope}{name} would be bound {len(sources)} times"
        if scope.endswith("()."):
            continue  # a function's locals: rebinding one is ordinary, only counts are asked
        kept = [sorted(s) == sorted(sides[0]) for s in sides[1:]]
        if sides[0] and ((not sides[1] and kept[1]) or (not sides[2] and kept[0])):
            # One side removed the binding, the other left it as it was: the result must not
            # keep it (pytest 387f096179c2: an import removed on one side, split on the other).
            return f"the removal of {scope}{name} by one side would be lost"
        b, o, t = (sorted(s) for s in sides)
        if o in (b, t) or t == b:
            continue
        if any(s.startswith(("import ", "from ")) for s in (*o, *t)):
            return f"the import of {scope}{name} changed on both sides differently"
        if any(s.startswith("= ") for s in (*o, *t)):
            trio = [v.get(name) for v in values[:3]]
            if not _exact_combination([*trio, merged_values.get(name)], name):
                return f"{scope}{name} = ... changed on both sides differently"
    return None


def _checking(stmt: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` (or ``if typing.TYPE_CHECKING:``): false when the code runs."""
    if not isinstance(stmt, ast.If):
        return False
    test = stmt.test
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING"


def _module_bound(body: list[ast.stmt], checking: bool, out: dict[bool, set[str]]) -> None:
    """The module's bindings, sorted by whether only a type checker sees them (``out[True]``)."""
    for stmt in body:
        if _checking(stmt):
            assert isinstance(stmt, ast.If)
            _module_bound(stmt.body, True, out)
            _module_bound(stmt.orelse, checking, out)
        elif isinstance(stmt, _BLOCKS):
            for field in ("body", "orelse", "finalbody"):
                _module_bound(getattr(stmt, field, []), checking, out)
            for handler in getattr(stmt, "handlers", []):
                _module_bound(handler.body, checking, out)
                out[checking] |= {handler.name} if handler.name else set()
            if isinstance(stmt, ast.If):
                out[checking] |= _names(stmt.test)[1]  # a walrus
            if isinstance(stmt, ast.With):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        out[checking] |= _names(item.optional_vars)[1]
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[checking].add(stmt.name)
        else:
            out[checking] |= _names(stmt)[1]


def _runtime_reads(
    node: ast.AST, names: set[str], hidden: frozenset[str] = frozenset()
) -> set[str]:
    """Which of ``names`` the code reads when it runs: not in annotations nor in ``if
    TYPE_CHECKING:`` blocks, nor inside a function that binds the name itself."""
    if isinstance(node, ast.If) and _checking(node):
        return set().union(*(_runtime_reads(s, names, hidden) for s in node.orelse))
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        args = node.args
        outer: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            outer += node.decorator_list
        inner = node.body if isinstance(node.body, list) else [node.body]
        local = hidden | frozenset(_names(node)[1] - {getattr(node, "name", "")})
        found = set().union(*(_runtime_reads(n, names, hidden) for n in outer))
        return found.union(*(_runtime_reads(s, names, local) for s in inner))
    if isinstance(node, ast.AnnAssign):
        parts = [node.target] + ([node.value] if node.value is not None else [])
        return set().union(*(_runtime_reads(n, names, hidden) for n in parts))
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return {node.id} if node.id in names and node.id not in hidden else set()
    return set().union(*(_runtime_reads(n, names, hidden) for n in ast.iter_child_nodes(node)))


def _checking_only_reads(tree: ast.Module) -> set[str]:
    """Names the module binds only for a type checker (``if TYPE_CHECKING:``) but reads when it
    runs: a ``NameError`` there."""
    bound: dict[bool, set[str]] = {True: set(), False: set()}
    _module_bound(tree.body, False, bound)
    only = bound[True] - bound[False]
    return _runtime_reads(tree, only) if only else set()


def unsure(base: str, ours: str, theirs: str, merged: str) -> str | None:
    """Why the clean structural result ``merged`` cannot be trusted, or None when it passes
    every check above. Inputs that do not parse are unsure."""
    try:
        trees = [_parsed.parse(text) for text in (base, ours, theirs, merged)]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "an input does not parse"
    twice = (
        added_twice(trees)
        or added_under_two_names(trees)
        or comments_not_kept([base, ours, theirs, merged])
        or live_and_commented([base, ours, theirs, merged])
        or applied_twice(base, ours, theirs, merged)
        or version_parts_combined(trees)
        or keyword_dropped(trees)
        or abstract_made(trees)
        or call_misfit(trees)
        or constructor_misfit(trees)
        or decorator_dropped(trees)
        or added_beside_moved(trees)
        or kind_changed(trees)
        or value_bypassed(trees)
        or twins_both_dropped(trees)
        or slot_added_outside(trees)
        or proxy_written(trees)
        or param_unread(trees)
        or rebound_before_edit(trees, [base, ours, theirs, merged])
        or alias_dropped(trees)
        or agreed_lost([base, ours, theirs, merged], trees)
        or union_doubled(trees)
        or builtin_base_lost(trees)
    )
    if twice is not None:
        return twice
    scopes = [dict(_scopes(tree.body)) for tree in trees]
    for scope, body in scopes[3].items():
        if scope.endswith("().") and not (scope in scopes[1] and scope in scopes[2]):
            continue  # a function one side added or renamed (httpx 727a6ada0f6d): no counts
        bodies = [s.get(scope, []) for s in scopes[:3]] + [body]
        problem = _scope_problem(bodies, scope)
        if problem is not None:
            return problem
    read, bound, dynamic = _names(trees[3])
    if not dynamic:
        earlier: Counter[str] = Counter()
        starred: set[str] = set()  # read unbound where a star import may bind them
        elsewhere: set[str] = set()  # read unbound without one: bound out of sight
        for tree in trees[:3]:
            tree_read, tree_bound, tree_dynamic = _names(tree)
            earlier.update(tree_bound)
            (starred if tree_dynamic else elsewhere).update(tree_read - tree_bound - _BUILTINS)
        # What a star import may have bound (trio 00ba1ca0aaec), unless an input without one
        # reads it unbound too: its binding lies in a segment set aside (isort d65d97e83e32).
        earlier.update(starred - elsewhere)
        missing = sorted(name for name in read - bound - _BUILTINS if earlier[name])
        if missing:
            return f"{missing[0]} is used but no longer bound"
        hidden = _checking_only_reads(trees[3]) - set().union(
            *(_checking_only_reads(tree) for tree in trees[:3])
        )
        if hidden:  # mkdocs 9d56fa21d9ef: an import moved under TYPE_CHECKING, a call added
            return f"{sorted(hidden)[0]} is read at run time but bound only for type checking"
        return _lost_local(trees) or _module_lost(trees)
    return None
