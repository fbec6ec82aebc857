"""Issue 21, the parts below the commands: a graph snapshot names its repository (another's is
never used: ignored by the sweep's index, refused where it would be read as this one's), and a
ledger event that names no repository (written before events had one) is a repository's only on
a store no other repository wrote to — the one of its state directory above all — never on a
shared PostgreSQL store (one warning line instead)."""

from __future__ import annotations

import logging
import pickle
import re
import shutil
from pathlib import Path

import pytest

from assets import _fleet
from fleet.graph import ForeignSnapshot, SnapshotError, SymbolGraph, index
from fleet.graph._persist import FORMAT
from fleet.home import claim_home, repository_key
from fleet.store import open_store
from fleet.store.repo_scope import scoped_store
from tests.conftest import three_repositories

FILES = {"app/__init__.py": "", "app/config.py": "def load(text):\n    return text\n",
         "billing/__init__.py": "", "billing/legacy.py": "def bill():\n    return 1\n"}


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, Path]:
    return three_repositories(tmp_path, FILES)


def test_a_snapshot_records_its_repository_and_refuses_another(tmp_path: Path,
                                                                repos: dict[str, Path]) -> None:
    a, b = repository_key(repos["A"]), repository_key(repos["B"])
    path = index(repos["A"]).save(tmp_path / "a.snapshot", repository=a)
    assert SymbolGraph.load(path, repository=a).symbols  # its own: loaded
    assert SymbolGraph.load(path).symbols  # no repository asked: nothing to hold it to
    with pytest.raises(ForeignSnapshot) as refused:
        SymbolGraph.load(path, repository=b)
    message = str(refused.value)
    assert "\n" not in message and a in message and b in message
    # a snapshot of a plain directory (no repository) is no repository's graph either
    plain = index(repos["A"]).save(tmp_path / "plain.snapshot")
    with pytest.raises(ForeignSnapshot, match="of no repository"):
        SymbolGraph.load(plain, repository=a)
    # one from before snapshots named their repository (format 10) is of an older format
    old = tmp_path / "old.snapshot"
    old.write_bytes(pickle.dumps({"format": "fleet.graph/10", "root": str(repos["A"])}))
    with pytest.raises(SnapshotError, match=rf"not a {re.escape(FORMAT)} snapshot"):
        SymbolGraph.load(old, repository=a)


def test_the_sweeps_index_ignores_another_repositorys_snapshot(
    repos: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    homes = {name: repo / ".fleet" for name, repo in repos.items()}
    for name in ("A", "C"):
        claim_home(homes[name], repos[name])
    _fleet.index(repos["A"], homes["A"])
    saved = _fleet.graph_dir(homes["A"]) / _fleet.GRAPH_FILE
    # C's state directory holding A's graph (copied, restored from a backup, ...)
    (_fleet.graph_dir(homes["C"])).mkdir(parents=True)
    shutil.copy(saved, _fleet.graph_dir(homes["C"]) / _fleet.GRAPH_FILE)
    with pytest.raises(ForeignSnapshot):  # read as C's graph: refused, never matched on
        _fleet.load_graph(homes["C"], repos["C"])
    with caplog.at_level(logging.WARNING, logger="assets._fleet"):
        stats = _fleet.index(repos["C"], homes["C"])
    assert "ignoring the saved symbol graph" in caplog.text and "full index" in caplog.text
    graph = _fleet.load_graph(homes["C"], repos["C"])  # now C's own, from C's files only
    assert {f for f in graph.files if f.startswith("billing/")} == set()
    assert stats["files"] == len(graph.files)
    assert SymbolGraph.load(saved, repository=repository_key(repos["A"])).files  # A's intact


def _legacy(url: str) -> None:
    """Events as a fleet from before events named their repository wrote them."""
    with open_store(url) as raw:
        raw.ledger.append("unit.finished", {"status": "verified", "patch": "p"}, unit="u1",
                          campaign="c")
        raw.ledger.append("kill_switch.engaged", {"reason": "r"})


def test_repositoryless_events_are_the_state_directorys_repositorys(
    repos: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    home = repos["A"] / ".fleet"
    claim_home(home, repos["A"])
    url = f"sqlite:///{home / 'fleet.db'}"
    _legacy(url)
    a, b = repository_key(repos["A"]), repository_key(repos["B"])
    with open_store(url) as raw:
        scoped_store(raw, b).ledger.append("unit.finished", {"status": "failed"}, unit="u2",
                                           campaign="c")  # (through --store, say)
        own = scoped_store(raw, a).ledger.events(kind="unit.finished", campaign="c")
        assert [e.unit for e in own] == ["u1"]  # A's store: its events from before are A's
        other = scoped_store(raw, b).ledger.events(campaign="c")
        assert [e.unit for e in other] == ["u2"]  # never B's, though B wrote here too
    assert "name no repository" in caplog.text  # (said once, for B's view)


def test_on_a_store_no_other_repository_wrote_to_they_are_the_readers(
    tmp_path: Path, repos: dict[str, Path]
) -> None:
    url = f"sqlite:///{tmp_path / 'fleet.db'}"  # a --store file in no state directory
    _legacy(url)
    a = repository_key(repos["A"])
    with open_store(url) as raw:
        view = scoped_store(raw, a)
        assert [e.unit for e in view.ledger.events(kind="unit.finished")] == ["u1"]
        view.ledger.append("unit.planned", {"key": "u3"}, unit="u3", campaign="c")
        assert len(view.ledger.events()) == 3  # A's own now too: the store is still only A's


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_on_a_shared_store_no_repository_reads_them(
    tmp_path: Path, repos: dict[str, Path], caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest, kind: str
) -> None:
    url = (f"sqlite:///{tmp_path / 'shared.db'}" if kind == "sqlite"
           else str(request.getfixturevalue("pg_dsn")))
    _legacy(url)
    keys = {name: repository_key(repo) for name, repo in repos.items()}
    with open_store(url) as raw:
        if kind == "sqlite":  # a SQLite file is shared once repositories wrote to it
            for name in ("A", "B"):
                scoped_store(raw, keys[name]).ledger.append("unit.planned", {"key": name},
                                                            unit=name)
        for name, key in keys.items():
            view = scoped_store(raw, key).ledger
            assert view.events(kind="unit.finished") == [], name
            assert [e.kind for e in view.events(kind="kill_switch.engaged")] == [
                "kill_switch.engaged"]  # the fleet's own: every repository's
            assert view.events(unit="u1") == [], name
        lines = [r.getMessage() for r in caplog.records if "name no repository" in r.getMessage()]
        assert len(lines) == len(keys)  # one line per repository's view, not one per read
        assert all("\n" not in line and "unit.finished 1" in line for line in lines)
        assert len(raw.ledger.events()) == 2 + 2 * (kind == "sqlite")  # nothing is lost
