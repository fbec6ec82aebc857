"""``fleet sweep`` over a repository shaped like the third-party ones: a dirty checkout (the
units start from the base commit, so the index must too), a test that fails on the base (the
integration tells new failures from the base's own), a test whose fix no passing test checks
(``unsure``, not ``rejected``) and a Python 2 file libcst cannot parse (the agent's reason).
Its runs execute in process (``--in-process``): what it checks happens inside the runs, wherever
they execute; ``tests/engine`` covers the submitted path."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from fleet.store import open_store
from fleet.unit import latest_results
from fleet_pipelines.cli import main
from tests.conftest import git

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

CAMPAIGN = "unittest-aliases"
LOCAL_NOTE = "# a local note, not committed\n" * 30


def _things() -> str:
    body = "import unittest\n\n\nclass TestThings(unittest.TestCase):\n"
    for i in range(10):
        body += f"\n    def test_other{i}(self):\n        self.assertEqual({i}, {i})\n"
    body += "\n    def test_alias(self):\n        self.assertEquals(1, 1)\n"
    for i in range(10, 20):
        body += f"\n    def test_other{i}(self):\n        self.assertEqual({i}, {i})\n"
    return body


FILES = {
    "tests/test_things.py": _things(),
    "tests/test_broken.py": ("import unittest\n\n\nclass TestBroken(unittest.TestCase):\n"
                             "    def test_wrong(self):\n        self.assertEquals(1, 2)\n"),
    "tests/test_py2.py": ('import unittest\n\nprint "python 2"\n\n\n'
                          "class TestOld(unittest.TestCase):\n"
                          "    def test_old(self):\n        self.assertEquals(1, 1)\n"),
}


def test_sweep_a_dirty_checkout_of_a_failing_suite(
    git_repo: Path, tmp_path: Path, bwrap: object, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for rel, text in FILES.items():
        (git_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (git_repo / rel).write_text(text)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "a suite with aliases")
    base = git(git_repo, "rev-parse", "main").strip()
    dirty = LOCAL_NOTE + FILES["tests/test_things.py"]
    (git_repo / "tests/test_things.py").write_text(dirty)
    home = tmp_path / "fleet"
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.setenv("COLUMNS", "240")  # one table row per unit

    assert main(["sweep", str(git_repo), "-c", CAMPAIGN, "--sandbox", "bwrap",
                 "--home", str(home), "--in-process"]) == 0
    out = capsys.readouterr().out

    store = open_store(f"sqlite:///{home.resolve() / 'fleet.db'}")
    results = {r.paths[0]: r for r in latest_results(store.ledger, CAMPAIGN).values()}
    # the index is of the base commit: the finding is where the unit's worktree has it
    planned = [e.payload for e in store.ledger.events(kind="unit.planned", campaign=CAMPAIGN)]
    alias = next(f for p in planned for f in p["findings"] if f["path"] == "tests/test_things.py")
    assert alias["line"] == FILES["tests/test_things.py"].splitlines().index(
        "        self.assertEquals(1, 1)") + 1
    things = results["tests/test_things.py"]
    assert things.status == "verified", things.detail
    merged = git(git_repo, "show", f"fleet/{CAMPAIGN}/integration:tests/test_things.py")
    assert merged == FILES["tests/test_things.py"].replace("assertEquals", "assertEqual")
    assert (git_repo / "tests/test_things.py").read_text() == dirty  # the checkout untouched

    # an unknown verdict is its own outcome, with the gate and its evidence
    broken = results["tests/test_broken.py"]
    unsure = next(v for v in broken.verdicts if not v.passed)
    assert broken.status == "rejected" and (unsure.gate, unsure.status) == (
        "impacted_tests", "unknown")
    row = next(ln for ln in out.splitlines() if broken.unit[:12] in ln)
    assert "unsure" in row and "impacted_tests — " in row and "rejected" not in row
    # an agent failure says why, in one line
    py2 = results["tests/test_py2.py"]
    assert py2.status == "agent_failed"
    row = next(ln for ln in out.splitlines() if py2.unit[:12] in ln)
    assert "agent failed" in row and "tests/test_py2.py: failed: Syntax Error" in row

    # the base's own failure is not the patches' doing
    finished = store.ledger.events(kind="integration.finished", campaign=CAMPAIGN)[-1].payload
    assert finished["tests_passed"] is False and finished["base_tests_passed"] is False
    assert finished["new_failures"] == []
    assert "tests fail, but no new failure (the base's own tests fail the same way)" in out
    instance = DagsterInstance.get()
    event = instance.get_latest_materialization_event(
        AssetKey([CAMPAIGN.replace("-", "_"), "integration"]))
    assert event is not None and event.asset_materialization is not None
    meta = event.asset_materialization.metadata
    assert meta["new_failures"].value == 0 and meta["base_tests_passed"].value is False
    # self_merge autonomy, but the combination did not pass: main stays, the branch is left
    assert git(git_repo, "rev-parse", "main").strip() == base
    assert ("self-merge (main): not merged: the combination's tests fail (no new failure: "
            f"the base fails on its own); the change stays on fleet/{CAMPAIGN}/integration"
            in out)
    store.close()
    instance.dispose()
