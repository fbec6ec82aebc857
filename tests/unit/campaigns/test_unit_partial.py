"""Issue 17, defect 2: an agent that leaves some of a unit's findings as they were must not make
the unit "verified". Found on Flask-Pydantic 0.8.0 (the pydantic-v2 codemod has no safe rewrite
for ``model.parse_obj(obj).__root__``): the unit is ``partial``, the finding left is named and
its fingerprint kept open, and the patch is not one of the verified ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.agents.codemod import CodemodAgent
from fleet.campaigns.spec import load_campaign
from fleet.plan import plan_campaign
from fleet.store import Store
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, latest_results, record_planned, run_unit
from fleet.verify import GateOptions
from fleet_pipelines.commands._sweep import outcome
from tests.conftest import git

pytestmark = [pytest.mark.sandbox]

CORE = '''from typing import Iterable, Type, Union

from pydantic import BaseModel


def make_json_response(content: Union[BaseModel, Iterable[BaseModel]], many: bool = False):
    if many:
        return "[" + ", ".join(model.json() for model in content) + "]"
    return content.json()


def parse_custom_root_type(model: Type[BaseModel], obj):
    return model.parse_obj(obj).__root__
'''
TESTS = '''from pydantic import BaseModel

from core import make_json_response


class Item(BaseModel):
    name: str


def test_one():
    assert make_json_response(Item(name="a")) == '{"name": "a"}'


def test_many():
    assert make_json_response([Item(name="a")], many=True) == '[{"name": "a"}]'
'''


def test_a_unit_with_findings_left_is_partial_not_verified(
    git_repo: Path, store: Store, bwrap: object
) -> None:
    (git_repo / "core.py").write_text(CORE)
    (git_repo / "test_core.py").write_text(TESTS)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "core")
    campaign = load_campaign("pydantic-v2")
    plan = plan_campaign(git_repo, campaign)
    [unit] = [u for u in plan.units if any(f.path == "core.py" for f in u.findings)]
    record_planned(store.ledger, [unit])
    env = UnitEnv(leases=store.leases, ledger=store.ledger,
                  agent=CodemodAgent(campaign, plan.graph, store.ledger), sandbox=bwrap,  # type: ignore[arg-type]
                  workspaces=GitWorkspaces(git_repo),
                  gates=VerifyGates(git_repo, plan.graph,
                                    GateOptions(campaign="pydantic-v2",
                                                skip=frozenset({"typecheck"}))))
    result = run_unit(unit, env)
    assert result.status == "partial", (result.status, result.detail, result.verdicts)
    assert all(v.passed for v in result.verdicts)
    [left] = [f for f in unit.findings if f.line == 13]
    assert result.left == (left.fingerprint,)
    assert result.detail == (f"1 of {len(unit.findings)} finding(s) left unfixed (still open, not "
                             f"verified): core.py:13 {left.rule}")
    stored = latest_results(store.ledger, "pydantic-v2")[unit.key]
    assert stored.status == "partial" and stored.left == (left.fingerprint,)
    assert outcome(stored, store.ledger)[0] == "partial"
    # json_output: v1 (the default): both .json() calls keep v1's text
    assert 'json.dumps(model.model_dump(mode="json"))' in result.patch
    assert 'json.dumps(content.model_dump(mode="json"))' in result.patch
    assert "parse_obj" not in result.patch
