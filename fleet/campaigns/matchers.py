"""Matchers: campaign rules run over a :class:`~fleet.graph.SymbolGraph` and its sources.

- ``call``: calls of a qualified callable, resolved through imports and aliases by the graph
  (``Reference.target``), never by spelling, and through sound module-level aliases
  (``real_datetime = datetime.datetime``: see :mod:`._aliases`); a bare decorator
  (``@root_validator``) counts as a call. ``where`` narrows by arguments:
  ``without_keyword``, ``max_positional``, ``min_positional``; ``exclude`` (path globs) leaves
  files out, for every kind.
- ``import``: imports of a module (or anything under it).
- ``attribute``: an attribute access - a qualified name (``pkg.Class.attr``, resolved), or
  ``.attr`` for that attribute on any receiver (by spelling; ``where: {models: ...}`` narrows
  it by the receiver's class).
- ``query``: a tree-sitter query; the ``@match`` capture (else the first capture) is the finding
  (``where`` applies when it is a call).

``where: {models: [pydantic.BaseModel, ...]}`` (``attribute`` and ``query`` matchers) keeps only
sites where a subclass of one of those classes is involved: the class around a matched class body,
the receiver's class when the graph resolves it, else a file that uses such a class (see
:mod:`._models`).

``find_findings(graph, campaign)`` returns the campaign's findings, de-duplicated by node and
sorted by path and position, each with its stable fingerprint (see :mod:`.findings`).
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import tree_sitter as ts

from fleet.campaigns._aliases import Aliases
from fleet.campaigns._models import ModelFilter
from fleet.campaigns._schema import Campaign, Matcher
from fleet.campaigns.findings import fingerprint, normalized_syntax
from fleet.errors import ConfigError
from fleet.graph import read_source
from fleet.types import Finding

if TYPE_CHECKING:
    from fleet.graph import Reference, SymbolGraph

__all__ = ["Sources", "find_findings", "match"]

_GRAMMARS = {
    "python": ("tree_sitter_python", "language", (".py", ".pyi")),
    "javascript": ("tree_sitter_javascript", "language", (".js", ".mjs", ".cjs", ".jsx")),
    "typescript": ("tree_sitter_typescript", "language_typescript", (".ts", ".mts", ".cts")),
    "go": ("tree_sitter_go", "language", (".go",)),
}
_IMPORT_NODES = {"import_statement", "import_from_statement", "future_import_statement"}


def _language(name: str) -> ts.Language:
    if name not in _GRAMMARS:
        raise ConfigError(f"no tree-sitter grammar for language {name!r}")
    module, attr, _ = _GRAMMARS[name]
    return ts.Language(getattr(importlib.import_module(module), attr)())


class Sources:
    """Parsed sources of the graph's files, parsed once each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[str, tuple[bytes, ts.Tree]] = {}
        self._parsers: dict[str, ts.Parser] = {}
        #: files refused by the one source reader (``fleet.graph.read_source``), with the
        #: reason ``fleet index`` prints: they are read as empty and match nothing
        self.skipped: dict[str, str] = {}

    def tree(self, path: str, language: str = "python") -> tuple[bytes, ts.Tree]:
        if path not in self._trees:
            if language not in self._parsers:
                self._parsers[language] = ts.Parser(_language(language))
            data, reason = read_source(self.root, path)
            if data is None:
                self.skipped[path] = reason
                data = b""
            self._trees[path] = (data, self._parsers[language].parse(data))
        return self._trees[path]

    def node(self, path: str, start: int, end: int) -> ts.Node | None:
        _, tree = self.tree(path)
        return tree.root_node.descendant_for_byte_range(start, end)


@dataclass(frozen=True)
class _Hit:
    rule: str
    message: str
    symbol: str
    path: str
    node: ts.Node


def _excluded(matcher: Matcher, path: str) -> bool:
    globs = matcher.where.get("exclude") or []
    return any(fnmatch.fnmatch(path, g) for g in ([globs] if isinstance(globs, str) else globs))


def _dotted(graph: SymbolGraph, target: str | None) -> str | None:
    if target is None:
        return None
    if "::" in target:
        return graph.dotted(target) if target in graph.symbols else None
    return target


def _qualified(graph: SymbolGraph, ref: Reference) -> str | None:
    """The fully qualified name a reference denotes: the graph's resolution when exact, else
    (a name re-exported by a module the graph does not see through) the file's import of the
    reference's head followed by the rest of the chain."""
    if ref.exact:
        return _dotted(graph, ref.target)
    head, _, rest = ref.name.partition(".")
    imported = graph.imports.get(ref.path, {}).get(head)
    if imported is None:
        return None
    return f"{imported}.{rest}" if rest else imported


