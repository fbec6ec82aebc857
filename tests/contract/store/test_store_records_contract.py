"""Controls, memory, library, findings, change records and API tokens on both stores."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from fleet.store import Store, day_scope, open_store, task_scope
from fleet.types import Finding


def test_kill_switch_is_seen_by_other_processes_instances(store_url: str) -> None:
    with open_store(store_url) as one, open_store(store_url) as two:
        assert not two.controls.engaged()
        one.controls.engage("bad patch wave")
        assert two.controls.engaged()
        assert two.controls.kill_state().reason == "bad patch wave"
        two.controls.release()
        assert not one.controls.engaged()


def test_budget_spend_or_refuse(store: Store) -> None:
    c = store.controls
    scope = task_scope("t1")
    assert c.spend(scope, 0.4, 100, limit_usd=1.0, limit_tokens=250)
    assert c.spend(scope, 0.4, 100, limit_usd=1.0, limit_tokens=250)
    assert not c.spend(scope, 0.1, 100, limit_usd=1.0, limit_tokens=250)  # tokens would exceed
    assert not c.spend(scope, 0.3, 10, limit_usd=1.0, limit_tokens=None)  # usd would exceed
    assert c.spend(scope, 0.2, 10, limit_usd=1.0, limit_tokens=None)
    state = c.spent(scope)
    assert state.usd == pytest.approx(1.0) and state.tokens == 210
    assert not c.spend(task_scope("t2"), 5.0, 0, limit_usd=1.0, limit_tokens=None)
    assert c.spent(task_scope("t2")).usd == 0
    assert day_scope(0) == "day:1970-01-01"


def test_concurrent_spends_never_overshoot(store_url: str) -> None:
    accepted: list[bool] = []
    lock = threading.Lock()

    def spender() -> None:
        with open_store(store_url) as own:
            for _ in range(10):
                ok = own.controls.spend("day:x", 1.0, 1, limit_usd=25.0, limit_tokens=None)
                with lock:
                    accepted.append(ok)

    threads = [threading.Thread(target=spender) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert accepted.count(True) == 25
    with open_store(store_url) as check:
        assert check.controls.spent("day:x").usd == pytest.approx(25.0)


def test_memory_notes(store: Store) -> None:
    m = store.memory
    a = m.add("Never touch billing/ before the audit", tag="constraint", author="lead")
    b = m.add("Freeze on 2026-12-15", tag="deadline")
    assert [n.text for n in m.list()] == [a.text, b.text]
    assert [n.note_id for n in m.list(tag="deadline")] == [b.note_id]
    assert m.remove(a.note_id) and not m.remove(a.note_id)
    assert [n.note_id for n in m.list()] == [b.note_id]
    with pytest.raises(ValueError):
        m.add("  ")


def test_library_is_content_addressed_and_searchable(store: Store) -> None:
    lib = store.library
    patch = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old_api()\n+new_api()\n"
    first = lib.put(patch, kind="patch", name="unit-1.diff", campaign="retire", unit="u1")
    again = lib.put(patch, kind="patch", name="unit-1.diff", campaign="retire", unit="u1")
    assert first == again
    copy = lib.put(patch.encode(), kind="patch", name="copy.diff", campaign="retire", unit="u2")
    assert copy.hash == first.hash and copy.size == len(patch.encode())
    blob = lib.put(b"\x00\xff\x00", kind="upload", name="Blob.BIN", campaign="other")
    assert lib.get(first.hash) == patch.encode() and lib.get_text(first.hash) == patch
    assert lib.get(blob.hash) == b"\x00\xff\x00"
    assert lib.get("0" * 64) is None
    assert {a.unit for a in lib.search(campaign="retire")} == {"u1", "u2"}
    assert [a.name for a in lib.search(unit="u1")] == ["unit-1.diff"]
    assert [a.name for a in lib.search(text="NEW_API")] == ["copy.diff", "unit-1.diff"]
    assert [a.name for a in lib.search(text="blob")] == ["Blob.BIN"]
    assert lib.search(kind="review") == []


def finding(fp: str, line: int = 3) -> Finding:
    return Finding(fp, "retire", "old-api", "a.py::f", "a.py", line, 0, 10, 20, "old()", "msg")


def test_findings_lifecycle(store: Store) -> None:
    f = store.findings
    assert f.upsert(finding("fp1")).status == "new"
    seen = f.upsert(finding("fp1", line=9))
    assert seen.status == "known" and seen.finding.line == 9
    f.upsert(finding("fp2"))
    assert f.set_issue("fp2", "local#4")
    assert f.get("fp2").issue_ref == "local#4"  # type: ignore[union-attr]
    assert f.mark_fixed("retire", ["fp1"]) == 1
    assert f.get("fp2").status == "fixed"  # type: ignore[union-attr]
    assert f.upsert(finding("fp2")).status == "new"  # it came back: a regression
    assert f.set_status("fp1", "suppressed")
    assert f.upsert(finding("fp1")).status == "suppressed"
    assert [r.finding.fingerprint for r in f.list(campaign="retire", status="new")] == ["fp2"]
    assert f.get("nope") is None
    with pytest.raises(ValueError):
        f.set_status("fp1", "bogus")  # type: ignore[arg-type]


def test_a_campaign_copy_that_matches_a_site_takes_over_its_finding(store: Store) -> None:
    """A copy of a campaign with other fix parameters (datetime-utcnow with ``keep_naive``)
    matches the original's sites with the same fingerprints; it saw 0 open findings on WebOb
    1.8.7 after the original had swept it. The row is now the last matching campaign's, its
    status, issue and suppression kept."""
    f = store.findings
    f.upsert(finding("fp1"))
    f.upsert(finding("fp2"))
    assert f.set_issue("fp1", "local#1") and f.set_status("fp2", "suppressed")
    copy = Finding("fp1", "retire-copy", "old-api", "a.py::f", "a.py", 3, 0, 10, 20, "old()",
                   "msg")
    taken = f.upsert(copy)
    assert taken.finding.campaign == "retire-copy" and taken.status == "known"
    assert taken.issue_ref == "local#1"
    assert [r.finding.fingerprint for r in f.list(campaign="retire-copy")] == ["fp1"]
    assert [r.finding.fingerprint for r in f.list(campaign="retire")] == ["fp2"]
    assert f.mark_fixed("retire", []) == 0  # the original's sweep leaves the copy's row alone
    assert f.get("fp1").status == "known"  # type: ignore[union-attr]
    suppressed = f.upsert(dataclasses.replace(copy, fingerprint="fp2"))
    assert suppressed.status == "suppressed" and suppressed.finding.campaign == "retire-copy"


def test_change_records(store: Store) -> None:
    ch = store.changes
    one = ch.upsert("/repo", "fleet/retire/u1", "Retire old_api", "body", ["fleet"])
    assert one.state == "open" and one.labels == ("fleet",)
    two = ch.upsert("/repo", "fleet/retire/u2", "Other", "b")
    assert two.number > one.number
    same = ch.upsert("/repo", "fleet/retire/u1", "Retire old_api (v2)", "body2")
    assert same.number == one.number and same.title.endswith("(v2)")
    assert ch.set_state(one.number, "merged")
    assert ch.by_branch("/repo", "fleet/retire/u1").state == "merged"  # type: ignore[union-attr]
    assert [c.number for c in ch.list(state="open")] == [two.number]
    assert ch.get(9999) is None


def test_api_tokens_hashed_scoped_revocable(store: Store) -> None:
    secret, info = store.tokens.create("ci", ["leases", "jobs"])
    assert secret.startswith("fleet_") and info.scopes == ("jobs", "leases")
    with store.db.read() as tx:
        stored = [dict(row)["secret_hash"] for row in tx.raw("SELECT secret_hash FROM api_tokens")]
    assert secret not in str(stored) and secret.split("_", 2)[2] not in str(stored)
    verified = store.tokens.verify(secret)
    assert verified is not None and verified.allows("leases") and not verified.allows("admin")
    assert store.tokens.verify(secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    assert store.tokens.verify("fleet_nope_nope") is None and store.tokens.verify("junk") is None
    assert store.tokens.revoke(info.token_id)
    assert store.tokens.verify(secret) is None
    with pytest.raises(ValueError):
        store.tokens.create("bad", ["root"])
