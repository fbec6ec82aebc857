"""Outside check on Flask-Pydantic 0.8.0: the pydantic-v2 codemod rewrote the two ``.json()``
calls and left ``model.parse_obj(obj).__root__`` (a custom root model has no safe mechanical
rewrite); the sweep table then called the unit just "verified", as if all 3 findings were fixed.
Now a verified row names the findings the patch left as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.campaigns.spec import load_campaign
from fleet.plan import plan_campaign
from fleet.store import open_store
from fleet.unit import UnitResult, record_planned, untouched_findings
from fleet_pipelines.cli import main
from fleet_pipelines.commands._sweep import outcome
from tests.conftest import git

CORE = '''from typing import Iterable, Type, Union

from pydantic import BaseModel


def make_json_response(content: Union[BaseModel, Iterable[BaseModel]], many: bool = False):
    if many:
        return "[" + ", ".join(model.json() for model in content) + "]"
    return content.json()


def parse_custom_root_type(model: Type[BaseModel], obj):
    return model.parse_obj(obj).__root__
'''


def test_a_verified_row_names_the_findings_left_as_they_were(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (git_repo / "core.py").write_text(CORE)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "core")
    plan = plan_campaign(git_repo, load_campaign("pydantic-v2"))
    [unit] = plan.units
    assert sorted(f.line for f in unit.findings) == [8, 9, 13]
    assert main(["fix", str(git_repo), "-c", "pydantic-v2", "-u", unit.key]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "# left as it was: core.py:13 v1-model-method model.parse_obj(obj)" in captured.err
    patch = out[out.index("diff --git"):]
    # json_output: v1 (the default): both .json() calls keep v1's text
    assert 'json.dumps(model.model_dump(mode="json"))' in patch
    assert 'json.dumps(content.model_dump(mode="json"))' in patch
    assert "parse_obj" not in patch
    left = untouched_findings(patch, unit.findings)
    assert [(f.path, f.line) for f in left] == [("core.py", 13)]
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        record_planned(store.ledger, [unit])
        result = UnitResult(unit=unit.key, campaign="pydantic-v2", status="verified",
                            base_commit=unit.base_commit, patch=patch, paths=("core.py",))
        assert outcome(result, store.ledger) == (
            "verified", "1 of 3 finding(s) left as they were: core.py:13")
        assert untouched_findings("", unit.findings) == list(unit.findings)
        assert outcome(result, None) == ("verified", "")  # no ledger, no planned findings