def _up(node: ts.Node | None, *types: str) -> ts.Node | None:
    while node is not None and node.type not in types:
        node = node.parent
    return node


def _call_node(sources: Sources, ref: Reference) -> ts.Node | None:
    """The call whose function is exactly the reference, or the bare decorator it names."""
    node = sources.node(ref.path, ref.start_byte, ref.end_byte)
    while node is not None and node.parent is not None and (
        node.parent.start_byte == ref.start_byte and node.parent.end_byte == ref.end_byte
    ):
        node = node.parent
    parent = node.parent if node is not None else None
    if parent is None:
        return None
    if parent.type == "call" and parent.child_by_field_name("function") == node:
        return parent
    if parent.type == "decorator":
        return node
    return None


def _where_ok(matcher: Matcher, node: ts.Node) -> bool:
    where = matcher.where
    if not {"without_keyword", "max_positional", "min_positional"} & where.keys():
        return True
    args = node.child_by_field_name("arguments") if node.type == "call" else None
    positional, keywords, spread = 0, set(), False
    for arg in args.named_children if args is not None else []:
        if arg.type == "keyword_argument":
            name = arg.child_by_field_name("name")
            keywords.add((name.text or b"").decode() if name is not None else "")
        elif arg.type in ("list_splat", "dictionary_splat"):
            spread = True
        elif arg.type != "comment":
            positional += 1
    banned = where.get("without_keyword") or []
    banned = [banned] if isinstance(banned, str) else banned
    if spread and (banned or "max_positional" in where):
        return False  # *args/**kwargs may carry anything
    if any(k in keywords for k in banned):
        return False
    if "max_positional" in where and positional > int(where["max_positional"]):
        return False
    return not ("min_positional" in where and positional < int(where["min_positional"]))


_PATTERNS = ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list",
             "parenthesized_expression", "expression_list")


def _is_store(node: ts.Node) -> bool:
    """``node`` is assigned to (``a.b = ...``, ``a.b += ...``, ``a.b: T = ...``, unpacking) or
    deleted."""
    child, parent = node, node.parent
    while parent is not None and parent.type in _PATTERNS:
        child, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type == "delete_statement":
        return True
    if parent.type in ("assignment", "augmented_assignment"):
        left = parent.child_by_field_name("left")
        return left is not None and (left.start_byte, left.end_byte) == (
            child.start_byte, child.end_byte)
    return False


def _models(graph: SymbolGraph, matcher: Matcher) -> ModelFilter | None:
    models = matcher.where.get("models")
    if not models:
        return None
    return ModelFilter(graph, [models] if isinstance(models, str) else list(models))


def _calls_target(graph: SymbolGraph, ref: Reference, targets: set[str], leaves: set[str],
                  aliases: Aliases) -> bool:
    """``ref`` names one of ``targets``: resolved by the graph, or through a sound module-level
    alias - ``real_datetime.utcnow`` (``real_datetime = datetime.datetime``) as well as the
    alias of the callable itself, ``_UTCNOW()`` (``_UTCNOW = datetime.datetime.utcnow``)."""
    if _qualified(graph, ref) in targets:
        return True
    head = ref.name.partition(".")[0]
    if "." in ref.name and (ref.exact or ref.name.rpartition(".")[2] not in leaves):
        return False
    return ref.target == f"{ref.path}::{head}" and aliases.qualified(ref) in targets


def _by_refs(graph: SymbolGraph, sources: Sources, matcher: Matcher) -> Iterator[_Hit]:
    targets = set(matcher.target)
    models = _models(graph, matcher)
    aliases = Aliases(graph, lambda path: sources.tree(path)[1], _qualified)
    leaves = {t.rsplit(".", 1)[-1] for t in targets}
    for ref in graph.references:
        if _excluded(matcher, ref.path) or not ref.path.endswith((".py", ".pyi")):
            continue
        node: ts.Node | None = None
        if matcher.kind == "call" and _calls_target(graph, ref, targets, leaves, aliases):
            node = _call_node(sources, ref)
            if node is None and ref.kind != "import":
                # a reference that is not a call (`_UTCNOW = datetime.datetime.utcnow`, a
                # callback argument): the callable escapes, so its calls are sites too
                node = sources.node(ref.path, ref.start_byte, ref.end_byte)
                if node is not None and (_is_store(node) or _up(node, *_IMPORT_NODES)):
                    node = None
            if node is not None and not _where_ok(matcher, node):
                node = None
        elif matcher.kind == "import" and ref.kind == "import":
            dotted = _dotted(graph, ref.target) or ref.name
            if any(dotted == t or dotted.startswith(t + ".") for t in targets):
                node = _up(sources.node(ref.path, ref.start_byte, ref.end_byte), *_IMPORT_NODES)
        elif matcher.kind == "attribute" and ref.kind in ("attribute", "call") and "." in ref.name:
            leaf = "." + ref.name.rsplit(".", 1)[1]
            exact = _qualified(graph, ref) in targets
            if (exact or leaf in targets) and (models is None or models.receiver_ok(ref)):
                node = sources.node(ref.path, ref.start_byte, ref.end_byte)
                call = _call_node(sources, ref) if ref.kind == "call" else None
                if call is not None:
                    node = call if _where_ok(matcher, call) else None
                elif node is not None and _is_store(node):
                    node = None  # defining the attribute (a compatibility shim) is no use of it
        if node is not None:
            yield _Hit(matcher.rule, matcher.message, ref.src, ref.path, node)


