"""The pydantic-v2 campaign on a second real PyPI project built on Pydantic 1: a vendored subset
of jsf 0.7.1 (MIT; its sdist's ``jsf`` package with its tests and their data, without
``test_cli.py`` and the two tests that fetch from the network, ``test_external_ref`` and
``test_fake_string_content_type``; tests/fixtures/projects/jsf-0.7.1-subset/LICENSE).

Under Pydantic 1.10.13 the subset's suite gives 70 passed, 1 failed (``test_fake_string_format``:
the date-time pattern it pins is not the one the Faker of today writes). Before, under this
environment's Pydantic 2, no test collects (``_schema: ... = Field(...)``: "Fields must not use
names with leading underscores"). The campaign - planned, then fixed by the CodemodAgent - leaves
exactly the forward-reference alias open with the reason, and the suite runs under Pydantic 2
with pydantic 1's result but for one test: ``test_gen_model[tuple-tuple]`` asserts that
``conlist(...)`` returns a class (v1's ``ConstrainedList`` subclass); v2's ``conlist`` returns
``Annotated[list[T], Len(...)]``, which no rewrite can make a class."""

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
SUBSET = ROOT / "tests" / "fixtures" / "projects" / "jsf-0.7.1-subset"
#: fails under Pydantic 1.10.13 as well
FAIL_ON_V1 = {"jsf/tests/test_default_fake.py::test_fake_string_format"}
#: pins v1's conlist() returning a class
V2_CONLIST = {"jsf/tests/test_model_gen.py::test_gen_model[tuple-tuple]"}


def test_migration_gives_the_suite_its_pydantic_1_result_under_pydantic_2(
        tmp_path: Path) -> None:
    assert pydantic.VERSION.startswith("2.")
    repo = tmp_path / "jsf"
    head = committed_copy(SUBSET, repo, "jsf 0.7.1 subset")
    before, summary = run_suite(repo, "jsf/tests")
    assert "passed" not in summary and "failed" not in summary, summary  # conftest aborts
    assert before == set(), before  # nothing collected: no test id to name

    campaign = load_campaign("pydantic-v2")
    graph = index(repo)
    (unit,) = plan_campaign(repo, campaign, graph=graph, base_commit=head).units
    rules = sorted(f.rule for f in unit.findings)
    assert rules == ["v1-config-class", "v1-eval-source", "v1-field-extra", "v1-field-extra",
                     "v1-forward-ref-alias", "v1-implicit-default", "v1-model-api",
                     "v1-moved-import", "v1-private-field"], rules
    outcome = CodemodAgent(campaign, graph).run(
        unit, Workspace(repo, "main", head, tmp_path / "scratch", repo), None, Budget())
    assert outcome.ok, outcome.detail

    left = find_findings(index(repo), campaign)
    assert [(f.rule, f.path) for f in left] == [
        ("v1-forward-ref-alias", "jsf/schema_types/object.py")]
    assert left[0].message.startswith("needs an agent")
    patch = outcome.patch
    for line in (
        "+    contentEncoding: Optional[content_encoding.ContentEncoding] = None",
        '+    _schema: Optional[str] = PrivateAttr(None)',
        '+        return (_type, Field(..., description=self.description, '
        'json_schema_extra={"example": example}))',
        "+    model_config = ConfigDict()",  # smart_union = True: v2's unions are smart
        "min_length={len(self.items)}, max_length={len(self.items)})\",",
        "+Object.model_rebuild()",
        "+from pydantic import create_model",
        "+        'pydantic>=2,<3',",  # setup(**{"install_requires": (...)})
    ):
        assert line in patch, line

    failed, summary = run_suite(repo, "jsf/tests")
    assert failed == FAIL_ON_V1 | V2_CONLIST, summary
    assert summary.startswith("2 failed, 69 passed"), summary
