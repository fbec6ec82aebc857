"""``SymbolGraph``: symbols, references and the dependency graph, with the planning queries.

Edges of ``graph`` (a ``networkx.DiGraph``) mean *u depends on v*; the edge attribute ``kinds``
is a sorted tuple drawn from ``imports``, ``calls``, ``inherits``, ``references`` and
``contains``. ``contains`` goes parent -> child for classes and functions (a class depends on
its members, a function on its nested functions): what a class does is what its members do, so
changing a method reaches everything that uses the class. A module symbol is the module-level
code only and contains nothing in this sense. A use of an enclosing symbol (``self.attr`` in a
method resolving to its own class) adds no edge: containment already orders them, and such
edges would make every class one SCC with its methods. ``dependencies(id, structural=False)``: uses.
"""

from __future__ import annotations

import bisect
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.graph import _edges
from fleet.graph._edges import Adjacency, SccMap, build_graph, condense, digraph, patch_graph
from fleet.graph._model import EDGE_KIND, MODULE, FileData, FileRecord, Reference, Symbol
from fleet.graph._refs import FileRefs
from fleet.graph._resolve import Resolver
from fleet.graph._shared import gc_paused

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["SymbolGraph", "is_test_file"]

_TEST_BASE_SUFFIXES = ("TestCase",)
_KIND_OF = operator.attrgetter("kind")


def is_test_file(path: str) -> bool:
    """Whether ``path`` holds tests: ``test_*.py``, ``*_test.py``, any ``tests.py`` (a Django
    app's, a single-module project's such as itsdangerous 0.24) and a root ``test.py`` (one in a
    package is library code: ``werkzeug/test.py``); Go ``_test.go``; JS/TS ``.test.``/``.spec.``
    files. The same rule as ``fleet.verify.gates.is_test_path`` for Python modules."""
    base = path.rsplit("/", 1)[-1]
    if base.endswith((".py", ".pyi")):
        return (base.startswith("test_") or base.endswith("_test.py") or base == "tests.py"
                or path == "test.py")
    return base.endswith("_test.go") or ".test." in base or ".spec." in base


