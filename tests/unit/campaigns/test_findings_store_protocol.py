"""``sync_findings`` over the real store's ``SqlFindings`` (SQLite and PostgreSQL), and the
pipeline's find step (``assets._fleet.find``) recording a sweep through it: new, then known, then
fixed once the code is corrected; a suppressed finding stays suppressed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assets._fleet import find, index
from fleet.campaigns.findings import sync_findings
from fleet.campaigns.spec import load_campaign
from fleet.store import SqlFindings, open_store
from fleet_pipelines.resources import StoreResource
from tests.conftest import git

RISKY = (
    "import yaml\n\n\ndef read(text):\n    return yaml.load(text)\n\n\n"
    "def read_again(text):\n    return yaml.load(text)\n"
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fleet.db'}"
    else:
        yield request.getfixturevalue("pg_dsn")


def test_the_find_step_records_a_sweep_through_sync_findings(
    git_repo: Path, tmp_path: Path, store_url: str
) -> None:
    (git_repo / "loader.py").write_text(RISKY)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "loader")
    home = tmp_path / "home"
    source = StoreResource(url=store_url)
    index(git_repo, home)

    first = find(load_campaign("yaml-safe-load"), git_repo, home, source)
    assert len(first.findings) == 2 and (first.new, first.known, first.fixed) == (2, 0, 0)
    second = find(load_campaign("yaml-safe-load"), git_repo, home, source)
    assert (second.new, second.known, second.fixed) == (0, 2, 0)

    # one call is fixed in the code; the next sweep marks its finding fixed in the store
    (git_repo / "loader.py").write_text(RISKY.replace("yaml.load(text)", "yaml.safe_load(text)",
                                                      1))
    git(git_repo, "commit", "-qam", "safe")
    index(git_repo, home)
    third = find(load_campaign("yaml-safe-load"), git_repo, home, source)
    assert len(third.findings) == 1 and (third.new, third.known, third.fixed) == (0, 1, 1)
    with open_store(store_url) as store:
        records = {r.finding.symbol: r.status for r in store.findings.list("yaml-safe-load")}
    assert sorted(records.values()) == ["fixed", "known"]


def test_sync_findings_on_the_store_table(git_repo: Path, tmp_path: Path, store_url: str) -> None:
    from fleet.campaigns.matchers import find_findings
    from fleet.campaigns.spec import load_campaign
    from fleet.graph import index as index_repo

    (git_repo / "loader.py").write_text(RISKY)
    findings = find_findings(index_repo(git_repo, None), load_campaign("yaml-safe-load"))
    one, two = sorted(f.fingerprint for f in findings)
    with open_store(store_url) as store:
        table: SqlFindings = store.findings
        assert sync_findings(table, "yaml-safe-load", findings).new == (one, two)
        table.set_status(two, "suppressed")
        life = sync_findings(table, "yaml-safe-load", findings)
        assert (life.known, life.suppressed) == ((one,), (two,))
        gone = sync_findings(table, "yaml-safe-load", [])
        assert (gone.fixed, gone.suppressed) == ((one,), ())
        assert table.get(one).status == "fixed"  # type: ignore[union-attr]
        assert table.get(two).status == "suppressed"  # type: ignore[union-attr]
        back = sync_findings(table, "yaml-safe-load", findings)
        assert (back.new, back.suppressed) == ((one,), (two,))  # a regression is new again
        assert {r.finding.fingerprint for r in table.list("yaml-safe-load")} == {one, two}
