"""Findings -> work units: planning atoms (never split), packing under a size cap, stable keys."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from fleet.campaigns.spec import PlanSettings
from fleet.types import Finding, LeaseRequest, WorkUnit

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = ["ancestors", "build_units", "containers", "lease_requests", "module_of", "unit_key"]

MODULE = "<module>"


def ancestors(symbol: str) -> list[str]:
    """Enclosing symbols by id, outermost first: ``a.py::A.B.c`` -> ``a.py::<module>``,
    ``a.py::A``, ``a.py::A.B``. Leases are hierarchical along :func:`containers`, which leaves
    out ``<module>``."""
    path, _, qualname = symbol.partition("::")
    if qualname == MODULE:
        return []
    parts = qualname.split(".")
    return [f"{path}::{MODULE}"] + [f"{path}::{'.'.join(parts[:i])}" for i in range(1, len(parts))]


def containers(symbol: str) -> list[str]:
    """The symbols whose lease contains ``symbol``'s (as the lease stores judge it): its
    enclosing classes and functions, outermost first. ``path::<module>`` is the module-level code
    of a file only, not a container: a write lease on it does not conflict with ``path::Foo``."""
    return ancestors(symbol)[1:]


def module_of(path: str) -> str:
    """``path::<module>``: the symbol of a file's module-level code (its imports among it)."""
    return f"{path}::{MODULE}"


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


def _atoms(
    graph: SymbolGraph,
    symbols: Sequence[str],
    settings: PlanSettings,
    per_file: bool = False,
    links: Iterable[tuple[str, str]] = (),
) -> list[list[str]]:
    """Groups of finding symbols that must go to one agent: one SCC of the graph, a symbol and
    the symbols nested in it, and (per ``coupled``, or ``per_file``) a file's or a
    dependency-connected set; ``links`` are pairs that must go together (a finding's symbol and
    the container its fix writes)."""
    uf = _UnionFind()
    for a, b in links:
        uf.union(a, b)
    present = set(symbols)
    holder: dict[str, str] = {}  # a container of a finding symbol -> that symbol
    for sym in symbols:
        for anc in containers(sym):
            holder.setdefault(anc, sym)
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
        for anc in containers(sym):  # a class and its methods; not the whole module
            if anc in present:
                uf.union(sym, anc)
        path = sym.split("::", 1)[0]
        if settings.coupled == "all":
            uf.union(sym, symbols[0])
        if settings.coupled in ("file", "file+tests") or per_file:
            uf.union(sym, by_path.setdefault(path, sym))
        if settings.coupled == "connected" and sym in graph.symbols:
            for dep in graph.dependencies(sym, structural=False):
                if dep in present:
                    uf.union(sym, dep)
                elif dep in holder:  # relies on a class whose members the campaign rewrites
                    uf.union(sym, holder[dep])
    if settings.coupled == "file+tests":
        for a, b in _test_links(graph, symbols):
            uf.union(a, b)
    groups: dict[str, list[str]] = defaultdict(list)
    for sym in symbols:
        groups[uf.find(sym)].append(sym)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])


def _test_links(graph: SymbolGraph, symbols: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs (a finding in a test file, a finding in a module that test file imports or names by
    its dotted name): a fix that changes what a module returns (naive -> aware datetimes) and the
    test that compares with it must change together, else each alone breaks the other."""
    from fleet.verify.gates import is_test_path

    by_module: dict[str, str] = {}
    for sym in symbols:
        path = sym.split("::", 1)[0]
        if not is_test_path(path) and path.endswith(".py"):
            module = graph.modules.get(path) or path.removesuffix(".py").replace("/", ".")
            by_module.setdefault(module, sym)
    if not by_module:
        return []
    links: list[tuple[str, str]] = []
    seen: set[str] = set()
    for sym in symbols:
        path = sym.split("::", 1)[0]
        if path in seen or not is_test_path(path):
            continue
        seen.add(path)
        targets = set(graph.imports.get(path, {}).values())
        try:
            text = (graph.root / path).read_text(errors="replace")
        except OSError:
            text = ""
        for module, other in by_module.items():
            if any(t == module or t.startswith(module + ".") for t in targets) or (
                "." in module and re.search(rf"\b{re.escape(module)}\b", text)
            ):
                links.append((sym, other))
    return links


def _container_written(graph: SymbolGraph, finding: Finding) -> str | None:
    """The enclosing symbol a finding's fix writes besides its own, as the lease-scope gate sees
    an edit (by class and function spans): a variable's assignment is code of its class body or
    of ``<module>``; a whole nested definition replaced by something else (pydantic's ``class
    Config`` -> ``model_config = ...``) puts the replacement in the enclosing class. Else
    ``None``."""
    sym = graph.symbols.get(finding.symbol)
    if sym is None or sym.parent is None:
        return None
    if sym.kind == "variable":
        return sym.parent
    if sym.kind not in ("class", "function", "method") or sym.parent.endswith("::" + MODULE):
        return None
    whole = finding.start_byte <= max(sym.start_byte, sym.sig_start_byte) and (
        finding.end_byte >= sym.end_byte)
    return sym.parent if whole else None


def _read_set(graph: SymbolGraph, write: Iterable[str], extra: Iterable[str]) -> list[str]:
    write = set(write)
    inside = write | {a for s in write for a in containers(s)}
    reads: set[str] = set(extra)
    for sym in write:
        if sym in graph.symbols:
            reads |= graph.dependencies(sym, structural=False)
    out = []
    for sym in reads - inside:
        if sym.endswith("::" + MODULE) or sym not in graph.symbols:
            continue  # a read lease on a whole module would serialize every unit in it
        if any(a in write for a in containers(sym)):
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
    *,
    edits_imports: bool = False,
    repository: str = "",
) -> list[WorkUnit]:
    """Work units (``wave`` still 0) in a deterministic order, of the repository whose store key
    is ``repository`` (``WorkUnit.repository``; the key is the same for every repository).

    ``edits_imports`` (the fix rewrites module-level imports, e.g. adds ``from datetime import
    UTC``): every unit also writes ``path::<module>`` of each file it edits, so the import edit is
    inside its lease, and a file's findings stay in one unit - two units of one file would both
    need that write lease (serialised) and both rewrite the same import lines (conflicting).
    """
    by_symbol: dict[str, list[Finding]] = defaultdict(list)
    links: set[tuple[str, str]] = set()
    for finding in findings:
        by_symbol[finding.symbol].append(finding)
        owner = _container_written(graph, finding)
        if owner is not None:
            links.add((finding.symbol, owner))
    symbols = sorted(set(by_symbol) | {owner for _, owner in links})
    atoms = _atoms(graph, symbols, settings, per_file=edits_imports, links=sorted(links))
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
        modules = {module_of(s.split("::", 1)[0]) for s in pack} if edits_imports else set()
        edited = set(pack) | modules
        # a write lease on a class covers its members: lease only the outermost (a member's
        # own lease would be granted before its class's and so be fenced off by it)
        write = tuple(sorted(s for s in edited if not any(a in edited for a in containers(s))))
        unit_findings = tuple(
            sorted((f for s in edited for f in by_symbol[s]), key=lambda f: (f.path, f.start_byte))
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
                repository=repository,
            )
        )
    return sorted(units, key=lambda u: (u.rank, u.key))
