"""Assignments whose order does not matter: what lets both sides' insertions at one point of a
block merge, and what the equivalence of two results ignores.

Two runs of statements are *independent* when every statement of each is a plain assignment
(``name = ...``, ``obj.attr = ...``, ``name: T = ...``) and neither run binds a name or
attribute the other binds or reads (``self.a`` counts as read by anything that reads ``self``),
no value awaits, yields or assigns inside itself, and no value calls something that consumes or
changes state by its name (``next(it)``, ``stack.pop()``, ``f.read()``, ``random()``, ...): one
such call on each side would draw in the order the merge picked. Seen in real history: synapse
``976b20e1d8f2`` (``self.msc3981_recurse_relations = experimental.get(...)`` appended to
``read_config`` by one side, ``self.msc3970_enabled = experimental.get(...)`` by the other; the
humans kept both, ours first here, theirs first in other merges of the same file) and
``6bdbec1dfe2a`` (a handler each, ``self._device_handler = hs.get_device_handler()``).
Anything else inserted by both sides at one point stays a conflict.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence

from fleet import pyast
from fleet.merge._parsed import dotted

__all__ = ["STATEFUL", "Facts", "facts", "independent", "independent_runs", "orderless"]

# Calls by these names may consume or change what another call reads: their order is meaning.
STATEFUL = frozenset({
    "next", "anext", "pop", "popleft", "popitem", "read", "readline", "readlines", "recv",
    "recv_into", "send", "sendall", "write", "writelines", "seek", "get_nowait", "put",
    "put_nowait", "append", "appendleft", "extend", "insert", "remove", "clear", "update",
    "setdefault", "add", "discard", "acquire", "release", "close", "open", "shuffle", "random",
    "randint", "randrange", "choice", "choices", "sample", "uniform", "getrandbits",
    "token_hex", "token_bytes", "urandom", "uuid1", "uuid4", "time", "monotonic",
    "perf_counter", "time_ns", "now", "utcnow", "today", "count", "increment", "incr", "decr",
    "spawn", "start", "run", "execute", "fetchone", "fetchall", "fetchmany", "commit",
    "rollback", "wait", "join", "sleep", "emit", "fire", "dispatch", "register", "connect",
})
_UNSURE = (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)

Facts = tuple[frozenset[str], frozenset[str]]  # (what a statement binds, what it reads)


def facts(stmt: ast.stmt) -> Facts | None:
    """What a plain assignment binds and reads (dotted names), None for any other statement or
    an assignment whose order could matter by itself (see the module docstring)."""
    if isinstance(stmt, ast.Assign):
        targets, value = stmt.targets, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets, value = [stmt.target], stmt.value
    else:
        return None
    binds: set[str] = set()
    for target in targets:
        name = dotted(target)
        if name is None:
            return None  # a subscript, a starred or unpacked target: left alone
        binds.add(name)
    if not orderless(value):
        return None
    read_in = [value, stmt.annotation] if isinstance(stmt, ast.AnnAssign) else [value]
    reads = {
        name
        for tree in read_in
        for node in ast.walk(tree)
        if isinstance(node, ast.Name | ast.Attribute) and (name := dotted(node)) is not None
    }
    return frozenset(binds), frozenset(reads)


def orderless(node: ast.AST) -> bool:
    """May ``node`` be evaluated before or after a neighbour (an argument's value, say)? No
    await, yield or assignment inside it, and no call by a stateful name."""
    return not any(
        isinstance(n, _UNSURE)
        or (isinstance(n, ast.Call) and pyast.call_name(n.func) in STATEFUL)
        for n in ast.walk(node)
    )


def _touch(names: frozenset[str], others: frozenset[str]) -> bool:
    return any(
        a == b or a.startswith(b + ".") or b.startswith(a + ".") for a in names for b in others
    )


def independent(a: Facts, b: Facts) -> bool:
    """May two plain assignments swap places? Neither binds what the other binds or reads."""
    return not (_touch(a[0], b[0]) or _touch(a[0], b[1]) or _touch(b[0], a[1]))


def _run_facts(texts: Sequence[str]) -> Facts | None:
    binds: set[str] = set()
    reads: set[str] = set()
    for text in texts:
        try:
            body = pyast.parse(textwrap.dedent(text)).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if len(body) != 1:
            return None
        found = facts(body[0])
        if found is None:
            return None
        binds |= found[0]
        reads |= found[1]
    return frozenset(binds), frozenset(reads)


def independent_runs(ours: Sequence[str], theirs: Sequence[str]) -> bool:
    """Two runs of statement texts (what each side inserted at one point) whose order does not
    matter: both non-empty, every statement a plain assignment, the runs independent."""
    if not ours or not theirs:
        return False
    facts_o, facts_t = _run_facts(ours), _run_facts(theirs)
    return facts_o is not None and facts_t is not None and independent(facts_o, facts_t)
