"""The campaign fields of command-line fixers and the agent: each loads, or fails at load time
with file:line:field."""

from __future__ import annotations

import pytest

from fleet.campaigns.spec import load_campaign, parse_campaign
from fleet.errors import ConfigError

BASE = """name: demo
description: demo
matchers:
  - rule: up
    diagnostics: [ruff, check, --output-format, json, "{files}"]
tool: {pip: [ruff==0.17.6]}
fix:
  command: [ruff, check, --fix, "{files}"]
  exit_codes: [0, 1]
plan: {coupled: file}
"""


def test_a_command_fix_loads() -> None:
    c = parse_campaign(BASE, "demo.yaml")
    assert c.fix.command == ("ruff", "check", "--fix", "{files}")
    assert c.fix.exit_codes == (0, 1) and c.tool.pip == ("ruff==0.17.6",)
    assert c.matchers[0].kind == "diagnostics" and c.edits_imports


@pytest.mark.parametrize(("old", "new", "error"), [
    ('command: [ruff, check, --fix, "{files}"]', "command: ruff check --fix",
     "demo.yaml:8: fix.command: must be list, not str"),
    ('command: [ruff, check, --fix, "{files}"]', "command: []",
     "demo.yaml:8: fix.command: must be a non-empty list of strings (an argv)"),
    ('command: [ruff, check, --fix, "{files}"]', 'command: [ruff, "", "{files}"]',
     "demo.yaml:8: fix.command[1]: must be a non-empty string"),
    ('command: [ruff, check, --fix, "{files}"]', 'command: [ruff, "--x={file}"]',
     "demo.yaml:8: fix.command[1]: unknown placeholder {file}"),
    ('command: [ruff, check, --fix, "{files}"]', 'command: [ruff, "--f={files}"]',
     "fix.command[1]: unknown placeholder {files} in '--f={files}' (only {files}, as a whole"),
    ("exit_codes: [0, 1]", "exit_codes: [ok]", "demo.yaml:9: fix.exit_codes: must be a"),
    ("pip: [ruff==0.17.6]", "pip: [ruff]", "demo.yaml:6: tool.pip[0]: must be a pinned"),
    ("plan: {coupled: file}", "plan: {coupled: none}",
     "demo.yaml:10: plan.coupled: a fix.command rewrites whole files"),
    ('diagnostics: [ruff, check, --output-format, json, "{files}"]', "diagnostics: ruff",
     "demo.yaml:5: matchers[0].diagnostics: must be list, not str"),
])
def test_a_malformed_command_is_a_load_error_naming_file_line_field(
    old: str, new: str, error: str
) -> None:
    text = BASE.replace(old, new)
    assert text != BASE
    with pytest.raises(ConfigError) as caught:
        parse_campaign(text, "demo.yaml")
    assert error in str(caught.value)


def test_codemod_and_command_together_is_refused() -> None:
    text = BASE.replace("fix:\n", "fix:\n  codemod: retire-api\n")
    with pytest.raises(ConfigError, match=r"fix\.command: a fix has a codemod or a command"):
        parse_campaign(text, "demo.yaml")


def test_check_in_every_is_gone_with_a_load_error_that_says_so() -> None:
    text = BASE + "autonomy: {mode: self_merge, check_in_every: 5}\n"
    with pytest.raises(ConfigError, match=r"demo.yaml:11: autonomy.check_in_every: removed"):
        parse_campaign(text, "demo.yaml")


def test_tools_are_the_agents_own_names() -> None:
    with pytest.raises(ConfigError, match=r"unknown tool 'search_graph'.*'search_symbols'"):
        parse_campaign(BASE + "tools: [read_symbol, search_graph]\n", "demo.yaml")
    with pytest.raises(ConfigError, match=r"unknown tool 'run_command'.*did you mean 'run'"):
        parse_campaign(BASE + "tools: [run_command]\n", "demo.yaml")
    from fleet.agents._tools import TOOL_SPECS
    from fleet.campaigns.spec import TOOLS

    assert set(TOOLS) == {t["name"] for t in TOOL_SPECS} - {"finish"}


def test_model_field() -> None:
    assert parse_campaign(BASE + "model: claude-opus-4-5\n").model == "claude-opus-4-5"
    assert load_campaign("ruff-up").model is None
