"""Campaign specs: one YAML file per campaign, validated on load.

A campaign names what to look for (``matchers``), how to fix it (``fix``: a codemod with
parameters, an agent prompt, or both - codemod first, agent for what it leaves), what an agent may
use (``tools``), what must pass (``gates``), what it may spend (``budgets``), how much it may do on
its own (``autonomy``), when it runs (``schedule``, cron) and how its work is split (``plan``).

``load_campaign(name_or_path)`` returns a frozen :class:`Campaign` or raises
:class:`~fleet.errors.ConfigError` whose message names the file, the line and the field
(``datetime-utcnow.yaml:12: autonomy.mode: must be one of ...``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fleet.errors import ConfigError
from fleet.types import Budget
from fleet.verify import GATES

__all__ = [
    "BUILTIN_DIR",
    "GATES",
    "MATCHER_KINDS",
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
MATCHER_KINDS = ("call", "import", "attribute", "query", "diagnostics")
# GATES (the gate names a campaign may list) is fleet.verify's: one source of truth.
_RENAMED_GATES = {"tests": "impacted_tests", "reviewer": "review"}
# The agent's tool names (fleet.agents._tools.TOOL_SPECS): one vocabulary; ``finish`` is always
# offered. The names campaigns used before are refused with the new name as a hint.
TOOLS = ("read_symbol", "replace_symbol", "search_symbols", "run", "run_tests")
_RENAMED_TOOLS = {"search_graph": "search_symbols", "run_command": "run"}
_PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9_,-]+\])?==[A-Za-z0-9.+!*-]+$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
FILES = "{files}"
_WHERE_KEYS = ("without_keyword", "max_positional", "min_positional", "exclude", "models")
_CRON_FIELD = re.compile(r"^(\*|\d+(-\d+)?)(/\d+)?(,(\*|\d+(-\d+)?)(/\d+)?)*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Matcher:
    """One rule: ``kind`` is call | import | attribute | query; ``target`` the qualified name,
    module, attribute (dotted, or ``.name`` for any receiver) or tree-sitter query text."""

    rule: str
    kind: str
    target: tuple[str, ...]
    message: str
    language: str = "python"
    where: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fix:
    """How a unit is fixed: a libcst ``codemod`` (with ``params``), or a ``command`` (an argv run
    in the unit's sandbox over the unit's files, ``{files}`` standing for them; exit codes in
    ``exit_codes`` count as success, ``timeout_s`` bounds it), and/or an agent ``prompt``."""

    codemod: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None
    command: tuple[str, ...] = ()
    exit_codes: tuple[int, ...] = (0,)
    timeout_s: float = 600.0
    #: the project's own declared requirements moved to a new range, name -> specifier
    #: (``{pydantic: ">=2,<3"}``; fleet/campaigns/codemods/requirements.py)
    requirements: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool:
    """Where a campaign's command-line tools come from: ``pip`` pins (``name==version``)
    installed from PyPI into a tool environment shared read-only into the sandbox; none = the
    target's own environment (``$FLEET_TEST_PYTHON``'s bin) or the fleet's."""

    pip: tuple[str, ...] = ()


@dataclass(frozen=True)
class Autonomy:
    mode: str = "review_required"  # review_required | self_merge
    max_parallel_agents: int = 4


@dataclass(frozen=True)
class PlanSettings:
    """``granularity``: ``symbol`` (one unit per planning atom) or ``file`` (atoms of one file
    packed up to ``max_unit_symbols``); ``coupled``: ``none``, ``file`` (every finding of a file in
    one unit, whatever the cap), ``file+tests`` (``file``, and a test file's findings go with
    those of the modules it imports or names), ``connected`` (findings whose symbols depend on
    each other, or on a class whose members are findings) or ``all`` (one unit: a library swap
    whose old and new objects do not interoperate, e.g. a v2 model raising what a v1 ``except``
    does not catch)."""

    granularity: str = "file"
    max_unit_symbols: int = 8
    coupled: str = "none"


