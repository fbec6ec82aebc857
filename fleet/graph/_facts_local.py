"""Type facts about a function's locals, read after either extractor ran (``_facts``): loop
variables typed by the items of what they iterate, ``x = cast("C", v)``, and aliases of typed
locals. Each starts from a reference tree-sitter recognised, so a string's text never becomes a
fact."""

from __future__ import annotations

import re
from sys import intern

from fleet.graph._model import FileData
from fleet.graph._refs import KIND_CODE, RawRefs

__all__ = ["casts", "follow_aliases", "loop_items"]

_CALL, _ATTRIBUTE = KIND_CODE["call"], KIND_CODE["attribute"]
_ITERABLE = frozenset({_CALL, _ATTRIBUTE, KIND_CODE["name"]})
# `for x in ` (a statement or a comprehension's clause) up to its iterable; after the
# iterable: a call's arguments (nested two deep), then what may follow an iterable
_FOR = re.compile(rb"for[ \t]+([A-Za-z_]\w*)[ \t]+in[ \t]+")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# `x = cast(C, v)`: the target before the call, the first argument after it
_CAST = frozenset({"typing.cast", "typing_extensions.cast"})
_TYPING = frozenset({"typing", "typing_extensions"})
_TARGET = re.compile(rb"[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*")
_CAST_TYPE = re.compile(
    rb"[ \t]*\(\s*(?:(?P<q>['\"])(?P<quoted>[^'\"\n]+)(?P=q)|(?P<name>[A-Za-z_][\w.]*))\s*,")
_ARGS = re.compile(rb"[ \t]*\((?:[^()]++|\((?:[^()]++|\([^()]*+\))*+\))*+\)")
_AFTER = re.compile(rb"[ \t]*(?::|[\])}]|(?:if|for|async)\b)")


def follow_aliases(local_types: dict[str, dict[str, str]]) -> None:
    """A local bound to another typed local or parameter of its function (``tr =
    terminalreporter``, ``g = a``) gets that one's type expression, which means the same in
    the same scope; through a few such links, never to itself."""
    for typed in local_types.values():
        if len(typed) < 2:
            continue
        for name, expr in list(typed.items()):
            seen = {name}
            while expr in typed and expr not in seen and len(seen) < 8:
                seen.add(expr)
                expr = typed[expr]
            if expr not in seen and expr != typed[name]:
                typed[name] = expr


def loop_items(fd: FileData, src: bytes, refs: RawRefs) -> None:
    """``for x in EXPR`` (a statement or a comprehension's clause) in a function, EXPR a
    name, a dotted chain or a call of one (``self.get_params(ctx)``): the local ``x`` typed
    ``EXPR[]``, the items of EXPR's value, when every loop that binds ``x`` there iterates the
    same EXPR and nothing else typed ``x`` first. Found from a reference tree-sitter recognised
    right after ``for x in `` (a string's text is no reference) and what may follow an
    iterable after it (``:``, a closing bracket, ``if``, ``for``)."""
    if b"for" not in src:
        return
    heads = {loop.end(): loop.group(1) for loop in _FOR.finditer(src)
             if not loop.start() or src[loop.start() - 1] not in _WORD}  # no `\b`: 14x slower
    if not heads:
        return
    starts, ends, kinds, names, scopes = refs.starts, refs.ends, refs.kinds, refs.names, refs.scopes
    first: dict[int, int] = {}  # where an iterable starts -> the longest reference there
    for i, at in enumerate(starts):
        if at in heads and kinds[i] in _ITERABLE:
            j = first.get(at)
            if j is None or ends[i] > ends[j]:  # a chain, not its head
                first[at] = i
    loops: dict[tuple[str, str], set[str]] = {}
    for at, best in first.items():
        called = kinds[best] == _CALL
        end = ends[best]
        if called:
            args = _ARGS.match(src, end)
            end = args.end() if args is not None else -1
        if end < 0 or _AFTER.match(src, end) is None:
            continue
        scope, local = scopes[best], heads[at].decode("ascii")
        if local in fd.params.get(scope, ()):
            loops.setdefault((scope, local), set()).add(names[best] + ("()[]" if called else "[]"))
    for (scope, local), exprs in loops.items():
        if len(exprs) == 1:
            fd.local_types.setdefault(scope, {}).setdefault(intern(local), intern(exprs.pop()))


def casts(fd: FileData, src: bytes, refs: RawRefs) -> None:
    """``x = cast("C", value)`` in a function (``typing.cast``, imported as ``cast`` or called
    on the module ``typing`` / ``typing_extensions`` under any name): the local ``x`` typed by
    the cast's first argument instead of the call's result (what a type checker takes). Only
    where ``x`` is typed by this call (its only binding the extractors typed); the cast read
    from the source after the call reference tree-sitter recognised."""
    if b"cast" not in src:
        return
    from fleet.graph._facts import annotation_name  # (it imports this module)

    imports = fd.imports
    names, kinds, starts, ends, scopes = refs.names, refs.kinds, refs.starts, refs.ends, refs.scopes
    for i, name in enumerate(names):
        if kinds[i] != _CALL or not name.endswith("cast"):
            continue
        head, _, attr = name.rpartition(".")
        if not (imports.get(name) in _CAST if not head else
                attr == "cast" and imports.get(head) in _TYPING):
            continue
        typed = fd.local_types.get(scopes[i])
        line = src.rfind(b"\n", 0, starts[i]) + 1
        target = _TARGET.match(src, line, starts[i])
        if typed is None or target is None or target.end() != starts[i]:
            continue
        local = target.group(1).decode("ascii")
        first = _CAST_TYPE.match(src, ends[i])
        if first is None or typed.get(local) != name:  # (a call is typed by its callee)
            continue
        text = (first.group("quoted") or first.group("name")).decode("utf-8", "replace")
        cls = annotation_name(text)
        if cls is not None:
            typed[local] = intern(cls)
