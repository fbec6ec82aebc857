"""Snapshots: a ``SymbolGraph`` as one file of pickles (format-versioned).

A header pickle (file records, import tables, the edge list as packed ints) and the symbols
(one pickle per column) hold what ``load`` needs at once, which unpickles at C speed. Three
length-prefixed sections follow, decoded on first use (reporting and incremental
re-indexing): the per-file extraction data, the references (``FileRefs`` columns) and the
dependency keys (per file as packed indexes into a table of unique keys, the table last).
Each section is a run of one pickle per file, written as it is built, so a save never holds
a second copy of the graph.
Snapshots are trusted local files (pickle): never load one from an untrusted source.

A snapshot records the repository it was indexed from (its store key, ``fleet.home.store_key``;
``""`` for a directory that is no repository). ``load(path, repository=key)`` raises
:class:`ForeignSnapshot` for a snapshot of another repository (or one that names none) before
it reads more than the header: another repository's graph is never the base of an incremental
index, nor what a sweep matches its campaign on.
"""

from __future__ import annotations

import array
import io
import operator
import os
import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from fleet.errors import FleetError
from fleet.graph._extract_native import native_module
from fleet.graph._graph import SymbolGraph
from fleet.graph._index import gc_paused
from fleet.graph._model import FileData, FileRecord, RawRef, Reference, Symbol
from fleet.graph._refs import FileRefs, RawRefs

__all__ = ["FORMAT", "ForeignSnapshot", "SnapshotError", "load", "save", "temp_path"]

# 7: parenthesised single assignment targets are variables; names NFKC-normalised
# 8: type facts (attribute types, return annotations, properties, __all__) and call-chain
#    references; super(), typed attributes, module-level instances, star re-exports resolved
# 9: references and raw references pickled per file, as columns
# 10: references as a target and a flag per raw reference (``FileRefs``)
# 11: the header names the repository indexed
# 12: the header's "symbols" is their count and their columns follow it, one pickle each (a
#     bytes copy of them all in the header cost ~25 MB of peak on Django); the raw references
#     as ``RawRefs`` columns. An 11 (columns in the header, raw references as row columns)
#     still loads; an older release refuses a 12 as another format instead of misreading it
# 13: the same layout as 12, but the facts and references of the extractor of 6 December 2026
# (generic annotations, chained calls, generic bases, aliases): a 12's files, reused unchanged
# by an incremental index, would disagree with a full one, so older snapshots are rebuilt
# 14: the same layout; a class's annotated ``self.x: C`` facts override its unannotated ones,
# aliases of typed locals, container annotations (``[]C``), loop variables typed by their
# iterable's items and a ``for`` statement's iterable name as a reference (the same reason: a
# 13's unchanged files would keep the old facts)
FORMAT = "fleet.graph/14"
_READS = (FORMAT,)
_SECTIONS = ("data", "refs", "deps")  # decoded on first use, each streamed file by file


def _columns(rows: list[Any]) -> bytes:
    """One file's named tuples as one pickle of columns: no per-row tuple is copied, so a save
    holds one file's worth of extra objects at a time (not a copy of every reference)."""
    return pickle.dumps(list(zip(*rows, strict=True)), protocol=pickle.HIGHEST_PROTOCOL)


def _rows(blob: bytes, make: Any) -> list[Any]:
    return [make(t) for t in zip(*pickle.loads(blob), strict=True)]


def _raw_columns(refs: Sequence[RawRef]) -> bytes:
    if isinstance(refs, RawRefs):
        return pickle.dumps(refs.columns(), protocol=pickle.HIGHEST_PROTOCOL)
    return _columns(list(refs))


def _raw_rows(blob: bytes) -> RawRefs:
    columns = pickle.loads(blob)
    return RawRefs(*columns) if columns else RawRefs.of([])


def _ref_columns(refs: Sequence[Reference], fd: FileData | None) -> tuple[Any, ...]:
    """A file's references: a target and a flag per raw reference when they are columns over
    the file's own raw references (what ``index`` builds), else every row."""
    if isinstance(refs, FileRefs) and fd is not None and refs.raw is fd.refs:
        return (refs.targets, refs.flags, _columns(list(refs.extra)))
    return (_columns(list(refs)),)


class _Numbering(dict[str, int]):
    """Key -> its number, a new key numbered on its first lookup: the lookups of keys already
    numbered (Django: 79k of 106k) stay in C."""

    def __missing__(self, key: str) -> int:
        number = self[key] = len(self)
        return number


