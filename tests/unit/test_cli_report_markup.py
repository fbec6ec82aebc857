"""The sweep's report and progress print what the sweep found as text: evidence, paths, branches
and URLs are never read as rich markup. Outside check on WebOb 1.8.7: a gate's evidence line
``[/tmp/.../webob-venv/bin/python] could not judge: ...`` is a closing tag to rich, and
``fleet sweep`` ended, after the whole sweep, in a ``MarkupError`` traceback and no report."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_pipelines.commands._sweep import CampaignReport, SweepReport
from fleet_pipelines.commands.pipeline import print_report
from fleet_pipelines.resources import FleetSettings

WHY = ("impacted_tests: 18 test file(s): [/srv/venv/bin/python] could not judge: "
       "tests/test_response.py (errors at collection: [bold]x[/] [link=y])")


def test_evidence_and_names_with_brackets_are_printed_as_they_are(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "home"),
                                       "FLEET_REPO": str(tmp_path)})
    report = CampaignReport(
        "c[/x]", findings=1, new_units=1,
        units={"0c575dd5ee650374": {"status": "unsure", "why": WHY, "gate": "impacted_tests",
                                    "paths": "src/[slug].py"}},
        integration={"branch": "fleet/c/[/i]", "merged": ["a"], "semantic_conflicts": [],
                     "tests_passed": False, "new_failures": ["t.py::test[/a]"],
                     "head": "0" * 40},
        change_url="file:///srv/[repo]/pulls/1", self_merge="[red]refused[/red]")
    print_report(SweepReport([report], 1.0, 1, str(tmp_path / "[dagster]")), settings)
    out = capsys.readouterr().out
    for text in (WHY, "src/[slug].py", "campaign c[/x]", "fleet/c/[/i]", "t.py::test[/a]",
                 "file:///srv/[repo]/pulls/1", "[red]refused[/red]", "[dagster]"):
        assert text in out, (text, out)


def test_a_rejected_rows_why_keeps_the_failing_tests_id() -> None:
    from fleet.types import Verdict
    from fleet.unit import UnitResult
    from fleet_pipelines.commands._sweep import outcome

    evidence = ("[/tmp/s31/real/webob-venv/bin/python] 18 test file(s) by the graph, imports and "
                "names: tests/test_response.py::test_set_cookie_expires_is_datetime_tz_and_max_"
                "age_is_None passed before and failed after\npythons (...): not run on 3.7")
    result = UnitResult("u", "datetime-utcnow", "rejected", "0" * 40,
                        verdicts=(Verdict("applies", "accept", "applies"),
                                  Verdict("impacted_tests", "reject", evidence)))
    status, why = outcome(result)
    assert status == "rejected"
    assert why == f"impacted_tests — {evidence.splitlines()[0]}"
