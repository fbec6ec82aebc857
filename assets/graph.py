"""``symbol_graph`` (the repository indexed into a SymbolGraph, incrementally from the previous
materialization) and the code module assets built from its import edges by a factory."""


from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    AssetSpec,
    DataVersion,
    MaterializeResult,
    MetadataValue,
    ResourceParam,
    asset,
    multi_asset,
)

from assets._fleet import GRAPH_FILE, graph_dir, index
from assets._modules import (
    SUMMARY_FILE,
    asset_key_parts,
    load_summary,
    publish_summary,
    published_summary,
)
from assets._seams import RepoSource, StoreSource
from fleet.errors import KillSwitchEngaged

# The index and its files are part of this module's API for fleet_pipelines (the definitions
# read the saved module summary, a worker indexes the base before its steps, the sweep names the
# changed code modules' asset keys); their implementations stay in assets._fleet / _modules.
__all__ = [
    "GRAPH_FILE",
    "SUMMARY_FILE",
    "SYMBOL_GRAPH",
    "asset_key_parts",
    "code_module_assets",
    "graph_dir",
    "index",
    "load_summary",
    "published_summary",
    "symbol_graph",
]

SYMBOL_GRAPH = AssetKey("symbol_graph")


@asset(key=SYMBOL_GRAPH, group_name="code", description=(
    "The base branch's head commit of the target repository (never uncommitted edits) indexed "
    "with tree-sitter into a symbol dependency graph (incremental: only files changed since "
    "the previous materialization are re-parsed)."))
def symbol_graph(store: ResourceParam[StoreSource], repo: ResourceParam[RepoSource]
                 ) -> MaterializeResult:
    if store.killed():
        raise KillSwitchEngaged("kill switch engaged")
    stats = index(Path(repo.path), Path(repo.home), repo.base_branch)
    if store.shared():  # the other processes' definitions load the code modules from there
        summary = load_summary(graph_dir(Path(repo.home)))
        if summary is not None:
            publish_summary(store.store(), summary)
    # The graph is a function of the base commit: re-indexing an unchanged base gives the same
    # data version, so nothing downstream turns stale ("Unsynced") after a sweep that changed
    # nothing.
    return MaterializeResult(metadata=stats, data_version=DataVersion(str(stats["commit"])))


def code_module_assets(home: Path, summary: dict[str, Any] | None = None
                       ) -> list[AssetsDefinition]:
    """One asset ``code/<module>`` per module of the last indexed graph (packages past ~2,000
    modules), deps = its imports; empty before the first ``symbol_graph`` materialization.
    ``summary``: the one to use (the store's published one on a shared store), else the one
    saved under ``home``."""
    if summary is None:
        summary = load_summary(graph_dir(home))
    if not summary or not summary.get("modules"):
        return []
    modules: dict[str, dict[str, Any]] = summary["modules"]
    keys = {name: AssetKey(asset_key_parts(name)) for name in modules}
    specs = [
        AssetSpec(
            key=keys[name],
            deps=[SYMBOL_GRAPH, *(keys[d] for d in info["deps"] if d in keys)],
            group_name="code",
            description=f"{len(info['paths'])} file(s): {', '.join(info['paths'][:5])}",
            metadata={"paths": ", ".join(info["paths"][:50]),
                      "cycle_with": ", ".join(info["cycle_with"])},
            kinds={"python"},
        )
        for name, info in sorted(modules.items())
    ]
    by_key = {keys[name]: info for name, info in modules.items()}

    @multi_asset(name="code_modules", specs=specs, can_subset=True)
    def code_modules(context: AssetExecutionContext) -> Iterator[MaterializeResult]:
        current = load_summary(graph_dir(home)) or {"modules": {}}
        now = {AssetKey(asset_key_parts(n)): i for n, i in current["modules"].items()}
        for key in _dependencies_first(context.selected_asset_keys, by_key, keys):
            info = now.get(key, by_key[key])
            yield MaterializeResult(asset_key=key, data_version=DataVersion(info["sha256"]),
                                    metadata={
                                        "symbols": info["symbols"],
                                        "kinds": MetadataValue.json(info["kinds"]),
                                        "lines": info["lines"],
                                        "sha256": info["sha256"],
                                        "imports": len(info["deps"]),
                                    })

    return [code_modules]


def _dependencies_first(selected: AbstractSet[AssetKey], infos: dict[AssetKey, dict[str, Any]],
                        keys: dict[str, AssetKey]) -> list[AssetKey]:
    """A multi-asset yields its outputs in topological order (dependencies first)."""
    import networkx as nx  # here: every Dagster process loads this module, few materialize it

    graph: nx.DiGraph[AssetKey] = nx.DiGraph()
    graph.add_nodes_from(selected)
    for key in selected:
        for dep in infos[key]["deps"]:
            if dep in keys and keys[dep] in selected:
                graph.add_edge(keys[dep], key)
    return list(nx.lexicographical_topological_sort(graph, key=lambda k: k.to_user_string()))
