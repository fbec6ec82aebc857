"""Unit records in the ledger: a planned unit, and the result of its run, as JSON payloads.

The ledger is the system of record between pipeline stages: ``unit.planned`` carries the whole
``WorkUnit`` and ``unit.finished`` the whole ``UnitResult``, so any later stage (verification,
integration, a re-run from the UI, the next sweep) reads them back without a side channel.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from fleet.errors import ConfigError
from fleet.protocols import Ledger
from fleet.store.ledger import payload_repository
from fleet.types import Cost, Finding, Grant, Verdict, WorkUnit

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign

__all__ = [
    "TERMINAL",
    "UNIT_FINISHED",
    "UNIT_PLANNED",
    "UNIT_REQUEUED",
    "ForeignUnit",
    "UnitResult",
    "UnitStatus",
    "check_own",
    "expand_unit_key",
    "judged_with",
    "latest_results",
    "ledger_repository",
    "load_units",
    "record_planned",
    "record_result",
    "redo",
    "requeue",
    "resolve_units",
    "result_from_dict",
    "result_to_dict",
    "settle",
    "stamp_judged_with",
    "unit_from_dict",
    "unit_to_dict",
    "untouched_findings",
]

class ForeignUnit(ConfigError):
    """A unit handed to a store scoped to another repository than the unit's own."""


UNIT_PLANNED = "unit.planned"
UNIT_FINISHED = "unit.finished"
UNIT_REQUEUED = "unit.requeued"

UnitStatus = Literal[
    "verified", "partial", "rejected", "agent_failed", "lease_refused", "killed",
    "semantic_conflict", "push_failed",
]
TERMINAL: frozenset[str] = frozenset({"verified", "partial", "rejected", "agent_failed"})


@dataclass(frozen=True)
class UnitResult:
    """What one unit's run produced.

    ``status``: ``verified`` (every gate accepted and every finding was changed; ``commit`` is
    on ``branch``), ``partial`` (every gate accepted the patch, but the agent left findings as
    they were: their fingerprints are ``left``, they stay open, the unit is not counted as
    verified and its patch is not integrated; ``commit`` keeps the work), ``rejected`` (a
    gate said no: ``rejected_by`` names it), ``agent_failed`` (no patch; the repo is untouched),
    ``lease_refused`` (leases not acquired by the deadline: requeue after backoff), ``killed``
    (kill switch), ``push_failed`` (verified, but its branch could not be pushed to the
    worker's remote: ``detail`` says why; not terminal, the unit runs again).
    ``grants`` keep the fencing tokens that integration checks.
    """

    unit: str
    campaign: str
    status: UnitStatus
    base_commit: str
    rank: int = 0
    branch: str | None = None
    commit: str | None = None
    patch: str = ""
    verdicts: tuple[Verdict, ...] = ()
    grants: tuple[Grant, ...] = ()
    cost: Cost = field(default_factory=Cost)
    stop_reason: str = ""
    detail: str = ""
    wall_s: float = 0.0
    agent_s: float = 0.0
    gates_s: float = 0.0
    paths: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    judged_with: dict[str, Any] = field(default_factory=dict)
    """What the verdict was judged with (:func:`judged_with`): test interpreter(s), campaign
    version, gate set, base commit, and their ``key``. A result whose key is not the current
    one is stale: :func:`latest_results` leaves it out, so the unit is judged again."""

    @property
    def rejected_by(self) -> str | None:
        """The first gate that did not accept, or ``None``."""
        return next((v.gate for v in self.verdicts if not v.passed), None)

    @property
    def diff_stats(self) -> tuple[int, int]:
        """``(lines added, lines removed)`` of the patch."""
        lines = self.patch.splitlines()
        added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
        removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
        return added, removed


def _finding(d: dict[str, Any]) -> Finding:
    return Finding(**d)


def unit_to_dict(unit: WorkUnit) -> dict[str, Any]:
    return dataclasses.asdict(unit)


