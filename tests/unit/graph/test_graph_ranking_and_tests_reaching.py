"""SCC condensation, lock ranks, dependents and tests_reaching on a repo with a cycle."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fleet.graph import index


def build(root: Path) -> Path:
    files = {
        "auth.py": """\
            from tenants import TenantContext

            class UserAuth:
                def tenant(self):
                    return TenantContext(self)
            """,
        "tenants.py": """\
            class TenantContext:
                def __init__(self, user):
                    from auth import UserAuth
                    self.user = user if isinstance(user, UserAuth) else None
            """,
        "util.py": "def fmt(x):\n    return str(x)\n",
        "api.py": """\
            from auth import UserAuth
            from util import fmt

            def handler():
                return fmt(UserAuth().tenant())
            """,
        "tests/conftest.py": """\
            import pytest
            from auth import UserAuth

            @pytest.fixture
            def user():
                return UserAuth()
            """,
        "tests/test_users.py": """\
            def test_user_tenant(user):
                assert user.tenant()

            def test_without_fixture(other):
                assert other
            """,
        "tests/test_api.py": """\
            from api import handler
            from util import fmt

            def test_handler():
                assert handler()

            def test_fmt():
                assert fmt(1) == "1"

            def helper_not_a_test():
                handler()

            class TestGroup:
                def test_in_class(self):
                    handler()
            """,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def test_scc_and_lock_rank(tmp_path: Path) -> None:
    g = index(build(tmp_path))
    cycle = g.scc("auth.py::UserAuth")
    assert {"auth.py::UserAuth", "tenants.py::TenantContext"} <= cycle
    assert g.scc("tenants.py::TenantContext") == cycle
    assert g.scc("util.py::fmt") == frozenset({"util.py::fmt"})
    ranks = {s: g.lock_rank(s) for s in g.symbols}
    # one rank per SCC; a dependency always ranks before its dependents
    assert len({ranks[s] for s in cycle}) == 1
    for u, v in g.graph.edges():
        if g.scc(u) != g.scc(v):
            assert ranks[v] < ranks[u], (u, v)
    # ties broken by id: the independent leaves come in id order
    assert ranks["util.py::fmt"] < ranks["api.py::handler"]
    assert len(set(ranks.values())) == len({id(g.scc(s)) for s in g.symbols})
    assert g.sccs()[0] == cycle
    # deterministic across runs
    again = index(tmp_path)
    assert {s: again.lock_rank(s) for s in again.symbols} == ranks


def test_dependents_and_tests_reaching(tmp_path: Path) -> None:
    g = index(build(tmp_path))
    deps = g.dependents(["util.py::fmt"])
    assert {"api.py::handler", "tests/test_api.py::test_fmt",
            "tests/test_api.py::test_handler"} <= deps
    assert "auth.py::UserAuth" not in deps
    assert g.tests_reaching(["util.py::fmt"]) == [
        "tests/test_api.py::TestGroup.test_in_class",
        "tests/test_api.py::test_fmt",
        "tests/test_api.py::test_handler",
    ]
    # a method change reaches tests that use its class
    assert g.tests_reaching("tenants.py::TenantContext.__init__") == [
        "tests/test_api.py::TestGroup.test_in_class",
        "tests/test_api.py::test_handler",
        "tests/test_users.py::test_user_tenant",
    ]
    assert g.tests_reaching(["tests/test_api.py::helper_not_a_test"]) == []
    # pytest fixtures: a test reaches what the fixtures it asks for reach
    assert "tests/test_users.py::test_user_tenant" in g.tests_reaching("auth.py::UserAuth")
    assert g.tests_reaching("tests/conftest.py::user") == ["tests/test_users.py::test_user_tenant"]
    assert not g.is_test("tests/test_api.py::helper_not_a_test")


def test_own_scc_matches_networkx_on_random_graphs() -> None:
    import random

    import networkx as nx

    from fleet.graph._edges import tarjan as _tarjan

    for seed in range(40):
        rnd = random.Random(seed)
        n = rnd.randint(1, 80)
        g = nx.gnm_random_graph(n, rnd.randint(0, n * 3), seed=seed, directed=True)
        succ = {f"n{u}": {f"n{v}": {} for v in g.successors(u)} for u in g.nodes}
        ours = sorted(sorted(c) for c in _tarjan(succ))
        theirs = sorted(sorted(f"n{u}" for u in c) for c in nx.strongly_connected_components(g))
        assert ours == theirs, seed


def test_native_condensation_equals_the_python_one() -> None:
    """The C condensation (SCCs and lock ranks) against the Python specification: random
    graphs (self-loops, cycles, isolated nodes, ids not in insertion order) and the graph of
    the stdlib's email package."""
    import random
    import sysconfig

    import networkx as nx

    from fleet.graph._edges import condense, condense_python
    from fleet.graph._extract_native import available

    assert available(), "the C extension is built at install (FLEET_REQUIRE_NATIVE in CI)"
    from fleet.graph import _native

    assert hasattr(_native, "condense"), "a stale build of fleet.graph._native: pip install -e ."
    for seed in range(60):
        rnd = random.Random(seed)
        n = rnd.randint(0, 120)
        g = nx.gnm_random_graph(n, rnd.randint(0, n * 3), seed=seed, directed=True)
        names = {u: f"n{rnd.randint(0, 10**6)}_{u}" for u in g.nodes}
        succ = {names[u]: {names[v]: {} for v in g.successors(u)} for u in g.nodes}
        for u in rnd.sample(sorted(succ), min(3, len(succ))):
            succ[u][u] = {}
        assert condense(succ) == condense_python(succ), seed
    email = index(Path(sysconfig.get_paths()["stdlib"]) / "email", languages={"python"})
    rank, scc = condense(email._succ)
    assert (rank, scc) == condense_python(email._succ)
    assert max(len(c) for c in scc.values()) > 1  # the package has cycles