@dataclass(frozen=True)
class Campaign:
    name: str
    description: str
    matchers: tuple[Matcher, ...]
    fix: Fix
    tools: tuple[str, ...] = ()
    gates: tuple[str, ...] = ("applies", "parses", "lease_scope", "impacted_tests")
    budget: Budget = field(default_factory=Budget)
    daily_budget_usd: float | None = None
    autonomy: Autonomy = field(default_factory=Autonomy)
    schedule: str | None = None
    plan: PlanSettings = field(default_factory=PlanSettings)
    tool: Tool = field(default_factory=Tool)
    model: str | None = None
    source: str = "<string>"

    @property
    def edits_imports(self) -> bool:
        """True when the fix's codemod declares that it edits module-level imports
        (``EDITS_IMPORTS``), or the fix is a command (a command-line fixer may add or drop
        imports): its units then write-lease ``path::<module>`` of their files."""
        if self.fix.command:
            return True
        if self.fix.codemod is None:
            return False
        from fleet.campaigns.codemods import CODEMODS

        codemod = CODEMODS.get(self.fix.codemod)
        return bool(codemod is not None and codemod.EDITS_IMPORTS)


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


class _Reader:
    """Typed access to the loaded YAML with line numbers for error messages."""

    def __init__(self, text: str, filename: str) -> None:
        self.filename = filename
        self.lines: dict[str, int] = {}
        try:
            self.data = yaml.safe_load(text)
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            raise ConfigError(f"{filename}:{line}: invalid YAML: {exc}") from exc
        if node is not None:
            self._index(node, "")

    def _index(self, node: yaml.Node, path: str) -> None:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                sub = f"{path}.{key.value}" if path else str(key.value)
                self.lines[sub] = key.start_mark.line + 1
                self._index(value, sub)
                self.lines[sub] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._index(item, f"{path}[{index}]")

    def error(self, path: str, message: str) -> ConfigError:
        probe = path
        while probe and probe not in self.lines:
            shorter = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", probe)
            probe = "" if shorter == probe else shorter
        line = self.lines.get(probe, 1)
        return ConfigError(f"{self.filename}:{line}: {path or '<top>'}: {message}")

    def get(self, obj: Any, path: str, key: str, kind: type | tuple[type, ...], default: Any = ...,
            ) -> Any:
        full = f"{path}.{key}" if path else key
        if not isinstance(obj, dict) or key not in obj or obj[key] is None:
            if default is ...:
                raise self.error(full, "is required")
            return default
        value = obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise self.error(full, f"must be {names}, not {type(value).__name__}")
        return value

    def known(self, obj: dict[str, Any], path: str, keys: tuple[str, ...]) -> None:
        for key in obj:
            if key not in keys:
                full = f"{path}.{key}" if path else str(key)
                raise self.error(full, f"unknown field (expected one of {', '.join(keys)})")


def parse_campaign(text: str, filename: str = "<string>") -> Campaign:
    r = _Reader(text, filename)
    top = r.data
    if not isinstance(top, dict):
        raise r.error("", "a campaign file must be a mapping")
    r.known(top, "", ("name", "description", "matchers", "fix", "tools", "gates", "budgets",
                      "autonomy", "schedule", "plan", "tool", "model"))
    name = r.get(top, "", "name", str)
    if not _NAME.match(name):
        raise r.error("name", "must be lowercase letters, digits and dashes")
    matchers = _matchers(r, r.get(top, "", "matchers", list))
    fix = _fix(r, r.get(top, "", "fix", dict))
    tools = tuple(r.get(top, "", "tools", list, []))
    for i, tool in enumerate(tools):
        if tool not in TOOLS:
            hint = f"; did you mean {_RENAMED_TOOLS[tool]!r}?" if tool in _RENAMED_TOOLS else ""
            raise r.error(f"tools[{i}]",
                          f"unknown tool {tool!r} (one of {', '.join(TOOLS)}){hint}")
    gates = tuple(r.get(top, "", "gates", list, list(Campaign.gates)))
    for i, gate in enumerate(gates):
        if gate not in GATES:
            hint = f"; did you mean {_RENAMED_GATES[gate]!r}?" if gate in _RENAMED_GATES else ""
            raise r.error(f"gates[{i}]",
                          f"unknown gate {gate!r} (one of {', '.join(GATES)}){hint}")
    budget, daily = _budgets(r, r.get(top, "", "budgets", dict, {}))
    schedule = r.get(top, "", "schedule", str, None)
    if schedule is not None:
        fields = schedule.split()
        if len(fields) != 5 or not all(_CRON_FIELD.match(f) for f in fields):
            raise r.error("schedule", f"not a 5-field cron expression: {schedule!r}")
    plan = _plan(r, r.get(top, "", "plan", dict, {}))
    if fix.command and plan.coupled not in ("file", "file+tests", "all"):
        raise r.error("plan.coupled", "a fix.command rewrites whole files: must be one of file, "
                      "file+tests, all")
    model = r.get(top, "", "model", str, None)
    if model is not None and not model.strip():
        raise r.error("model", "must be a model name, e.g. claude-sonnet-4-6")
    return Campaign(
        name=name,
        description=r.get(top, "", "description", str),
        matchers=matchers,
        fix=fix,
        tools=tools,
        gates=gates,
        budget=budget,
        daily_budget_usd=daily,
        autonomy=_autonomy(r, r.get(top, "", "autonomy", dict, {})),
        schedule=schedule,
        plan=plan,
        tool=_tool(r, r.get(top, "", "tool", dict, {})),
        model=model,
        source=filename,
    )


