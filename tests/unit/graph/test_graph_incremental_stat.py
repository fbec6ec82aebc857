"""An incremental index trusts an unchanged stat signature only where it is sound: a same-size
edit with its mtime put back is still seen (the write moved ctime), a file written within the
racy window is read again, and a different size cap ignores the signatures."""

from __future__ import annotations

import os
import time
from pathlib import Path

from fleet.graph import index, load
from tests.unit.graph.graph_helpers import content, put


def test_stat_signatures_skip_only_unchanged_files(tmp_path: Path) -> None:
    put(tmp_path, "pkg/__init__.py", "")
    put(tmp_path, "pkg/a.py", "def fff():\n    return 1\n")
    put(tmp_path, "pkg/b.py", "from pkg.a import fff\n\ndef use():\n    return fff()\n")
    time.sleep(2.1)  # older than the racy window: their signatures are recorded
    g0 = index(tmp_path)
    assert g0._stats is not None
    assert set(g0._stats[1]) == {"pkg/__init__.py", "pkg/a.py", "pkg/b.py"}

    # nothing changed: every file served by its signature, the same data objects
    g1 = index(tmp_path, previous=g0)
    assert g1._stats == g0._stats
    assert all(g1._data[p] is g0._data[p] for p in g0.files)

    # the same size, the mtime put back: the write still moved ctime
    a = tmp_path / "pkg/a.py"
    st = os.stat(a)
    a.write_text("def ggg():\n    return 1\n")
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(a).st_size == st.st_size
    g2 = index(tmp_path, previous=g1)
    assert g2._data["pkg/a.py"] is not g1._data["pkg/a.py"]
    assert "pkg/a.py::ggg" in g2.symbols
    assert content(g2) == content(index(tmp_path))
    assert g2._stats is not None
    assert "pkg/a.py" not in g2._stats[1]  # just written: racy, read again next time
    g3 = index(tmp_path, previous=g2)
    assert g3._data["pkg/a.py"] is g2._data["pkg/a.py"]  # by content hash
    assert content(g3) == content(g2)

    # another size cap: the signatures are not trusted (b.py is now too large)
    small = index(tmp_path, previous=g1, max_file_bytes=40)
    assert small.files["pkg/b.py"].status == "skipped"
    assert content(small) == content(index(tmp_path, max_file_bytes=40))


def test_stat_signatures_round_trip_a_snapshot(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    put(repo, "pkg/__init__.py", "")
    put(repo, "pkg/a.py", "def fff():\n    return 1\n")
    time.sleep(2.1)
    g0 = index(repo)
    loaded = load(g0.save(tmp_path / "g.pickle"))
    assert loaded._stats == g0._stats
    put(repo, "pkg/a.py", "def ggg():\n    return 1\n")
    g1 = index(repo, previous=loaded)
    assert content(g1) == content(index(repo))
    assert g1._data["pkg/__init__.py"] is loaded._data["pkg/__init__.py"]
