"""A saved symbol graph the current code cannot load (an older ``fleet.graph/N`` snapshot, or a
damaged file) does not break the sweep's index step: it is logged and a full index replaces it."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import pytest

from assets._fleet import GRAPH_FILE, graph_dir, index
from fleet.graph import SnapshotError, SymbolGraph
from fleet.graph import index as index_repo

STALE = {
    "old-format": pickle.dumps({"format": "fleet.graph/3", "files": [], "symbols": []}),
    "corrupt": b'{"format": "fleet.graph/4", "truncated',
}


@pytest.mark.parametrize("kind", sorted(STALE))
def test_unloadable_snapshot_is_replaced_by_a_full_index(
    calc_repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    home = tmp_path / "home"
    path = graph_dir(home) / GRAPH_FILE
    path.parent.mkdir(parents=True)
    path.write_bytes(STALE[kind])
    with pytest.raises(SnapshotError):
        SymbolGraph.load(path)

    with caplog.at_level(logging.WARNING, logger="assets._fleet"):
        stats = index(calc_repo, home)

    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(path) in warnings[0].getMessage()
    saved = SymbolGraph.load(path)  # rewritten in the current format
    full = index_repo(calc_repo, None)
    assert set(saved.symbols) == set(full.symbols) and "calc/fees.py::waiver" in saved.symbols
    assert stats["modules"] >= 1 and len(stats["commit"]) == 40

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="assets._fleet"):
        index(calc_repo, home)  # the next sweep is incremental again, without a warning
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []
