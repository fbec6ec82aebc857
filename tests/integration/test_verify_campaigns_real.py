"""Issue 17, "run campaigns on real PyPI projects with their own suites": the built-in
campaigns on projects none used before here, each unit as the unit stage does it (plan on the
base commit, the campaign's agent in the unit's tree, every gate in bubblewrap with the
symbol graph), its outcome settled like ``fleet.unit`` settles it. The figures are in
docs/verify.md ("Campaigns on real projects")."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from fleet.agents.codemod import CodemodAgent
from fleet.agents.command import CommandAgent
from fleet.campaigns.spec import load_campaign
from fleet.plan import plan_campaign
from fleet.types import Budget, Workspace
from fleet.unit._records import settle
from fleet.verify import GateOptions, decide, rejected_by, run_gates
from sandbox import Sandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

PROJECTS = Path(__file__).resolve().parents[1] / "fixtures" / "projects"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout


def _campaign(project: str, campaign: str, tmp_path: Path, box: Sandbox
              ) -> list[tuple[str, str, list[str], str]]:
    root = tmp_path / project
    shutil.copytree(PROJECTS / project, root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", f"{project} sdist")
    spec = load_campaign(campaign)
    plan = plan_campaign(root, spec)
    rows: list[tuple[str, str, list[str], str]] = []
    for unit in plan.units:
        agent = CommandAgent(spec) if spec.fix.command else CodemodAgent(spec, plan.graph)
        outcome = agent.run(unit, Workspace(root, "unit", unit.base_commit, root, root), box,
                            Budget())
        _git(root, "reset", "-q", "--hard", "HEAD")
        _git(root, "clean", "-qfd")
        assert outcome.patch, f"{unit.paths}: {outcome.detail}"
        verdicts = run_gates(root, outcome.patch, unit.write_set, sandbox=box, graph=plan.graph,
                             options=GateOptions(campaign=campaign,
                                                 skip=frozenset({"typecheck"})))
        status: str = (settle(unit, outcome.patch)[0] if decide(verdicts) == "accept"
                       else decide(verdicts))
        why = next((v.evidence for v in verdicts if not v.passed), "")
        rows.append(("+".join(unit.paths), status, rejected_by(verdicts), why))
    return rows


def test_datetime_utcnow_on_freezegun(tmp_path: Path, bwrap: Sandbox) -> None:
    """freezegun 0.3.15 fakes ``utcnow`` itself: the fix of its own ``FakeDatetime.utcnow`` (an
    aware value where the contract is naive) breaks the fake clock that pytest's timing calls,
    and is rejected; the test-only unit is verified."""
    rows = _campaign("freezegun-0.3.15", "datetime-utcnow", tmp_path, bwrap)
    by_path = {path: (status, gates, why) for path, status, gates, why in rows}
    assert set(by_path) == {"freezegun/api.py+tests/test_datetimes.py", "tests/test_pickle.py"}
    status, gates, why = by_path["freezegun/api.py+tests/test_datetimes.py"]
    assert (status, gates) == ("reject", ["impacted_tests"]), why
    assert "after the patch pytest crashed (INTERNALERROR: IndexError" in why
    assert by_path["tests/test_pickle.py"][0] == "verified", by_path["tests/test_pickle.py"]


def test_ruff_up_on_tinydb(tmp_path: Path, bwrap: Sandbox) -> None:
    """TinyDB 3.15.2 supports 3.3+ (classifiers): ruff's UP fixes that write f-strings are
    rejected by ``compat``; a unit that no test reaches (``setup.py``) is unknown."""
    rows = _campaign("tinydb-3.15.2", "ruff-up", tmp_path, bwrap)
    counts = Counter(status for _, status, _, _ in rows)
    assert counts == Counter({"verified": 4, "reject": 2, "unknown": 1}), rows
    for path, status, gates, why in rows:
        if status == "reject":
            assert gates == ["compat"] and "needs Python 3.6" in why, (path, why)
        if status == "unknown":
            assert path == "setup.py" and "no test reaches the patched code" in why, why
