"""The checks of each section of a campaign file, one ``read_<section>`` per field, each turning
the YAML value into its field type (``fleet/campaigns/_schema.py``) or raising the reader's
``ConfigError`` naming the file, the line and the field. A renamed gate or tool is refused with
its new name as a hint; a removed field (``autonomy.check_in_every``) with what to use instead.
"""

from __future__ import annotations

import re
from typing import Any

from fleet.campaigns._reader import Reader
from fleet.campaigns._schema import (
    FILES,
    MATCHER_KINDS,
    TOOLS,
    Autonomy,
    Fix,
    Matcher,
    PlanSettings,
    Tool,
)
from fleet.types import Budget
from fleet.verify import GATES

__all__ = [
    "read_autonomy",
    "read_budgets",
    "read_fix",
    "read_gates",
    "read_matchers",
    "read_model",
    "read_name",
    "read_plan",
    "read_schedule",
    "read_tool",
    "read_tools",
]

# GATES (the gate names a campaign may list) is fleet.verify's: one source of truth.
_RENAMED_GATES = {"tests": "impacted_tests", "reviewer": "review"}
# The names campaigns used for the agent's tools before they were the agent's own.
_RENAMED_TOOLS = {"search_graph": "search_symbols", "run_command": "run"}
_PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9_,-]+\])?==[A-Za-z0-9.+!*-]+$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_WHERE_KEYS = ("without_keyword", "max_positional", "min_positional", "exclude", "models")
_CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?)(/\d+)?(,(\*|\d+(-\d+)?)(/\d+)?)*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def read_name(r: Reader, top: dict[str, Any]) -> str:
    name: str = r.get(top, "", "name", str)
    if not _NAME.match(name):
        raise r.error("name", "must be lowercase letters, digits and dashes")
    return name


def read_matchers(r: Reader, items: list[Any]) -> tuple[Matcher, ...]:
    if not items:
        raise r.error("matchers", "needs at least one matcher")
    out: list[Matcher] = []
    for i, item in enumerate(items):
        path = f"matchers[{i}]"
        if not isinstance(item, dict):
            raise r.error(path, "must be a mapping")
        r.known(item, path, ("rule", *MATCHER_KINDS, "message", "language", "where"))
        kinds = [k for k in MATCHER_KINDS if k in item]
        if len(kinds) != 1:
            raise r.error(path, f"needs exactly one of {', '.join(MATCHER_KINDS)}")
        if kinds[0] == "diagnostics":
            targets = _argv(r, item, f"{path}.diagnostics")
        else:
            raw = r.get(item, path, kinds[0], (str, list))
            targets = (raw,) if isinstance(raw, str) else tuple(raw)
            if not targets or not all(isinstance(t, str) and t.strip() for t in targets):
                raise r.error(f"{path}.{kinds[0]}",
                              "must be a non-empty string or list of strings")
        where = r.get(item, path, "where", dict, {})
        r.known(where, f"{path}.where", _WHERE_KEYS)
        rule = r.get(item, path, "rule", str)
        if any(m.rule == rule for m in out):
            raise r.error(f"{path}.rule", f"duplicate rule {rule!r}")
        out.append(Matcher(rule, kinds[0], targets, r.get(item, path, "message", str, rule),
                           r.get(item, path, "language", str, "python"), dict(where)))
    return tuple(out)


def _argv(r: Reader, obj: dict[str, Any], path: str) -> tuple[str, ...]:
    """A command as an argv list of non-empty strings; ``{files}`` the only placeholder, as a
    whole element."""
    parent, _, key = path.rpartition(".")
    raw = r.get(obj, parent, key, list)
    if not raw:
        raise r.error(path, "must be a non-empty list of strings (an argv)")
    for i, arg in enumerate(raw):
        if not isinstance(arg, str) or not arg.strip():
            raise r.error(f"{path}[{i}]", "must be a non-empty string")
        for name in _PLACEHOLDER.findall(arg):
            if f"{{{name}}}" != FILES or arg != FILES:
                raise r.error(f"{path}[{i}]", f"unknown placeholder {{{name}}} in {arg!r} "
                              f"(only {FILES}, as a whole argument)")
    return tuple(raw)


def read_tools(r: Reader, items: list[Any]) -> tuple[str, ...]:
    return _names(r, items, "tools", TOOLS, _RENAMED_TOOLS)


def read_gates(r: Reader, items: list[Any]) -> tuple[str, ...]:
    return _names(r, items, "gates", GATES, _RENAMED_GATES)


def _names(r: Reader, items: list[Any], field: str, allowed: tuple[str, ...],
           renamed: dict[str, str]) -> tuple[str, ...]:
    """``items`` each one of ``allowed``; a renamed one refused with its new name as a hint."""
    names = tuple(items)
    for i, name in enumerate(names):
        if name not in allowed:
            hint = f"; did you mean {renamed[name]!r}?" if name in renamed else ""
            raise r.error(f"{field}[{i}]", f"unknown {field[:-1]} {name!r} "
                          f"(one of {', '.join(allowed)}){hint}")
    return names


def read_schedule(r: Reader, schedule: str | None) -> str | None:
    if schedule is not None:
        fields = schedule.split()
        if len(fields) != 5 or not all(_CRON_FIELD.match(f) for f in fields):
            raise r.error("schedule", f"not a 5-field cron expression: {schedule!r}")
    return schedule


def read_model(r: Reader, model: str | None) -> str | None:
    if model is not None and not model.strip():
        raise r.error("model", "must be a model name, e.g. claude-sonnet-4-6")
    return model


