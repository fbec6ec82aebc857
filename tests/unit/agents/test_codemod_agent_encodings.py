"""CodemodAgent on files as third-party repositories have them: a PEP 263 legacy encoding, a
UTF-8 BOM, Windows line endings. The graph's spans are offsets into the file's bytes; the
rewrite must land on the unit's symbol and leave every other byte as it was (found on PyYAML
3.13-style trees, where the agent crashed with ``UnicodeDecodeError``)."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from fleet.agents.codemod import CodemodAgent, decode_source
from fleet.campaigns.spec import Campaign, PlanSettings, load_campaign
from fleet.forge.worktree import workspace
from fleet.plan import plan_campaign
from fleet.types import Budget, StopReason

# "café" sits before the unit's symbol: a byte offset and a UTF-8 offset differ there.
SOURCE = """\
# -*- coding: {coding} -*-
import datetime

LABEL = "café crème"


def stamp():
    return datetime.datetime.utcnow()


def other():
    return datetime.datetime.utcnow()
"""


def _campaign() -> Campaign:
    return dataclasses.replace(load_campaign("datetime-utcnow"), plan=PlanSettings("symbol"))


def _commit(repo: Path, name: str, data: bytes) -> None:
    (repo / name).write_bytes(data)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "add"],
                   cwd=repo, check=True)


def _removed(patch: str) -> list[str]:
    return [line for line in patch.split("\n") if line.startswith("-") and
            not line.startswith("---")]


def _fix_stamp(repo: Path, name: str) -> tuple[bytes, str]:
    """Run the unit that owns ``stamp`` (and the module code, for the import); return the
    rewritten file's bytes and the patch."""
    campaign = _campaign()
    plan = plan_campaign(repo, campaign)
    unit = next(u for u in plan.units if f"{name}::stamp" in u.write_set)
    unit = dataclasses.replace(
        unit, write_set=(f"{name}::<module>", f"{name}::stamp"),
        findings=tuple(f for f in unit.findings if f.symbol == f"{name}::stamp"))
    with workspace(repo, campaign.name, unit.key, unit.base_commit) as ws:
        outcome = CodemodAgent(campaign, plan.graph).run(unit, ws, None, Budget())
        data = (ws.path / name).read_bytes()
    assert outcome.ok and outcome.stop_reason is StopReason.FINISHED, outcome.detail
    return data, outcome.patch


YAML_SOURCE = """\
# -*- coding: latin-1 -*-
import yaml

LABEL = "{accents}"
# a few lines, so that the
# hunk of the fix does not
# reach the line above


def read(text):
    return yaml.load(text)


def other(text):
    return yaml.load(text)
"""


def test_a_legacy_encoding_is_kept_and_the_spans_hit_the_right_symbol(git_repo: Path) -> None:
    # 60 bytes in latin-1, 120 in UTF-8: unmapped spans would end before read()'s call
    original = YAML_SOURCE.format(accents="é" * 60).encode("latin-1")
    _commit(git_repo, "conf.py", original)
    campaign = dataclasses.replace(load_campaign("yaml-safe-load"), plan=PlanSettings("symbol"))
    plan = plan_campaign(git_repo, campaign)
    [unit] = [u for u in plan.units if "conf.py::read" in u.write_set]
    unit = dataclasses.replace(unit, write_set=("conf.py::read",), findings=tuple(
        f for f in unit.findings if f.symbol == "conf.py::read"))
    with workspace(git_repo, campaign.name, unit.key, unit.base_commit) as ws:
        outcome = CodemodAgent(campaign, plan.graph).run(unit, ws, None, Budget())
        data = (ws.path / "conf.py").read_bytes()
    assert outcome.ok and outcome.stop_reason is StopReason.FINISHED, outcome.detail
    text = data.decode("latin-1")
    assert "def read(text):\n    return yaml.safe_load(text)" in text
    assert "def other(text):\n    return yaml.load(text)" in text  # another unit's
    assert ('LABEL = "' + "é" * 60 + '"').encode("latin-1") in data
    assert _removed(outcome.patch) == ["-    return yaml.load(text)"]
    assert (git_repo / "conf.py").read_bytes() == original


@pytest.mark.parametrize("coding", ["latin-1", "cp1252"])
def test_a_patch_that_is_not_utf8_is_refused_not_a_crash(git_repo: Path, coding: str) -> None:
    """The ledger keeps patches as UTF-8 text: a hunk with latin-1 bytes crashed the whole
    batch step when the unit recorded its steps."""
    original = SOURCE.format(coding=coding).encode(coding)
    _commit(git_repo, "jobs.py", original)
    campaign = _campaign()
    plan = plan_campaign(git_repo, campaign)
    unit = next(u for u in plan.units if "jobs.py::stamp" in u.write_set)
    with workspace(git_repo, campaign.name, unit.key, unit.base_commit) as ws:
        outcome = CodemodAgent(campaign, plan.graph).run(unit, ws, None, Budget())
    assert outcome.stop_reason is StopReason.ERROR and not outcome.ok
    assert outcome.patch == "" and "not UTF-8 text" in outcome.detail
    assert [s.result for s in outcome.steps] == ["rewrote"]


def test_windows_line_endings_and_a_bom_survive(git_repo: Path) -> None:
    original = b"\xef\xbb\xbf" + SOURCE.format(coding="utf-8").replace("\n", "\r\n").encode()
    _commit(git_repo, "jobs.py", original)
    data, patch = _fix_stamp(git_repo, "jobs.py")
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\n") == data.count(b"\r\n")  # no line lost its \r
    assert b"def stamp():\r\n    return datetime.datetime.now(UTC)\r\n" in data
    assert b"def other():\r\n    return datetime.datetime.utcnow()\r\n" in data
    # only the call changed, not every line's ending
    assert _removed(patch) == ["-    return datetime.datetime.utcnow()\r"]


def test_undecodable_file_is_a_failed_step_not_a_crash(git_repo: Path) -> None:
    _commit(git_repo, "jobs.py", SOURCE.format(coding="utf-8").encode().replace(
        "café".encode(), b"caf\xe9"))  # declared UTF-8, is not
    campaign = load_campaign("datetime-utcnow")
    plan = plan_campaign(git_repo, campaign)
    [unit] = plan.units
    with workspace(git_repo, campaign.name, unit.key, unit.base_commit) as ws:
        outcome = CodemodAgent(campaign, plan.graph).run(unit, ws, None, Budget())
    assert outcome.stop_reason is StopReason.ERROR and not outcome.ok
    assert "cannot read jobs.py" in outcome.detail and "utf-8" in outcome.detail


def test_decode_source_reports_the_declared_encoding() -> None:
    assert decode_source(b"# coding: latin-1\nx = '\xe9'\n") == ("# coding: latin-1\nx = 'é'\n",
                                                                 "iso-8859-1")
    assert decode_source(b"x = 1\r\n") == ("x = 1\r\n", "utf-8")
