"""What the resolver shares between references and files must not change an answer: a name
resolved once per file without its scope only where no function or class of the file binds it,
``self.`` chains per enclosing class, chains memoised across files; the dependency keys kept
per file name only other files; an incremental index over the same files reuses the module
table and still equals a full one."""

from __future__ import annotations

from pathlib import Path

from fleet.graph import SymbolGraph, index
from tests.unit.graph.graph_helpers import content, put


def _repo(root: Path) -> Path:
    put(root, "pkg/__init__.py", "from .core import Engine\n")
    put(root, "pkg/core.py", """\
        class Engine:
            def run(self):
                return 1

            def stop(self):
                return self.run()
        """)
    put(root, "pkg/app.py", """\
        from pkg import Engine
        import pkg.core


        def helper():
            return 0


        class First:
            def run(self):
                return helper()

            def go(self):
                return self.run()


        class Second:
            def run(self):
                return 2

            def go(self):
                return self.run()


        def shadowed(helper):
            return helper.run()


        def nested():
            def helper():
                return 3
            return helper()


        def plain():
            return helper() + Engine().run() + pkg.core.Engine.stop(None)
        """)
    return root


def _targets(g: SymbolGraph, path: str) -> dict[tuple[str, str], set[str | None]]:
    out: dict[tuple[str, str], set[str | None]] = {}
    for ref in g.references_in(path):
        out.setdefault((ref.src.split("::")[1], ref.name), set()).add(ref.target)
    return out


def test_the_same_name_in_different_scopes_resolves_by_its_binding(tmp_path: Path) -> None:
    g = index(_repo(tmp_path))
    got = _targets(g, "pkg/app.py")
    assert got[("First.run", "helper")] == {"pkg/app.py::helper"}
    assert got[("plain", "helper")] == {"pkg/app.py::helper"}
    assert got[("nested", "helper")] == {"pkg/app.py::nested.helper"}
    assert got[("shadowed", "helper.run")] == {None}  # a parameter of unknown type
    assert got[("First.go", "self.run")] == {"pkg/app.py::First.run"}
    assert got[("Second.go", "self.run")] == {"pkg/app.py::Second.run"}
    assert got[("plain", "Engine().run")] == {"pkg/core.py::Engine.run"}
    assert got[("plain", "pkg.core.Engine.stop")] == {"pkg/core.py::Engine.stop"}


def test_dependency_keys_name_only_other_files(tmp_path: Path) -> None:
    g = index(_repo(tmp_path))
    for path, keys in g._deps.items():
        for key in keys:
            tail = key.rpartition("\0")[2]
            assert tail != path and not tail.startswith(f"{path}::"), (path, key)
    assert "pkg/core.py::Engine.run" in g._deps["pkg/app.py"]  # another file's, kept


def test_an_incremental_index_over_the_same_files_reuses_the_module_table(
        tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    g = index(repo)
    core = repo / "pkg/core.py"
    core.write_text(core.read_text().replace("def run(self)", "def start(self)"))
    again = index(repo, previous=g)
    assert again._module_table is g._module_table
    assert content(again) == content(index(repo))
    assert ("plain", "Engine().run") not in _targets(again, "pkg/app.py")  # run is gone
    put(repo, "pkg/extra.py", "def more():\n    return 1\n")  # a new file: rebuilt
    third = index(repo, previous=again)
    assert third._module_table is not again._module_table
    assert content(third) == content(index(repo))