def _by_query(graph: SymbolGraph, sources: Sources, matcher: Matcher) -> Iterator[_Hit]:
    language = _language(matcher.language)
    _, _, extensions = _GRAMMARS[matcher.language]
    try:
        query = ts.Query(language, "\n".join(matcher.target))
    except (ts.QueryError, ValueError) as exc:
        raise ConfigError(f"{matcher.rule}: invalid tree-sitter query: {exc}") from exc
    models = _models(graph, matcher)
    for path in sorted(graph.files):
        if (not path.endswith(extensions) or _excluded(matcher, path)
                or graph.files[path].status == "skipped"):  # a link, a FIFO, too large...
            continue
        _, tree = sources.tree(path, matcher.language)
        for _, captures in ts.QueryCursor(query).matches(tree.root_node):
            nodes = captures.get("match") or next(iter(captures.values()), [])
            for node in nodes:
                if not _where_ok(matcher, node) or (
                        models is not None and not models.node_ok(path, node)):
                    continue
                symbol = graph.enclosing(path, node.start_byte)
                if symbol is not None:
                    yield _Hit(matcher.rule, matcher.message, symbol.id, path, node)


def _by_diagnostics(graph: SymbolGraph, sources: Sources, matcher: Matcher,
                    campaign: Campaign) -> Iterator[_Hit]:
    from fleet.campaigns._diagnostics import run_diagnostics

    for code, message, path, start, end in run_diagnostics(graph, campaign, matcher):
        node = None if _excluded(matcher, path) else sources.node(path, start, end)
        symbol = graph.enclosing(path, start)
        if node is not None and symbol is not None:
            yield _Hit(code, message or matcher.message, symbol.id, path, node)


def match(graph: SymbolGraph, matcher: Matcher, sources: Sources,
          campaign: Campaign | None = None) -> Iterator[_Hit]:
    if matcher.kind == "diagnostics":
        if campaign is None:
            raise ConfigError(f"{matcher.rule}: a diagnostics matcher needs its campaign")
        return _by_diagnostics(graph, sources, matcher, campaign)
    if matcher.kind == "query":
        return _by_query(graph, sources, matcher)
    return _by_refs(graph, sources, matcher)


def find_findings(
    graph: SymbolGraph, campaign: Campaign, sources: Sources | None = None
) -> list[Finding]:
    """Every place the campaign's matchers hit, one finding per (rule, node)."""
    sources = sources or Sources(Path(graph.root))
    hits: dict[tuple[str, str, int, int], _Hit] = {}
    for matcher in campaign.matchers:
        for hit in match(graph, matcher, sources, campaign):
            hits.setdefault((hit.rule, hit.path, hit.node.start_byte, hit.node.end_byte), hit)
    ordered = sorted(hits.values(), key=lambda h: (h.path, h.node.start_byte, h.rule))
    seen: dict[tuple[str, str, str], int] = {}
    findings = []
    for hit in ordered:
        syntax = normalized_syntax(hit.node)
        occurrence = seen.get((hit.rule, hit.symbol, syntax), 0)
        seen[(hit.rule, hit.symbol, syntax)] = occurrence + 1
        text = (hit.node.text or b"").decode("utf-8", "replace")
        findings.append(
            Finding(
                fingerprint=fingerprint(hit.rule, hit.symbol, syntax, occurrence),
                campaign=campaign.name,
                rule=hit.rule,
                symbol=hit.symbol,
                path=hit.path,
                line=hit.node.start_point[0] + 1,
                col=hit.node.start_point[1],
                start_byte=hit.node.start_byte,
                end_byte=hit.node.end_byte,
                snippet=text if len(text) <= 300 else text[:297] + "...",
                message=hit.message,
            )
        )
    return findings
