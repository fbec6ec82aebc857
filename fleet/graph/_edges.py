"""Graph construction and condensation: references -> dependency adjacency (full or patched
for an incremental re-index), SCCs and lock ranks.

The adjacency is networkx's dict-of-dicts layout (``succ[u][v]`` and ``pred[v][u]`` are the
edge's attribute dict ``{"kinds": (...)}``), filled directly and without networkx itself:
``SymbolGraph`` wraps it in an ``nx.DiGraph`` only when its ``graph`` is asked for (importing
networkx costs ~0.25 CPU-s, a tenth of an index). While building, an edge's kinds are a bit
mask; every edge with the same kinds shares one attribute dict (read-only, as the graph is).
Graphs are treated as immutable once built: a patched graph shares untouched rows with the
graph it came from.
"""

from __future__ import annotations

import array
import heapq
import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fleet.graph._extract_native import _module as native_module
from fleet.graph._model import EDGE_KIND, MODULE, Reference, Symbol
from fleet.graph._refs import KINDS, FileRefs, RawRefs

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "Adjacency",
    "Masks",
    "SccMap",
    "add_refs",
    "build_graph",
    "condense",
    "condense_python",
    "digraph",
    "edge_counts",
    "patch_graph",
    "predecessors",
    "tarjan",
]

_MODULE_SUFFIX = f"::{MODULE}"
Adjacency = dict[str, dict[str, dict[str, Any]]]
Masks = dict[str, dict[str, int]]

# edge kinds as bits; a reference kind -> the bit of its edge kind (``EDGE_KIND``)
_BITS = {"calls": 1, "contains": 2, "imports": 4, "inherits": 8, "references": 16}
_REF_BIT = {kind: _BITS[edge] for kind, edge in EDGE_KIND.items()}
_CONTAINS = _BITS["contains"]
_CODE_BITS = tuple(_REF_BIT[kind] for kind in KINDS)  # a ``RawRefs`` kind code -> its bit
# the row of a node without edges, shared (rows are never mutated once built: a patch copies
# a row before changing it); a row is a dict of its own from its first edge on (Django:
# 115k row dicts allocated, most of them to stay empty)
_EMPTY: dict[str, Any] = {}
_KINDS_OF = operator.itemgetter("kinds")  # an edge's attribute dict -> its kinds


def _attr_table() -> list[dict[str, Any]]:
    """One attribute dict per kinds mask (for one graph: a caller mutating one edge's dict
    would otherwise reach other graphs)."""
    return [{"kinds": tuple(k for k, b in _BITS.items() if m & b)} for m in range(32)]


def _uses(refs: Iterable[Reference]) -> Iterator[tuple[str, str | None, str]]:
    if isinstance(refs, FileRefs):
        return refs.uses()
    return ((r.src, r.target, r.kind) for r in refs)


def add_refs(succ: Masks, refs: Iterable[Reference], symbols: Mapping[str, Symbol]) -> None:
    """Add the dependency edges of ``refs`` whose target is a repository symbol."""
    bits = _REF_BIT
    native = native_module()
    if (native is not None and isinstance(refs, FileRefs) and isinstance(refs.raw, RawRefs)
            and type(symbols) is dict and type(refs.targets) is list
            and type(refs.flags) is bytes):
        # the loop below over the columns in C (condense.c), then the few extra references
        raw = refs.raw
        native.edge_masks(succ, raw.scopes, raw.kinds, refs.targets, refs.flags, _CODE_BITS,
                          symbols, _EMPTY)
        refs = refs.extra
    for src, target, kind in _uses(refs):
        if target is None or target not in symbols:
            continue
        # a use of an enclosing symbol (src is target or under ``target.``, or in the module
        # target names): structural, not a dependency
        if src.startswith(target) and (len(src) == len(target) or src[len(target)] == "."):
            continue
        if target.endswith(_MODULE_SUFFIX) and src.startswith(target[: -len(MODULE)]):
            continue
        row = succ[src]
        if row is _EMPTY:
            row = succ[src] = {}
        row[target] = row.get(target, 0) | bits[kind]


def _contains(succ: Masks, symbols: Iterable[Symbol]) -> None:
    """Class -> member and function -> nested function. A module symbol stands for the
    module-level code only: were it to contain its top-level symbols, ``import x`` would make
    the importer depend on all of x, and mutual imports would fuse whole modules into one SCC
    (in the stdlib, one of 4,582 symbols). In C (``contains_masks``, edges.c) when built."""
    in_c = getattr(native_module(), "contains_masks", None)
    if in_c is not None and type(succ) is dict:
        in_c(succ, symbols, _EMPTY, _CONTAINS)
        return
    for sym in symbols:
        parent = sym.parent
        if parent is not None and not parent.endswith(_MODULE_SUFFIX):
            row = succ[parent]
            if row is _EMPTY:
                row = succ[parent] = {}
            row[sym.id] = row.get(sym.id, 0) | _CONTAINS


