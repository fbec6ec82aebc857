"""Campaigns: YAML specs, matchers over the SymbolGraph -> findings (fingerprinted, de-duplicated),
the built-in campaigns and their libcst codemods (``<Verb><Noun>Command``).

Public API: ``load_campaign(name_or_path) -> Campaign`` (``ConfigError`` naming file, line and
field), ``builtin_campaigns()``, ``find_findings(graph, campaign) -> list[Finding]``,
``sync_findings(store.findings, campaign, findings) -> Lifecycle``,
``file_new_findings(forge, findings, store.findings)``; the codemods are in
:mod:`fleet.campaigns.codemods` (``apply_codemod``, ``CODEMODS``).
"""

from fleet.campaigns.findings import (
    Lifecycle,
    classify,
    file_new_findings,
    fingerprint,
    normalized_syntax,
    sync_findings,
)
from fleet.campaigns.matchers import Sources, find_findings
from fleet.campaigns.spec import (
    Autonomy,
    Campaign,
    Fix,
    Matcher,
    PlanSettings,
    builtin_campaigns,
    load_campaign,
    parse_campaign,
)

__all__ = [
    "Autonomy",
    "Campaign",
    "Fix",
    "Lifecycle",
    "Matcher",
    "PlanSettings",
    "Sources",
    "builtin_campaigns",
    "classify",
    "file_new_findings",
    "find_findings",
    "fingerprint",
    "load_campaign",
    "normalized_syntax",
    "parse_campaign",
    "sync_findings",
]
