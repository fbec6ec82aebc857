"""Names read where nothing binds them: the part of the whole-result checks (``_checks``) that
follows names through scopes. A function of a clean result that reads a name nothing binds for
it (the function, an enclosing one, the module, the builtins) is a ``NameError`` the inputs did
not have when an input bound that name where it was read."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from fleet.merge import _parsed

__all__ = ["BLOCKS", "BUILTINS", "flat", "functions", "lost_local", "names"]

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
