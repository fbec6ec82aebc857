"""Matchers and fingerprints over a real index: resolution through imports and aliases, stable
fingerprints (moving, reformatting, unrelated edits) that change on real edits; the lifecycle in a
real SQLite store; filing through the local forge exactly once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fleet.campaigns.findings import classify, file_new_findings, sync_findings
from fleet.campaigns.matchers import find_findings
from fleet.campaigns.spec import Campaign, load_campaign, parse_campaign
from fleet.graph import index
from fleet.types import Finding

SOURCE = '''\
import datetime as dt
from datetime import datetime as DT

import yaml
from yaml import load as yload


def stamp():
    return dt.datetime.utcnow()


class Clock:
    def now(self):
        # the wall clock
        return DT.utcnow()


def utcnow():
    return 1


def local():
    return utcnow()


def load(text):
    return yaml.load(text)


def load_aliased(text):
    return yload(text)


def load_safe(text):
    return yaml.load(text, Loader=yaml.SafeLoader)


def twice():
    a = dt.datetime.utcnow()
    b = dt.datetime.utcnow()
    return a, b
'''

MIXED = """\
name: mixed
description: matchers of every kind
matchers:
  - rule: utcnow
    call: datetime.datetime.utcnow
  - rule: yaml-import
    import: yaml
  - rule: clock-now
    attribute: .now
  - rule: class-def
    query: "(class_definition name: (identifier) @name) @match"
