"""Whole-result checks for two edits that cross: one side changes how something in the file is
called or written, the other side adds code the old way. Each clean result of the kind found in
the eleventh unseen set ran into an error that no input has; the file conflicts instead.

- :func:`call_misfit`: a call the result makes that does not fit the signature the result gives
  its callee, where every input that has the callee and the call fits (moto ``4aa3150f3a8b``,
  ``moto/awslambda/models.py``: ours gave ``get_function_by_name_or_arn`` one parameter and moved
  the two-argument calls to a new method; theirs added a two-argument call: a ``TypeError`` at
  each use). Only callees defined once in the result are looked at (a function called by name;
  a method called through an instance, its name defined nowhere else); a call that unpacks
  ``*args`` or ``**kwargs`` fits anything.
- :func:`decorator_dropped`: one side removed ``@classmethod`` (or ``@staticmethod``) from every
  member of a class that had it, the other side adds members to that class with it (faker
  ``3b5f34b678ff`` and three more merges, ``faker/providers/address/*``: ours turned every
  ``@classmethod`` of a provider into an instance method, theirs added ``@classmethod``\\ s
  calling ``cls.random_element``, an instance method after ours' change).
- :func:`added_beside_moved`: one side adds a member to a class right below a member that the
  other side moved out of that class into another one; the new member stays where its
  neighbour no longer is (numba ``6f9fda42d7c8``, ``cuda/tests/cudapy/test_dispatcher.py``:
  theirs moved the kernel-property tests into a class the CUDA simulator skips, ours added one
  more below the last of them; kept in the class that runs on the simulator, where it fails; the
  humans put it beside its neighbours).
"""

from __future__ import annotations

import ast
import itertools
from collections import Counter
from collections.abc import Iterator

from fleet.merge import _parsed

__all__ = ["added_beside_moved", "call_misfit", "decorator_dropped"]

# The decorators that change how a method is called (what its first parameter is). Another one
# dropped from every member may have moved to the class (Pillow ``ebbdc6ee6f85``: a skip
# decorator moved from each test to the class while the other side added a test with it).
_BINDING = frozenset({"classmethod", "staticmethod"})

Signature = tuple[tuple[str, ...], int, frozenset[str], frozenset[str], bool, bool]
"""Required positional names, positionals at most, keyword-passable names, required keyword-only
names, ``*args``, ``**kwargs``."""


def _defs(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool,
                                              bool]]:
    """Module functions and class methods (also under a module-level ``if``/``try``): name,
    node, whether it is a method, whether its first parameter is bound (not a staticmethod)."""
    stack: list[tuple[list[ast.stmt], bool]] = [(tree.body, False)]
    while stack:
        body, method = stack.pop()
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                static = any(_name(d) == "staticmethod" for d in stmt.decorator_list)
                yield stmt.name, stmt, method, method and not static
            elif isinstance(stmt, ast.ClassDef) and not method:
                stack.append((stmt.body, True))
            elif isinstance(stmt, ast.If):
                stack += [(stmt.body, method), (stmt.orelse, method)]
            elif isinstance(stmt, ast.Try):
                stack += [(part, method) for part in
                          (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse)]


def _name(node: ast.expr) -> str:
    """A decorator's dotted name (``classmethod``, ``functools.cache``; a call's callee)."""
    return _parsed.dotted(node.func if isinstance(node, ast.Call) else node) or ""


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, bound: bool) -> Signature:
    args = node.args
    positional = [*args.posonlyargs, *args.args][1 if bound else 0:]
    required = tuple(a.arg for a in positional[:len(positional) - len(args.defaults)])
    names = frozenset(a.arg for a in [*args.args, *args.kwonlyargs] if a in positional
                      or a in args.kwonlyargs)
    kw_required = frozenset(a.arg for a, default in zip(args.kwonlyargs, args.kw_defaults,
                                                        strict=True) if default is None)
    return (required, len(positional), names, kw_required, args.vararg is not None,
            args.kwarg is not None)