class SymbolGraph:
    """The indexed repository. Build it with :func:`fleet.graph.index`; treat it as immutable
    (``index(repo, previous=g)`` returns a new graph and leaves ``g`` unchanged)."""

    def __init__(self, root: Path, data: Mapping[str, FileData],
                 refs_by_path: Mapping[str, Sequence[Reference]], seconds: float = 0.0, *,
                 previous: SymbolGraph | None = None, changed: Iterable[str] = (),
                 deps: Mapping[str, frozenset[str]] | None = None,
                 symbols: dict[str, Symbol] | None = None) -> None:
        self.root = root
        self._data_store: dict[str, FileData] | None = dict(data)
        # path -> its references (``FileRefs``: columns over the raw references)
        self._refs_store: dict[str, Sequence[Reference]] | None = dict(refs_by_path)
        # path -> the dependency keys its resolution looked up (see ``_affected``)
        self._deps_store: dict[str, frozenset[str]] | None = dict(deps or {})
        self._lazy: Callable[[str], Any] | None = None
        self.files: dict[str, FileRecord] = {p: d.record for p, d in sorted(data.items())}
        # ``symbols``: the very dict ``index`` resolved against (files in path order), not rebuilt
        self.symbols: dict[str, Symbol] = (
            symbols if symbols is not None
            else {s.id: s for p in self.files for s in data[p].symbols})
        self.imports: dict[str, dict[str, str]] = {
            p: dict(d.imports) for p, d in data.items() if d.imports
        }
        self.modules: dict[str, str | None] = {p: d.module for p, d in data.items()}
        self.seconds = seconds
        self.resolve_processes = 1  # how many processes ``index`` resolved in (``_fork``)
        self.extract_processes = 1  # how many processes ``index`` extracted in (``_procs``)
        self._reset_caches()
        # the dependency graph as adjacency dicts (``_edges``); ``graph`` wraps them
        self._pred_store: Adjacency | None = None  # built on first use when not patched
        if previous is not None:
            self._succ, self._pred_store = self._patched_graph(previous, changed)
        else:
            self._succ = build_graph(self.symbols, self._refs.values())
        self._nx: nx.DiGraph | None = None

    @property
    def _pred(self) -> Adjacency:
        if self._pred_store is None:
            self._pred_store = _edges.predecessors(self._succ)
        return self._pred_store

    @property
    def graph(self) -> nx.DiGraph:
        """The dependency graph as an ``nx.DiGraph`` (built on first use over the same
        adjacency dicts; networkx is imported only then)."""
        if self._nx is None:
            self._nx = digraph(self._succ, self._pred)
        return self._nx

    def _reset_caches(self) -> None:
        self._rank: dict[str, int] | None = None
        self._scc: SccMap | None = None
        self._resolver: Resolver | None = None
        # reused by the next incremental index (not in snapshots): the module table resolved
        # with (``Resolver.modules``); the size cap and each file's stat signature (``_index``)
        self._module_table: dict[str, list[str]] | None = None
        self._stats: tuple[int, dict[str, tuple[int, ...]]] | None = None
        self._by_path: dict[str, list[Symbol]] | None = None

    @classmethod
    def _restore(cls, root: Path, files: dict[str, FileRecord], symbols: dict[str, Symbol],
                 imports: dict[str, dict[str, str]], modules: dict[str, str | None],
                 succ: Adjacency, pred: Adjacency, seconds: float,
                 lazy: Callable[[str], Any]) -> SymbolGraph:
        """A graph from a snapshot: references and per-file extraction data are decoded on
        first use by ``lazy("refs")`` / ``lazy("data")``."""
        self = cls.__new__(cls)
        self.root, self.files, self.symbols, self.imports = root, files, symbols, imports
        self.modules, self.seconds, self.resolve_processes = modules, seconds, 1
        self.extract_processes = 1
        self._succ, self._pred_store, self._nx = succ, pred, None
        self._data_store = self._refs_store = self._deps_store = None
        self._lazy = lazy
        self._reset_caches()
        return self

    @property
    def _data(self) -> dict[str, FileData]:
        if self._data_store is None:
            assert self._lazy is not None
            self._data_store = self._lazy("data")
        return self._data_store

    @property
    def _refs(self) -> dict[str, Sequence[Reference]]:
        if self._refs_store is None:
            assert self._lazy is not None
            self._refs_store = self._lazy("refs")
        return self._refs_store

    @property
    def _deps(self) -> dict[str, frozenset[str]]:
        if self._deps_store is None:
            assert self._lazy is not None
            self._deps_store = self._lazy("deps")
        return self._deps_store

    # -- construction ---------------------------------------------------------------------
    @property
    def references(self) -> list[Reference]:
        return [r for p in self.files for r in self._refs.get(p, ())]

    def references_in(self, path: str) -> list[Reference]:
        return list(self._refs.get(path, ()))

    def edge_list(self) -> list[dict[str, Any]]:
        """Every reference resolved to a repository symbol, in file and position order, as
        ``{"src", "dst", "line", "kind"}``: src the innermost enclosing definition (or
        ``path::<module>``), kind the edge kind (``calls``, ``references``, ``imports``,
        ``inherits``). Uses of an enclosing symbol are included (the graph has no edge there);
        a reference of which only a prefix resolved points at the deepest symbol reached."""
        symbols = self.symbols
        return [
            {"src": r.src, "dst": r.target, "line": r.line, "kind": EDGE_KIND[r.kind]}
            for p in sorted(self.files) for r in self._refs.get(p, ())
            if r.target is not None and r.target in symbols
        ]

    def _patched_graph(self, previous: SymbolGraph, changed: Iterable[str]
                       ) -> tuple[Adjacency, Adjacency]:
        changed = list(changed)
        old = previous._data
        removed = [s.id for p in changed if p in old for s in old[p].symbols
                   if s.id not in self.symbols]
        return patch_graph(previous._succ, previous._pred, self.symbols,
                           {p: (self._data[p].symbols, self._refs.get(p, [])) for p in changed},
                           removed)

    # -- lookups --------------------------------------------------------------------------
    def symbol(self, symbol_id: str) -> Symbol:
        """The symbol with this id; raises ``KeyError`` naming it when there is none."""
        try:
            return self.symbols[symbol_id]
        except KeyError:
            raise KeyError(f"no symbol {symbol_id!r} in the graph of {self.root}") from None

    def symbols_in(self, path: str) -> list[Symbol]:
        """The symbols of one file, module first, then by position."""
        if self._by_path is None:
            by_path: dict[str, list[Symbol]] = {}
            for sym in self.symbols.values():
                by_path.setdefault(sym.path, []).append(sym)
            for syms in by_path.values():
                syms.sort(key=lambda s: (s.kind != "module", s.start_byte, -s.end_byte))
            self._by_path = by_path
        return list(self._by_path.get(path, ()))

    def enclosing(self, path: str, byte: int) -> Symbol | None:
        """The innermost symbol of ``path`` whose span contains ``byte`` (the module symbol
        when no definition does); None for an unknown path."""
        syms = self.symbols_in(path)
        if not syms:
            return None
        best = syms[0]
        starts = [s.start_byte for s in syms[1:]]
        for sym in syms[1 : bisect.bisect_right(starts, byte) + 1]:
            if sym.start_byte <= byte < sym.end_byte and sym.end_byte - sym.start_byte <= (
                best.end_byte - best.start_byte
            ):
                best = sym
        return best

    def children(self, symbol_id: str) -> list[str]:
        """The symbols directly inside this one (a module's top-level definitions too)."""
        sym = self.symbol(symbol_id)
        return sorted(s.id for s in self.symbols_in(sym.path) if s.parent == symbol_id)

    def dotted(self, symbol_id: str) -> str:
        """Python's dotted name of a symbol (``billing.legacy.charge``); for other languages
        the path-based ``path.Qualified.name``."""
        sym = self.symbol(symbol_id)
        module = self.modules.get(sym.path) or sym.path
        return module if sym.kind == "module" else f"{module}.{sym.qualname}"

    def resolve_dotted(self, name: str) -> str | None:
        """A dotted Python name (``billing.legacy.charge``) -> its symbol id, or None."""
        if self._resolver is None:
            self._resolver = Resolver(self._data, self.symbols)
        target, exact = self._resolver.resolve_dotted(name)
        return target if exact else None

    # -- dependencies ---------------------------------------------------------------------
    def dependencies(self, symbol_id: str, *, structural: bool = True) -> set[str]:
        """Direct dependencies; ``structural=False`` leaves out ``contains`` (children)."""
        self.symbol(symbol_id)
        out = set()
        for v, attrs in self._succ[symbol_id].items():
            if structural or attrs["kinds"] != ("contains",):
                out.add(v)
        return out

    def direct_dependents(self, symbol_id: str) -> set[str]:
        self.symbol(symbol_id)
        return set(self._pred[symbol_id])

    def dependents(self, ids: str | Iterable[str]) -> set[str]:
        """Every symbol that depends on any of ``ids``, transitively (not ``ids`` themselves
        unless they are in a cycle through one another)."""
        start = [ids] if isinstance(ids, str) else list(ids)
        seen: set[str] = set()
        pred = self._pred
        stack = [i for i in start if i in pred]
        while stack:
            cur = stack.pop()
            for p in pred[cur]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return seen

    def _condense(self) -> None:
        with gc_paused():  # it allocates an entry per symbol; nothing cyclic
            self._rank, self._scc = condense(self._succ)

    def scc(self, symbol_id: str) -> frozenset[str]:
        """The strongly connected component holding the symbol (itself alone when acyclic)."""
        self.symbol(symbol_id)
        if self._scc is None:
            self._condense()
        assert self._scc is not None
        return self._scc[symbol_id]

    def lock_rank(self, symbol_id: str) -> int:
        """Position of the symbol's SCC in the topological order of the condensation,
        dependencies first, ties broken by the smallest member id. Members of one SCC share
        a rank."""
        self.symbol(symbol_id)
        if self._rank is None:
            self._condense()
        assert self._rank is not None
        return self._rank[symbol_id]

    def sccs(self) -> list[frozenset[str]]:
        """Every SCC with more than one member, largest first."""
        if self._scc is None:
            self._condense()
        assert self._scc is not None
        return sorted(self._scc.groups(), key=lambda c: (-len(c), min(c)))

    def is_test(self, symbol_id: str) -> bool:
        """A test function: ``test*`` functions at module level of a test file, and ``test*``
        methods of ``Test*`` classes (or ``*TestCase`` subclasses) in test files; Go
        ``Test*`` functions in ``_test.go`` files."""
        sym = self.symbols.get(symbol_id)
        if sym is None or not is_test_file(sym.path):
            return False
        if sym.language == "go":
            return sym.kind == "function" and sym.name.startswith("Test")
        if not sym.name.startswith("test") or sym.parent is None:
            return False
        parent = self.symbols[sym.parent]
        if sym.kind == "function" and parent.kind == "module":
            return True
        if sym.kind == "method" and parent.kind == "class":
            if parent.name.startswith("Test"):
                return True
            return any(
                r.kind == "inherit" and r.src == parent.id
                and r.name.endswith(_TEST_BASE_SUFFIXES)
                for r in self._refs.get(sym.path, ())
            )
        return False

    def tests(self) -> list[str]:
        return sorted(s for s in self.symbols if self.is_test(s))

    def tests_reaching(self, ids: str | Iterable[str]) -> list[str]:
        """Test functions whose dependency graph reaches any of ``ids`` (through calls,
        references, imports, inheritance and containment), sorted."""
        start = {ids} if isinstance(ids, str) else set(ids)
        reach = self.dependents(start) | (start & self.symbols.keys())
        return sorted(s for s in reach if self.is_test(s))

    # -- reporting ------------------------------------------------------------------------
    def resolved_share(self) -> float:
        """Share of references whose target is known (a repository symbol or an external
        dotted name); 0.0 for an empty graph."""
        total, resolved = self._counts()[:2]
        return resolved / total if total else 0.0

    def _counts(self) -> tuple[int, int, int, int, int]:
        """(references, resolved, exact and resolved, internal targets, external targets)."""
        total = resolved = exact = internal = external = 0
        for refs in self._refs.values():
            if isinstance(refs, FileRefs):
                n, res, ex, inside, outside = refs.counts()
                total, resolved, exact = total + n, resolved + res, exact + ex
                internal, external = internal + inside, external + outside
                continue
            for r in refs:
                total += 1
                if r.target is not None:
                    if "::" in r.target:
                        internal += 1
                    else:
                        external += 1
                if r.resolved:
                    resolved += 1
                    exact += r.exact
        return total, resolved, exact, internal, external

    def stats(self) -> dict[str, Any]:
        """Counts for reports and Dagster metadata (JSON-friendly)."""
        total, resolved, exact, internal, external = self._counts()
        edges, dependency = _edges.edge_counts(self._succ)
        sccs = self.sccs()
        status = Counter(f.status for f in self.files.values())
        return {
            "files": len(self.files),
            "files_ok": status["ok"],
            "files_partial": status["partial"],
            "files_skipped": status["skipped"],
            "skipped": {p: f.reason for p, f in self.files.items() if f.status == "skipped"},
            "partial": {p: f.reason for p, f in self.files.items() if f.status == "partial"},
            "lines": sum(f.lines for f in self.files.values()),
            "languages": dict(Counter(f.language for f in self.files.values())),
            "symbols": len(self.symbols),
            "symbol_kinds": dict(Counter(map(_KIND_OF, self.symbols.values()))),
            "references": total,
            "references_internal": internal,
            "references_external": external,
            "references_exact": exact,
            "resolved_share": round(resolved / total if total else 0.0, 4),
            "edges": edges,
            "dependency_edges": dependency,
            "sccs": len(sccs),
            "largest_scc": len(sccs[0]) if sccs else 1,
            "seconds": round(self.seconds, 3),
        }

    def module_id(self, path: str) -> str:
        return f"{path}::{MODULE}"

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: str | Path, repository: str = "") -> Path:
        """Snapshot to ``path``, recording the repository (its store key) it is of."""
        from fleet.graph._persist import save

        return save(self, Path(path), repository)

    @staticmethod
    def load(path: str | Path, repository: str | None = None) -> SymbolGraph:
        """The snapshot at ``path``; with ``repository``, only one of that repository
        (``ForeignSnapshot`` otherwise)."""
        from fleet.graph._persist import load

        return load(Path(path), repository)

