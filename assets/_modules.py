"""Code module assets: the target repository's modules (or packages, past ~2,000 modules) as
Dagster asset specs whose deps are the import graph.

``module_summary(graph)`` is computed when ``symbol_graph`` materializes and saved next to it, so
loading the definitions reads one small JSON file, never the whole graph. On a shared store
(PostgreSQL: processes on other machines, each with its own ``FLEET_HOME``) it is published to
the store too — the summary in the library, a ``graph.modules`` ledger event of the repository
naming it — and every process loads the definitions from the published one, so the daemon, the
webserver, the sweep and the workers all see the same code module assets.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph
    from fleet.store import Store

__all__ = [
    "MAX_MODULE_ASSETS",
    "ROOT_MODULE",
    "SUMMARY_EVENT",
    "SUMMARY_FILE",
    "SUMMARY_KIND",
    "asset_key_parts",
    "load_summary",
    "module_name",
    "module_summary",
    "publish_summary",
    "published_summary",
    "save_summary",
]

MAX_MODULE_ASSETS = 2000
SUMMARY_FILE = "modules.json"
SUMMARY_KIND = "module_summary"  # the library's kind for a published summary
SUMMARY_EVENT = "graph.modules"  # the ledger event naming the repository's latest one
ROOT_MODULE = "<root>"


def module_name(path: str, depth: int | None = None) -> str:
    """``billing/payments.py`` -> ``billing.payments``; ``pkg/__init__.py`` -> ``pkg``; with
    ``depth``, only the first ``depth`` parts (the roll-up to packages)."""
    parts = path.split("/")
    stem = re.sub(r"\.[A-Za-z0-9]+$", "", parts[-1])
    parts = parts[:-1] if stem == "__init__" else [*parts[:-1], stem]
    if depth is not None:
        parts = parts[:depth]
    return ".".join(parts) or ROOT_MODULE


def asset_key_parts(module: str) -> list[str]:
    """``billing.payments`` -> ``["code", "billing", "payments"]``. A character a Dagster key
    can't hold is escaped as ``_x<hex>_`` (``data-loaders`` -> ``data_x2d_loaders``), so two
    modules never share a key (``data-loaders`` and ``data_loaders`` stay apart) and a module
    keeps its key across sweeps; the top-level ``__init__.py`` is ``code/_root``."""
    if module == ROOT_MODULE:
        return ["code", "_root"]
    return ["code", *(_escape(p) for p in module.split("."))]


def _escape(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", lambda m: f"_x{ord(m[0]):02x}_", part) or "_"


def _rollup_depth(paths: Iterable[str], limit: int) -> int | None:
    paths = list(paths)
    if len({module_name(p) for p in paths}) <= limit:
        return None
    depth = max(len(p.split("/")) for p in paths)
    while depth > 1 and len({module_name(p, depth) for p in paths}) > limit:
        depth -= 1
    return depth


def module_summary(graph: SymbolGraph, limit: int = MAX_MODULE_ASSETS) -> dict[str, Any]:
    """Modules, their metadata (symbols, counts, hashes) and an acyclic set of import deps.

    Import cycles (``UserAuth`` <-> ``TenantContext``) cannot be Dagster edges: inside a strongly
    connected component only the edges that follow a fixed order are kept, and every module in it
    records the cycle in its metadata.
    """
    files: dict[str, Any] = graph.files
    depth = _rollup_depth(files, limit)
    modules: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"paths": [], "symbols": 0, "kinds": defaultdict(int), "lines": 0, "sha256": []}
    )
    for path, record in sorted(files.items()):
        mod = modules[module_name(path, depth)]
        mod["paths"].append(path)
        mod["lines"] += int(getattr(record, "lines", 0) or 0)
        mod["sha256"].append(str(getattr(record, "sha256", "")))
    for symbol in graph.symbols.values():
        if symbol.path in files:
            mod = modules[module_name(symbol.path, depth)]
            mod["symbols"] += 1
            mod["kinds"][symbol.kind] += 1
    import networkx as nx  # here: every Dagster process loads this module, few index

    deps: nx.DiGraph[str] = nx.DiGraph()
    deps.add_nodes_from(modules)
    edges = list(graph.graph.edges(data=True))
    import_edges = [
        e for e in edges if any(str(k).startswith("import") for k in e[2].get("kinds") or ())
    ] or edges
    for u, v, _ in import_edges:
        pu, pv = str(u).split("::", 1)[0], str(v).split("::", 1)[0]
        if pu in files and pv in files:
            mu, mv = module_name(pu, depth), module_name(pv, depth)
            if mu != mv:
                deps.add_edge(mu, mv)
    out: dict[str, Any] = {"rolled_up_depth": depth, "modules": {}}
    cycles: dict[str, list[str]] = {}
    for scc in nx.strongly_connected_components(deps):
        if len(scc) > 1:
            for m in scc:
                cycles[m] = sorted(scc - {m})
    for name, mod in sorted(modules.items()):
        kept = sorted(
            v for v in deps.successors(name) if v not in cycles.get(name, ()) or v < name
        )
        out["modules"][name] = {
            "paths": mod["paths"],
            "symbols": mod["symbols"],
            "kinds": dict(mod["kinds"]),
            "lines": mod["lines"],
            "sha256": hashlib.sha256("".join(mod["sha256"]).encode()).hexdigest(),
            "deps": kept,
            "cycle_with": cycles.get(name, []),
        }
    return out


def save_summary(summary: dict[str, Any], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / SUMMARY_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=1, sort_keys=True))
    tmp.replace(path)
    return path


def load_summary(directory: Path) -> dict[str, Any] | None:
    path = directory / SUMMARY_FILE
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def publish_summary(store: Store, summary: dict[str, Any]) -> bool:
    """Publish ``summary`` as the repository's latest (``store``: its repository's view): the
    JSON in the library (content-addressed), and a ``graph.modules`` event naming its hash when
    it differs from the last one published. True if an event was appended."""
    text = json.dumps(summary, sort_keys=True)
    artifact = store.library.put(text, kind=SUMMARY_KIND, name=SUMMARY_FILE)
    last = _last_published(store)
    if last is not None and last.payload.get("hash") == artifact.hash:
        return False
    store.ledger.append(SUMMARY_EVENT, {"hash": artifact.hash,
                                        "modules": len(summary.get("modules") or {})},
                        actor="symbol_graph")
    return True


def published_summary(store: Store) -> dict[str, Any] | None:
    """The repository's latest published summary, or None before its first."""
    last = _last_published(store)
    if last is None:
        return None
    text = store.library.get_text(str(last.payload.get("hash", "")))
    if text is None:
        return None
    data: dict[str, Any] = json.loads(text)
    return data


def _last_published(store: Store) -> Any:
    events = store.ledger.events(kind=SUMMARY_EVENT)
    return events[-1] if events else None
