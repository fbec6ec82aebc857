"""The resolver's MROs and enclosing classes in C answer as its Python methods (moved out of
test_graph_resolution_sharing.py, which had reached the modules' 400-line limit)."""

from __future__ import annotations

from pathlib import Path

from fleet.graph import index
from fleet.graph._resolve import Resolver
from tests.unit.graph.graph_helpers import put


def test_the_mro_in_c_is_the_python_methods_mro(tmp_path: Path) -> None:
    """``mro`` (``fanout_mro.c``: ``_mro``, ``_compute_mro`` and ``_class_bases``, with
    ``_compute_bases`` called back) gives what the Python methods give: the same order and
    dependency keys for every class of the stdlib's ``email`` and ``json``, the examples and
    a repository of diamonds, an inheritance cycle, external and unresolved bases, in the same
    order on two resolvers, at the top and while a base list is being computed (no memo); and
    the same memos and base lists after. And ``enclosing_class`` (C) answers as
    ``Resolver._enclosing_class`` for every symbol as a scope."""
    import sysconfig

    repo = tmp_path / "mro"
    put(repo, "m.py", """\
        import argparse
        from missing import Gone


        class A: pass
        class B(A): pass
        class C(A): pass
        class D(B, C, argparse.Action): pass
        class Loop1(Loop2): pass
        class Loop2(Loop1): pass
        class E(Gone, D): pass
        class F(E, object):
            class Inner(D): pass
        """)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    compared = 0
    for root in (repo, stdlib / "email", stdlib / "json", Path(__file__).parents[3] / "examples"):
        g = index(root)
        classes = sorted(i for i, s in g.symbols.items() if s.kind == "class")
        in_c = Resolver(g._data, g.symbols)
        in_python = Resolver(g._data, g.symbols)
        in_python._c_mro = None
        assert in_c._c_mro is not None
        for computing in (1, 0, 0):  # below the top, then the top twice (the memo's hits)
            in_c._computing_bases = in_python._computing_bases = computing
            for cls in classes:
                results = []
                for resolver in (in_c, in_python):
                    deps: set[str] = set()
                    resolver._deps = deps
                    results.append((resolver._mro(cls), deps))
                assert results[0] == results[1], (cls, computing)
                compared += 1
        assert (in_c._mro_cache, in_c._bases, in_c._bases_deps, in_c._external_bases) == (
            in_python._mro_cache, in_python._bases, in_python._bases_deps,
            in_python._external_bases)
        in_python._c_enclosing = None  # ``enclosing_class`` (C) for every scope and a stranger
        for scope in [*sorted(g.symbols), "nowhere.py::f"]:
            assert in_c._enclosing_class(scope) == in_python._enclosing_class(scope), scope
            compared += 1
    assert compared > 500
