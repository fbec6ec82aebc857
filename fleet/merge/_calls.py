"""A whole-result check: a call that passes a keyword argument the function it calls, defined in
the same file, no longer accepts, where an input's definition accepted it (sentry-python
``6e412d7f28c6``, ``sentry_sdk/integrations/openai.py``: ``manual_span_cleanup`` dropped from
``_capture_exception`` on one side, two calls passing ``manual_span_cleanup=False`` added on the
other; the merge raised ``TypeError`` at both). One side changed the signature, the other wrote
its calls for the old one: the file conflicts.

The functions looked at are those defined once at module level, called by their name, and the
methods defined once in a class, called as ``self.name(...)`` or ``cls.name(...)`` inside that
class. A definition with ``**kwargs`` accepts every keyword."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator

__all__ = ["keyword_dropped"]

# (class name or "" for the module, function name) -> its keyword parameters, None for **kwargs
Signatures = dict[tuple[str, str], frozenset[str] | None]


def _accepts(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str] | None:
    args = node.args
    if args.kwarg is not None:
        return None
    return frozenset(a.arg for a in (*args.args, *args.kwonlyargs))


def _defined_once(body: list[ast.stmt]) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions one body defines, each name bound by exactly one ``def`` and nothing else."""
    bound: Counter[str] = Counter()
    defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            defs[stmt.name] = stmt
            bound[stmt.name] += 1
        elif isinstance(stmt, ast.ClassDef):
            bound[stmt.name] += 1
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound[name.id] += 1
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                bound[(alias.asname or alias.name).split(".")[0]] += 1
    return {name: node for name, node in defs.items() if bound[name] == 1}


def _signatures(tree: ast.Module) -> Signatures:
    out: Signatures = {
        ("", name): _accepts(node) for name, node in _defined_once(tree.body).items()
    }
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            for name, node in _defined_once(stmt.body).items():
                out[(stmt.name, name)] = _accepts(node)
    return out


def _calls(tree: ast.Module) -> Iterator[tuple[tuple[str, str], ast.Call]]:
    """(the function a call names, the call) for calls by bare name anywhere and for
    ``self.name(...)``/``cls.name(...)`` inside a top-level class."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            yield ("", node.func.id), node
    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef):
            continue
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in {"self", "cls"}
            ):
                yield (stmt.name, node.func.attr), node


def keyword_dropped(trees: list[ast.Module]) -> str | None:
    """Why the result (``trees[3]``; ``trees[:3]`` are base, ours, theirs) calls a function with
    a keyword its definition in the result no longer accepts but an input's did, or None."""
    merged = _signatures(trees[3])
    earlier = [_signatures(tree) for tree in trees[:3]]
    for key, call in _calls(trees[3]):
        if key not in merged:
            continue
        accepted = merged[key]
        if accepted is None:
            continue
        for keyword in call.keywords:
            name = keyword.arg
            if name is None or name in accepted:
                continue
            if any(
                key in sigs and (sigs[key] is None or name in (sigs[key] or ())) for sigs in earlier
            ):
                return f"{key[1]}() is called with {name}=, which it no longer accepts"
    return None
