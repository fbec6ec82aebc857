"""Incremental re-indexing after interface changes re-resolves only the files that can be
affected, and still equals a full index: functions and classes added, removed and renamed,
re-exports, star imports, base classes, pytest fixtures, ``__all__``."""

from __future__ import annotations

import re
from pathlib import Path

from fleet.graph import SymbolGraph, index, load
from tests.unit.graph.graph_helpers import content, put


def reresolved(new: SymbolGraph, old: SymbolGraph) -> set[str]:
    """The files whose references were resolved again (not reused from ``old``)."""
    return {p for p in new.files if new._refs.get(p) is not old._refs.get(p)}


def step(root: Path, previous: SymbolGraph) -> SymbolGraph:
    got = index(root, previous=previous)
    assert content(got) == content(index(root))
    return got


def target(g: SymbolGraph, path: str, name: str) -> str | None:
    found = [r.target for r in g.references_in(path) if r.name == name]
    assert found, (path, name)
    return found[0]


FILES = {
    "pkg/__init__.py": """\
        from pkg.core import base
        __all__ = ["base"]
        """,
    "pkg/core.py": """\
        def base():
            return 1

        class Core:
            def run(self):
                return base()
        """,
    "pkg/sub.py": """\
        from pkg.core import Core

        class Sub(Core):
            def go(self):
                return self.run() + self.helper()
        """,
    "pkg/star.py": """\
        from pkg.core import *

        def s():
            return base() + extra()
        """,
    "pkg/via_init.py": """\
        import pkg

        def v():
            return pkg.base() + pkg.extra()
        """,
    "pkg/unrelated.py": """\
        import os

        def u():
            return os.getcwd()
        """,
    "tests/conftest.py": """\
        import pytest

        @pytest.fixture
        def db():
            return 1
        """,
    "tests/test_x.py": """\
        def test_x(db):
            assert db
        """,
}


def test_interface_changes_reresolve_only_affected_files_and_equal_a_full_index(
        tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        put(root, rel, text)
    g0 = index(root)
    assert target(g0, "pkg/star.py", "extra") is None
    assert target(g0, "pkg/via_init.py", "pkg.extra") == "pkg/__init__.py::<module>"

    # a new function: the star import that asked for it (and missed) now finds it
    core = (root / "pkg/core.py").read_text()
    put(root, "pkg/core.py", core + "\ndef extra():\n    return 2\n")
    g1 = step(root, g0)
    assert target(g1, "pkg/star.py", "extra") == "pkg/core.py::extra"
    assert reresolved(g1, g0) == {"pkg/core.py", "pkg/star.py"}

    # a new re-export in the package: `pkg.extra` now resolves through __init__
    put(root, "pkg/__init__.py", 'from pkg.core import base, extra\n__all__ = ["base"]\n')
    g2 = step(root, g1)
    assert target(g2, "pkg/via_init.py", "pkg.extra") == "pkg/core.py::extra"
    assert "pkg/unrelated.py" not in reresolved(g2, g1)
    assert "pkg/via_init.py" in reresolved(g2, g1)

    # a changed base list two files away: Sub -> Core -> Mixin gives self.helper
    text = (root / "pkg/core.py").read_text()
    text = text.replace("class Core:", "class Mixin:\n    def helper(self):\n        return 3\n\n\n"
                        "class Core(Mixin):")
    put(root, "pkg/core.py", text)
    g3 = step(root, g2)
    assert target(g3, "pkg/sub.py", "self.helper") == "pkg/core.py::Mixin.helper"
    assert "pkg/sub.py" in reresolved(g3, g2)

    # a removed function: every user of `base` re-resolves, nothing else
    text = re.sub(r"def base\(\):\n    return 1\n", "", (root / "pkg/core.py").read_text())
    put(root, "pkg/core.py", text)
    g4 = step(root, g3)
    assert target(g4, "pkg/star.py", "base") is None
    assert "pkg/unrelated.py" not in reresolved(g4, g3)
    assert "tests/test_x.py" not in reresolved(g4, g3)

    # a renamed class: the subclass's import now names nothing in the repository
    put(root, "pkg/core.py", (root / "pkg/core.py").read_text().replace("Core", "Kernel"))
    g5 = step(root, g4)
    assert target(g5, "pkg/sub.py", "self.helper") != "pkg/core.py::Mixin.helper"

    # __all__ changed: a body change of the package, other files keep their references
    put(root, "pkg/__init__.py", 'from pkg.core import extra\n__all__ = ["extra"]\n')
    g6 = step(root, g5)
    assert "pkg/unrelated.py" not in reresolved(g6, g5)

    # a fixture loses its decorator: the test's parameter no longer reaches it
    put(root, "tests/conftest.py", "import pytest\n\n\ndef db():\n    return 1\n")
    g7 = step(root, g6)
    assert "tests/test_x.py" in reresolved(g7, g6)
    assert "tests/conftest.py::db" not in g7.dependencies("tests/test_x.py::test_x")

    # a body-only edit re-resolves that file alone
    put(root, "pkg/unrelated.py", "import os\n\ndef u():\n    return os.getpid()\n")
    g8 = step(root, g7)
    assert reresolved(g8, g7) == {"pkg/unrelated.py"}

    # from a loaded snapshot: the dependency keys survive the round trip
    back = load(g8.save(tmp_path / "graph.pickle"))
    put(root, "pkg/core.py", (root / "pkg/core.py").read_text() + "\ndef base():\n    return 9\n")
    g9 = step(root, back)
    assert target(g9, "pkg/star.py", "base") == "pkg/core.py::base"


def test_every_interface_edit_of_the_example_repo_equals_a_full_index(acme_repo: Path) -> None:
    """Real files: in each Python file of the example repo, add a function, then remove the
    first top-level definition; the incremental index must equal a full one every time."""
    graph = index(acme_repo)
    files = sorted(p for p, f in graph.files.items() if f.language == "python" and f.lines > 5)
    assert len(files) > 10
    for rel in files[::3]:
        path = acme_repo / rel
        text = path.read_text()
        path.write_text(text + "\n\ndef added_for_test(x):\n    return x\n")
        graph = step(acme_repo, graph)
        first = re.search(r"^(?:def|class) (\w+)", text, re.M)
        if first is not None:
            path.write_text(text.replace(f"{first.group(0)}", f"{first.group(0)}_gone", 1))
            graph = step(acme_repo, graph)
