"""Snapshots: a ``SymbolGraph`` as one pickle file (format-versioned).

The per-file extraction data, the resolved references and the networkx graph are stored as-is,
so loading needs no re-resolution. Snapshots are trusted local files (pickle): never load one
from an untrusted source.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from fleet.errors import FleetError
from fleet.graph._graph import SymbolGraph

FORMAT = "fleet.graph/1"


class SnapshotError(FleetError):
    """A snapshot file is missing, corrupt or from another format version."""


def save(graph: SymbolGraph, path: Path) -> Path:
    """Write atomically (temp file + rename); returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    state = (FORMAT, str(graph.root), graph._data, graph._refs, graph.graph, graph.seconds)
    with open(tmp, "wb") as fh:
        pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return path


def load(path: Path) -> SymbolGraph:
    try:
        with open(path, "rb") as fh:
            state = pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise SnapshotError(f"cannot load graph snapshot {path}: {exc}") from exc
    if not isinstance(state, tuple) or not state or state[0] != FORMAT:
        raise SnapshotError(f"{path} is not a {FORMAT} snapshot")
    _, root, data, refs, graph, seconds = state
    return SymbolGraph(Path(root), data, refs, graph=graph, seconds=seconds)