def digraph(adj: Adjacency, pred: Adjacency) -> nx.DiGraph:
    """An ``nx.DiGraph`` over the adjacency (shared, not copied)."""
    import networkx as nx

    graph: nx.DiGraph = nx.DiGraph()
    graph._node = {n: {} for n in adj}  # type: ignore[attr-defined]
    graph._adj = graph._succ = adj  # type: ignore[attr-defined]
    graph._pred = pred  # type: ignore[attr-defined]
    return graph


def build_graph(symbols: Mapping[str, Symbol],
                refs_by_file: Iterable[Iterable[Reference]]) -> Adjacency:
    """succ of the dependency graph: every symbol a node, in id order (``predecessors`` gives
    pred, built only when asked for: neither the statistics nor a snapshot read it)."""
    succ: Masks = dict.fromkeys(sorted(symbols), _EMPTY)
    _contains(succ, symbols.values())
    for refs in refs_by_file:
        add_refs(succ, refs, symbols)
    attrs = _attr_table()
    adj: Adjacency = succ  # type: ignore[assignment]  # the masks become attribute dicts in place
    in_c = getattr(native_module(), "mask_attrs", None)
    if in_c is not None:  # the loop below in C (edges.c)
        in_c(succ, attrs)
        return adj
    for targets in succ.values():
        for v, mask in targets.items():
            targets[v] = attrs[mask]  # type: ignore[assignment]
    return adj


def edge_counts(succ: Adjacency) -> tuple[int, int]:
    """(edges, edges with a kind other than ``contains``), without a Python loop over the
    edges (146k on Django)."""
    rows = succ.values()
    edges = sum(map(len, rows))
    contains = operator.countOf(map(_KINDS_OF, itertools.chain.from_iterable(
        map(dict.values, rows))), ("contains",))
    return edges, edges - contains


def predecessors(succ: Adjacency) -> Adjacency:
    """pred of ``succ``: ``pred[v][u]`` is ``succ[u][v]``'s attribute dict (rows in ``succ``'s
    node order, each in its sources' order)."""
    pred: Adjacency = dict.fromkeys(succ, _EMPTY)
    for u, targets in succ.items():
        for v, attr in targets.items():
            into = pred[v]
            if into is _EMPTY:
                into = pred[v] = {}
            into[u] = attr
    return pred


def patch_graph(old_adj: Adjacency, old_pred: Adjacency, symbols: Mapping[str, Symbol],
                changed: Mapping[str, tuple[list[Symbol], Sequence[Reference]]],
                removed: Iterable[str] = ()) -> tuple[Adjacency, Adjacency]:
    """The previous adjacency with the out-edges of the symbols of the ``changed`` files (path
    -> (its symbols, its references)) recomputed, the ``removed`` symbol ids dropped with their
    edges, and the changed files' new symbols added. Every file with a reference to a removed
    symbol must be among ``changed`` (the incremental index re-resolves those files anyway);
    the previous dicts are not mutated."""
    adj = dict(old_adj)
    pred: Adjacency = dict(old_pred)
    copied: set[str] = set()
    copied_rows: set[str] = set()
    attrs = _attr_table()

    def own(v: str) -> dict[str, dict[str, Any]]:
        if v not in copied:
            pred[v] = dict(pred[v])
            copied.add(v)
        return pred[v]

    gone = [u for u in removed if u in old_adj]
    added = [s.id for sources, _ in changed.values() for s in sources if s.id not in old_adj]
    for u in gone:
        for v in adj[u]:
            if v in pred:
                own(v).pop(u, None)
        for w in pred[u]:
            if w in adj and w != u:
                if w not in copied_rows:
                    adj[w] = dict(adj[w])
                    copied_rows.add(w)
                adj[w].pop(u, None)
        del adj[u], pred[u]
    for u in added:
        adj[u], pred[u] = {}, {}
        copied.add(u)
        copied_rows.add(u)

    for sources, refs in changed.values():
        succ: Masks = {s.id: {} for s in sources}
        _contains(succ, sources)
        add_refs(succ, refs, symbols)
        for u, targets in succ.items():
            row: dict[str, dict[str, Any]] = {v: attrs[mask] for v, mask in targets.items()}
            before = adj[u]
            if row == before:
                continue  # most symbols of a re-resolved file keep their edges: rows shared
            for v in before:
                if v not in row:
                    own(v).pop(u, None)
            for v, attr in row.items():
                if before.get(v) != attr:
                    own(v)[u] = attr
            adj[u] = row
    return adj, pred


