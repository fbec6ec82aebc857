"""Findings -> work units: planning atoms (never split), packing under a size cap, stable keys."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from fleet.campaigns.spec import PlanSettings
from fleet.types import Finding, LeaseRequest, WorkUnit

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = ["ancestors", "build_units", "lease_requests", "unit_key"]

MODULE = "<module>"


def ancestors(symbol: str) -> list[str]:
    """Enclosing symbols by id, outermost first: ``a.py::A.B.c`` -> ``a.py::<module>``,
    ``a.py::A``, ``a.py::A.B`` (leases are hierarchical along these)."""
    path, _, qualname = symbol.partition("::")
    if qualname == MODULE:
        return []
    parts = qualname.split(".")
    return [f"{path}::{MODULE}"] + [f"{path}::{'.'.join(parts[:i])}" for i in range(1, len(parts))]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _atoms(graph: SymbolGraph, symbols: Sequence[str], settings: PlanSettings) -> list[list[str]]:
    """Groups of finding symbols that must go to one agent: one SCC of the graph, a symbol and
    the symbols nested in it, and (per ``coupled``) a file's or a dependency-connected set."""
    uf = _UnionFind()
    present = set(symbols)
    by_scc: dict[frozenset[str], str] = {}
    by_path: dict[str, str] = {}
    for sym in symbols:
        uf.find(sym)
        if sym in graph.symbols:
            scc = graph.scc(sym)
            if len(scc) > 1:
                if scc in by_scc:
                    uf.union(sym, by_scc[scc])
                else:
                    by_scc[scc] = sym
        for anc in ancestors(sym)[1:]:  # a class and its methods; not the whole module
            if anc in present:
                uf.union(sym, anc)
        path = sym.split("::", 1)[0]
        if settings.coupled == "file":
            uf.union(sym, by_path.setdefault(path, sym))
        if settings.coupled == "connected" and sym in graph.symbols:
            for dep in graph.dependencies(sym, structural=False):
                if dep in present:
                    uf.union(sym, dep)
    groups: dict[str, list[str]] = defaultdict(list)
    for sym in symbols:
        groups[uf.find(sym)].append(sym)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])


def _read_set(graph: SymbolGraph, write: Iterable[str], extra: Iterable[str]) -> list[str]:
    write = set(write)
    inside = write | {a for s in write for a in ancestors(s)}
    reads: set[str] = set(extra)
    for sym in write:
        if sym in graph.symbols:
            reads |= graph.dependencies(sym, structural=False)
    out = []
    for sym in reads - inside:
        if sym.endswith("::" + MODULE) or sym not in graph.symbols:
            continue  # a read lease on a whole module would serialize every unit in it
        if any(a in write for a in ancestors(sym)):
            continue  # nested in what the unit writes anyway
        out.append(sym)
    return sorted(out)


def unit_key(campaign: str, base_commit: str, write_set: Sequence[str], fps: Sequence[str]) -> str:
    payload = json.dumps([campaign, base_commit, sorted(write_set), sorted(fps)])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _rank(graph: SymbolGraph, symbol: str) -> int:
    return graph.lock_rank(symbol) if symbol in graph.symbols else 0


def lease_requests(graph: SymbolGraph, unit: WorkUnit) -> list[LeaseRequest]:
    """The unit's leases (write set: write, read set: read) in acquisition order."""
    requests = [LeaseRequest(s, "write", _rank(graph, s)) for s in unit.write_set]
    requests += [LeaseRequest(s, "read", _rank(graph, s)) for s in unit.read_set]
    return sorted(requests, key=lambda r: (r.rank, r.symbol))


def build_units(
    graph: SymbolGraph,
    findings: Sequence[Finding],
    campaign: str,
    base_commit: str,
    settings: PlanSettings,
    extra_reads: Iterable[str] = (),
) -> list[WorkUnit]:
    """Work units (``wave`` still 0) in a deterministic order."""
    by_symbol: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_symbol[finding.symbol].append(finding)
    atoms = _atoms(graph, sorted(by_symbol), settings)
    packs: list[list[str]] = []
    if settings.granularity == "symbol":
        packs = atoms
    else:
        by_file: dict[str, list[list[str]]] = defaultdict(list)
        for atom in atoms:
            by_file[atom[0].split("::", 1)[0]].append(atom)
        for path in sorted(by_file):
            current: list[str] = []
            for atom in by_file[path]:
                if current and len(current) + len(atom) > settings.max_unit_symbols:
                    packs.append(current)
                    current = []
                current = current + atom
            if current:
                packs.append(current)
    extra = [s for s in extra_reads if s in graph.symbols]
    units = []
    for pack in packs:
        write = tuple(sorted(pack))
        unit_findings = tuple(
            sorted((f for s in write for f in by_symbol[s]), key=lambda f: (f.path, f.start_byte))
        )
        fps = [f.fingerprint for f in unit_findings]
        units.append(
            WorkUnit(
                key=unit_key(campaign, base_commit, write, fps),
                campaign=campaign,
                base_commit=base_commit,
                write_set=write,
                read_set=tuple(_read_set(graph, write, extra)),
                findings=unit_findings,
                rank=min(_rank(graph, s) for s in write),
            )
        )
    return sorted(units, key=lambda u: (u.rank, u.key))
