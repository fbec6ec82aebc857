"""The C helpers beside the extractor against the Python they replace: the type facts' scan for
calls on a call's result (``facts.c``, ``_facts._CALL_TAIL``) and their filter of the symbols
(``fact_candidates``), a snapshot's edge encoding
(``condense.c``, the loop in ``_persist._save``), the graph build's loops and the condensation's
CSR arrays (``edges.c``, ``condense.c``) and the resolver's scope lookup (``fanout.c``,
``Resolver._lookup_scopes_py``)."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest

import fleet.graph._facts as facts
import fleet.graph._persist as persist
from fleet.graph import index
from fleet.graph._extract_native import available, extract_python
from fleet.graph._model import FileRecord
from fleet.graph._resolve import Resolver
from tests.unit.graph.graph_helpers import put

pytestmark = pytest.mark.skipif(not available(), reason="the extension is not built")

_HOSTILE = [
    b"f().a\n", b"f()  .  a  (\n", b"f(\t).\tb.c.d(x)\n", b"f(a(b(c)))).x\n",
    b"f(a(b(c(d)))).x\n", b"f(\n  x,\n  y\n).z\n", b"f(().x\n", b"f()).x\n", b"f()..x\n",
    b"f().1x\n", b"f().x\xc3\xa4y()\n", b"f(\xc3\xa4).x\n", b"super(A, self).m()\n",
    b"super().m\n", b"a.b(x)(y).c\n", b"f(", b"f()", b"f().", b"f() .\n", b"f()\n.x\n",
    b"x = f(a, (b, [c])).m(\n", b"f(')').x\n",
]


def _both(src: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    fd = extract_python("m.py", src, "m", FileRecord("m.py", "python", "", 0, len(src), "ok"))
    native = list(facts._call_tails(fd.refs, src))
    with monkeypatch.context() as m:
        m.setattr(facts, "native_module", lambda: None)
        python = list(facts._call_tails(fd.refs, src))
    return native, python


def test_call_tails_in_c_match_the_regular_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-made edge cases, then every fourth stdlib file and mutations of some of them."""
    hits = 0
    for src in _HOSTILE:
        native, python = _both(src, monkeypatch)
        assert native == python, src
        hits += len(native)
    assert hits >= 8
    rnd = random.Random(7)
    stdlib = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
    compared = 0
    for path in stdlib[::4]:
        if "site-packages" in path.parts:
            continue
        src = path.read_bytes()
        variants = [src]
        if compared % 10 == 0:
            mutated = bytearray(src)
            for _ in range(20):
                at = rnd.randrange(len(mutated) + 1)
                mutated[at:at] = rnd.choice([b"(", b")", b".", b" ", b"\t", b"().a", b"(\n"])
            variants.append(bytes(mutated))
        for variant in variants:
            native, python = _both(variant, monkeypatch)
            assert native == python, path
            hits += len(native)
        compared += 1
    assert compared > 300 and hits > 1000