def unit_from_dict(d: dict[str, Any]) -> WorkUnit:
    return WorkUnit(
        key=d["key"],
        campaign=d["campaign"],
        base_commit=d["base_commit"],
        write_set=tuple(d["write_set"]),
        read_set=tuple(d["read_set"]),
        findings=tuple(_finding(f) for f in d["findings"]),
        rank=int(d.get("rank", 0)),
        wave=int(d.get("wave", 0)),
        repository=str(d.get("repository") or ""),
    )


def ledger_repository(ledger: Ledger) -> str:
    """The store key of the repository ``ledger`` is the view of (``fleet.store.repo_scope``),
    ``""`` for a ledger of no one repository (the whole store)."""
    repo = getattr(ledger, "repo", "")
    return repo if isinstance(repo, str) else ""


def check_own(ledger: Ledger, unit: WorkUnit, what: str) -> None:
    """Raise :class:`ForeignUnit` when ``ledger`` is one repository's and ``unit`` is another
    repository's: a unit is planned, loaded, leased, run and recorded only by its own
    repository's sweep. A unit that names no repository (built by hand, or by a planner told
    none) is adopted by the ledger's: its ``unit.planned`` event records that repository."""
    own = ledger_repository(ledger)
    if own and unit.repository and unit.repository != own:
        theirs = repr(unit.repository)
        raise ForeignUnit(f"unit {unit.key} of campaign {unit.campaign} belongs to {theirs}, "
                          f"not to the repository {own!r} this store is scoped to: {what} "
                          "refused")


def result_to_dict(result: UnitResult) -> dict[str, Any]:
    return dataclasses.asdict(result)


def result_from_dict(d: dict[str, Any]) -> UnitResult:
    return UnitResult(
        unit=d["unit"],
        campaign=d["campaign"],
        status=d["status"],
        base_commit=d["base_commit"],
        rank=int(d.get("rank", 0)),
        branch=d.get("branch"),
        commit=d.get("commit"),
        patch=d.get("patch", ""),
        verdicts=tuple(Verdict(**v) for v in d.get("verdicts", ())),
        grants=tuple(Grant(**g) for g in d.get("grants", ())),
        cost=Cost(**d.get("cost", {})),
        stop_reason=d.get("stop_reason", ""),
        detail=d.get("detail", ""),
        wall_s=float(d.get("wall_s", 0.0)),
        agent_s=float(d.get("agent_s", 0.0)),
        gates_s=float(d.get("gates_s", 0.0)),
        paths=tuple(d.get("paths", ())),
        left=tuple(d.get("left", ())),
        judged_with=dict(d.get("judged_with") or {}),
    )


def record_planned(ledger: Ledger, units: Iterable[WorkUnit], actor: str = "planner") -> int:
    """Append ``unit.planned`` for every unit not planned before; returns how many were new.
    A unit of another repository than a scoped ledger's is refused (:class:`ForeignUnit`)."""
    own = ledger_repository(ledger)
    known = {e.unit for e in ledger.events(kind=UNIT_PLANNED)  # (an event of no repository
             if not own or payload_repository(e.payload) == own}  # is recorded again, as own)
    new = 0
    for unit in units:
        check_own(ledger, unit, "planning it")
        if unit.key in known:
            continue
        ledger.append(UNIT_PLANNED, unit_to_dict(unit), unit=unit.key, campaign=unit.campaign,
                      actor=actor)
        known.add(unit.key)
        new += 1
    return new


def load_units(ledger: Ledger, campaign: str, keys: Sequence[str] | None = None) -> list[WorkUnit]:
    """The planned units of ``campaign`` (only ``keys`` when given, in that order). Through a
    ledger scoped to one repository, only that repository's units: a unit planned by another,
    or by no repository, is never loaded (its key is not known here)."""
    own = ledger_repository(ledger)
    by_key = {
        e.unit: unit
        for e in ledger.events(kind=UNIT_PLANNED, campaign=campaign)
        if e.unit is not None
        and ((unit := unit_from_dict(e.payload)).repository == own or not own)
    }
    if keys is None:
        return list(by_key.values())
    return [by_key[k] for k in keys if k in by_key]