def _callees(tree: ast.Module) -> dict[str, Signature]:
    """Each function or method name defined once in the whole module (nested functions counted:
    sympy ``9a476c49a542`` has a module ``_unsolved_syms`` and a nested one of another
    signature) and bound no other way (an assignment, an import, a parameter, a class): its
    signature."""
    found = _parsed.nodes(tree)
    count = Counter(node.name for node in _parsed.of(found, ast.FunctionDef))
    count.update(node.name for node in _parsed.of(found, ast.AsyncFunctionDef))
    other = {node.id for node in _parsed.of(found, ast.Name) if not isinstance(node.ctx, ast.Load)}
    other.update(node.arg for node in _parsed.of(found, ast.arg))
    other.update((node.asname or node.name).split(".")[0] for node in _parsed.of(found, ast.alias))
    other.update(node.name for node in _parsed.of(found, ast.ClassDef))
    return {name: _signature(node, bound) for name, node, _, bound in _defs(tree)
            if count[name] == 1 and name not in other}


def _fits(call: ast.Call, signature: Signature) -> bool:
    required, most, names, kw_required, varargs, varkw = signature
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return True  # unpacked arguments: any count
    keywords = {k.arg for k in call.keywords if k.arg is not None}
    if len(call.args) > most and not varargs:
        return False
    if not keywords <= names and not varkw:
        return False
    if not kw_required <= keywords:
        return False
    return all(i < len(call.args) or name in keywords for i, name in enumerate(required))


def _misfits(tree: ast.Module) -> dict[str, str]:
    """The calls (as dumped) that do not fit their callee's signature in ``tree``: the callee's
    name of each."""
    callees = _callees(tree)
    plain = {name for name, _, method, _ in _defs(tree) if not method}
    every = _parsed.nodes(tree)
    classes = {node.name for node in _parsed.of(every, ast.ClassDef)}
    found = {}
    for node in _parsed.of(every, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in plain:
            name = func.id
        elif (isinstance(func, ast.Attribute) and func.attr in callees
              and func.attr not in plain
              and not (isinstance(func.value, ast.Name) and func.value.id in classes)):
            name = func.attr  # a method, through an instance: its name is defined once
        else:
            continue
        if name in callees and not _fits(node, callees[name]):
            found[ast.dump(node)] = name
    return found


def call_misfit(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    before = set().union(*(_misfits(tree) for tree in trees[:3]))
    new = sorted((dump, name) for dump, name in _misfits(trees[3]).items() if dump not in before)
    if not new:
        return None
    return f"a call of {new[0][1]} does not fit the signature one side gave it"


def _members(tree: ast.Module) -> dict[str, dict[str, set[str]]]:
    """Each top-level class defined once: its methods' decorators by name."""
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    count = Counter(c.name for c in classes)
    return {c.name: {m.name: {_name(d) for d in m.decorator_list} for m in c.body
                     if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for c in classes if count[c.name] == 1}


def decorator_dropped(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_members(tree) for tree in trees)
    for side, other in ((ours, theirs), (theirs, ours)):
        for cls, members in base.items():
            if cls not in side or cls not in other or cls not in merged:
                continue
            kept = [m for m in members if m in side[cls]]
            decorators = {d for m in kept for d in members[m]} & _BINDING
            for decorator in sorted(decorators):
                had = [m for m in kept if decorator in members[m]]
                if any(decorator in side[cls][m] for m in had):
                    continue  # not dropped from every member that had it
                added = [m for m, ds in other[cls].items()
                         if m not in members and decorator in ds
                         and decorator in merged[cls].get(m, set())]
                if added:
                    return (f"one side removed @{decorator} from every method of {cls} that had "
                            f"it; the other adds {added[0]} with it")
    return None


def _layout(tree: ast.Module) -> dict[str, list[str]]:
    """Each module-level class (defined once) with the names of its defs and classes, in order."""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    count = Counter(node.name for node in classes)
    return {
        node.name: [
            member.name
            for member in node.body
            if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ]
        for node in classes
        if count[node.name] == 1
    }


def added_beside_moved(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_layout(tree) for tree in trees)
    anywhere = {name for members in base.values() for name in members}
    for side, other in ((ours, theirs), (theirs, ours)):
        for cls, members in side.items():
            before, stays = base.get(cls), other.get(cls)
            if before is None or stays is None:
                continue
            for above, name in itertools.pairwise(members):
                if name in anywhere or name in stays or name not in merged.get(cls, ()):
                    continue  # not a member this side added, or not where it added it
                if above not in before or above in stays:
                    continue  # the neighbour is new here, or still in the class
                moved = sorted(c for c, names in other.items() if c != cls and above in names)
                if moved:
                    return (
                        f"{cls}.{name} was added below {above}, which the other side moved to "
                        f"{moved[0]}"
                    )
    return None
