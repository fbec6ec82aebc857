"""Type facts of a Python file, read after either extractor ran (so both paths share them).

Everything here starts from what tree-sitter already recognised (a symbol's spans, a raw
reference's bytes) and reads a few bytes of source around it, so text in strings and comments
never becomes a fact:

- ``attr_types``: class id -> attribute -> the value expressions assigned to ``self.attr`` in
  the class's methods (``self.x = Cls(...)``, ``self.x: Cls = ...``, ``self.x = param``), each
  as (method id, dotted expression); where the class annotates the attribute (``self.x: Cls``),
  only its annotations (as a type checker declares the attribute's type there: ``self.config:
  Config = config`` in one branch and ``self.config = parent.config`` in the other types it);
- ``returns``: function id -> its return annotation as a dotted name (``-> Cls``,
  ``-> "Cls"``, ``-> Cls | None``, ``-> Optional[Cls]``); ``properties``: the methods
  decorated ``@property`` / ``@cached_property``;
- ``exports``: the names of a literal module-level ``__all__`` (None when there is none or it
  is not a literal list/tuple of strings);
- in ``local_types``, besides the extractors' facts: container annotations as ``[]C`` (an
  iterable of C: ``container_name``), a loop variable as ``EXPR[]`` (the items of what it
  iterates), ``x = cast("C", v)`` as ``C``, and an alias of a typed local as that local's type
  expression (``_facts_local``);
- extra references for calls on a call's result: ``super().m``, ``super(C, self).m``,
  ``f().m``, ``a.b(x).m`` (the name keeps the ``()``: ``a.b().m``), and for each further call
  of a chain (``f(x).m(y).n``: ``f().m().n``; one call a line inside brackets too).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from sys import intern

from fleet import pyast
from fleet.graph._extract_native import native_module
from fleet.graph._facts_local import casts, follow_aliases, loop_items
from fleet.graph._model import MODULE, FileData, RawRef
from fleet.graph._refs import KIND_CODE, RawRefs

__all__ = ["add_facts", "annotation_name"]

_CALL, _ATTRIBUTE = KIND_CODE["call"], KIND_CODE["attribute"]

_ANNOTATION = re.compile(
    rb"\)\s*->\s*(?P<ann>[^:]+?)\s*:\s*\Z", re.S)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")
_PROPERTY = re.compile(rb"@\s*(?:functools\s*\.\s*)?(?:cached_)?property\s*$", re.M)
# after `self.x`: an annotation and/or `= value` (a dotted name, called or not)
_ASSIGN = re.compile(
    rb"[ \t]*(?::[ \t]*(?P<ann>[A-Za-z_][\w.]*)[ \t]*)?(?:=(?!=)[ \t]*"
    rb"(?P<value>[A-Za-z_][\w.]*)[ \t]*(?P<call>\()?)?")
# after a called name: its argument list (one level of nested parentheses), then `.a.b`
# (a `.name` may start on another line: inside brackets, where a chain is written one call a
# line; outside them no statement can start with `.name`)
_CALL_TAIL = re.compile(
    rb"[ \t]*\(((?:[^()]++|\((?:[^()]++|\([^()]*+\))*+\))*+)\)"
    rb"((?:\s*\.\s*[A-Za-z_]\w*)+)([ \t]*\()?")
_WS = re.compile(rb"\s+")
_CHAIN_CALLS = 8  # calls on a call's result followed in one chain, after the first
# a parameter annotated with what the extractors do not type: `x: Optional[C]`, `x: "C"`,
# `x: C | None`, `x: C[T]`, `x: "C[T]"` (they record plain `x: C` and `x: a.C` themselves)
_PARAM = re.compile(
    rb"[(,]\s*(?:\*\s*)?(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<ann>(?:typing\.)?Optional\[\s*[\w.]+\s*\]"
    rb"|'[\w.]+'|\"[\w.]+\"|[\w.]+\s*\|\s*None|None\s*\|\s*[\w.]+"
    # a subscripted generic (brackets nested two deep), quoted or not, maybe `| None`
    rb"|(?P<q>['\"]?)[\w.]+\[(?:[^\[\]'\"]|\[(?:[^\[\]'\"]|\[[^\[\]'\"]*\])*\])*\](?P=q)"
    rb"(?:\s*\|\s*None)?)\s*(?=[,)=])")


# a module or class variable annotated with what the extractors do not type (they record plain
# `x: C` and `x = C()` themselves): `x: Optional[C] = None`, `x: C[T]`, `x: "C"`, `x: C | None`
_VARIABLE = re.compile(
    rb"(?P<name>[A-Za-z_]\w*)[ \t]*:[ \t]*(?P<ann>[^=\n#]+?)[ \t]*(?:=(?!=)|#|\r?\n|\Z)")

# generics whose subscript is what a value holds, not what it is: a `list[Cls]` is no Cls
_CONTAINERS = frozenset({
    "list", "dict", "set", "frozenset", "tuple", "type", "List", "Dict", "Set", "FrozenSet",
    "Tuple", "Type", "DefaultDict", "OrderedDict", "Counter", "ChainMap", "Deque", "deque",
    "Iterable", "Iterator", "Generator", "AsyncIterable", "AsyncIterator", "AsyncGenerator",
    "Sequence", "MutableSequence", "Mapping", "MutableMapping", "AbstractSet", "MutableSet",
    "Collection", "Container", "KeysView", "ValuesView", "ItemsView", "Callable", "Awaitable",
    "Coroutine", "Literal", "TypeGuard", "TypeIs", "Unpack", "Required", "NotRequired",
    "ReadOnly", "Concatenate",
})
# wrappers whose one argument is the value's type
_WRAPPERS = frozenset({"Optional", "Final", "ClassVar", "Annotated"})
# the iterables whose (first) subscript is what iterating them gives (``container_name``)
_ITEMS = frozenset({
    "list", "List", "set", "Set", "frozenset", "FrozenSet", "Sequence", "MutableSequence",
    "Iterable", "Iterator", "AbstractSet", "MutableSet", "Collection", "Deque", "deque",
    "KeysView", "AsyncIterable", "AsyncIterator", "Generator", "AsyncGenerator", "tuple",
    "Tuple",
})


def annotation_name(text: str) -> str | None:
    """The class an annotation names, as a dotted name, or None (a union of two classes,
    a container of something, anything not a plain name). A subscripted generic names its
    origin (``Select[Any]``, ``"Result[_T]"``); ``Optional[C]``, ``Union[C, None]``,
    ``C | None``, ``Final[C]``, ``ClassVar[C]`` and ``Annotated[C, ...]`` name ``C``."""
    parsed = _parsed(text)
    if parsed is None:
        return None
    name, origin, _ = parsed
    if not origin:
        return name
    return None if origin.rpartition(".")[2] in _CONTAINERS else origin


def container_name(text: str) -> str | None:
    """``[]C`` for an annotation of an iterable whose items are of the class C (``list[C]``,
    ``Sequence["C"]``, ``Iterator[C]``, ``tuple[C, ...]``, ``Optional[List[C]]``), else None
    (a mapping, a tuple of different items, items that are no plain class)."""
    parsed = _parsed(text)
    if parsed is None or not parsed[1]:
        return None
    _, origin, args = parsed
    bare = origin.rpartition(".")[2]
    if bare not in _ITEMS or (bare in ("tuple", "Tuple") and args[1:] != ["..."]) or (
            len(args) != 1 and bare not in ("tuple", "Tuple", "Generator", "AsyncGenerator")):
        return None
    item = annotation_name(args[0])
    return None if item is None else "[]" + item


def _parsed(text: str) -> tuple[str, str, list[str]] | None:
    """An annotation without its quotes, ``| None`` and wrappers (``Optional``, ``Final``,
    ``ClassVar``, ``Annotated``, ``Union[C, None]``): (text, its subscripted origin, the
    subscript's arguments), the origin "" for a plain dotted name; None for anything else (a
    union of two types, brackets that do not close, an origin that is no dotted name)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    parts = [p for p in _top_level(text, "|") if p != "None"]
    if len(parts) != 1:
        return None
    text = parts[0]
    bracket = text.find("[")
    if bracket < 0:
        return (text, "", []) if _DOTTED.match(text) else None
    origin = text[:bracket].rstrip()
    if not text.endswith("]") or not _DOTTED.match(origin):
        return None
    args = _top_level(text[bracket + 1 : -1], ",")
    bare = origin.rpartition(".")[2]
    if bare in _WRAPPERS:
        return _parsed(args[0]) if bare == "Annotated" or len(args) == 1 else None
    if bare == "Union":
        named = [a for a in args if a != "None"]
        return _parsed(named[0]) if len(named) == 1 else None
    return text, origin, args


