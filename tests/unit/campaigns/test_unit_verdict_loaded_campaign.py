"""A verdict is keyed with the ``Campaign`` the run loaded (issue 13: the campaign travels as a
loaded value, its YAML parsed once per run): ``stamp_judged_with``, ``judged_with`` and
``latest_results`` given the loaded campaign never read its file again, so a file that changed
or went away during the run does not re-key that run's verdicts."""

from __future__ import annotations

from pathlib import Path

from fleet.campaigns.spec import load_campaign
from fleet.store import Store
from fleet.unit import UnitResult, judged_with, latest_results, record_result, stamp_judged_with

BUILTIN = Path(load_campaign("datetime-utcnow").source)


def test_the_loaded_campaign_keys_the_verdict_without_its_file(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "camp.yaml"
    path.write_text(BUILTIN.read_text())
    spec = load_campaign(str(path))
    verified = stamp_judged_with(UnitResult("u1" * 8, spec.name, "verified", "a" * 40), spec)
    assert verified.judged_with == judged_with(spec, "a" * 40)
    assert verified.judged_with["gates"] == list(spec.gates)
    assert verified.judged_with["campaign_version"]
    record_result(store.ledger, verified, "t")

    path.unlink()  # the file is gone: a lookup by name would find no campaign and re-key
    assert judged_with(str(path), "a" * 40)["key"] != verified.judged_with["key"]
    assert list(latest_results(store.ledger, spec)) == ["u1" * 8]
    assert latest_results(store.ledger, spec)["u1" * 8].judged_with == verified.judged_with

    path.write_text(BUILTIN.read_text().replace("gates: [", "gates: [security, "))
    changed = load_campaign(str(path))  # the next run loads the edited file: judged again
    assert latest_results(store.ledger, changed) == {}
    assert list(latest_results(store.ledger, spec)) == ["u1" * 8]
