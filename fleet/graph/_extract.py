"""Per-file extraction: one tree-sitter parse and one ``QueryCursor.matches`` pass per file.

``extract`` turns a file's bytes into a ``FileData``: symbols (with qualified names from an
iterative stack sweep over definition spans: no recursion, so deep nesting cannot overflow),
raw references with their innermost enclosing symbol, the import table and local bindings.
Resolution across files happens later, in ``_resolve``.
"""

from __future__ import annotations

import hashlib
import re
from typing import cast

import tree_sitter as ts

from fleet.graph._imports import READERS
from fleet.graph._lang import LanguageSpec, compiled
from fleet.graph._model import MODULE, FileData, FileRecord, RawRef, RefKind, Symbol

_CHAIN = re.compile(rb"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
_WS = re.compile(rb"\s+")
_TAIL = re.compile(rb"(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*")
_CALL = re.compile(rb"[ \t]*\(")
_CHAIN_NODES = frozenset(
    {"identifier", "attribute", "member_expression", "selector_expression", "type_identifier",
     "nested_type_identifier", "scoped_type_identifier"}
)
# When two patterns capture one node, the stronger kind wins.
_PRIORITY = {"inherit": 4, "call": 3, "attribute": 2, "name": 1}


def count_lines(src: bytes) -> int:
    return src.count(b"\n") + (1 if src and not src.endswith(b"\n") else 0)


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _bases(node: ts.Node) -> list[ts.Node]:
    if node.type in _CHAIN_NODES:
        return [node]
    return [c for c in node.named_children if c.type in _CHAIN_NODES]


def extract(path: str, src: bytes, spec: LanguageSpec, module: str | None,
            record: FileRecord) -> FileData:
    """Parse ``src`` and extract everything the resolver needs. Never raises on bad syntax:
    tree-sitter recovers, and the caller marks such a file ``partial``."""
    comp = compiled(spec.grammar)
    tree = comp.parser.parse(src)
    root = tree.root_node
    language = spec.name
    module_id = f"{path}::{MODULE}"
    package = ""
    if module:
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    reader = READERS[language]
    roles = comp.roles

    defs: list[tuple[int, int, str, str, ts.Node, ts.Node, ts.Node | None, str | None]] = []
    refs: dict[tuple[int, int], tuple[str, ts.Node]] = {}
    locals_: list[tuple[int, bytes]] = []
    imports: dict[str, str] = {}
    stars: list[str] = []
    import_refs: list[tuple[str, ts.Node]] = []
    inherit_at: set[tuple[int, int]] = set()

    for pattern, caps in ts.QueryCursor(comp.query).matches(root):
        role = roles[pattern]
        if role == "local":
            node = caps["local"][0]
            locals_.append((node.start_byte, node.text or b""))
        elif role.startswith("reference."):
            kind = role[10:]
            node = caps[role][0]
            key = (node.start_byte, node.end_byte)
            prev = refs.get(key)
            if prev is None or _PRIORITY[kind] > _PRIORITY[prev[0]]:
                refs[key] = (kind, node)
        elif role.startswith("definition."):
            node = caps[role][0]
            name = (caps["name"][0].text or b"").decode("utf-8", "replace")
            body_cap = caps.get("body")
            receiver_cap = caps.get("receiver")
            whole = node
            parent = node.parent
            if parent is not None and parent.type == "decorated_definition":
                whole = parent
            defs.append((whole.start_byte, whole.end_byte, role[11:], name, node,
                         body_cap[0] if body_cap else node,
                         None,
                         (receiver_cap[0].text or b"").decode() if receiver_cap else None))
            for bases in caps.get("bases", ()):
                for base in _bases(bases):
                    key = (base.start_byte, base.end_byte)
                    refs[key] = ("inherit", base)
                    inherit_at.add(key)
        elif role == "import":
            for local, target, node in reader(caps["import"][0], path, package):
                if local is None:
                    if target.endswith(".*"):
                        stars.append(target[:-2])
                    import_refs.append((target.removesuffix(".*"), node))
                else:
                    imports.setdefault(local, target)
                    import_refs.append((target, node))

    # Symbols: sort by span, then one stack sweep gives parents and qualified names.
    defs.sort(key=lambda d: (d[0], -d[1]))
    symbols: list[Symbol] = [
        Symbol(module_id, path, MODULE, module or path, "module", language, 0, len(src), 1,
               max(1, count_lines(src)), 0, 0, _hash(src), None)
    ]
    seen: set[str] = {module_id}
    stack: list[tuple[int, Symbol]] = []
    spans: list[tuple[int, int, str]] = []  # (start, end, id) of every definition, by start
    for start, end, kind, name, node, body, _unused, receiver in defs:
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
        symbol = Symbol(sym_id, path, qualname, name, kind, language,  # type: ignore[arg-type]
                        start, end, node.start_point[0] + 1, node.end_point[0] + 1,
                        sig_start, sig_end, _hash(src[start:end]), parent_id)
        if start != node.start_byte:
            symbol = _with_start_line(symbol, src, start)
        stack.append((end, symbol))
        spans.append((start, end, sym_id))
        if sym_id not in seen:  # a redefinition (if/else branches) keeps the first one
            seen.add(sym_id)
            symbols.append(symbol)

    # References and locals: sweep again, in position order, to find the innermost scope.
    items: list[tuple[int, int, int, object]] = []
    for (start, end), (kind, node) in refs.items():
        items.append((start, -end, 0, (kind, node)))
    for start, text in locals_:
        items.append((start, 0, 1, text))
    items.sort(key=lambda i: (i[0], i[1]))
    raw: list[RawRef] = []
    params: dict[str, set[str]] = {}
    scope_stack: list[tuple[int, str]] = []
    di = 0
    chain_start, chain_end = -1, -1
    for start, neg_end, is_local, payload in items:
        while di < len(spans) and spans[di][0] <= start:
            s_start, s_end, s_id = spans[di]
            while scope_stack and scope_stack[-1][0] <= s_start:
                scope_stack.pop()
            scope_stack.append((s_end, s_id))
            di += 1
        while scope_stack and scope_stack[-1][0] <= start:
            scope_stack.pop()
        scope = scope_stack[-1][1] if scope_stack else module_id
        if is_local:
            params.setdefault(scope, set()).add(payload.decode("utf-8", "replace"))  # type: ignore[attr-defined]
            continue
        kind, node = payload  # type: ignore[misc]
        end = -neg_end
        if start == chain_start and end <= chain_end:
            continue  # the inner part of a dotted chain already taken
        if kind == "attribute":
            tail = _TAIL.match(src, end)
            if tail is not None and tail.end() > end:
                end = tail.end()
            if _CALL.match(src, end) is not None:
                kind = "call"
        text = src[start:end]
        if _CHAIN.fullmatch(text) is None:
            continue  # not a plain dotted name (`f().x`, `a[0].b`): its parts are captured
        chain_start, chain_end = start, end
        if b"\n" in text or b" " in text:
            text = _WS.sub(b"", text)
        point = node.start_point
        ref_kind = cast("RefKind", kind)
        raw.append(RawRef(scope, text.decode("ascii"), ref_kind, point[0] + 1, point[1], start,
                          end))
    for target, node in import_refs:
        raw.append(_import_ref(spans, module_id, target, node))

    record_out = record
    if root.has_error and record.status == "ok":
        record_out = FileRecord(record.path, record.language, record.sha256, record.lines,
                                record.size, "partial", "syntax errors: kept what parsed")
    return FileData(record_out, module, symbols, raw, imports, stars,
                    {k: frozenset(v) for k, v in params.items()})


def _import_ref(spans: list[tuple[int, int, str]], module_id: str, target: str,
                node: ts.Node) -> RawRef:
    start = node.start_byte
    scope = module_id
    for s_start, s_end, s_id in spans:  # imports inside functions are rare; spans are sorted
        if s_start > start:
            break
        if s_end > start:
            scope = s_id
    point = node.start_point
    return RawRef(scope, target, "import", point[0] + 1, point[1], start, node.end_byte)


def _with_start_line(symbol: Symbol, src: bytes, start: int) -> Symbol:
    line = src.count(b"\n", 0, start) + 1
    return Symbol(symbol.id, symbol.path, symbol.qualname, symbol.name, symbol.kind,
                  symbol.language, symbol.start_byte, symbol.end_byte, line, symbol.end_line,
                  symbol.sig_start_byte, symbol.sig_end_byte, symbol.body_hash, symbol.parent)
