"""The campaign's field types: frozen values, one per section of the YAML file, and the
vocabularies a campaign may name (matcher kinds, agent tools, the ``{files}`` placeholder).

A :class:`Campaign` is only built by :func:`fleet.campaigns.spec.parse_campaign`, which checks
every field (``fleet/campaigns/_sections.py``); the defaults here are what a file that leaves a
field out gets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fleet.types import Budget

__all__ = [
    "FILES",
    "MATCHER_KINDS",
    "TOOLS",
    "Autonomy",
    "Campaign",
    "Fix",
    "Matcher",
    "PlanSettings",
    "Tool",
]

MATCHER_KINDS = ("call", "import", "attribute", "query", "diagnostics")
# The agent's tool names (fleet.agents._tools.TOOL_SPECS): one vocabulary; ``finish`` is always
# offered.
TOOLS = ("read_symbol", "replace_symbol", "search_symbols", "run", "run_tests")
FILES = "{files}"


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
