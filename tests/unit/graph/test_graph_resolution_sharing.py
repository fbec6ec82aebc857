"""What the resolver shares between references and files must not change an answer: a name
resolved once per file without its scope only where no function or class of the file binds it,
``self.`` chains per enclosing class, chains memoised across files; the dependency keys kept
per file name only other files; an incremental index over the same files reuses the module
table and still equals a full one."""

from __future__ import annotations

from pathlib import Path

from fleet.graph import SymbolGraph, index
from fleet.graph._model import FileData, RawRef
from fleet.graph._resolve import Resolver
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


def test_the_c_loop_over_columns_answers_as_the_python_loop(tmp_path: Path) -> None:
    """``resolve_file`` over ``RawRefs`` runs its per-reference loop in C (``fanout.c``); over a
    list of ``RawRef`` in Python: the same targets, flags, extra references and keys."""
    from dataclasses import replace

    from fleet.graph._extract_native import native_module
    from fleet.graph._refs import RawRefs
    from fleet.graph._resolve import Resolver

    repo = _repo(tmp_path)
    put(repo, "pkg/more.py", """\
        import os.path as osp
        from pkg.core import Engine


        class Base(Engine):
            @classmethod
            def make(cls):
                return cls().run() + cls.make()

            def use(self, x):
                y = Engine()
                z = x
                return y.stop() + z.run() + self.stop() + osp.join() + len(z) + q().run()


        def q():
            return Base()
        """)
    put(repo, "tests/conftest.py", "import pytest\n\n\n@pytest.fixture\ndef eng():\n    return 1\n")
    put(repo, "tests/test_x.py", "def test_a(eng):\n    assert eng\n")
    g = index(repo)
    assert native_module() is not None
    for path, fd in g._data.items():
        assert isinstance(fd.refs, RawRefs)
        as_list = replace(fd, refs=list(fd.refs))
        native, native_keys = Resolver(g._data, g.symbols).resolve_with_deps(fd)
        python, python_keys = Resolver(g._data, g.symbols).resolve_with_deps(as_list)
        assert native.targets == python.targets, path
        assert native.flags == python.flags, path
        assert native.extra == python.extra, path
        assert native_keys == python_keys, path
        assert list(native) == list(python), path
    assert any(r.target == "tests/conftest.py::eng" for r in g.references_in("tests/test_x.py"))


def test_the_misses_answered_in_c_are_the_python_methods_answers(tmp_path: Path) -> None:
    """A Python file's cache misses go to ``fanout_miss.c`` first, and chains to ``walk``
    (``fanout_walk.c``) through ``walk_chain`` / ``dotted_name`` (``fanout_chain.c``):
    locals, ``self.`` chains, symbols and their chains, imports, builtins, module-level
    bindings, typed locals (their type expressions through star imports, calls, other typed
    locals, outside the repository); the memo read as ``_chain`` reads it. File by file, in
    order: the same targets, flags, extra references and dependency keys as a resolver whose
    every miss is ``Resolver._resolve`` (and its scope lookup the Python method), on a
    repository of each case, the stdlib's ``email`` and ``json`` and the example
    repository."""
    import sysconfig

    from fleet.graph._extract_native import native_module

    assert native_module() is not None
    repo = _repo(tmp_path / "cases")
    put(repo, "pkg/cases.py", """\
        import os.path as osp
        import pkg.core
        from pkg.core import Engine as E, missing_name
        from pkg import *
        from typing import Optional

        LIMIT: int
        for slot in range(3):
            pass


        class Base(E):
            kind = E()

            @classmethod
            def make(cls):
                return cls.kind.run() + cls.make() + cls.nothing + cls

            def use(self, x: E, y: Optional[E] = None):
                from pkg.core import Engine as Inner
                z = E()
                w: "E" = z
                return (self.run(), self.kind.stop(), self.kind, self, x.run(), y.stop(), z.run(),
                        w.stop().x, Inner.run, osp.join, pkg.core.Engine.run, missing_name.x,
                        len(x), print, LIMIT.bit_length, slot, E.run, Base.use.x, nowhere.y,
                        super().use(x), Engine().run)
        """)
    put(repo, "pkg/stars.py", "from pkg.core import *\n\n\ndef f():\n    return Engine().run()"
        " + len([]) + undefined\n")
    put(repo, "pkg/typed.py", """\
        import os
        from pkg.core import Engine
        from pkg.stars import *


        def make() -> Engine:
            return Engine()


        class Holder:
            def use(self, e: Engine, n: int, p: os.PathLike, q: "Engine", r: Optional[Engine]):
                a = Engine()
                b = make()
                c = f()
                d = Gone()
                g = a
                return (e.run(), n.bit_length(), p.fspath, q.stop(), a.run.x, b.run(), c.real,
                        d.x, g.stop(), r.run(), self.use, e.missing, make().stop())
        """)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    compared = 0
    for root in (repo, stdlib / "email", stdlib / "json", Path(__file__).parents[3] / "examples"):
        g = index(root)
        in_c = Resolver(g._data, g.symbols)
        in_python = Resolver(g._data, g.symbols)
        in_python._c_lookup = None  # no miss context: every miss through ``_resolve``
        in_python._c_walk = None  # and every chain through ``_walk_py``
        in_python._c_walk_chain = in_python._c_dotted_name = None  # memoised by ``_chain``
        in_python._c_mro = None  # and MROs through ``_compute_mro``, ``_class_bases``
        in_python._c_enclosing = None
        asked = {"c": 0, "python": 0}
        _count_misses(in_c, asked, "c")
        _count_misses(in_python, asked, "python")
        for path in sorted(g._data):
            fd = g._data[path]
            c_refs, c_keys = in_c.resolve_with_deps(fd)
            py_refs, py_keys = in_python.resolve_with_deps(fd)
            assert (c_refs.targets, c_refs.flags, c_refs.extra) == (
                py_refs.targets, py_refs.flags, py_refs.extra), path
            assert c_keys == py_keys, path
            compared += len(c_refs.targets)
        assert asked["c"] < asked["python"] / 2, asked  # most misses answered in C
    assert compared > 5_000