class SnapshotError(FleetError):
    """A snapshot file is missing, corrupt or from another format version."""


class ForeignSnapshot(SnapshotError):
    """A snapshot of another repository than the one it was loaded for: ``recorded`` (``""``:
    none) is the snapshot's, ``wanted`` the one asked for."""

    def __init__(self, path: Path, recorded: str, wanted: str) -> None:
        self.path, self.recorded, self.wanted = path, recorded, wanted
        whose = f"of the repository {recorded}" if recorded else "of no repository"
        super().__init__(f"graph snapshot {path} is {whose}, not of "
                         f"{wanted or 'a directory outside any repository'}: index it again "
                         "(another --out, or remove the file)")


def temp_path(path: Path) -> Path:
    """Where a save writes before renaming onto ``path``."""
    return path.with_name(path.name + ".tmp")


def save(graph: SymbolGraph, path: Path, repository: str = "") -> Path:
    """Write atomically (temp file + rename), recording ``repository``; returns the path."""
    with gc_paused():  # the collector would rescan the graph's millions of objects
        return _save(graph, path, repository)


def _save(graph: SymbolGraph, path: Path, repository: str) -> Path:
    nodes = list(graph._succ)
    number = dict(zip(nodes, range(len(nodes)), strict=True))
    kinds: dict[tuple[str, ...], int] = {}
    native = native_module()
    if native is not None:  # the same loop in C (condense.c): 0.15 -> ~0.01 CPU-s on Django
        edges = native.edge_rows(graph._succ, number, kinds)
    else:
        packed = array.array("I")
        for u, row in graph._succ.items():
            for v, attr in row.items():
                kind: tuple[str, ...] = attr["kinds"]
                packed.extend((number[u], number[v], kinds.setdefault(kind, len(kinds))))
        edges = packed.tobytes()
    key_number = _Numbering()
    header = {
        "format": FORMAT,
        "repository": repository,
        "root": str(graph.root),
        "seconds": graph.seconds,
        "files": [tuple(f) for f in graph.files.values()],
        "modules": graph.modules,
        "symbols": len(graph.symbols),
        "imports": graph.imports,
        "nodes": nodes,
        "kinds": sorted(kinds, key=kinds.__getitem__),
        "edges": edges,
        "sections": _SECTIONS,
        "stats": graph._stats,  # optional: the files' stat signatures (``_index._signature``)
    }
    del nodes, number, edges
    raw_of = graph._data
    # each section streams one file's record at a time (no whole-section copy in memory)
    records = {
        "data": ((p, _raw_columns(d.refs), d.star_imports, d.params, d.local_types,
                  d.fixture_params, d.scoped_imports, d.attr_types, d.returns, d.properties,
                  d.exports) for p, d in raw_of.items()),
        "refs": ((p, _ref_columns(rs, raw_of.get(p))) for p, rs in graph._refs.items()),
        "deps": ((p, array.array("I", map(key_number.__getitem__, ks)).tobytes())
                 for p, ks in graph._deps.items()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    with open(tmp, "wb") as fh:
        pickle.dump(header, fh, protocol=pickle.HIGHEST_PROTOCOL)
        # one pickle per column, straight into the file (no bytes copy of all the symbols)
        values = graph.symbols.values()
        for i in range(len(Symbol._fields)):  # itemgetter: the loop at C speed
            pickle.dump(list(map(operator.itemgetter(i), values)), fh,
                        protocol=pickle.HIGHEST_PROTOCOL)
        for name in _SECTIONS:
            start = fh.tell()
            fh.write(bytes(8))  # the section's length, written once known
            # a pickler per record: the same bytes as one pickler whose memo is cleared after
            # each record, but ``clear_memo`` walks the memo table at the size the largest
            # record grew it to, for every record (Django: ~0.1 CPU-s of the save)
            for record in records[name]:
                pickle.dump(record, fh, protocol=pickle.HIGHEST_PROTOCOL)
            if name == "deps":
                pickle.dump(list(key_number), fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(None, fh, protocol=pickle.HIGHEST_PROTOCOL)
            end = fh.tell()
            fh.seek(start)
            fh.write((end - start - 8).to_bytes(8, "little"))
            fh.seek(end)
    os.replace(tmp, path)
    return path


def _records(blob: bytes) -> Iterator[Any]:
    """The records of one section, up to its ``None`` (one pickle each: the writer clears its
    memo after each record, so each is read with a fresh unpickler)."""
    stream = io.BytesIO(blob)
    while (record := pickle.load(stream)) is not None:
        yield record


def load(path: Path, repository: str | None = None) -> SymbolGraph:
    """The graph saved at ``path``; with ``repository``, only when the snapshot is of that
    repository (else :class:`ForeignSnapshot`, naming both)."""
    with gc_paused():
        return _load(path, repository)


def _foreign(path: Path, state: dict[str, Any], repository: str) -> ForeignSnapshot | None:
    recorded = str(state.get("repository", ""))
    return None if recorded == repository else ForeignSnapshot(path, recorded, repository)


def _load(path: Path, repository: str | None) -> SymbolGraph:
    try:
        with open(path, "rb") as fh:
            state = pickle.load(fh)
            if isinstance(state, dict) and state.get("format") in _READS:
                if repository is not None and (foreign := _foreign(path, state, repository)):
                    raise foreign
                if isinstance(state["symbols"], bytes):  # the header holds the columns
                    state["symbols"] = pickle.loads(state["symbols"])
                else:
                    count = state["symbols"]
                    state["symbols"] = [pickle.load(fh) for _ in Symbol._fields]
                    if any(len(c) != count for c in state["symbols"]):
                        raise EOFError("symbol columns cut short")
                for name in state["sections"]:
                    size = int.from_bytes(fh.read(8), "little")
                    state[name] = fh.read(size)
                    if len(state[name]) != size:
                        raise EOFError(f"section {name} cut short")
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError,
            IndexError, TypeError, ValueError) as exc:
        raise SnapshotError(f"cannot load graph snapshot {path}: {exc}") from exc
    if not isinstance(state, dict) or state.get("format") not in _READS:
        raise SnapshotError(f"{path} is not a {FORMAT} snapshot")
    files = {t[0]: FileRecord._make(t) for t in state["files"]}
    symbols = {s.id: s for s in map(Symbol._make, zip(*state["symbols"], strict=True))}
    nodes: list[str] = state["nodes"]
    attrs = [{"kinds": k} for k in state["kinds"]]
    adj: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in nodes}
    pred: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in nodes}
    edges = array.array("I")
    edges.frombytes(state["edges"])
    for i in range(0, len(edges), 3):
        u, v, attr = nodes[edges[i]], nodes[edges[i + 1]], attrs[edges[i + 2]]
        adj[u][v] = attr  # edges with the same kinds share one (read-only) attribute dict
        pred[v][u] = attr
    modules: dict[str, str | None] = state["modules"]
    imports: dict[str, dict[str, str]] = state["imports"]

    decoded: dict[str, Any] = {}

    def lazy(part: str) -> Any:
        if part not in decoded:
            with gc_paused():
                decoded[part] = _decode(part)
        return decoded[part]

    def _decode(part: str) -> Any:
        if part == "refs":
            data = lazy("data")
            out_refs: dict[str, Sequence[Reference]] = {}
            for p, cols in _records(state["refs"]):
                if len(cols) == 1:
                    out_refs[p] = _rows(cols[0], Reference._make)
                else:
                    out_refs[p] = FileRefs(p, data[p].refs, cols[0], cols[1],
                                           _rows(cols[2], Reference._make))
            return out_refs
        if part == "deps":
            numbers: dict[str, array.array[int]] = {}
            keys: list[str] = []
            for record in _records(state["deps"]):
                if isinstance(record, list):
                    keys = record  # the key table comes last
                    continue
                numbers[record[0]] = array.array("I")
                numbers[record[0]].frombytes(record[1])
            return {p: frozenset(keys[i] for i in ns) for p, ns in numbers.items()}
        by_path: dict[str, list[Symbol]] = {}
        for sym in symbols.values():
            by_path.setdefault(sym.path, []).append(sym)
        out: dict[str, FileData] = {}
        for (p, refs, stars, params, types, fixtures, scoped, attrs, returns, props,
                exports) in _records(state["data"]):
            out[p] = FileData(files[p], modules.get(p), by_path.get(p, []),
                              _raw_rows(refs), dict(imports.get(p, {})),
                              stars, params, types, fixtures, scoped, attrs, returns, props,
                              exports)
        return out

    graph = SymbolGraph._restore(Path(state["root"]), files, symbols, imports, modules, adj,
                                 pred, state["seconds"], lazy)
    graph._stats = state.get("stats")  # None in snapshots written before they were kept
    return graph
