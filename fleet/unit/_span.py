"""A campaign that deliberately spans repositories: the span file and its one report.

A span names one campaign and the local repositories it spans (``fleet span FILE``)::

    campaign: yaml-safe-load
    repositories:        # checkouts; relative paths are relative to this file
      - ../billing
      - ../shop

Every repository is swept as it would be alone: its own state directory (``REPO/.fleet``), its
own Dagster instance, its own view of the store (a shared PostgreSQL store holds them all, each
under its store key, ``fleet.store.repo_scope``), so nothing of one repository is read or
changed by another's sweep. The span adds one report over them, read back from each
repository's own view of its store: findings open and fixed, units by their latest result, the
integration's head.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from fleet.errors import ConfigError
from fleet.unit._records import UNIT_PLANNED, latest_results

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from fleet.store import Store

__all__ = ["RepositoryReport", "Span", "load_span", "render_span", "repository_report"]

KEYS = ("campaign", "repositories")


@dataclass(frozen=True)
class Span:
    campaign: str
    repositories: tuple[Path, ...]
    source: Path


def load_span(path: Path | str) -> Span:
    """The span file at ``path``; a ``ConfigError`` naming the file and what is wrong (not YAML,
    a missing or unknown key, no repository, a repository that is no directory, or one
    repository listed twice - also as two paths of one checkout)."""
    from fleet.home import repo_root

    source = Path(path).resolve()
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        where = exc.problem_mark
        at = f"line {where.line + 1}, column {where.column + 1}: " if where else ""
        raise ConfigError(f"span {path}: not YAML: {at}{exc.problem}") from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"span {path}: cannot be read: {' '.join(str(exc).split())}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"span {path}: expected a mapping with {', '.join(KEYS)}")
    unknown = sorted(str(k) for k in data if k not in KEYS)
    if unknown:
        raise ConfigError(f"span {path}: unknown key(s) {', '.join(unknown)} (known: "
                          f"{', '.join(KEYS)})")
    campaign, listed = data.get("campaign"), data.get("repositories")
    if not isinstance(campaign, str) or not campaign.strip():
        raise ConfigError(f"span {path}: campaign: expected a campaign name or YAML path")
    if (not isinstance(listed, list) or not listed
            or not all(isinstance(r, str) and r.strip() for r in listed)):
        raise ConfigError(f"span {path}: repositories: expected a list of checkout paths")
    roots: dict[Path, str] = {}
    out = []
    for text in listed:
        repo = (source.parent / Path(text).expanduser()).resolve()
        if "://" in text or not repo.is_dir():
            raise ConfigError(f"span {path}: repository {text}: no such directory (a span "
                              "sweeps local checkouts, each with its own state directory)")
        root = repo_root(repo)
        if root is None:
            raise ConfigError(f"span {path}: repository {text} is not a git repository")
        if root in roots:
            raise ConfigError(f"span {path}: repositories {roots[root]} and {text} are one "
                              f"repository ({root})")
        roots[root] = text
        out.append(root)
    return Span(campaign.strip(), tuple(out), source)


@dataclass(frozen=True)
class RepositoryReport:
    """One repository of a span, as its own store view holds it after its sweep."""

    repository: str
    key: str
    exit_code: int
    open: int = 0
    fixed: int = 0
    planned: int = 0
    results: dict[str, int] = field(default_factory=dict)
    head: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def repository_report(store: Store, campaign: Campaign, repository: Path | str, key: str,
                      exit_code: int) -> RepositoryReport:
    """The report of ``repository`` from ``store`` (its own view, ``scoped_store(..., key)``)."""
    findings = store.findings.list(campaign.name)
    results = latest_results(store.ledger, campaign)
    planned = {e.unit for e in store.ledger.events(kind=UNIT_PLANNED, campaign=campaign.name)}
    integrations = store.ledger.events(kind="integration.finished", campaign=campaign.name)
    head = str(integrations[-1].payload.get("head") or "") if integrations else ""
    return RepositoryReport(
        repository=str(repository), key=key, exit_code=exit_code,
        open=sum(1 for r in findings if r.status in ("new", "known")),
        fixed=sum(1 for r in findings if r.status == "fixed"),
        planned=len(planned - {None}),
        results=dict(sorted(Counter(r.status for r in results.values()).items())),
        head=head)


def render_span(span: Span, reports: list[RepositoryReport]) -> str:
    """The one report of a span: a line per repository, then the totals."""
    lines = [f"span {span.campaign} over {len(reports)} repositories ({span.source})"]
    for r in reports:
        sweep = "ok" if r.exit_code == 0 else f"exit {r.exit_code}"
        units = ", ".join(f"{n} {s}" for s, n in r.results.items()) or "no result"
        head = f", integration at {r.head[:12]}" if r.head else ""
        lines.append(f"  {r.repository} [{r.key}]: sweep {sweep}; {r.open} open finding(s), "
                     f"{r.fixed} fixed; {r.planned} unit(s) planned: {units}{head}")
    totals: Counter[str] = Counter()
    for r in reports:
        totals.update(r.results)
    done = sum(1 for r in reports if r.exit_code == 0)
    lines.append(f"total: {done} of {len(reports)} sweep(s) ok; "
                 f"{sum(r.open for r in reports)} open finding(s), "
                 f"{sum(r.fixed for r in reports)} fixed; units: "
                 + (", ".join(f"{n} {s}" for s, n in sorted(totals.items())) or "no result"))
    return "\n".join(lines)
