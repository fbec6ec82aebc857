"""What the UI, the PR body and the check runs show of a gate's evidence: the repository's
paths, the verdict and the failures, not the scratch tree's location or the target's warnings."""

from __future__ import annotations

from fleet.integrate import readable_evidence

# the shape the impacted-tests gate gives: its summary line, then the tail of pytest's output
EVIDENCE = """2 test file(s) by the graph, imports and names: \
tests/test_tokens.py::test_naive passed before and failed after
FAILED /tmp/fleet-verify-k2j4/patched/tests/test_tokens.py::test_naive - assert 1 == 2
tests/test_api.py::test_admin_endpoints
  /tmp/fleet-verify-k2j4/patched/api/handlers/admin.py:43: DeprecationWarning: deprecated
    result = old_billing.charge(
tests/test_api.py::test_admin_endpoints
  tenants/provisioning.py:55: DeprecationWarning: billing.legacy.charge is deprecated
    fee = legacy_billing.charge(

-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html
--- generated xml file: /tmp/fleet-verify-k2j4/patched/.fleet-junit.xml ---
=========================== short test summary info ============================
FAILED tests/test_tokens.py::test_naive
================== 1 failed, 8 passed, 18 warnings in 2.08s ==================="""


def test_evidence_without_scratch_paths_or_the_targets_warnings() -> None:
    text = readable_evidence(EVIDENCE)
    assert "/tmp/" not in text and "fleet-verify" not in text
    assert "Warning" not in text and "generated xml file" not in text and "-- Docs" not in text
    assert text.splitlines()[0].startswith("2 test file(s) by the graph")
    assert "FAILED tests/test_tokens.py::test_naive - assert 1 == 2" in text
    assert text.endswith("1 failed, 8 passed, 18 warnings in 2.08s ===================")
    full = "=" * 10 + " warnings summary " + "=" * 10 + "\nx.py::t\n  x.py:1: UserWarning: u\n"
    assert "UserWarning" not in readable_evidence(full + "=" * 5 + " 1 passed " + "=" * 5)
    assert len(readable_evidence("x" * 5000, limit=100)) == 100
