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
- :func:`kind_changed`: one side turned a property of a class into a method (or a method into a
  property), the other side adds uses of it the old way through ``self`` and the result keeps
  them (fail2ban ``767fc0d4d41a``, ``fail2ban/server/actions.py``: ours made ``status`` a method
  taking a ``flavor``, theirs added a property computing ``self.status + [...]``: a
  ``TypeError``; the humans kept ours' method alone).
- :func:`value_bypassed`: one side changed the value of a module-level assignment, the other
  side rewrote a function that read that name so that it reads it no more, and the result holds
  both: the one side's new value no longer reaches that function (graphite-web ``3b7cb114dbed``,
  ``webapp/graphite/render/glyph.py``: ours added the ``sec`` and ``msec`` unit systems to
  ``UnitSystems``, theirs pointed ``format_units`` at a new ``UnitSystemsExt``: a ``KeyError``
  for ours' new systems; the humans kept ``format_units`` on ``UnitSystems``).
- :func:`twins_both_dropped`: two module-level names that base binds to one value (a list
  written twice), each side removing a different one and keeping the other, and the result
  binding neither: every reader of either name breaks (pydicom ``d507d41ea644``,
  ``pydicom/uid.py``: ``UncompressedPixelTransferSyntaxes`` and
  ``NotCompressedPixelTransferSyntaxes``; ours kept the first and imported it elsewhere, theirs
  the second).
"""

from __future__ import annotations

import ast
import itertools
from collections import Counter
from collections.abc import Callable, Iterator

from fleet.merge import _parsed

__all__ = ["Signature", "added_beside_moved", "call_misfit", "decorator_dropped", "fits",
           "kind_changed", "new_misfit", "signature", "twins_both_dropped", "value_bypassed"]

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


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef, bound: bool) -> Signature:
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
    return {name: signature(node, bound) for name, node, _, bound in _defs(tree)
            if count[name] == 1 and name not in other}


def fits(call: ast.Call, sig: Signature) -> bool:
    required, most, names, kw_required, varargs, varkw = sig
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
        if name in callees and not fits(node, callees[name]):
            found[ast.dump(node)] = name
    return found


def new_misfit(trees: list[ast.Module], misfits: Callable[[ast.Module], dict[str, str]]
               ) -> str | None:
    """The callee's name of the first call that ``misfits`` finds in the result (``trees[3]``)
    and in none of base, ours and theirs; None when there is none."""
    before = set().union(*(misfits(tree) for tree in trees[:3]))
    new = sorted((dump, name) for dump, name in misfits(trees[3]).items() if dump not in before)
    return new[0][1] if new else None


def call_misfit(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    name = new_misfit(trees, _misfits)
    return None if name is None else f"a call of {name} does not fit the signature one side gave it"


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


_PROPERTIES = frozenset({"property", "cached_property"})


def _class_kinds(tree: ast.Module) -> dict[str, tuple[dict[str, str], Counter[tuple[str, str]]]]:
    """Each top-level class defined once: its members defined once as ``property`` (a property
    decorator) or ``method`` (no decorator), and its uses of ``self.<name>``, each a ``call`` or
    a ``read``."""
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    count = Counter(c.name for c in classes)
    found = {}
    for cls in classes:
        if count[cls.name] != 1:
            continue
        defs = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        times = Counter(m.name for m in defs)
        kinds = {}
        for member in defs:
            decorators = {_name(d).rsplit(".", 1)[-1] for d in member.decorator_list}
            if times[member.name] == 1 and (not decorators or decorators <= _PROPERTIES):
                kinds[member.name] = "property" if decorators else "method"
        every = _parsed.nodes(cls)
        called = {id(node.func) for node in _parsed.of(every, ast.Call)}
        uses: Counter[tuple[str, str]] = Counter()
        for node in _parsed.of(every, ast.Attribute):
            if (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                    and node.value.id == "self"):
                uses[(node.attr, "call" if id(node) in called else "read")] += 1
        found[cls.name] = (kinds, uses)
    return found


def kind_changed(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_class_kinds(tree) for tree in trees)
    for side, other in ((ours, theirs), (theirs, ours)):
        for cls, (kinds, uses) in base.items():
            if cls not in side or cls not in other or cls not in merged:
                continue
            for name, kind in kinds.items():
                now = side[cls][0].get(name)
                if now is None or now == kind or other[cls][0].get(name) != kind:
                    continue
                use = (name, "read" if kind == "property" else "call")
                if other[cls][1][use] > uses[use] and merged[cls][1][use] > side[cls][1][use]:
                    return (f"one side made {cls}.{name} a {now}, the other adds uses of it as "
                            f"a {kind}")
    return None


def _assigned(tree: ast.Module) -> dict[str, str]:
    """Each name that one module-level assignment binds and nothing else at module level does:
    that statement, dumped."""
    count: Counter[str] = Counter()
    statements = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            count.update(n.id for t in stmt.targets if not isinstance(t, ast.Name)
                         for n in _parsed.of(_parsed.nodes(t), ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names = [stmt.target.id] if stmt.value is not None else []
        else:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                count[stmt.name] += 2
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                count.update((a.asname or a.name).split(".")[0] for a in stmt.names)
            continue
        for name in names:
            count[name] += 1
            statements[name] = ast.dump(stmt)
    return {name: dumped for name, dumped in statements.items() if count[name] == 1}


def _functions(tree: ast.Module) -> dict[str, set[str]]:
    """Each module function and method of a top-level class, defined once: the names it reads."""
    found: dict[str, set[str]] = {}
    seen: Counter[str] = Counter()
    for name, node, _, _ in _defs(tree):
        seen[name] += 1
        found[name] = {n.id for n in _parsed.of(_parsed.nodes(node), ast.Name)
                       if isinstance(n.ctx, ast.Load)}
    return {name: reads for name, reads in found.items() if seen[name] == 1}


def value_bypassed(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    values = [_assigned(tree) for tree in trees]
    functions = [_functions(tree) for tree in trees]
    for one, two in ((1, 2), (2, 1)):
        for name, before in values[0].items():
            changed = values[one].get(name)
            if changed in (None, before) or values[two].get(name) != before:
                continue  # not changed by one side alone
            if values[3].get(name) != changed:
                continue
            for function, reads in functions[0].items():
                if name not in reads or name not in functions[one].get(function, {name}):
                    continue
                rewritten, result = functions[two].get(function), functions[3].get(function)
                if rewritten is None or result is None or name in rewritten or name in result:
                    continue
                return (f"one side changed the value of {name}, the other made {function} read "
                        f"it no more")
    return None


def _twin_values(tree: ast.Module) -> dict[str, str]:
    """Each name one module-level ``name = value`` binds alone, its value a display or a call
    (not a constant or a name): the value, dumped."""
    found: dict[str, str] = {}
    count: Counter[str] = Counter()
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and not isinstance(stmt.value, (ast.Constant, ast.Name))):
            found[stmt.targets[0].id] = ast.dump(stmt.value)
            count[stmt.targets[0].id] += 1
    return {name: value for name, value in found.items() if count[name] == 1}


def _bound_anywhere(tree: ast.Module) -> set[str]:
    found = _parsed.nodes(tree)
    names = {n.id for n in _parsed.of(found, ast.Name) if not isinstance(n.ctx, ast.Load)}
    names.update(n.name for n in _parsed.of(found, ast.FunctionDef))
    names.update(n.name for n in _parsed.of(found, ast.AsyncFunctionDef))
    names.update(n.name for n in _parsed.of(found, ast.ClassDef))
    names.update((a.asname or a.name).split(".")[0] for a in _parsed.of(found, ast.alias))
    return names


def twins_both_dropped(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    by_value: dict[str, list[str]] = {}
    for name, value in _twin_values(trees[0]).items():
        by_value.setdefault(value, []).append(name)
    twins = [names for names in by_value.values() if len(names) > 1]
    if not twins:
        return None
    ours, theirs, merged = (_bound_anywhere(tree) for tree in trees[1:])
    for names in twins:
        for a, b in itertools.permutations(names, 2):
            if (a not in ours and b in ours and b not in theirs and a in theirs
                    and a not in merged and b not in merged):
                return (f"{a} and {b} held one value; one side removed {a}, the other {b}, "
                        f"and the result keeps neither")
    return None