def _top_level(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` outside brackets and parentheses, parts stripped."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def add_facts(fd: FileData, src: bytes) -> None:
    """Fill ``fd``'s type facts and call-chain references (Python files only)."""
    if fd.record.language != "python" or not fd.symbols:
        return
    symbols = {s.id: s for s in fd.symbols}
    returns: dict[str, str] = {}
    properties: set[str] = set()
    native = native_module()
    # in C, the symbols this loop can find anything on (a filter: the loop keeps its tests)
    candidates = (map(fd.symbols.__getitem__, native.fact_candidates(src, fd.symbols))
                  if native is not None and type(fd.symbols) is list else fd.symbols)
    for sym in candidates:
        if sym.kind in ("function", "method"):
            sig = src[sym.sig_start_byte : sym.sig_end_byte]
            # each pattern needs a literal the cheap tests look for first: `->`; a `|`, a
            # quote or `[` (_PARAM's annotations); `property`
            found = _ANNOTATION.search(sig) if b"->" in sig else None
            if found is not None:
                returned = _WS.sub(b" ", found.group("ann")).decode("utf-8", "replace")
                name = annotation_name(returned) or container_name(returned)
                if name is not None:
                    returns[sym.id] = name
            if b"|" in sig or b"[" in sig or b"'" in sig or b'"' in sig:
                for param in _PARAM.finditer(sig):
                    text = param.group("ann").decode("utf-8", "replace")
                    typed = annotation_name(text) or container_name(text)
                    local = param.group("name").decode("ascii")
                    if typed is not None and local in fd.params.get(sym.id, ()):
                        # interned as the C walk's locals and type expressions are
                        fd.local_types.setdefault(sym.id, {}).setdefault(intern(local),
                                                                         intern(typed))
            if (sym.kind == "method" and sym.start_byte < sym.sig_start_byte
                    and src.find(b"property", sym.start_byte, sym.sig_start_byte) >= 0
                    and _PROPERTY.search(src, sym.start_byte, sym.sig_start_byte)):
                properties.add(sym.id)
        elif sym.kind == "variable":
            if sym.name == "__all__" and sym.parent == f"{sym.path}::{MODULE}":
                fd.exports = _literal_names(src[sym.start_byte : sym.end_byte])
            elif sym.id not in fd.local_types:  # what the extractors do not type (_VARIABLE)
                found = _VARIABLE.match(src, sym.start_byte, sym.end_byte)
                ann = found.group("ann") if found is not None else b""
                if found is not None and found.group("name").decode("ascii") == sym.name and (
                        b"[" in ann or b"|" in ann or b"'" in ann or b'"' in ann):
                    text = ann.decode("utf-8", "replace")
                    typed = annotation_name(text) or container_name(text)
                    if typed is not None:
                        fd.local_types[sym.id] = {sym.name: intern(typed)}
    fd.returns = returns
    fd.properties = frozenset(properties)

    attr_types: dict[str, dict[str, list[tuple[str, str]]]] = {}
    declared: set[tuple[str, str]] = set()  # (class, attribute) with an annotated assignment
    extra: list[RawRef] = []
    refs = RawRefs.of(fd.refs)
    names, scopes, kinds, ends = refs.names, refs.scopes, refs.kinds, refs.ends
    for i in _self_attributes(names, kinds):
        method = symbols.get(scopes[i])
        if method is not None and method.kind == "method" and method.parent is not None:
            found = _ASSIGN.match(src, ends[i])
            value = found and (found.group("ann") or found.group("value"))
            if found is not None and found.group("ann") is not None and (
                    src[found.end("ann") : found.end("ann") + 1] == b"["):
                # the class it names; else the origin's name, a fact that types nothing
                value = _subscripted(src, found.start("ann"), found.end("ann")) or value
            if found is not None and value is not None and value != b"None":
                expr = value.decode("ascii") + ("()" if found.group("call") else "")
                attr = names[i][5:]
                facts = attr_types.setdefault(method.parent, {}).setdefault(attr, [])
                if found.group("ann") is not None:  # a declaration: its type is the attribute's
                    if (method.parent, attr) not in declared:
                        declared.add((method.parent, attr))
                        facts.clear()  # what was assigned before without one no longer counts
                    facts.append((scopes[i], expr))
                elif (method.parent, attr) not in declared:
                    facts.append((scopes[i], expr))
    loop_items(fd, src, refs)
    casts(fd, src, refs)
    follow_aliases(fd.local_types)
    for i, args, rest, called, end in _call_tails(refs, src):
        callee = names[i]
        if callee == "super" and args.strip():  # super(Cls, self): after Cls
            first = args.split(b",", 1)[0].strip().decode("ascii", "replace")
            if not _DOTTED.match(first):
                continue
            callee = f"super({first})"
        name = f"{callee}(){rest}"
        extra.append(RawRef(scopes[i], name, "call" if called else
                            "attribute", refs.lines[i], refs.cols[i], refs.starts[i], end))
        for _ in range(_CHAIN_CALLS):  # `select(t).where(c).limit(1)`: each call on a result
            tail = _CALL_TAIL.match(src, end) if called else None
            if tail is None:
                break
            name = f"{name}(){_WS.sub(b'', tail.group(2)).decode('ascii')}"
            called, end = tail.group(3) is not None, tail.end(2)
            extra.append(RawRef(scopes[i], name, "call" if called else "attribute",
                                refs.lines[i], refs.cols[i], refs.starts[i], end))
    fd.attr_types = {cls: {a: tuple(v) for a, v in attrs.items()}
                     for cls, attrs in attr_types.items()}
    fd.refs = refs.extended(extra)


def _subscripted(src: bytes, start: int, bracket: int) -> bytes | None:
    """``self.x: Optional[C] = ...``: the class the subscripted annotation at ``start``
    names (``annotation_name``), its ``[`` at ``bracket``; None when it names none or its
    brackets do not close on that line."""
    depth = 0
    for end in range(bracket, min(len(src), bracket + 400)):
        ch = src[end]
        if ch == 0x5B:  # [
            depth += 1
        elif ch == 0x5D:  # ]
            depth -= 1
            if depth == 0:
                text = src[start : end + 1].decode("ascii", "replace")
                name = annotation_name(text) or container_name(text)
                return name.encode("ascii") if name is not None else None
        elif ch == 0x0A:
            return None
    return None


def _self_attributes(names: tuple[str, ...], kinds: bytes) -> list[int]:
    """The indexes of the attribute references ``self.x`` (``self.`` and no other dot), in
    order. In C (``self_attributes``, facts.c) when the extension is built."""
    in_c = getattr(native_module(), "self_attributes", None)
    if in_c is not None and type(names) is tuple and type(kinds) is bytes:
        return in_c(names, kinds, _ATTRIBUTE)
    out = []
    i = kinds.find(_ATTRIBUTE)
    while i >= 0:  # over the columns: no RawRef built per reference
        name = names[i]
        if name.startswith("self.") and name.count(".") == 1:
            out.append(i)
        i = kinds.find(_ATTRIBUTE, i + 1)
    return out


def _call_tails(refs: RawRefs, src: bytes) -> Iterator[tuple[int, bytes, str, bool, int]]:
    """For each call followed by ``(args).name...`` (``_CALL_TAIL``): its index, the argument
    list's bytes, the ``.name`` part without blanks, whether it is called, where it ends. In C
    (``_c/facts.c``) when the extension is built: the same matches."""
    native = native_module()
    if native is not None:
        for i, a0, a1, rest, called, end in native.call_tails(src, refs.kinds, refs.ends,
                                                              _CALL):
            yield i, src[a0:a1], rest, called, end
        return
    ends, kinds = refs.ends, refs.kinds
    i = kinds.find(_CALL)
    while i >= 0:
        tail = _CALL_TAIL.match(src, ends[i])
        if tail is not None:
            yield (i, tail.group(1), _WS.sub(b"", tail.group(2)).decode("ascii"),
                   tail.group(3) is not None, tail.end(2))
        i = kinds.find(_CALL, i + 1)


def _literal_names(statement: bytes) -> tuple[str, ...] | None:
    """The strings of ``__all__ = [...]`` (or a tuple), or None when it is anything else."""
    try:
        tree = pyast.parse(statement.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
    if not isinstance(value, ast.List | ast.Tuple):
        return None
    names = []
    for elt in value.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        names.append(elt.value)
    return tuple(names)