def latest_results(ledger: Ledger, campaign: Campaign | str) -> dict[str, UnitResult]:
    """The last ``unit.finished`` result per unit of ``campaign``, minus units requeued since
    and minus stale verdicts: a result judged with other test interpreters, another version of
    the campaign, another gate set or another base commit than now (:func:`judged_with`).
    Pass the loaded ``Campaign`` the run works with; a bare name is loaded once here."""
    name = campaign if isinstance(campaign, str) else campaign.name
    results: dict[str, UnitResult] = {}
    for event in ledger.events(campaign=name):
        if event.unit is None:
            continue
        if event.kind == UNIT_FINISHED:
            results[event.unit] = result_from_dict(event.payload)
        elif event.kind == UNIT_REQUEUED:
            results.pop(event.unit, None)
    current: dict[str, str] = {}
    spec: Campaign | None = None
    for key, result in list(results.items()):
        if not result.judged_with:
            continue  # recorded before verdicts were keyed (or never judged): kept as it was
        base = result.base_commit
        if base not in current:
            spec = spec or _loaded(campaign)
            current[base] = judged_with(spec, base)["key"]
        if result.judged_with.get("key") != current[base]:
            del results[key]
    return results


def _loaded(campaign: Campaign | str) -> Campaign | None:
    """``campaign`` as loaded: a ``Campaign`` as given, a name read once (``None`` when it no
    longer loads: its verdicts are keyed with no version and no gates)."""
    if not isinstance(campaign, str):
        return campaign
    from fleet.campaigns.spec import load_campaign
    from fleet.errors import FleetError

    try:
        return load_campaign(campaign)
    except FleetError:
        return None


def judged_with(campaign: Campaign | str | None, base_commit: str) -> dict[str, Any]:
    """What a verdict on a unit of ``campaign`` (the loaded ``Campaign`` the run works with; a
    bare name is loaded here) at ``base_commit`` is judged with now: the test interpreter(s)
    (``$FLEET_TEST_PYTHONS``, else the target interpreter), the campaign's version (a hash of
    its loaded definition), its gate set, the base commit - and ``key``, a hash of them all.
    Change any and the unit is judged again. ``pythons`` is the setting as given; ``environment``
    is what those interpreters are (:func:`fleet.verify.pythons.judged_environment`: real paths
    and installed distributions), so a package installed into the test interpreter or an
    upgraded Python re-judges too."""
    from fleet.verify.execution import interpreter_name, target_python
    from fleet.verify.pythons import judged_environment

    spec = _loaded(campaign) if campaign is not None else None
    gates: list[str] = []
    campaign_version = ""
    if spec is not None:
        version = hashlib.sha256(repr(dataclasses.replace(spec, source="")).encode())
        gates = list(spec.gates)
        campaign_version = version.hexdigest()[:12]
    out: dict[str, Any] = {
        "pythons": os.environ.get("FLEET_TEST_PYTHONS") or interpreter_name(target_python()),
        "environment": judged_environment(target_python()),
        "campaign_version": campaign_version,
        "gates": gates,
        "base_commit": base_commit,
    }
    out["key"] = hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()[:12]
    return out


def record_result(ledger: Ledger, result: UnitResult, actor: str) -> int:
    """Append ``unit.finished`` as given (the unit stage stamps a judged result with
    :func:`stamp_judged_with` first)."""
    event = ledger.append(UNIT_FINISHED, result_to_dict(result), unit=result.unit,
                          campaign=result.campaign, actor=actor)
    return event.seq


def stamp_judged_with(result: UnitResult, campaign: Campaign | None = None) -> UnitResult:
    """``result`` with what it was judged with, when it was judged (verified, partial,
    rejected) and does not say yet: ``campaign`` is the loaded one the unit ran with (without
    it, the campaign named by the result is loaded)."""
    if result.status in ("verified", "partial", "rejected") and not result.judged_with:
        spec: Campaign | str = campaign if campaign is not None else result.campaign
        return dataclasses.replace(result,
                                   judged_with=judged_with(spec, result.base_commit))
    return result