fix: {prompt: look}
"""


def _write(root: Path, text: str = SOURCE) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(text)
    return root


def _find(root: Path, campaign: Campaign) -> list[Finding]:
    return find_findings(index(root), campaign)


def _by_symbol(findings: list[Finding]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in findings:
        out.setdefault(f.symbol, []).append(f.fingerprint)
    return out


def test_calls_resolved_through_aliases_not_spelling(tmp_path: Path) -> None:
    found = _find(_write(tmp_path / "r"), load_campaign("datetime-utcnow"))
    assert sorted({f.symbol for f in found}) == [
        "app.py::Clock.now", "app.py::stamp", "app.py::twice"]
    assert all(f.rule == "naive-utcnow" and f.campaign == "datetime-utcnow" for f in found)
    assert [f.snippet for f in found if f.symbol == "app.py::Clock.now"] == ["DT.utcnow()"]
    assert len({f.fingerprint for f in found}) == len(found) == 4  # twice(): two occurrences


def test_where_leaves_calls_with_a_loader(tmp_path: Path) -> None:
    found = _find(_write(tmp_path / "r"), load_campaign("yaml-safe-load"))
    assert sorted(f.symbol for f in found) == ["app.py::load", "app.py::load_aliased"]
    line = SOURCE.splitlines().index("    return yaml.load(text)") + 1
    first = next(f for f in found if f.symbol == "app.py::load")
    assert (first.line, first.col, first.snippet) == (line, 11, "yaml.load(text)")
    assert SOURCE.encode()[first.start_byte:first.end_byte] == b"yaml.load(text)"


def test_import_attribute_and_query_matchers(tmp_path: Path) -> None:
    found = _find(_write(tmp_path / "r"), parse_campaign(MIXED))
    rules: dict[str, list[str]] = {}
    for f in found:
        rules.setdefault(f.rule, []).append(f.snippet.splitlines()[0])
    assert rules["yaml-import"] == ["import yaml", "from yaml import load as yload"]
    assert rules["class-def"] == ["class Clock:"]
    assert "utcnow" in rules and "clock-now" not in rules  # nothing calls x.now here


def test_fingerprints_survive_moves_reformatting_and_unrelated_edits(tmp_path: Path) -> None:
    campaign = load_campaign("datetime-utcnow")
    before = _by_symbol(_find(_write(tmp_path / "a"), campaign))
    moved = SOURCE.replace("import yaml\n", "import yaml\n\nLIMIT = 3\n\n\ndef helper():\n"
                           "    return LIMIT * 2\n")
    moved = moved.replace("        # the wall clock\n", "        # the wall clock, in UTC\n\n")
    assert _by_symbol(_find(_write(tmp_path / "b", moved), campaign)) == before
    ugly = SOURCE.replace("return dt.datetime.utcnow()", "return dt.datetime.utcnow(  )")
    ugly = ugly.replace("a = dt.datetime.utcnow()", "a = (dt.datetime\n         .utcnow())")
    root = _write(tmp_path / "c", ugly)
    ruff = Path(sys.executable).parent / "ruff"
    subprocess.run([str(ruff), "format", "--quiet", "--no-cache", str(root / "app.py")],
                   check=True)
    assert (root / "app.py").read_text() != ugly
    assert _by_symbol(_find(root, campaign)) == before


def test_fingerprint_changes_on_a_real_edit(tmp_path: Path) -> None:
    campaign = load_campaign("yaml-safe-load")
    before = _by_symbol(_find(_write(tmp_path / "a"), campaign))
    edited = SOURCE.replace("return yaml.load(text)", "return yaml.load(text.strip())")
    after = _by_symbol(_find(_write(tmp_path / "b", edited), campaign))
    assert after["app.py::load"] != before["app.py::load"]
    assert after["app.py::load_aliased"] == before["app.py::load_aliased"]


def test_quote_style_and_trailing_commas_do_not_count(tmp_path: Path) -> None:
    campaign = load_campaign("yaml-safe-load")
    one = _find(_write(tmp_path / "a", "import yaml\nx = yaml.load('a: 1')\n"), campaign)
    two = _find(_write(tmp_path / "b", 'import yaml\nx = yaml.load(\n    "a: 1",\n)\n'), campaign)
    three = _find(_write(tmp_path / "c", "import yaml\nx = yaml.load('a: 2')\n"), campaign)
    assert one[0].fingerprint == two[0].fingerprint != three[0].fingerprint


def _finding(fp: str) -> Finding:
    return Finding(fp, "demo", "rule", "a.py::f", "a.py", 1, 0, 0, 1, "x", "msg")


def test_classify_states() -> None:
    life = classify([_finding("a"), _finding("b"), _finding("s")], ["a", "c"], ["s"])
    assert (life.new, life.known, life.fixed, life.suppressed) == (("b",), ("a",), ("c",), ("s",))
    assert life.status("c") == "fixed" and life.counts()["new"] == 1


def test_lifecycle_in_the_store_and_filing_once(tmp_path: Path) -> None:
    from fleet.forge.local import LocalGitForge
    from fleet.store import open_store

    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        first = sync_findings(store.findings, "demo", [_finding("a"), _finding("b")])
        assert first.new == ("a", "b") and not first.known
        second = sync_findings(store.findings, "demo", [_finding("a"), _finding("b")])
        assert second.known == ("a", "b") and not second.new
        store.findings.set_status("b", "suppressed")
        third = sync_findings(store.findings, "demo", [_finding("b")])
        assert (third.fixed, third.suppressed) == (("a",), ("b",))
        assert store.findings.get("a").status == "fixed"  # type: ignore[union-attr]
        fourth = sync_findings(store.findings, "demo", [_finding("a"), _finding("b")])
        assert fourth.new == ("a",)  # a regression is new again
        forge = LocalGitForge(store.changes, store.ledger)
        filed = file_new_findings(forge, [_finding("a"), _finding("b")], store.findings)
        assert len(filed) == 2
        again = file_new_findings(forge, [_finding("a"), _finding("b")], store.findings)
        assert again == []
        assert len(store.ledger.events(kind="issue.filed")) == 2
        # another sweep or agent without the store record still gets the same issue back
        ref = forge.file_issue(_finding("a"), "t", "b")
        assert not ref.created and ref.number == filed[0].number


def test_no_store_means_every_finding_is_new() -> None:
    assert sync_findings(None, "demo", [_finding("a")]).new == ("a",)


@pytest.mark.parametrize("name", ["unittest-aliases", "pydantic-v2", "retire-api"])
def test_builtin_campaigns_find_nothing_in_clean_code(tmp_path: Path, name: str) -> None:
    clean = "import json\n\n\ndef f(d):\n    return json.loads(json.dumps(d))\n"
    assert _find(_write(tmp_path / "r", clean), load_campaign(name)) == []


def test_joined_implicit_string_concatenation_keeps_the_fingerprint(tmp_path: Path) -> None:
    campaign = load_campaign("yaml-safe-load")
    split = 'import yaml\nx = yaml.load(\n    "a: 1 "  # why\n    "b"\n)\n'
    joined = 'import yaml\nx = yaml.load("a: 1 b")\n'
    one = _find(_write(tmp_path / "a", split), campaign)
    two = _find(_write(tmp_path / "b", joined), campaign)
    assert one[0].fingerprint == two[0].fingerprint
