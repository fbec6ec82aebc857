"""The example repository: the graph agrees with examples/acme-monorepo/PLANTED.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fleet.graph import SymbolGraph, index

PLANTED = Path(__file__).resolve().parents[3] / "examples" / "acme-monorepo" / "PLANTED.md"

pytestmark = pytest.mark.skipif(not PLANTED.exists(), reason="the example repo is not there yet")


def planted_rows(section: str) -> list[tuple[str, int, str]]:
    """(symbol, line, call) rows of the tables of one ``## N.`` section."""
    text = PLANTED.read_text()
    start = text.index(f"\n## {section}.")
    end = text.find("\n## ", start + 1)
    rows = []
    for line in text[start : end if end > 0 else None].splitlines():
        m = re.match(r"\|\s*[^|]+\|\s*`([^`]+)`\s*\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|", line)
        if m:
            rows.append((m.group(1), int(m.group(2)), m.group(3)))
    assert rows, section
    return rows


def owner(graph: SymbolGraph, sid: str) -> str:
    """PLANTED.md names class attributes by their class (``AuditEntry`` for the field
    ``AuditEntry.at``); the graph has them as ``variable`` symbols of their own."""
    sym = graph.symbol(sid)
    return sym.parent if sym.kind == "variable" and sym.parent else sid


def sites(graph: SymbolGraph, target: str) -> list[tuple[str, int, str]]:
    return sorted(
        (owner(graph, r.src), r.line, r.name) for r in graph.references
        if r.target == target and r.kind in ("call", "attribute")
    )


@pytest.fixture(scope="module")
def acme_graph() -> SymbolGraph:
    return index(PLANTED.parent)


def test_utcnow_sites_through_four_import_styles(acme_graph: SymbolGraph) -> None:
    assert sites(acme_graph, "datetime.datetime.utcnow") == sorted(planted_rows("2"))


def test_yaml_load_sites(acme_graph: SymbolGraph) -> None:
    planted = sorted(planted_rows("3") + planted_rows("7")[:1])  # + the near miss (has Loader)
    assert sites(acme_graph, "yaml.load") == planted


def test_legacy_charge_call_sites(acme_graph: SymbolGraph) -> None:
    found = sites(acme_graph, "billing/legacy.py::charge")
    assert found == sorted(planted_rows("4"))
    assert len(found) == 27


def test_unittest_aliases_resolve_to_testcase(acme_graph: SymbolGraph) -> None:
    got = sorted(
        (r.src, r.line, r.name.rsplit(".", 1)[-1]) for r in acme_graph.references
        if r.target is not None and r.target.startswith("unittest.TestCase.")
        and r.name.rsplit(".", 1)[-1] in {row[2] for row in planted_rows("1")}
    )
    assert got == sorted(planted_rows("1"))


def test_user_auth_tenant_context_cycle(acme_graph: SymbolGraph) -> None:
    g = acme_graph
    for caller, callee in [
        ("auth/user_auth.py::UserAuth.for_member", "tenants/context.py::TenantContext.for_user"),
        ("tenants/context.py::TenantContext.for_user", "auth/user_auth.py::UserAuth.for_member"),
        ("tenants/context.py::TenantContext.impersonate",
         "auth/user_auth.py::UserAuth.for_member"),
    ]:
        assert "calls" in g.graph.edges[caller, callee]["kinds"]
    atom = g.scc("auth/user_auth.py::UserAuth")
    assert "tenants/context.py::TenantContext" in atom
    assert g.lock_rank("auth/user_auth.py::UserAuth") == g.lock_rank(
        "tenants/context.py::TenantContext"
    )
    assert "tests/test_user_auth_tenant_context.py" in {
        t.split("::")[0] for t in g.tests_reaching("auth/user_auth.py::UserAuth.for_member")
    }


def test_impacted_tests_of_the_planted_traps(acme_graph: SymbolGraph) -> None:
    """PLANTED.md: rewriting `TokenClaims.is_expired` breaks one token test; the legacy
    function's own tests must be among the tests reaching it."""
    g = acme_graph
    assert "tests/test_tokens.py::test_token_minted_by_v1_service_with_naive_expiry" in (
        g.tests_reaching("auth/tokens.py::TokenClaims.is_expired")
    )
    reaching = set(g.tests_reaching("billing/legacy.py::charge"))
    assert {
        "tests/test_billing_legacy.py::test_legacy_charge_idempotency",
        "tests/test_billing_legacy.py::test_legacy_charge_keywords",
        "tests/test_billing_legacy.py::test_legacy_charge_maps_arguments",
    } <= reaching
    assert set(g.tests()) > reaching