def test_edge_rows_in_c_encode_as_the_python_loop(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot saved with the C edge encoding is byte for byte the one the Python loop
    writes."""
    repo = tmp_path / "repo"
    put(repo, "pkg/__init__.py", "")
    put(repo, "pkg/core.py", "class Base:\n    def run(self):\n        return helper()\n\n\n"
        "def helper():\n    return Base().run()\n")
    put(repo, "pkg/app.py", "from pkg.core import Base, helper\n\n\nclass App(Base):\n"
        "    def go(self):\n        return self.run() + helper()\n")
    g = index(repo)
    native = g.save(tmp_path / "native.pickle").read_bytes()
    with monkeypatch.context() as m:
        m.setattr(persist, "native_module", lambda: None)
        python = g.save(tmp_path / "python.pickle").read_bytes()
    assert native == python
    assert len(g.edge_list()) >= 5


_SCOPES = {
    "pkg/__init__.py": "",
    "pkg/core.py": """\
        import os
        from typing import Optional


        class Base:
            import json
            limit: int = 3
            loader = json.loads

            def run(self, n: "Base", m: Optional[Base] = None, *rest, **kw):
                import re as regex
                b = Base()

                def inner(x):
                    y = x + n
                    return regex, b, limit, inner, y, os, self, json

                class Local:
                    z = b
                    def m(self):
                        return z, Local, inner
                return inner(b)


        def helper(a):
            from pkg import app
            for i in range(3):
                a = app.App()
            return a, i, helper, Base, missing
        """,
    "pkg/app.py": """\
        from pkg.core import Base, helper
        from pkg import *


        class App(Base):
            go = helper

            def go(self):
                return self.run() + helper() + go
        """,
}


def test_scope_lookup_in_c_answers_as_the_python_method(tmp_path: Path) -> None:
    """``lookup_scopes`` (C) and ``Resolver._lookup_scopes_py`` give the same answer and record
    the same dependency keys for every name of every file, from every scope of the file: a
    small repository of scoped imports, typed locals and nested classes, then the stdlib's
    ``email`` and ``json`` packages."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    compared = 0
    for rel, text in _SCOPES.items():
        put(tmp_path, rel, text)
    for root in (tmp_path, stdlib / "email", stdlib / "json"):
        g = index(root)
        resolver = Resolver(g._data, g.symbols)
        assert resolver._c_lookup is not None
        for fd in g._data.values():
            heads = {n.partition(".")[0] for n in fd.refs.names} | {"missing", "self", ""}
            scopes = [s.id for s in fd.symbols] + ["nowhere.py::x"]
            for head in sorted(heads):
                for scope in scopes:
                    c_deps: set[str] = set()
                    resolver._deps = c_deps
                    c = resolver._c_lookup(head, scope, g.symbols, c_deps, fd.scoped_imports,
                                           fd.params, fd.local_types)
                    py_deps: set[str] = set()
                    resolver._deps = py_deps
                    py = resolver._lookup_scopes_py(head, scope, fd)
                    assert (c, c_deps) == (py, py_deps), (fd.record.path, head, scope)
                    compared += 1
    assert compared > 10_000


def test_foreign_keys_in_c_filter_as_the_python_function() -> None:
    """``foreign_keys`` (C) keeps exactly the keys ``_resolve._foreign_keys`` keeps."""
    from fleet.graph import _resolve
    from fleet.graph._extract_native import native_module

    native = native_module()
    assert native is not None
    path = "pkg/mod.py"
    keys = {
        "pkg/mod.py::f", "pkg/mod.py::C.m", "pkg/mod.py", "pkg/mod.pyx::f", "pkg/mod.py:",
        "pkg/other.py::f", "bases\0pkg/mod.py::C", "bases\0pkg/other.py::C",
        "stars\0pkg/mod.py", "stars\0pkg/mod.pyc", "exports\0pkg/mod.py", "attrs\0pkg/x.py::C",
        "a\0b\0pkg/mod.py::f", "pkg/mod.py::f\0other.py::g", "\0", "", "pkg/mod.py\0",
        "fixture\0pkg/conftest.py::db", "x.pkg/mod.py::f", "pkg/mod.py::\0x", "ü\0pkg/mod.py",
    }
    assert native.foreign_keys(keys, path) == _resolve._foreign_keys(keys, path)
    assert native.foreign_keys(keys, "") == _resolve._foreign_keys(keys, "")
    g = index(Path(sysconfig.get_paths()["stdlib"]) / "json")
    resolver = Resolver(g._data, g.symbols)
    for fd in g._data.values():
        deps: set[str] = set()
        resolver._deps = deps
        resolver.resolve_file(fd)
        assert deps
        assert native.foreign_keys(deps, fd.record.path) == _resolve._foreign_keys(
            deps, fd.record.path)


def test_edge_masks_in_c_build_the_rows_of_the_python_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph built with ``edge_masks``, ``contains_masks`` and ``mask_attrs`` (C) has the
    same rows, in the same order, as the one the Python loops of ``_edges`` build (``add_refs``,
    ``_contains``, ``build_graph``'s masks -> attribute dicts): the stdlib's ``email`` and
    ``json`` plus a repository of enclosing uses, module-level uses and pytest fixtures."""
    import fleet.graph._edges as edges

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for root in (stdlib / "email", stdlib / "json", Path(__file__).parents[3] / "examples"):
        g = index(root)
        native = edges.build_graph(g.symbols, g._refs.values())
        with monkeypatch.context() as m:
            m.setattr(edges, "native_module", lambda: None)
            python = edges.build_graph(g.symbols, g._refs.values())
        assert [(u, list(row.items())) for u, row in native.items()] == [
            (u, list(row.items())) for u, row in python.items()]
        assert sum(map(len, native.values())) > 50
        # a node without edges keeps the shared empty row in both
        assert [u for u, row in native.items() if row is edges._EMPTY] == [
            u for u, row in python.items() if row is edges._EMPTY]


def test_csr_in_c_numbers_as_the_python_lines() -> None:
    """``csr`` (C): the offsets and targets ``condense`` built in Python (nodes numbered in the
    given order, each row in its order), and a row's unknown target or a missing row raise."""
    import array
    import itertools

    from fleet.graph._extract_native import native_module

    native = native_module()
    assert native is not None
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for succ in (index(stdlib / "json")._succ, {"b": {"a": {}}, "a": {"b": {}, "a": {}}, "c": {}},
                 {}):
        nodes = sorted(succ)
        number = {n: i for i, n in enumerate(nodes)}
        rows = [succ[n] for n in nodes]
        offsets = array.array("I", [0, *itertools.accumulate(map(len, rows))])
        targets = array.array("I", [number[v] for row in rows for v in row])
        assert native.csr(succ, nodes) == (offsets.tobytes(), targets.tobytes())
    with pytest.raises(KeyError):
        native.csr({"a": {"x": {}}}, ["a"])
    with pytest.raises(KeyError):
        native.csr({"a": {}}, ["a", "b"])


def test_ref_counts_in_c_count_as_the_python_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``FileRefs.counts`` through ``ref_counts`` (C) and through its Python loop agree on
    every file of the stdlib's ``email`` and ``json``, and so does ``stats()``."""
    import fleet.graph._extract_native as extract_native

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for root in (stdlib / "email", stdlib / "json"):
        g = index(root)
        native = {p: refs.counts() for p, refs in g._refs.items()}
        stats = g.stats()
        with monkeypatch.context() as m:
            m.setattr(extract_native, "native_module", lambda: None)
            assert {p: refs.counts() for p, refs in g._refs.items()} == native
            fresh = index(root)
            assert {k: v for k, v in fresh.stats().items() if k != "seconds"} == {
                k: v for k, v in stats.items() if k != "seconds"}
        assert sum(c[1] for c in native.values()) > 200


_FACTS_CASES = [
    b"def f(a: 'C') -> C:\n    pass\n", b"class A:\n    @property\n    def p(self) -> int: ...\n",
    b"class A:\n    @functools.cached_property\n    def p(self): ...\n",
    b"class A:\n    # property\n    def p(self): ...\n", b"__all__ = ['a', 'b']\n",
    b"class A:\n    __all__ = ('x',)\n", b"def g(x: int | None, y: Optional[B] = None): ...\n",
    b"def h(x: \"B\", *, y: B | None): ...\n", b"def k(x): return x\n",
    b"def u(x) \xe2\x86\x92 y: ...\n", b"def v(x)->", b"@property\ndef w(self): ...\n",
    # self.x attributes (``self_attributes``): non-ASCII, nested, annotated, ``selfish.x``
    b"class A:\n    def m(self):\n        self.\xc3\xa9 = B()\n        self.x.y = C()\n"
    b"        self.z: D = 1\n        selfish.w = E()\n        self.\xe4\xb8\x80 = F\n",
]


def _facts_both(src: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple, tuple]:
    """add_facts over one file with ``fact_candidates`` (C) and without (its Python loop over
    every symbol): every fact it fills."""
    out = []
    for native in (True, False):
        fd = extract_python("m.py", src, "m", FileRecord("m.py", "python", "", 0, len(src), "ok"))
        with monkeypatch.context() as m:
            if not native:
                m.setattr(facts, "native_module", lambda: None)
            facts.add_facts(fd, src)
        out.append((fd.returns, fd.properties, fd.exports, fd.local_types, fd.attr_types,
                    list(fd.refs)))
    return out[0], out[1]


def test_fact_candidates_in_c_keep_every_fact(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fact_candidates`` (facts.c) only filters the symbols ``add_facts`` looks at: the same
    return annotations, properties, ``__all__``, typed parameters, attribute facts and
    references as the loop over every symbol, on hand-made cases, every fourth stdlib file and
    mutations of some of them."""
    found = 0
    for src in _FACTS_CASES:
        native, python = _facts_both(src, monkeypatch)
        assert native == python, src
        found += len(native[0]) + len(native[1]) + (native[2] is not None)
    assert found >= 5
    rnd = random.Random(11)
    stdlib = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
    compared = 0
    for path in stdlib[::4]:
        if "site-packages" in path.parts:
            continue
        src = path.read_bytes()
        variants = [src]
        if compared % 10 == 0:
            mutated = bytearray(src)
            for _ in range(20):
                at = rnd.randrange(len(mutated) + 1)
                mutated[at:at] = rnd.choice([b"->", b"|", b"'", b"@property\n", b")", b":"])
            variants.append(bytes(mutated))
        for variant in variants:
            native, python = _facts_both(variant, monkeypatch)
            assert native == python, path
            found += len(native[0]) + len(native[1]) + (native[2] is not None)
        compared += 1
    assert compared > 300 and found > 200
