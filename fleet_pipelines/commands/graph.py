"""``fleet index PATH``, ``fleet graph show SYMBOL`` and ``fleet graph edges [PATH]``: build,
inspect and export the symbol graph.

Output follows the CLI's one convention: ``--json`` prints JSON to stdout, ``-o FILE`` writes a
file (for ``index`` the snapshot, for ``graph edges`` the edge list). Progress goes to stderr:
a bar with the phase on a terminal, else one line per phase and every few seconds.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from collections.abc import Callable

    from fleet.graph import ForeignSnapshot, SymbolGraph

__all__ = ["PHASES", "edges", "graph_app", "index_command", "register", "show", "snapshot_key"]

graph_app = typer.Typer(
    name="graph", help="Inspect the symbol graph of a repository.", no_args_is_help=True
)


PHASES = {"index": "indexing", "resolve": "resolving", "graph": "graph", "save": "saving"}


class _Lines:
    """Progress off a terminal: a line when a phase starts and every ``every`` seconds."""

    def __init__(self, every: float) -> None:
        self.every = every
        self.started = self.last = time.monotonic()
        self.name = ""

    def phase(self, name: str) -> None:
        self.name = name
        self.last = time.monotonic()
        print(f"{name:<8} started  {self.last - self.started:6.1f} s  "
              f"(CPU {time.process_time():.1f} s)", file=sys.stderr, flush=True)

    def progress(self, done: int, total: int, rel: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.every or done == total:
            self.last = now
            print(f"{self.name:<8} {done}/{total} files ({done / max(total, 1):.0%})  "
                  f"{now - self.started:6.1f} s  {rel}", file=sys.stderr, flush=True)


def snapshot_key(path: Path | None) -> str | None:
    """The repository a snapshot of ``path`` is of: its store key (``fleet.home.store_key``,
    with the state directory ``path``'s commands use), ``""`` for a directory in no
    repository; ``None`` (nothing to check a snapshot against) when ``path`` is ``None``."""
    from fleet.home import home_of, repo_root, store_key

    if path is None:
        return None
    return store_key(home_of(path), path) if repo_root(path) is not None else ""


def _foreign_line(exc: ForeignSnapshot, repo: Path) -> str:
    """One line naming both repositories: the snapshot's (its key) and ``repo`` (its root
    too: a clone's key is its ``origin`` URL, which may be another checkout's path)."""
    whose = f"the repository {exc.recorded}" if exc.recorded else "no repository"
    return (f"error: graph snapshot {exc.path} is of {whose}, not of the repository at "
            f"{repo.resolve()} ({exc.wanted}): index it again (another --out, or remove the "
            "file)")


def _build(path: Path, out: Path | None, quiet: bool, every: float = 5.0,
           exclude: tuple[str, ...] = (), repository: str | None = None
           ) -> tuple[SymbolGraph, dict[str, Any]]:
    """Index ``path`` (incrementally from the snapshot ``out`` when it loads), save to ``out``;
    the graph and its ``stats()``. Progress on stderr unless ``quiet``: a bar on a terminal,
    lines elsewhere. A snapshot that cannot be written fails before the index starts."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from fleet.graph import ForeignSnapshot, SnapshotError, SymbolGraph, check_writable, index

    repository = (snapshot_key(path) or "") if repository is None else repository
    previous = None
    if out is not None and out.exists():
        try:
            previous = SymbolGraph.load(out, repository=repository)
        except ForeignSnapshot:
            raise  # another repository's: refused, never overwritten
        except SnapshotError:
            previous = None  # rebuilt from scratch and overwritten below
    if out is not None:
        check_writable(out)
    if quiet or not sys.stderr.isatty():
        lines = None if quiet else _Lines(every)
        graph = index(path, previous=previous, exclude=exclude,
                      progress=lines.progress if lines is not None else None,
                      phase=lines.phase if lines is not None else None)
        stats = _saved(graph, out, repository, lines.phase if lines is not None else None)
        if lines is not None:
            print(f"done     {time.monotonic() - lines.started:6.1f} s  "
                  f"(CPU {time.process_time():.1f} s)", file=sys.stderr)
        return graph, stats
    with Progress(
        TextColumn("{task.fields[phase]:<9}"), BarColumn(), MofNCompleteColumn(),
        # a file's path is text, never markup (a ``[slug].py`` would be a tag)
        TimeElapsedColumn(), TextColumn("{task.description}", markup=False), transient=True,
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task("", total=None, phase=PHASES["index"])

        def progress(done: int, total: int, rel: str) -> None:
            bar.update(task, completed=done, total=total, description=rel[-60:])

        def phase(name: str) -> None:
            # after the files, the bar pulses (no total) with the phase instead of sitting full
            if name == "index":
                bar.update(task, phase=PHASES[name])
            else:
                bar.reset(task, total=None, phase=PHASES[name], description="")

        graph = index(path, previous=previous, progress=progress, phase=phase,
                      exclude=exclude)
        stats = _saved(graph, out, repository, phase)
    return graph, stats


def _saved(graph: SymbolGraph, out: Path | None, repository: str,
           phase: Callable[[str], None] | None) -> dict[str, Any]:
    """``graph.stats()``, and ``graph`` saved to ``out`` meanwhile: by a forked child where the
    index may use more than one process (``fleet.graph.save_started``), the counts and the
    condensation computed here while it writes."""
    from fleet.graph import save_started

    if out is None:
        return graph.stats()
    if phase is not None:
        phase("save")
    pending = save_started(graph, out, repository)
    try:
        stats = graph.stats()
        pending.wait()
    except BaseException:
        pending.cancel()
        raise
    return stats


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
    path: Annotated[str, typer.Argument(
        metavar="PATH", help="Repository root to index, or a repository URL (its mirror under "
        "$FLEET_HOME is indexed at the remote's HEAD).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Save a snapshot here (re-used incrementally next time)."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
    every: Annotated[
        float, typer.Option("--progress-every", help="Seconds between progress lines off a "
                            "terminal.", min=0.0)
    ] = 5.0,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Skip paths with a prefix or component matching this "
                     "glob (repeatable), e.g. site-packages."),
    ] = None,
) -> None:
    """Index PATH into a symbol graph and print a summary."""
    from fleet.errors import FleetError
    from fleet.forge import is_url  # (fleet.forge.remote, ~13 ms of imports: only for a URL)
    from fleet.graph import ForeignSnapshot, IndexingError, python_extractor

    try:
        if is_url(path):
            from fleet.forge.remote import working_repository
            from fleet.plan import base_tree  # campaigns, verify, pydantic: only for a URL

            mirror = working_repository(path)
            with base_tree(mirror, "HEAD") as tree:  # the remote HEAD's files
                _, stats = _build(tree, out, quiet=quiet, every=every,
                                  exclude=tuple(exclude or ()), repository=snapshot_key(mirror))
        else:
            _, stats = _build(Path(path), out, quiet=quiet, every=every,
                              exclude=tuple(exclude or ()))
    except ForeignSnapshot as exc:
        print(_foreign_line(exc, Path(path)), file=sys.stderr)
        raise typer.Exit(2) from None
    except (IndexingError, FleetError) as exc:
        print(str(exc), file=sys.stderr)
        raise typer.Exit(2) from None
    off = os.environ.get("FLEET_GRAPH_NATIVE") == "0"
    stats["python_extractor"] = (
        "C walk" if python_extractor() == "native"
        else f"query files ({'FLEET_GRAPH_NATIVE=0' if off else 'C extension not built'})")
    if out is not None:
        stats["snapshot"] = str(out)
    print(json.dumps(stats, indent=2, sort_keys=True) if as_json else _summary(stats))
    _skip_teardown()


