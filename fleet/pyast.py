"""``ast.parse`` safe to call from threads.

CPython 3.11 keeps the AST constructor's recursion depth in one per-interpreter state
(``PyAST_mod2obj``): two threads building AST objects at once — one switched out mid-way by a
GC finalizer or anything else that lets another thread run — fail with ``SystemError: AST
constructor recursion depth mismatch``. CI met it on 3 December 2026: a gate's ``ast.parse``
(``fleet.verify.spans``) while other units of the batch parsed in their own threads failed the
whole batch step. Every parse of the fleet goes through :func:`parse` (and :func:`literal_eval`),
one at a time per process; parsing holds the GIL anyway, so nothing runs slower. Re-entrant: a
finalizer that parses on the same thread does not deadlock.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

__all__ = ["LOCK", "call_name", "literal_eval", "parse"]

LOCK = threading.RLock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec",
          **kwargs: Any) -> Any:
    """``ast.parse(source, filename, mode, **kwargs)`` under :data:`LOCK`."""
    with LOCK:
        return ast.parse(source, filename, mode, **kwargs)


def literal_eval(node_or_string: Any) -> Any:
    """``ast.literal_eval`` (which parses a string) under :data:`LOCK`."""
    with LOCK:
        return ast.literal_eval(node_or_string)


def call_name(func: ast.AST) -> str:
    """The last name of a call's function: ``f`` for ``f(...)`` and ``m.f(...)``, else ``""``."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""
