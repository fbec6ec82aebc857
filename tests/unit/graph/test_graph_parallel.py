"""Extraction in threads (the C extractor parses without the GIL) gives the index that one
thread gives, on real code: the stdlib's asyncio and email packages."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from fleet.graph import index
from fleet.graph._extract_native import available
from tests.unit.graph.graph_helpers import content

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.mark.parametrize("package", ["asyncio", "email"])
def test_threads_give_the_same_index(package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert available()  # CI builds the extension (FLEET_REQUIRE_NATIVE)
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "1")
    serial = index(STDLIB / package)
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "4")
    threaded = index(STDLIB / package)
    assert len(serial.files) > 20
    assert content(threaded) == content(serial)


def test_a_bad_thread_count_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from fleet.graph import IndexingError

    monkeypatch.setenv("FLEET_GRAPH_THREADS", "two")
    with pytest.raises(IndexingError, match="FLEET_GRAPH_THREADS='two'"):
        index(STDLIB / "json")


@pytest.mark.parametrize("package", ["asyncio", "email"])
def test_forked_resolution_gives_the_same_references_and_keys(
        package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files resolved in forked processes (``_fork``): the same references, dependency keys
    and graph as one process."""
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "1")
    serial = index(STDLIB / package)
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "3")
    forked = index(STDLIB / package)
    assert (serial.resolve_processes, forked.resolve_processes) == (1, 3)
    assert content(forked) == content(serial)
    assert forked._deps == serial._deps
    assert list(forked._refs) == list(serial._refs)
    for path, refs in forked._refs.items():
        assert list(refs) == list(serial._refs[path])


def test_incremental_index_after_a_forked_one_equals_a_full_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An incremental index whose re-resolved files are shared among processes (a base class
    renamed: every user re-resolved) equals a full index of the edited tree."""
    import shutil

    repo = tmp_path / "lib"  # the package inside the root: ``email._policybase`` resolves
    shutil.copytree(STDLIB / "email", repo / "email")
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "2")
    before = index(repo)
    source = repo / "email" / "_policybase.py"
    source.write_text(source.read_text().replace("class Policy(", "class PolicyRenamed("))
    again = index(repo, previous=before)
    assert again.resolve_processes == 2
    monkeypatch.setenv("FLEET_GRAPH_THREADS", "1")
    full = index(repo)
    assert content(again) == content(full)
    assert again._deps == full._deps
