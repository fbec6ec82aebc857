"""Names read where nothing binds them: the part of the whole-result checks (``_checks``) that
follows names through scopes. A function of a clean result that reads a name nothing binds for
it (the function, an enclosing one, the module, the builtins) is a ``NameError`` the inputs did
not have when an input bound that name where it was read."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from fleet.merge import _parsed

__all__ = ["BLOCKS", "BUILTINS", "flat", "functions", "lost_local", "module_lost", "names"]

BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__"}
BLOCKS = (ast.If, ast.Try, ast.With)  # the blocks whose statements count as their scope's


def flat(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """A scope's statements, those inside its ``if``/``try``/``with`` blocks included (one
    ``Callable`` imported twice inside ``if TYPE_CHECKING:``: sphinx ``02e781313470``)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, BLOCKS):
            for field in ("body", "orelse", "finalbody"):
                yield from flat(getattr(stmt, field, []))
            for handler in getattr(stmt, "handlers", []):
                yield from flat(handler.body)


def names(tree: ast.AST) -> tuple[set[str], set[str], bool]:
    """(names read, names bound anywhere, whether a star import or a dynamic scope is used)."""
    found = _parsed.nodes(tree)
    read: set[str] = set()
    bound: set[str] = set()
    for name in _parsed.of(found, ast.Name):
        (read if isinstance(name.ctx, ast.Load) else bound).add(name.id)
    aliases = _parsed.of(found, ast.alias)
    dynamic = any(alias.name == "*" for alias in aliases)
    bound.update(alias.asname or alias.name.split(".")[0] for alias in aliases)
    bound.update(node.name for node in _parsed.of(found, ast.FunctionDef))
    bound.update(node.name for node in _parsed.of(found, ast.AsyncFunctionDef))
    bound.update(node.name for node in _parsed.of(found, ast.ClassDef))
    bound.update(arg.arg for arg in _parsed.of(found, ast.arg))
    bound.update(h.name for h in _parsed.of(found, ast.ExceptHandler) if h.name)
    for node in _parsed.of(found, ast.Global):
        bound.update(node.names)
    for nonlocal_ in _parsed.of(found, ast.Nonlocal):
        bound.update(nonlocal_.names)
    bound.update(node.name for node in _parsed.of(found, ast.MatchAs) if node.name)
    bound.update(star.name for star in _parsed.of(found, ast.MatchStar) if star.name)
    bound.update(node.rest for node in _parsed.of(found, ast.MatchMapping) if node.rest)
    return read, bound, dynamic


def functions(
    body: list[ast.stmt], prefix: str = "", outer: frozenset[str] = frozenset()
) -> Iterator[tuple[str, set[str], set[str]]]:
    """(qualified name, names it reads, names bound in it or visible to it from an enclosing
    function) for every function."""
    for stmt in flat(body):
        if isinstance(stmt, ast.ClassDef):
            yield from functions(stmt.body, f"{prefix}{stmt.name}.", outer)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            read, bound, _ = names(stmt)
            yield f"{prefix}{stmt.name}", read, bound | outer
            yield from functions(stmt.body, f"{prefix}{stmt.name}().", outer | bound)


def _modulenames(tree: ast.Module) -> set[str]:
    """Every name the module's own statements bind (its definitions by name only)."""
    module: set[str] = set()
    for stmt in flat(tree.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            module.add(stmt.name)
        else:
            module |= names(stmt)[1]
    return module


def lost_local(trees: list[ast.Module]) -> str | None:
    """A name a function of the result reads that nothing binds for it (not the function, an
    enclosing one, the module nor the builtins) while that function bound it in an input: one
    side removed a parameter, the other added a statement that reads it (aiohttp
    ``6f7667336b92``: ``shutdown_timeout`` dropped from ``BaseSite.__init__``, a deprecation
    warning reading it added). Or while every input bound it wherever it was read: one side
    moved a module-level binding into the one function that read it, the other added functions
    reading it at module level (distributed ``57e8d3f1d1e8``: ``pa = importorskip(...)``)."""
    earlier: dict[str, set[str]] = {}
    bound_before: set[str] = set()  # every name an input binds, anywhere
    unbound_before: set[str] = set()  # names a function of an input reads unbound
    for tree in trees[:3]:
        module = _modulenames(tree)
        bound_before |= module
        for name, read, bound in functions(tree.body):
            earlier.setdefault(name, set()).update(bound)
            bound_before |= bound
            unbound_before |= read - bound - module - BUILTINS
    module = _modulenames(trees[3])
    for name, read, bound in functions(trees[3].body):
        unbound = read - bound - module - BUILTINS
        lost = sorted(unbound & earlier.get(name, set()))
        if lost:
            return f"{lost[0]} is used in {name} but no longer bound there"
        created = sorted((unbound & bound_before) - unbound_before)
        if created:
            return f"{created[0]} is read in {name} where nothing binds it any more"
    return None


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_RUN_LATER = (*_DEFS, ast.Lambda)


def _module_scope(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names read, names bound) by what runs when the module is imported: its statements and
    class bodies, a definition's decorators, defaults and (unless ``from __future__ import
    annotations``) annotations; not what runs when a function is called."""
    lazy = any(
        isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        and any(alias.name == "annotations" for alias in stmt.names)
        for stmt in tree.body
    )
    read: set[str] = set()
    bound: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, _RUN_LATER):
            args = node.args
            todo += [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
            if isinstance(node, _DEFS):
                bound.add(node.name)
                todo += node.decorator_list
                if not lazy:
                    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                    every += [a for a in (args.vararg, args.kwarg) if a is not None]
                    todo += [a.annotation for a in every if a.annotation is not None]
                    todo += [node.returns] if node.returns is not None else []
            continue
        if isinstance(node, ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.AnnAssign) and lazy:
            todo += [node.target] + ([node.value] if node.value is not None else [])
            continue
        elif isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        todo += ast.iter_child_nodes(node)
    return read, bound


def module_lost(trees: list[ast.Module]) -> str | None:
    """A name read when the result is imported (at module level, in a class body, a decorator,
    a default or an evaluated annotation) that nothing there binds any more, while an input
    bound it and no input read it so unbound: certbot ``0f7c6357850a`` (the twentieth unseen
    set), ``import distutils.version`` moved into the one function that used it by theirs, a
    return annotation ``-> distutils.version.StrictVersion`` added by ours: ``NameError`` on
    import. A module with a star import is not judged."""
    if names(trees[3])[2]:
        return None
    bound_before: set[str] = set()
    unbound_before: set[str] = set()
    for tree in trees[:3]:
        bound_before |= names(tree)[1]
        read, bound = _module_scope(tree)
        unbound_before |= read - bound - BUILTINS
    read, bound = _module_scope(trees[3])
    lost = sorted((read - bound - BUILTINS) & bound_before - unbound_before)
    if lost:
        return f"{lost[0]} is read when the module is imported but nothing binds it there"
    return None
