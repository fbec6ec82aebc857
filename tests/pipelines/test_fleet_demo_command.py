"""``fleet demo`` (what ``make demo`` runs) end to end through the CLI: a table of units, the
integration branches, self-merge where the campaign allows it; a second run finds nothing new.

The first demo executes its ~22 runs in process (``--in-process``: what the demo finds, fixes and
hands over does not depend on where a run executes); the second submits its runs as ``make demo``
does (queue, daemon, code server) on the instance the first one filled."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_pipelines.cli import main
from tests.conftest import git

# ~22 runs in process, then the second demo submits only the plan runs of the campaigns that
# planned before a self-merge moved main (9 runs before unchanged ones were skipped; a run worker
# process each):
# at load ~20 on 2 cores the first demo took 14 min and the second's runs ~1 min each
pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.timeout(1800)]


def test_demo_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "fleet"
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    assert main(["demo", "--home", str(home), "--sandbox", "bwrap", "--in-process"]) == 0
    first = capsys.readouterr().out
    assert "campaign yaml-safe-load" in first and "verified, integrated" in first
    assert "integration branch fleet/yaml-safe-load/integration" in first
    assert "rejected" in first  # a unit rejected, with the gate that fired in its row
    assert "self-merge (main): fast-forwarded" in first
    repo = home / "demo" / "acme-monorepo"
    assert git(repo, "status", "--porcelain") == ""
    assert (home / "settings.json").is_file()  # what `make ui` reads

    assert main(["demo", "--home", str(home), "--sandbox", "bwrap", "--submitted"]) == 0
    said = capsys.readouterr()
    second, progress = said.out, " ".join(said.err.split())  # (the console wraps its lines)
    assert "nothing new" in second
    assert "fast-forwarded" not in second  # nothing moved in the second demo: it says nothing
    # ... and it re-runs no index and no plan whose inputs are as the first demo left them
    assert "no index run" in progress and progress.count("no plan run") >= 6, progress[-3000:]