def read_tool(r: Reader, obj: dict[str, Any]) -> Tool:
    r.known(obj, "tool", ("pip",))
    pins = r.get(obj, "tool", "pip", list, [])
    for i, pin in enumerate(pins):
        if not isinstance(pin, str) or not _PIN.match(pin):
            raise r.error(f"tool.pip[{i}]", f"must be a pinned requirement name==version, "
                          f"not {pin!r}")
    return Tool(tuple(pins))


def read_fix(r: Reader, obj: dict[str, Any]) -> Fix:
    r.known(obj, "fix", ("codemod", "params", "prompt", "command", "exit_codes", "timeout_s",
                         "requirements"))
    moves = _requirements(r, obj)
    codemod = r.get(obj, "fix", "codemod", str, None)
    prompt = r.get(obj, "fix", "prompt", str, None)
    command = _argv(r, obj, "fix.command") if obj.get("command") is not None else ()
    if codemod is None and prompt is None and not command:
        raise r.error("fix", "needs a codemod, an agent prompt, or both; or a command-line "
                      "fixer (fix.command)")
    if codemod is not None and command:
        raise r.error("fix.command", "a fix has a codemod or a command, not both")
    codes = r.get(obj, "fix", "exit_codes", list, [0])
    if not codes or not all(isinstance(c, int) and not isinstance(c, bool) for c in codes):
        raise r.error("fix.exit_codes", "must be a non-empty list of integers")
    timeout = r.get(obj, "fix", "timeout_s", (int, float), Fix.timeout_s)
    if timeout <= 0:
        raise r.error("fix.timeout_s", "must be positive")
    if command:
        return Fix(None, dict(r.get(obj, "fix", "params", dict, {})), prompt, command,
                   tuple(codes), float(timeout), moves)
    if codemod is not None:
        from fleet.campaigns.codemods import CODEMODS

        if codemod not in CODEMODS:
            raise r.error("fix.codemod", f"unknown codemod {codemod!r} ({', '.join(CODEMODS)})")
    return Fix(codemod, dict(r.get(obj, "fix", "params", dict, {})), prompt,
               exit_codes=tuple(codes), timeout_s=float(timeout), requirements=moves)


def _requirements(r: Reader, obj: dict[str, Any]) -> dict[str, str]:
    if obj.get("requirements") is None:
        return {}
    from fleet.campaigns.codemods.requirements import check_moves

    moves = check_moves(obj["requirements"])
    if isinstance(moves, str):
        raise r.error("fix.requirements", moves)
    return moves


def read_budgets(r: Reader, obj: dict[str, Any]) -> tuple[Budget, float | None]:
    """The per-task ``Budget`` and the daily cost cap (``budgets.daily_usd``), if any."""
    keys = ("max_tokens", "max_cost_usd", "max_wall_s", "max_tool_calls", "daily_usd")
    r.known(obj, "budgets", keys)
    values: dict[str, Any] = {}
    for key in keys:
        kind: tuple[type, ...] = (int,) if key in ("max_tokens", "max_tool_calls") else (int, float)
        value = r.get(obj, "budgets", key, kind, None)
        if value is not None and value <= 0:
            raise r.error(f"budgets.{key}", "must be positive")
        values[key] = value
    daily = values.pop("daily_usd")
    return Budget(**values), None if daily is None else float(daily)


def read_autonomy(r: Reader, obj: dict[str, Any]) -> Autonomy:
    if "check_in_every" in obj:
        raise r.error("autonomy.check_in_every", "removed: nothing ever checked in with a human "
                      "on that cadence; use mode: review_required (every change waits for a "
                      "reviewer) or self_merge")
    r.known(obj, "autonomy", ("mode", "max_parallel_agents"))
    mode = _one_of(r, obj, "autonomy", "mode", ("review_required", "self_merge"), Autonomy.mode)
    parallel = _at_least_one(r, obj, "autonomy", "max_parallel_agents",
                             Autonomy.max_parallel_agents)
    return Autonomy(mode, parallel)


def read_plan(r: Reader, obj: dict[str, Any], fix: Fix) -> PlanSettings:
    """The ``plan`` section; a ``fix.command`` (it rewrites whole files) needs its findings
    coupled by file at least."""
    r.known(obj, "plan", ("granularity", "max_unit_symbols", "coupled"))
    granularity = _one_of(r, obj, "plan", "granularity", ("symbol", "file"),
                          PlanSettings.granularity)
    cap = _at_least_one(r, obj, "plan", "max_unit_symbols", PlanSettings.max_unit_symbols)
    coupled = _one_of(r, obj, "plan", "coupled", ("none", "file", "file+tests", "connected", "all"),
                      PlanSettings.coupled)
    if fix.command and coupled not in ("file", "file+tests", "all"):
        raise r.error("plan.coupled", "a fix.command rewrites whole files: must be one of file, "
                      "file+tests, all")
    return PlanSettings(granularity, cap, coupled)


def _one_of(r: Reader, obj: dict[str, Any], section: str, key: str, allowed: tuple[str, ...],
            default: str) -> str:
    value: str = r.get(obj, section, key, str, default)
    if value not in allowed:
        raise r.error(f"{section}.{key}", f"must be one of {', '.join(allowed)}")
    return value


def _at_least_one(r: Reader, obj: dict[str, Any], section: str, key: str, default: int) -> int:
    value: int = r.get(obj, section, key, int, default)
    if value < 1:
        raise r.error(f"{section}.{key}", "must be at least 1")
    return value