def resolve_units(ledger: Ledger, campaign: str, keys: Iterable[str]) -> list[str]:
    """Unit keys from full keys, prefixes (the 12 characters every table prints) or ``all``.
    Raises ``ConfigError`` naming a key that matches no planned unit, or more than one."""
    from fleet.errors import ConfigError

    known = sorted(u.key for u in load_units(ledger, campaign))
    out: list[str] = []
    for key in keys:
        if key == "all":
            return known
        found = [k for k in known if k.startswith(key)]
        if len(found) != 1:
            what = "no planned unit" if not found else f"{len(found)} units"
            raise ConfigError(f"--redo {key}: {what} of campaign {campaign} has that key")
        out.append(found[0])
    return out


def expand_unit_key(ledger: Ledger, key: str) -> str:
    """The unit key that ``key`` is, or is the prefix of (the 12 characters every table
    prints), among all units of the ledger. Raises ``ConfigError`` naming ``key`` when no unit,
    or more than one, has it."""
    from fleet.errors import ConfigError

    known = {e.unit for e in ledger.events() if e.unit is not None}
    if key in known:
        return key
    found = sorted(k for k in known if k.startswith(key))
    if len(found) != 1:
        what = "no unit key" if not found else f"{len(found)} unit keys ({', '.join(found[:3])})"
        raise ConfigError(f"--unit {key}: {what} in the ledger start with it")
    return found[0]


def redo(ledger: Ledger, campaign: str, keys: Iterable[str], actor: str = "fleet") -> list[str]:
    """``fleet sweep --redo KEY|all``: requeue those units, so the next sweep judges them again
    whatever their verdict was. Returns the full keys."""
    units = resolve_units(ledger, campaign, keys)
    for unit in units:
        requeue(ledger, unit, campaign, "--redo", actor)
    return units


def requeue(ledger: Ledger, unit: str, campaign: str, reason: str, actor: str = "fleet") -> None:
    """Make ``unit`` pending again (its last result no longer counts)."""
    ledger.append(UNIT_REQUEUED, {"reason": reason}, unit=unit, campaign=campaign, actor=actor)


def untouched_findings(patch: str, findings: Iterable[Finding]) -> list[Finding]:
    """The findings whose lines the patch leaves as they were (no removed or changed line of
    the base in ``line .. line + lines of the snippet``): a codemod that knows no safe rewrite
    for a site (a Pydantic ``__root__`` model) leaves it, and a "verified" unit must not look
    like it fixed every finding it was given."""
    from fleet.verify import parse_patch

    try:
        files = parse_patch(patch)
    except ValueError:
        return []
    removed = {fp.old_path: set(fp.removed) for fp in files if fp.old_path}
    out = []
    for f in findings:
        lines = range(f.line, f.line + f.snippet.count("\n") + 1)
        if not removed.get(f.path, set()).intersection(lines):
            out.append(f)
    return out


def settle(unit: WorkUnit, patch: str) -> tuple[UnitStatus, str, tuple[str, ...]]:
    """The status of a unit whose every gate accepted ``patch``: ``verified``, or ``partial``
    when the patch leaves some of the unit's findings as they were (an agent that answered "no
    change" for them) - with a detail naming them and their fingerprints, which stay open."""
    left = untouched_findings(patch, unit.findings)
    if not left:
        return "verified", "", ()
    shown = ", ".join(f"{f.path}:{f.line} {f.rule}" for f in left[:5])
    more = f" and {len(left) - 5} more" if len(left) > 5 else ""
    detail = (f"{len(left)} of {len(unit.findings)} finding(s) left unfixed (still open, not "
              f"verified): {shown}{more}")
    return "partial", detail, tuple(f.fingerprint for f in left)
