"""The built-in campaigns on real fixers from PyPI: django-upgrade and bump-pydantic, each run
as the unit's agent in the sandbox through the unit runner, judged by the campaign's gates."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fleet.agents.select import agent_for
from fleet.campaigns.spec import load_campaign
from fleet.plan import plan_campaign
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, repo_untouched, run_unit
from tests.conftest import commit_files, git

if TYPE_CHECKING:
    from fleet.store import Store
    from fleet.types import WorkUnit
    from fleet.unit import UnitResult
    from sandbox import Sandbox

pytestmark = pytest.mark.sandbox

URLS = '''from django.conf.urls import url
from django.utils.encoding import force_text


def index(request):
    return "index"


def label(value):
    return force_text(value)


urlpatterns = [
    url(r"^$", index),
]
'''
MODELS = '''from pydantic import BaseModel, validator


class Plan(BaseModel):
    name: str
    cents: int

    class Config:
        anystr_strip_whitespace = True

    @validator("cents")
    def non_negative(cls, value):
        if value < 0:
            raise ValueError("must not be negative")
        return value
'''
TEST_MODELS = '''import pytest

from models import Plan


def test_plan():
    assert Plan(name=" team ", cents=5).name == "team"
    with pytest.raises(ValueError):
        Plan(name="x", cents=-1)
'''


def _run(repo: Path, name: str, store: Store, sandbox: Sandbox) -> tuple[WorkUnit, UnitResult]:
    campaign = load_campaign(name)
    plan = plan_campaign(repo, campaign)
    [unit] = plan.units
    env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=agent_for("auto", campaign),
                  sandbox=sandbox, workspaces=GitWorkspaces(repo),
                  gates=VerifyGates(repo, plan.graph, campaign=campaign))
    return unit, run_unit(unit, env)


def test_django_upgrade_rewrites_removed_apis(
    git_repo: Path, store: Store, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the offline reviewer
    commit_files(git_repo, {"urls.py": URLS, "conftest.py": "",
                            "test_urls.py": "import ast\n\n\ndef test_parses():\n"
                            "    ast.parse(open('urls.py').read())\n"}, "django 3 code")
    unit, result = _run(git_repo, "django-upgrade", store, bwrap)
    assert sorted(f.line for f in unit.findings) == [10, 14]
    assert result.status == "verified", result.detail
    fixed = git(git_repo, "show", f"{result.branch}:urls.py")
    assert "from django.urls import path" in fixed and 'path("", index)' in fixed
    assert "force_str(value)" in fixed and "force_text" not in fixed
    assert repo_untouched(git_repo) and (git_repo / "urls.py").read_text() == URLS


def test_bump_pydantic_migrates_a_v1_model(
    git_repo: Path, store: Store, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    commit_files(git_repo, {"models.py": MODELS, "test_models.py": TEST_MODELS,
                            "conftest.py": ""}, "pydantic v1 model")
    unit, result = _run(git_repo, "pydantic-v2-bump", store, bwrap)
    assert {f.rule for f in unit.findings} == {"v1-validator", "v1-config-class"}
    assert result.status == "verified", result.detail
    fixed = git(git_repo, "show", f"{result.branch}:models.py")
    assert '@field_validator("cents")' in fixed and "@classmethod" in fixed
    assert "model_config = ConfigDict(str_strip_whitespace=True)" in fixed
    assert "class Config" not in fixed
    assert repo_untouched(git_repo)
