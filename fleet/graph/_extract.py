"""Per-file extraction: one tree-sitter parse and one ``QueryCursor.matches`` pass per file.

``extract`` turns a file's bytes into a ``FileData``: symbols (with qualified names from an
iterative stack sweep over definition spans: no recursion, so deep nesting cannot overflow),
raw references with their innermost enclosing symbol, the import table and local bindings.
Resolution across files happens later, in ``_resolve``.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata

import tree_sitter as ts

from fleet.graph._extract_native import available as native_available
from fleet.graph._extract_native import extract_python
from fleet.graph._facts import add_facts
from fleet.graph._imports import READERS
from fleet.graph._lang import DEF, IMPORT, LOCAL, REF, LanguageSpec, compiled
from fleet.graph._model import MODULE, FileData, FileRecord, RawRef, Symbol
from fleet.graph._refs import RawRefs
from fleet.graph._shared import count_lines, pytest_file, scope_at

__all__ = ["extract", "extract_query"]

_CHAIN = re.compile(rb"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
_WS = re.compile(rb"\s+")
_TAIL = re.compile(rb"(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*")
_CALL = re.compile(rb"[ \t]*\(")
# `name.attr` (a captured attribute), then its `.attr` tail, then `(` when it is called: one
# match instead of three for the most common reference.
_ATTR = re.compile(rb"[A-Za-z_]\w*\s*\.\s*[A-Za-z_]\w*((?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*)([ \t]*\()?")
_CHAIN_NODES = frozenset(
    {"identifier", "attribute", "member_expression", "selector_expression", "type_identifier",
     "nested_type_identifier", "scoped_type_identifier"}
)
_QUERY_LOCK = threading.Lock()
_new = tuple.__new__  # builds a named tuple without the Python-level __new__ (hot loops)


def _hash(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _bases(node: ts.Node) -> list[ts.Node]:
    """A class's bases that name something: each a name or a dotted name, or the origin of
    a subscripted generic (``Base[T]`` inherits ``Base``)."""
    if node.type in _CHAIN_NODES:
        return [node]
    out = []
    for c in node.named_children:
        if c.type == "subscript":
            c = c.child_by_field_name("value") or c
        if c.type in _CHAIN_NODES:
            out.append(c)
    return out


def extract(path: str, src: bytes, spec: LanguageSpec, module: str | None,
            record: FileRecord) -> FileData:
    """Parse ``src`` and extract everything the resolver needs. Never raises on bad syntax:
    tree-sitter recovers, and the caller marks such a file ``partial``. Python files take the
    C walk when the extension is built (same result, see ``_extract_native``)."""
    if spec.name == "python" and native_available():
        fd = extract_python(path, src, module, record)
    else:
        with _QUERY_LOCK:  # one parser and query cursor per grammar, shared by the threads
            fd = extract_query(path, src, spec, module, record)
    fd.refs = RawRefs.of(fd.refs)  # columns: a fifth of the tuples' memory (the C walk's)
    add_facts(fd, src)
    # a sorted tuple of a function's locals is a quarter of a frozenset's memory (Django's
    # 43.8k: 10 -> 2 MB); they are few, so membership stays cheap. Equal tuples are one
    # object while an index extracts (``_LOCALS``: the stdlib's 71k are 29k distinct)
    share = _LOCALS.setdefault
    locals_ = list(fd.params.values())  # sorted tuples, as both extractors make them
    fd.params = dict(zip(fd.params, map(share, locals_, locals_), strict=True))
    return fd


_LOCALS: dict[tuple[str, ...], tuple[str, ...]] = {}
"""The functions' locals tuples made since ``forget_shared_locals``: one object per distinct
tuple. ``index`` empties it after extracting (what it holds then is held by the files' data)."""


def forget_shared_locals() -> None:
    _LOCALS.clear()


def extract_query(path: str, src: bytes, spec: LanguageSpec, module: str | None,
                  record: FileRecord) -> FileData:
    """``extract`` through the language's query file: every language, and the specification
    the C walk for Python is tested against."""
    comp = compiled(spec.grammar)
    root = comp.parser.parse(src).root_node
    language = spec.name
    module_id = f"{path}::{MODULE}"
    package = ""
    if module:
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    reader = READERS[language]
    plan = comp.plan

    # (whole start, whole end, kind, name, node, body, first row, receiver)
    defs: list[tuple[int, int, str, str, ts.Node, ts.Node, int, str | None]] = []
    # (start, -end, priority, sequence, kind, node): sorted, this is position order with the
    # outer node first and, for one node captured twice, the stronger kind first. Locals have
    # priority 9, a local's type 10 (right after its local).
    items: list[tuple[int, int, int, int, str, ts.Node]] = []
    local_types: dict[str, dict[str, str]] = {}
    imports: dict[str, str] = {}
    bindings: list[tuple[int, str, str]] = []  # (byte, local name, target) of named imports
    stars: list[str] = []
    import_refs: list[tuple[str, ts.Node]] = []
    append = items.append

    for seq, (pattern, caps) in enumerate(ts.QueryCursor(comp.query).matches(root)):
        code, cap, kind, prio = plan[pattern]
        if code == REF:
            node = caps[cap][0]
            append((node.start_byte, -node.end_byte, prio, seq, kind, node))
        elif code == LOCAL:
            node = caps[cap][0]
            start, neg_end = node.start_byte, -node.end_byte
            append((start, neg_end, 9, seq, "", node))
            typed = caps.get("local.type")
            if typed is not None:
                append((start, neg_end, 10, seq, "type", typed[0]))
        elif code == DEF:
            node = caps[cap][0]
            name_node = caps["name"][0]
            holder = name_node.parent
            if holder is not None and holder.type == "tuple_pattern" and (
                    any(c.type == "," for c in holder.children)
                    or sum(c.type != "comment" for c in holder.named_children) != 1):
                continue  # `(name,) = ...` and `(a, b) = ...` unpack a tuple
            name = (name_node.text or b"").decode("utf-8", "replace")
            if language == "python" and not name.isascii():  # NFKC, as Python (`µ` is `μ`)
                name = unicodedata.normalize("NFKC", name)
            body_cap = caps.get("body")
            receiver_cap = caps.get("receiver")
            whole = node
            parent = node.parent
            if parent is not None and parent.type == "decorated_definition":
                whole = parent
            defs.append((whole.start_byte, whole.end_byte, kind, name, node,
                         body_cap[0] if body_cap else node, whole.start_point[0] + 1,
                         (receiver_cap[0].text or b"").decode() if receiver_cap else None))
            for bases in caps.get("bases", ()):
                for base in _bases(bases):
                    append((base.start_byte, -base.end_byte, 0, seq, "inherit", base))
        elif code == IMPORT:
            for local, target, node in reader(caps[cap][0], path, package):
                if local is None:
                    if target.endswith(".*"):
                        stars.append(target[:-2])
                    import_refs.append((target.removesuffix(".*"), node))
                else:
                    bindings.append((node.start_byte, local, target))
                    import_refs.append((target, node))

    # Symbols: sort by span, then one stack sweep gives parents and qualified names.
    defs.sort(key=lambda d: (d[0], -d[1]))
    view = memoryview(src)
    symbols: list[Symbol] = [
        Symbol(module_id, path, MODULE, module or path, "module", language, 0, len(src), 1,
               max(1, count_lines(src)), 0, 0, _hash(src), None)
    ]
    seen: set[str] = {module_id}
    stack: list[tuple[int, Symbol]] = []
    spans: list[tuple[int, int, str]] = []  # (start, end, id) of every definition, by start
    wants_fixtures = language == "python" and pytest_file(path)
    fixture_params: dict[str, tuple[str, ...]] = {}
    for start, end, kind, name, node, body, first_row, receiver in defs:
        while stack and stack[-1][0] <= start:
            stack.pop()
        outer = stack[-1][1] if stack else None
        if receiver:
            qualname = f"{receiver}.{name}"
            parent_id = f"{path}::{receiver}"
            parent_id = parent_id if parent_id in seen else module_id
        else:
            qualname = f"{outer.qualname}.{name}" if outer else name
            parent_id = outer.id if outer else module_id
        if kind == "function" and outer is not None and outer.kind == "class":
            kind = "method"
        sym_id = f"{path}::{qualname}"
        sig_start = node.start_byte
        sig_end = body.start_byte if body is not node else node.end_byte
        sig_end = sig_start + len(src[sig_start:sig_end].rstrip())
        symbol: Symbol = _new(Symbol, (
            sym_id, path, qualname, name, kind, language, start, end, first_row,
            node.end_point[0] + 1, sig_start, sig_end, _hash(view[start:end]), parent_id))
        stack.append((end, symbol))
        spans.append((start, end, sym_id))
        if wants_fixtures and kind in ("function", "method"):
            names = _parameter_names(node)
            if names:
                fixture_params.setdefault(sym_id, names)
        if sym_id not in seen:  # a redefinition (if/else branches) keeps the first one
            seen.add(sym_id)
            symbols.append(symbol)

    # References and locals: sweep again, in position order, to find the innermost scope.
    items.sort()
    raw: list[RawRef] = []
    raw_append = raw.append
    params: dict[str, set[str]] = {}
    scope_stack: list[tuple[int, str]] = []
    di, n_spans = 0, len(spans)
    chain_start, chain_end = -1, -1
    scope = module_id
    bound: set[str] | None = None  # the locals of `scope`, once it has one
    boundary = -1  # items before this offset are in `scope` (no span starts or ends earlier)
    local_name = ""
    chain = _CHAIN.fullmatch
    for start, neg_end, prio, _seq, kind, node in items:
        if start >= boundary:
            while di < n_spans and spans[di][0] <= start:
                s_start, s_end, s_id = spans[di]
                while scope_stack and scope_stack[-1][0] <= s_start:
                    scope_stack.pop()
                scope_stack.append((s_end, s_id))
                di += 1
            while scope_stack and scope_stack[-1][0] <= start:
                scope_stack.pop()
            if scope_stack:
                boundary, scope = scope_stack[-1]
            else:
                boundary, scope = len(src) + 1, module_id
            if di < n_spans and spans[di][0] < boundary:
                boundary = spans[di][0]
            bound = None
        if prio >= 9:
            if prio == 9:
                local_name = src[start:-neg_end].decode("utf-8", "replace")
                if bound is None:
                    bound = params.get(scope)
                    if bound is None:
                        params[scope] = bound = set()
                bound.add(local_name)
            else:  # the type of the local just before it
                type_text = src[node.start_byte : node.end_byte]
                if chain(type_text) is not None:
                    local_types.setdefault(scope, {}).setdefault(
                        local_name, _WS.sub(b"", type_text).decode("ascii"))
            continue
        end = -neg_end
        if start == chain_start and end <= chain_end:
            continue  # the inner part of a dotted chain, or one node captured twice
        if prio == 2:  # attribute: extend over the following `.name` parts
            attr = _ATTR.match(src, start)
            if attr is not None and attr.start(1) == end:
                end = attr.end(1)
                if attr.start(2) >= 0:
                    kind = "call"
                text = src[start:end]
            else:
                tail = _TAIL.match(src, end)
                if tail is not None and tail.end() > end:
                    end = tail.end()
                if _CALL.match(src, end) is not None:
                    kind = "call"
                text = src[start:end]
                if chain(text) is None:
                    continue  # not a plain dotted name: its parts are captured
            if b"\n" in text or b" " in text:
                text = _WS.sub(b"", text)
        else:
            text = src[start:end]
            if not text.isalnum():
                if chain(text) is None:
                    continue  # not a plain dotted name (`f().x`, `a[0].b`)
                if b"\n" in text or b" " in text:
                    text = _WS.sub(b"", text)
        chain_start, chain_end = start, end
        row, col = node.start_point
        raw_append(_new(RawRef, (scope, text.decode("ascii"), kind, row + 1, col, start, end)))
    for target, node in import_refs:
        raw.append(_import_ref(spans, module_id, target, node))
    # An import binds its name in the innermost definition around it (Python: a function's or
    # class body's local); module-level ones form the file's import table. First binding wins.
    scoped_imports: dict[str, dict[str, str]] = {}
    for byte, local, target in bindings:
        owner = scope_at(spans, module_id, byte)
        if owner == module_id:
            imports.setdefault(local, target)
        else:
            scoped_imports.setdefault(owner, {}).setdefault(local, target)

    record_out = record
    if root.has_error and record.status == "ok":
        record_out = FileRecord(record.path, record.language, record.sha256, record.lines,
                                record.size, "partial", "syntax errors: kept what parsed")
    return FileData(record_out, module, symbols, raw, imports, stars,
                    {k: tuple(sorted(v)) for k, v in params.items()}, local_types,
                    fixture_params, scoped_imports)


def _parameter_names(node: ts.Node) -> tuple[str, ...]:
    params = node.child_by_field_name("parameters")
    if params is None:
        return ()
    names: list[str] = []
    for child in params.named_children:
        ident = child if child.type == "identifier" else child.child_by_field_name("name")
        if ident is None and child.type == "typed_parameter":
            ident = child.named_children[0] if child.named_children else None
        if ident is not None and ident.type == "identifier":
            text = (ident.text or b"").decode("utf-8", "replace")
            if text not in ("self", "cls"):
                names.append(text)
    return tuple(names)


def _import_ref(spans: list[tuple[int, int, str]], module_id: str, target: str,
                node: ts.Node) -> RawRef:
    start = node.start_byte
    scope = scope_at(spans, module_id, start)
    point = node.start_point
    return RawRef(scope, target, "import", point[0] + 1, point[1], start, node.end_byte)
