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
