"""Campaign specs: one YAML file per campaign, validated on load.

A campaign names what to look for (``matchers``), how to fix it (``fix``: a codemod with
parameters, an agent prompt, or both - codemod first, agent for what it leaves), what an agent may
use (``tools``), what must pass (``gates``), what it may spend (``budgets``), how much it may do on
its own (``autonomy``), when it runs (``schedule``, cron) and how its work is split (``plan``).

``load_campaign(name_or_path)`` returns a frozen :class:`Campaign` or raises
:class:`~fleet.errors.ConfigError` whose message names the file, the line and the field
(``datetime-utcnow.yaml:12: autonomy.mode: must be one of ...``).

The field types are in ``_schema.py``, the YAML reader with its line numbers in ``_reader.py``,
the checks of each section in ``_sections.py``; this module reads a file and puts them together.
"""

from __future__ import annotations

from pathlib import Path

from fleet.campaigns._reader import Reader
from fleet.campaigns._schema import (
    FILES,
    MATCHER_KINDS,
    TOOLS,
    Autonomy,
    Campaign,
    Fix,
    Matcher,
    PlanSettings,
    Tool,
)
from fleet.campaigns._sections import (
    read_autonomy,
    read_budgets,
    read_fix,
    read_gates,
    read_matchers,
    read_model,
    read_name,
    read_plan,
    read_schedule,
    read_tool,
    read_tools,
)
from fleet.errors import ConfigError
from fleet.verify import GATES

__all__ = [
    "BUILTIN_DIR",
    "FILES",
    "GATES",
    "MATCHER_KINDS",
    "TOOLS",
    "Autonomy",
    "Campaign",
    "Fix",
    "Matcher",
    "PlanSettings",
    "Tool",
    "builtin_campaigns",
    "load_campaign",
    "parse_campaign",
]

BUILTIN_DIR = Path(__file__).parent / "builtin"
_FIELDS = ("name", "description", "matchers", "fix", "tools", "gates", "budgets", "autonomy",
           "schedule", "plan", "tool", "model")


def builtin_campaigns() -> dict[str, Path]:
    """Built-in campaign name -> its YAML file."""
    return {p.stem: p for p in sorted(BUILTIN_DIR.glob("*.yaml"))}


def load_campaign(name_or_path: str | Path) -> Campaign:
    """A built-in campaign by name, or a campaign YAML file by path."""
    builtin = builtin_campaigns()
    path = builtin.get(str(name_or_path)) or Path(name_or_path)
    if not path.is_file():
        raise ConfigError(
            f"{name_or_path}: no such campaign file, and not a built-in campaign "
            f"({', '.join(builtin)})"
        )
    return parse_campaign(path.read_text(encoding="utf-8"), str(path))


def parse_campaign(text: str, filename: str = "<string>") -> Campaign:
    """The campaign in the YAML ``text`` (read from ``filename``, named in errors)."""
    r = Reader(text, filename)
    top = r.data
    if not isinstance(top, dict):
        raise r.error("", "a campaign file must be a mapping")
    r.known(top, "", _FIELDS)
    name = read_name(r, top)
    matchers = read_matchers(r, r.get(top, "", "matchers", list))
    fix = read_fix(r, r.get(top, "", "fix", dict))
    tools = read_tools(r, r.get(top, "", "tools", list, []))
    gates = read_gates(r, r.get(top, "", "gates", list, list(Campaign.gates)))
    budget, daily = read_budgets(r, r.get(top, "", "budgets", dict, {}))
    schedule = read_schedule(r, r.get(top, "", "schedule", str, None))
    plan = read_plan(r, r.get(top, "", "plan", dict, {}), fix)
    model = read_model(r, r.get(top, "", "model", str, None))
    return Campaign(
        name=name,
        description=r.get(top, "", "description", str),
        matchers=matchers,
        fix=fix,
        tools=tools,
        gates=gates,
        budget=budget,
        daily_budget_usd=daily,
        autonomy=read_autonomy(r, r.get(top, "", "autonomy", dict, {})),
        schedule=schedule,
        plan=plan,
        tool=read_tool(r, r.get(top, "", "tool", dict, {})),
        model=model,
        source=filename,
    )
