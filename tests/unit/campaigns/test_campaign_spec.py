"""Campaign YAML: the built-ins load; bad files fail with file, line and field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.campaigns.spec import builtin_campaigns, load_campaign, parse_campaign
from fleet.errors import ConfigError, FleetError

VALID = """\
name: demo
description: A demo campaign.
matchers:
  - rule: old-call
    call: pkg.old
fix:
  codemod: retire-api
  params: {old: pkg.old, new: pkg.new}
  prompt: move callers to pkg.new
tools: [read_symbol, run_tests]
gates: [applies, parses, impacted_tests, review]
budgets: {max_tokens: 1000, max_cost_usd: 0.5, daily_usd: 10}
autonomy: {mode: self_merge, max_parallel_agents: 3}
schedule: "*/15 3 * * 1-5"
plan: {granularity: symbol, max_unit_symbols: 4, coupled: connected}
"""


def test_every_builtin_campaign_loads() -> None:
    names = set(builtin_campaigns())
    codemods = {"unittest-aliases", "datetime-utcnow", "yaml-safe-load", "retire-api",
                "pydantic-v2"}
    commands = {"ruff-up": "ruff", "django-upgrade": "django-upgrade",
                "pydantic-v2-bump": "bump-pydantic"}
    assert names == codemods | set(commands)
    for name in names:
        campaign = load_campaign(name)
        assert campaign.name == name
        if name in codemods:
            assert campaign.fix.codemod == name
        else:  # a real fixer from PyPI, pinned
            assert commands[name] in " ".join(campaign.fix.command)
            assert any(p.startswith(f"{commands[name]}==") for p in campaign.tool.pip)
        assert campaign.matchers and campaign.schedule
    retire = load_campaign("retire-api")
    assert retire.fix.params["old"] == "billing.legacy.charge"
    assert retire.fix.params["new"] == "billing.payments.charge"


def test_full_spec_parses_every_section() -> None:
    c = parse_campaign(VALID, "demo.yaml")
    assert c.matchers[0].kind == "call" and c.matchers[0].target == ("pkg.old",)
    assert c.fix.prompt == "move callers to pkg.new" and c.fix.params["new"] == "pkg.new"
    assert c.budget.max_tokens == 1000 and c.budget.max_cost_usd == 0.5
    assert c.daily_budget_usd == 10.0
    assert (c.autonomy.mode, c.autonomy.max_parallel_agents) == ("self_merge", 3)
    assert (c.plan.granularity, c.plan.max_unit_symbols, c.plan.coupled) == (
        "symbol", 4, "connected")
    assert c.tools == ("read_symbol", "run_tests") and c.source == "demo.yaml"
    assert c.gates == ("applies", "parses", "impacted_tests", "review")


def test_gate_names_are_the_verify_gates() -> None:
    """One source of truth: a campaign lists fleet.verify's gate names; the old spellings are
    refused with the current name as a hint."""
    from fleet.verify import GATES

    for name in builtin_campaigns():
        assert set(load_campaign(name).gates) <= set(GATES)
    assert set(parse_campaign(VALID.replace("impacted_tests, review", ", ".join(GATES))).gates) \
        == set(GATES)
    with pytest.raises(ConfigError, match=r"unknown gate 'tests'.*did you mean 'impacted_tests'"):
        parse_campaign(VALID.replace("impacted_tests, review", "tests"), "demo.yaml")
    with pytest.raises(ConfigError, match="did you mean 'review'"):
        parse_campaign(VALID.replace("impacted_tests, review", "reviewer"), "demo.yaml")


def test_import_editing_codemods_are_declared() -> None:
    edits = {name: load_campaign(name).edits_imports for name in builtin_campaigns()}
    assert edits == {"unittest-aliases": False, "datetime-utcnow": True, "yaml-safe-load": True,
                     "retire-api": True, "pydantic-v2": True,
                     # a command-line fixer may add or drop imports: it always leases <module>
                     "ruff-up": True, "django-upgrade": True, "pydantic-v2-bump": True}
    assert load_campaign("pydantic-v2").plan.coupled == "all"


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("mode: self_merge", "mode: yolo", "demo.yaml:13: autonomy.mode: must be one of"),
        ("max_tokens: 1000", "max_tokens: lots", "demo.yaml:12: budgets.max_tokens: must be int"),
        ("max_tokens: 1000", "max_tokens: -1",
         "demo.yaml:12: budgets.max_tokens: must be positive"),
        ("    call: pkg.old\n", "", "demo.yaml:4: matchers[0]: needs exactly one of"),
        ("  codemod: retire-api", "  codemod: nope", "demo.yaml:7: fix.codemod: unknown codemod"),
        ('schedule: "*/15 3 * * 1-5"', 'schedule: "every day"', "demo.yaml:14: schedule: not a"),
        ("gates: [applies, parses, impacted_tests, review]", "gates: [applies, vibes]",
         "demo.yaml:11: gates[1]: unknown gate 'vibes'"),
        ("name: demo", "name: Demo Campaign", "demo.yaml:1: name: must be lowercase"),
        ("plan: {granularity: symbol", "plan: {granularity: module",
         "demo.yaml:15: plan.granularity: must be one of"),
        ("tools: [read_symbol", "toolz: [read_symbol", "demo.yaml:10: toolz: unknown field"),
        ("description: A demo campaign.\n", "", "demo.yaml:1: description: is required"),
    ],
)
def test_errors_name_file_line_and_field(old: str, new: str, where: str) -> None:
    text = VALID.replace(old, new)
    assert text != VALID
    with pytest.raises(ConfigError) as info:
        parse_campaign(text, "demo.yaml")
    assert str(info.value).startswith(where), str(info.value)
    assert isinstance(info.value, FleetError)


def test_invalid_yaml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmatchers: [\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: invalid YAML"):
        load_campaign(bad)
    with pytest.raises(ConfigError, match="not a built-in campaign"):
        load_campaign(tmp_path / "nope.yaml")


def test_fix_needs_codemod_or_prompt() -> None:
    text = VALID.replace("  codemod: retire-api\n  params: {old: pkg.old, new: pkg.new}\n", "")
    assert parse_campaign(text).fix.codemod is None
    text = text.replace("fix:\n  prompt: move callers to pkg.new\n", "fix: {}\n")
    with pytest.raises(ConfigError, match="fix: needs a codemod, an agent prompt, or both"):
        parse_campaign(text, "demo.yaml")