class SccMap(Mapping[str, frozenset[str]]):
    """Node -> its SCC, holding only the SCCs of more than one member: a node alone is its own
    SCC, built when first asked for and kept, so one SCC stays one object (Django: 57k
    singleton frozensets were 12 MB)."""

    __slots__ = ("_multi", "_nodes")

    def __init__(self, nodes: Mapping[str, object], multi: dict[str, frozenset[str]]) -> None:
        self._nodes = nodes
        self._multi = multi

    def __getitem__(self, node: str) -> frozenset[str]:
        got = self._multi.get(node)
        if got is not None:
            return got
        if node not in self._nodes:
            raise KeyError(node)
        got = self._multi[node] = frozenset((node,))
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def groups(self) -> list[frozenset[str]]:
        """Every SCC with more than one member, once each."""
        return list({id(c): c for c in self._multi.values() if len(c) > 1}.values())


def condense(succ: Adjacency) -> tuple[dict[str, int], SccMap]:
    """(lock rank, SCC) of every node. Kahn's algorithm over the condensation with a heap
    keyed by each SCC's smallest id: dependencies (successors) first, ties by id. In C
    (``_c/condense.c``, over the graph numbered in id order) when the extension is built."""
    native = native_module()
    native_condense = getattr(native, "condense", None)  # None: no build, or a stale one
    if native_condense is None:
        rank_of, scc_of = condense_python(succ)
        return rank_of, SccMap(rank_of, {n: c for n, c in scc_of.items() if len(c) > 1})
    nodes = sorted(succ)
    csr = getattr(native, "csr", None)
    if csr is not None:  # the numbering and the CSR arrays below, in C (condense.c)
        comp_bytes, rank_bytes = native_condense(*csr(succ, nodes))
    else:
        number = {n: i for i, n in enumerate(nodes)}
        rows = [succ[n] for n in nodes]
        targets = array.array("I", [number[v] for row in rows for v in row])
        offsets = array.array("I", [0, *itertools.accumulate(map(len, rows))])
        del number, rows
        comp_bytes, rank_bytes = native_condense(offsets, targets)
    comp, packed = array.array("I"), array.array("I")
    comp.frombytes(comp_bytes)
    packed.frombytes(rank_bytes)
    ranks = packed.tolist()  # one int object per SCC, shared by its members
    sizes = [0] * len(ranks)
    for c in comp:
        sizes[c] += 1
    members: dict[int, list[str]] = {}
    for n, c in zip(nodes, comp, strict=True):
        if sizes[c] > 1:
            members.setdefault(c, []).append(n)
    sets = {c: frozenset(m) for c, m in members.items()}
    rank = {n: ranks[c] for n, c in zip(nodes, comp, strict=True)}
    return rank, SccMap(rank, {n: sets[c] for c, m in members.items() for n in m})


def condense_python(succ: Adjacency) -> tuple[dict[str, int], dict[str, frozenset[str]]]:
    """``condense`` without the extension (and the specification its C version is tested
    against)."""
    comps = [frozenset(c) for c in tarjan(succ)]
    comp_of: dict[str, int] = {}
    for i, comp in enumerate(comps):
        for sid in comp:
            comp_of[sid] = i
    waiting = [0] * len(comps)  # dependencies not yet ranked
    dependents: list[set[int]] = [set() for _ in comps]
    for u, row in succ.items():
        cu = comp_of[u]
        for v in row:
            cv = comp_of[v]
            if cu != cv and cu not in dependents[cv]:
                dependents[cv].add(cu)
                waiting[cu] += 1
    keys = [min(c) for c in comps]
    heap = [(keys[i], i) for i in range(len(comps)) if waiting[i] == 0]
    heapq.heapify(heap)
    rank: dict[str, int] = {}
    scc: dict[str, frozenset[str]] = {}
    position = 0
    while heap:
        _, i = heapq.heappop(heap)
        for sid in comps[i]:
            rank[sid] = position
            scc[sid] = comps[i]
        position += 1
        for j in dependents[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(heap, (keys[j], j))
    return rank, scc


def tarjan(succ: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """Strongly connected components, iterative Tarjan over plain adjacency dicts (networkx's
    version goes through its views, several times slower on graphs of this size)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in succ:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(succ[root]))]
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ[nxt])))
                    break
                if nxt in on_stack and index[nxt] < low[node]:
                    low[node] = index[nxt]
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    if low[node] < low[parent]:
                        low[parent] = low[node]
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    out.append(comp)
    return out