def _count_misses(resolver: Resolver, asked: dict[str, int], who: str) -> None:
    """Count in ``asked[who]`` the calls of the resolver's ``_resolve``."""
    method = resolver._resolve

    def resolve(ref: RawRef, fd: FileData) -> tuple[str | None, bool]:
        asked[who] += 1
        return method(ref, fd)

    resolver._resolve = resolve  # type: ignore[method-assign]


def test_the_walk_in_c_follows_chains_as_the_python_loop() -> None:
    """``walk`` (C) and ``Members._walk_py`` give the same member and record the same
    dependency keys for every chain the resolution of the stdlib's ``email`` and ``json``
    walked, each part of it and a missing part after it, in the same order on two resolvers."""
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    compared = 0
    for root in (stdlib / "email", stdlib / "json", Path(__file__).parents[3] / "examples"):
        g = index(root)
        seen = Resolver(g._data, g.symbols)
        for fd in g._data.values():
            seen.resolve_with_deps(fd)
        chains = [(start, rest) for start, rest in seen._chains if start and rest]
        in_c = Resolver(g._data, g.symbols)
        in_python = Resolver(g._data, g.symbols)
        in_python._c_walk = None
        assert in_c._c_walk is not None
        for start, rest in chains:
            parts = rest.split(".")
            for cut in range(1, len(parts) + 1):
                for tail in (parts[:cut], [*parts[:cut], "no_such_member"]):
                    c_deps: set[str] = set()
                    in_c._deps = c_deps
                    c = in_c._walk(start, list(tail))
                    py_deps: set[str] = set()
                    in_python._deps = py_deps
                    py = in_python._walk(start, list(tail))
                    assert (c, c_deps) == (py, py_deps), (start, tail)
                    compared += 1
    assert compared > 1_000


def test_the_chains_in_c_are_the_python_methods_chains(tmp_path: Path) -> None:
    """``walk_chain`` and ``dotted_name`` (``fanout_chain.c``: the memo, ``_dotted``, a
    module's members and re-exports) give what ``Members._walk_chain`` / ``_dotted_name``
    give over ``_chain``, ``_dotted``, ``_member`` and ``_walk_py``: the same result, the same
    dependency keys and the same memo, for every chain and dotted name the resolution of the
    stdlib's ``email`` and ``json``, the examples and a repository of re-exports and star
    imports memoised, in the same order on two resolvers; at the top of a resolution and below
    it (no memo), and for each name with a missing member after it."""
    import sysconfig

    repo = _repo(tmp_path / "cases")
    put(repo, "pkg/api.py", "from pkg.core import *\nfrom pkg.core import Engine as Motor\n")
    put(repo, "pkg/sub/__init__.py", "from pkg.api import Motor\nfrom ..core import *\n"
        "__all__ = ['Motor', 'Engine']\n")
    put(repo, "pkg/use.py", """\
        import pkg.sub
        import pkg.api as api
        from pkg.sub import Motor


        def f():
            return (pkg.sub.Motor.run, api.Engine().stop(), pkg.sub.Engine.run, Motor.nope,
                    pkg.api.Motor.stop, pkg.sub.missing, api.core)
        """)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    compared = 0
    for root in (repo, stdlib / "email", stdlib / "json", Path(__file__).parents[3] / "examples"):
        g = index(root)
        seen = Resolver(g._data, g.symbols)
        for fd in g._data.values():
            seen.resolve_with_deps(fd)
        asked = [key for key in seen._chains]
        asked += [(start, f"{rest}.no_such_member") for start, rest in asked]
        in_c = Resolver(g._data, g.symbols)
        in_python = Resolver(g._data, g.symbols)
        in_python._c_walk = in_python._c_walk_chain = in_python._c_dotted_name = None
        in_python._c_mro = None
        assert in_c._c_walk_chain is not None and in_c._c_dotted_name is not None
        for depth in (0, 1):
            in_c._depth = in_python._depth = depth
            for start, rest in asked:
                results = []
                for resolver in (in_c, in_python):
                    deps: set[str] = set()
                    resolver._deps = deps
                    found = (resolver._walk_chain(start, rest) if start
                             else resolver._dotted_name(rest))
                    results.append((found, deps))
                assert results[0] == results[1], (start, rest, depth)
                compared += 1
            assert in_c._chains == in_python._chains
    assert compared > 1_000