def _matchers(r: _Reader, items: list[Any]) -> tuple[Matcher, ...]:
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


def _argv(r: _Reader, obj: dict[str, Any], path: str) -> tuple[str, ...]:
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


def _tool(r: _Reader, obj: dict[str, Any]) -> Tool:
    r.known(obj, "tool", ("pip",))
    pins = r.get(obj, "tool", "pip", list, [])
    for i, pin in enumerate(pins):
        if not isinstance(pin, str) or not _PIN.match(pin):
            raise r.error(f"tool.pip[{i}]", f"must be a pinned requirement name==version, "
                          f"not {pin!r}")
    return Tool(tuple(pins))


def _fix(r: _Reader, obj: dict[str, Any]) -> Fix:
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


def _requirements(r: _Reader, obj: dict[str, Any]) -> dict[str, str]:
    if obj.get("requirements") is None:
        return {}
    from fleet.campaigns.codemods.requirements import check_moves

    moves = check_moves(obj["requirements"])
    if isinstance(moves, str):
        raise r.error("fix.requirements", moves)
    return moves


def _budgets(r: _Reader, obj: dict[str, Any]) -> tuple[Budget, float | None]:
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


def _autonomy(r: _Reader, obj: dict[str, Any]) -> Autonomy:
    if "check_in_every" in obj:
        raise r.error("autonomy.check_in_every", "removed: nothing ever checked in with a human "
                      "on that cadence; use mode: review_required (every change waits for a "
                      "reviewer) or self_merge")
    r.known(obj, "autonomy", ("mode", "max_parallel_agents"))
    mode = r.get(obj, "autonomy", "mode", str, Autonomy.mode)
    if mode not in ("review_required", "self_merge"):
        raise r.error("autonomy.mode", "must be one of review_required, self_merge")
    parallel = r.get(obj, "autonomy", "max_parallel_agents", int, Autonomy.max_parallel_agents)
    if parallel < 1:
        raise r.error("autonomy.max_parallel_agents", "must be at least 1")
    return Autonomy(mode, parallel)


def _plan(r: _Reader, obj: dict[str, Any]) -> PlanSettings:
    r.known(obj, "plan", ("granularity", "max_unit_symbols", "coupled"))
    granularity = r.get(obj, "plan", "granularity", str, PlanSettings.granularity)
    if granularity not in ("symbol", "file"):
        raise r.error("plan.granularity", "must be one of symbol, file")
    cap = r.get(obj, "plan", "max_unit_symbols", int, PlanSettings.max_unit_symbols)
    if cap < 1:
        raise r.error("plan.max_unit_symbols", "must be at least 1")
    coupled = r.get(obj, "plan", "coupled", str, PlanSettings.coupled)
    if coupled not in ("none", "file", "file+tests", "connected", "all"):
        raise r.error("plan.coupled", "must be one of none, file, file+tests, connected, all")
    return PlanSettings(granularity, cap, coupled)
