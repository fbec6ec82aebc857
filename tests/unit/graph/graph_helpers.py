"""Helpers shared by the graph tests: write a dedented source file, and a graph's full content
(files, symbols, references, edges, ranks) for comparing an incremental index with a full one."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from fleet.graph import SymbolGraph


def put(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(textwrap.dedent(text))


def content(g: SymbolGraph) -> dict[str, Any]:
    return {
        "files": g.files,
        "symbols": g.symbols,
        "refs": sorted(g.references, key=lambda r: (r.path, r.start_byte, r.kind, r.name)),
        "edges": sorted(g.graph.edges(data="kinds")),
        "nodes": sorted(g.graph.nodes),
        "ranks": {s: g.lock_rank(s) for s in g.symbols},
    }
