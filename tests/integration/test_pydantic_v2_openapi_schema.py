"""The pydantic-v2 campaign on a real PyPI project built on Pydantic 1: a vendored subset of
openapi-schema-pydantic 1.2.4 (MIT; the package without its v3_0_3 copy, and the tests of
``tests/schema_classes`` and ``tests/util``; tests/fixtures/projects/...-subset/LICENSE).

Before, under this environment's Pydantic 2, no test module imports (``Field(const=True)``).
The campaign - planned, then fixed by the CodemodAgent in a workspace - rewrites every site it
has a v2 form for, and leaves exactly the two forward-reference aliases open with the reason;
then every test module imports and the suite runs under Pydantic 2 (the package ``__init__``
rebuilds its models where v1 resolved forward references, which completes the models using the
aliases). Its failures are named: the two discriminator tests that fail under Pydantic 1 too,
and no other (the codemod's default ``json_output: v1`` keeps v1's ``.json()`` text); with
``json_output: compact`` (a user's copy of the campaign) one ``.json()`` test that pins v1's
separators fails as well."""

from __future__ import annotations

from pathlib import Path

import pydantic

from fleet.agents.codemod import CodemodAgent
from fleet.campaigns.matchers import find_findings
from fleet.campaigns.spec import load_campaign
from fleet.graph import index
from fleet.plan import plan_campaign
from fleet.types import Budget, Workspace
from tests.integration._vendored_project import committed_copy, run_suite

ROOT = Path(__file__).resolve().parents[2]
SUBSET = ROOT / "tests" / "fixtures" / "projects" / "openapi-schema-pydantic-1.2.4-subset"
#: fail under Pydantic 1.10 as well (they pin a discriminator schema of another 1.x)
FAIL_ON_V1 = {"tests/util/test_pydantic_field.py::test_pydantic_discriminator_schema_generation",
              "tests/util/test_pydantic_field.py::test_pydantic_discriminator_openapi_generation"}
#: model_dump_json is compact (json_output: compact); the test pins v1 .json()'s ", " separators
V2_OUTPUT = {"tests/schema_classes/test_security_scheme.py::test_security_scheme_issue_5"}


def test_migration_makes_the_suite_import_and_run_under_pydantic_2(tmp_path: Path) -> None:
    assert pydantic.VERSION.startswith("2.")
    repo = tmp_path / "osp"
    head = committed_copy(SUBSET, repo, "openapi-schema-pydantic 1.2.4 subset")
    before, summary = run_suite(repo, "tests")
    assert "4 errors" in summary and len(before) == 4, summary  # no module imports

    campaign = load_campaign("pydantic-v2")
    graph = index(repo)
    plan = plan_campaign(repo, campaign, graph=graph, base_commit=head)
    assert len(plan.units) == 1  # coupled: all
    (unit,) = plan.units
    outcome = CodemodAgent(campaign, graph).run(
        unit, Workspace(repo, "main", head, tmp_path / "scratch", repo), None, Budget())
    assert outcome.ok, outcome.detail

    left = find_findings(index(repo), campaign)
    assert sorted((f.rule, f.path) for f in left) == [
        ("v1-forward-ref-alias", "openapi_schema_pydantic/v3/v3_1_0/callback.py")]
    assert left[0].message.startswith("needs an agent")
    warned = [s.result for s in outcome.steps if "forward reference" in s.result]
    assert len(warned) == 1 and "model_rebuild()" in warned[0]
    patch = outcome.patch
    assert 'name: Literal[""] = Field(default="")' in patch
    assert "models_json_schema(" in patch and "from pydantic.schema" not in patch.replace(
        "-from pydantic.schema", "")

    assert "_model.model_rebuild(raise_errors=False)" in patch  # in v3_1_0/__init__.py
    # json_output: v1 (the default): the .json(by_alias=True, exclude_none=True) calls become
    # json.dumps(m.model_dump(mode="json", ...)), which keeps v1's separators
    assert ('+    assert json.dumps(security_scheme_1.model_dump(mode="json", by_alias=True, '
            'exclude_none=True)) == (') in patch
    assert "model_dump_json" not in patch and "+import json" in patch

    failed, summary = run_suite(repo, "tests")
    assert failed == FAIL_ON_V1, summary
    assert summary.startswith("2 failed, 6 passed"), summary


def test_json_output_compact_fails_the_test_pinning_v1_text(tmp_path: Path) -> None:
    """The same run with the campaign copied as a user would, and ``json_output: compact`` set
    in its ``fix.params``: the ``.json(by_alias=True, exclude_none=True)`` calls become
    ``model_dump_json(...)``, whose text is compact, so ``test_security_scheme_issue_5`` (it pins
    v1's ``", "`` separators) fails besides the two tests that fail under Pydantic 1."""
    builtin = (ROOT / "fleet" / "campaigns" / "builtin" / "pydantic-v2.yaml").read_text()
    params = "    any_receiver: model-files\n"
    text = builtin.replace("name: pydantic-v2\n", "name: pydantic-v2-compact\n", 1).replace(
        params, params + "    json_output: compact\n", 1)
    assert text.count("json_output: compact") == 1 and "pydantic-v2-compact" in text
    (tmp_path / "pydantic-v2-compact.yaml").write_text(text)
    campaign = load_campaign(tmp_path / "pydantic-v2-compact.yaml")
    assert campaign.fix.params["json_output"] == "compact"

    repo = tmp_path / "osp"
    head = committed_copy(SUBSET, repo, "openapi-schema-pydantic 1.2.4 subset")
    graph = index(repo)
    (unit,) = plan_campaign(repo, campaign, graph=graph, base_commit=head).units
    outcome = CodemodAgent(campaign, graph).run(
        unit, Workspace(repo, "main", head, tmp_path / "scratch", repo), None, Budget())
    assert outcome.ok, outcome.detail
    assert ("+    assert security_scheme_1.model_dump_json(by_alias=True, exclude_none=True) == ("
            in outcome.patch)
    assert "json.dumps" not in outcome.patch and "+import json" not in outcome.patch

    failed, summary = run_suite(repo, "tests")
    assert failed == FAIL_ON_V1 | V2_OUTPUT, summary
    assert summary.startswith("3 failed, 5 passed"), summary
