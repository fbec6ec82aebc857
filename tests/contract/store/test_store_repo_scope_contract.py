"""One store, many repositories (both stores): findings and ledger events are each
repository's own; a repository marks only its own findings fixed; rows from before findings had a
repository are adopted by the one repository that owns the store."""

from __future__ import annotations

from fleet.store import Store, open_store
from fleet.store.repo_scope import REPOSITORY_FIELD, scoped_store
from fleet.types import Finding

A, C = "/src/a@1111aaaa2222", "/src/c@1111aaaa2222"


def _finding(fp: str, path: str = "billing/legacy.py") -> Finding:
    return Finding(fp, "yaml-safe-load", "yaml-load", f"{path}::<module>", path, 3, 0, 10, 20,
                   "yaml.load(s)", "use yaml.safe_load")


def test_the_same_code_in_two_repositories_is_two_findings(store: Store) -> None:
    a, c = store.findings.for_repo(A), store.findings.for_repo(C)
    assert a.upsert(_finding("fp-billing")).status == "new"
    assert a.upsert(_finding("fp-shared", "app/load.py")).status == "new"
    # C holds a copy of the shared file: its own finding, new for C, not "known"
    assert c.upsert(_finding("fp-shared", "app/load.py")).status == "new"
    # C's full sweep saw only fp-shared: nothing of A's is marked fixed
    assert c.mark_fixed("yaml-safe-load", ["fp-shared"]) == 0
    assert {r.finding.fingerprint: r.status for r in a.list("yaml-safe-load")} == {
        "fp-billing": "new", "fp-shared": "new"}
    assert [r.finding.fingerprint for r in c.list()] == ["fp-shared"]
    assert c.get("fp-billing") is None and a.get("fp-billing") is not None
    assert not c.set_status("fp-billing", "suppressed")  # another repository's row: untouched
    assert a.get("fp-billing").status == "new"  # type: ignore[union-attr]
    # A's own sweep without billing/ marks A's finding fixed, and only A's
    assert a.mark_fixed("yaml-safe-load", ["fp-shared"]) == 1
    assert a.get("fp-billing").status == "fixed"  # type: ignore[union-attr]
    # no repository named: every repository's rows to read, none of them to write
    assert len(store.findings.list()) == 3 and store.findings.get("fp-billing") is not None
    assert store.findings.mark_fixed("yaml-safe-load", []) == 0
    assert c.set_issue("fp-shared", "local#1") and a.get("fp-shared").issue_ref is None  # type: ignore[union-attr]


def test_unowned_rows_are_adopted_once(store: Store) -> None:
    store.findings.upsert(_finding("fp-old"))  # a store from before findings had a repository
    a = store.findings.for_repo(A)
    a.upsert(_finding("fp-both"))
    store.findings.upsert(_finding("fp-both"))
    assert a.adopt_unowned() == 1  # fp-old; fp-both stays A's own row
    assert {r.finding.fingerprint for r in a.list()} == {"fp-old", "fp-both"}
    # the unowned copy of a fingerprint A already has stays unowned; A's own row is A's
    assert sorted(r.finding.fingerprint for r in store.findings.list()) == [
        "fp-both", "fp-both", "fp-old"]  # no repository named: the whole store
    assert a.adopt_unowned() == 0
    assert store.findings.mark_fixed("yaml-safe-load", []) == 1  # the unowned copy only
    assert {r.status for r in a.list()} == {"new"}


def test_ledger_events_are_each_repositorys_own(store_url: str) -> None:
    with open_store(store_url) as opened:
        a, c = scoped_store(opened, A), scoped_store(opened, C)
        a.ledger.append("integration.finished", {"head": "aaa"}, campaign="x")
        c.ledger.append("integration.finished", {"head": "ccc"}, campaign="x")
        opened.ledger.append("kill_switch.engaged", {"reason": "r"})  # the fleet's, no repo
        assert [e.payload["head"] for e in a.ledger.events(kind="integration.finished")] == [
            "aaa"]
        assert [e.payload["head"] for e in c.ledger.events(campaign="x")] == ["ccc"]
        assert [e.kind for e in c.ledger.events(kind="kill_switch.engaged")] == [
            "kill_switch.engaged"]
        every = opened.ledger.events()
        assert [e.payload.get(REPOSITORY_FIELD) for e in every] == [A, C, None]
        assert a.ledger.verify() == [] and opened.ledger.verify() == []
        assert scoped_store(opened, "") is opened