def _skip_teardown() -> None:
    """The command's files are written and closed: freeing the graph at exit (~0.2 CPU-s on
    Django, after everything else) is left to the kernel (``fleet_pipelines._startup``)."""
    from fleet_pipelines._startup import skip_teardown

    skip_teardown()


def _snapshot_or_index(repo: Path | None, snapshot: Path | None) -> SymbolGraph:
    """The graph ``show`` and ``edges`` read: ``snapshot`` (checked to be ``repo``'s), else
    ``repo`` (default: the current directory) indexed now; exit 2 with one line if neither can
    be had."""
    from fleet.graph import ForeignSnapshot, IndexingError, SnapshotError, SymbolGraph, index

    try:
        return (SymbolGraph.load(snapshot, repository=snapshot_key(repo))
                if snapshot is not None else index(repo or Path(".")))
    except ForeignSnapshot as exc:
        print(_foreign_line(exc, repo or Path(".")), file=sys.stderr)
        raise typer.Exit(2) from None
    except (IndexingError, SnapshotError) as exc:
        print(str(exc), file=sys.stderr)
        raise typer.Exit(2) from None


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
    repo: Annotated[Path | None, typer.Option(
        "--repo", "-r", help="Repository root (default: the current directory); with "
        "--snapshot, the snapshot must be of it.")] = None,
    snapshot: Annotated[
        Path | None, typer.Option("--snapshot", "-s", help="Use this saved graph.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show a symbol's lock rank, SCC, dependencies and dependents."""
    graph = _snapshot_or_index(repo, snapshot)
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


@graph_app.command("edges")
def edges(
    path: Annotated[Path | None, typer.Argument(
        help="Repository root (default: the current directory); with --snapshot, the "
        "snapshot must be of it.", show_default=False)] = None,
    snapshot: Annotated[
        Path | None, typer.Option("--snapshot", "-s", help="Use this saved graph.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the edges as JSON.")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the edges as JSON to this file.")
    ] = None,
) -> None:
    """Every resolved reference to a repository symbol: {"src", "dst", "line", "kind"}, src
    being the innermost enclosing definition (or path::<module>). Without --json or -o, one
    tab-separated line per edge."""
    graph = _snapshot_or_index(path, snapshot)
    rows = graph.edge_list()
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows) + "\n")
        print(f"{len(rows)} edges -> {out}", file=sys.stderr)
    if as_json:
        print(json.dumps(rows))
    elif out is None:
        for row in rows:
            print(f"{row['src']}\t{row['dst']}\t{row['line']}\t{row['kind']}")
    _skip_teardown()


def register(app: typer.Typer) -> None:
    app.command("index")(index_command)
    app.add_typer(graph_app, name="graph")
