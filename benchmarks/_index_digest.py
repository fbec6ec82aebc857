"""``bench_index.py --worker digest``: sha256 digests of everything a cold index builds, to
prove that a change to the index left the graph as it was (compare two trees' digests over
the same corpus, with 1 and with 2 threads).

Each digest is over the ``repr`` of rows in a fixed order: the symbols (every field), every
resolved reference (every field, ``exact`` included), the ``edge_list`` rows, the adjacency
(each symbol's dependencies with their kinds), the dependency keys of each file, each file's
extraction data (its ``FileData`` fields, the raw references as rows) and ``stats()`` without
its seconds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

__all__ = ["digests"]


def _sha(rows: Iterable[object]) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(repr(row).encode("utf-8", "surrogateescape"))
        h.update(b"\n")
    return h.hexdigest()


def _file_rows(data: dict) -> Iterable[object]:
    for path in sorted(data):
        fd = data[path]
        yield (path, fd.record, fd.module, fd.symbols, list(fd.refs), sorted(fd.imports.items()),
               fd.star_imports, sorted(fd.params.items()),
               sorted((k, sorted(v.items())) for k, v in fd.local_types.items()),
               sorted(fd.fixture_params.items()),
               sorted((k, sorted(v.items())) for k, v in fd.scoped_imports.items()),
               sorted((k, sorted(v.items())) for k, v in fd.attr_types.items()),
               sorted(fd.returns.items()), sorted(fd.properties), fd.exports)


def digests(root: Path, exclude: Iterable[str] = ()) -> dict[str, object]:
    """Index ``root`` cold (without ``exclude``) and digest what the index holds."""
    from fleet.graph import index

    g = index(root, exclude=exclude)
    stats = g.stats()
    stats.pop("seconds", None)
    succ = g._succ
    return {
        "symbols": len(g.symbols),
        "references": len(g.references),
        "edge_rows": len(g.edge_list()),
        "sha256": {
            "symbols": _sha(g.symbols[k] for k in sorted(g.symbols)),
            "references": _sha(r for p in sorted(g._refs) for r in g.references_in(p)),
            "edge_list": _sha(sorted(json.dumps(e, sort_keys=True) for e in g.edge_list())),
            "adjacency": _sha(
                (u, sorted((v, tuple(a.get("kinds", ()))) for v, a in succ[u].items()))
                for u in sorted(succ)),
            "deps": _sha((p, sorted(g._deps[p])) for p in sorted(g._deps)),
            "file_data": _sha(_file_rows(g._data)),
            "stats": _sha(sorted(stats.items())),
        },
    }
