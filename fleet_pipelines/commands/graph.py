"""``fleet index PATH`` and ``fleet graph show SYMBOL``: build and inspect the symbol graph."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

graph_app = typer.Typer(
    name="graph", help="Inspect the symbol graph of a repository.", no_args_is_help=True
)


def _build(path: Path, out: Path | None, quiet: bool) -> SymbolGraph:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from fleet.graph import SnapshotError, SymbolGraph, index

    previous = None
    if out is not None and out.exists():
        try:
            previous = SymbolGraph.load(out)
        except SnapshotError:
            previous = None  # rebuilt from scratch and overwritten below
    with Progress(
        TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"), transient=True, disable=quiet,
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task("", total=None)

        def progress(done: int, total: int, rel: str) -> None:
            bar.update(task, completed=done, total=total, description=rel[-60:])

        graph = index(path, previous=previous, progress=progress)
    if out is not None:
        graph.save(out)
    return graph


def _summary(stats: dict[str, Any]) -> str:
    lines = [
        f"files      {stats['files']} ({stats['files_ok']} ok, {stats['files_partial']} partial, "
        f"{stats['files_skipped']} skipped)",
        f"lines      {stats['lines']}",
        f"symbols    {stats['symbols']}  "
        + ", ".join(f"{k} {v}" for k, v in sorted(stats["symbol_kinds"].items())),
        f"edges      {stats['edges']} ({stats['dependency_edges']} dependency, the rest contains)",
        f"references {stats['references']}  resolved {stats['resolved_share']:.1%} "
        f"(in repo {stats['references_internal']}, external {stats['references_external']})",
        f"SCCs       {stats['sccs']} with >1 member, largest {stats['largest_scc']}",
        f"seconds    {stats['seconds']:.2f}  (Python: {stats['python_extractor']})",
    ]
    for label in ("skipped", "partial"):
        for path, reason in sorted(stats[label].items()):
            lines.append(f"{label:<10} {path}: {reason}")
    return "\n".join(lines)


def index_command(
    path: Annotated[Path, typer.Argument(help="Repository root to index.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Save a snapshot here (re-used incrementally next time)."),
    ] = None,
) -> None:
    """Index PATH into a symbol graph and print a summary."""
    from fleet.graph import IndexingError, python_extractor

    try:
        graph = _build(path, out, quiet=as_json or not sys.stderr.isatty())
    except IndexingError as exc:
        print(str(exc), file=sys.stderr)
        raise typer.Exit(2) from None
    stats = graph.stats()
    off = os.environ.get("FLEET_GRAPH_NATIVE") == "0"
    stats["python_extractor"] = (
        "C walk" if python_extractor() == "native"
        else f"query files ({'FLEET_GRAPH_NATIVE=0' if off else 'C extension not built'})")
    if out is not None:
        stats["snapshot"] = str(out)
    print(json.dumps(stats, indent=2, sort_keys=True) if as_json else _summary(stats))


def _find(graph: SymbolGraph, query: str) -> list[str]:
    if query in graph.symbols:
        return [query]
    by_dotted = graph.resolve_dotted(query)
    if by_dotted is not None:
        return [by_dotted]
    return sorted(s for s in graph.symbols if s.endswith(f"::{query}") or s.endswith(f".{query}"))


@graph_app.command("show")
def show(
    symbol: Annotated[str, typer.Argument(help="Symbol id, dotted name, or qualified name.")],
    repo: Annotated[Path, typer.Option("--repo", "-r", help="Repository root.")] = Path("."),
    snapshot: Annotated[
        Path | None, typer.Option("--snapshot", "-s", help="Use this saved graph.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show a symbol's lock rank, SCC, dependencies and dependents."""
    from fleet.graph import IndexingError, SnapshotError, SymbolGraph, index

    try:
        graph = SymbolGraph.load(snapshot) if snapshot is not None else index(repo)
    except (IndexingError, SnapshotError) as exc:
        print(str(exc), file=sys.stderr)
        raise typer.Exit(2) from None
    found = _find(graph, symbol)
    if len(found) != 1:
        what = "no symbol matches" if not found else "ambiguous: " + ", ".join(found[:10])
        print(f"{symbol}: {what}", file=sys.stderr)
        raise typer.Exit(1)
    sid = found[0]
    sym = graph.symbol(sid)
    info: dict[str, Any] = {
        "id": sid,
        "kind": sym.kind,
        "lines": [sym.start_line, sym.end_line],
        "rank": graph.lock_rank(sid),
        "scc": sorted(graph.scc(sid)),
        "dependencies": sorted(graph.dependencies(sid, structural=False)),
        "children": graph.children(sid),
        "direct_dependents": sorted(graph.direct_dependents(sid)),
        "dependents": len(graph.dependents(sid)),
        "tests_reaching": graph.tests_reaching(sid),
    }
    if as_json:
        print(json.dumps(info, indent=2))
        return
    print(f"{sid}  ({sym.kind}, lines {sym.start_line}-{sym.end_line})")
    print(f"rank {info['rank']}  scc size {len(info['scc'])}")
    for label in ("dependencies", "children", "direct_dependents", "tests_reaching"):
        items = info[label]
        print(f"{label.replace('_', ' ')} ({len(items)}):")
        for item in items:
            print(f"  {item}")
    print(f"transitive dependents: {info['dependents']}")


def register(app: typer.Typer) -> None:
    app.command("index")(index_command)
    app.add_typer(graph_app, name="graph")
