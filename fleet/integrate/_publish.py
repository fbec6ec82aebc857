"""The hand-over: the last integration of a campaign published through its forge.

``handover(campaign, repo, base_branch, ledger, forge, issue_refs)`` publishes the integration
branch with the full evidence body (a line per merged unit, then per unit its findings, every
gate's verdict with its evidence, the diffstat and the ledger event ids; the issues the change
closes), reports one check run per gate on the PR's head commit where the forge has the Checks
API (GitHub), and, for a campaign whose autonomy is ``self_merge``, merges through the forge when
the combination's tests passed: on GitHub the pull request is merged (the local base branch is
never fast-forwarded while a pull request is open); with the local forge, the base branch is
fast-forwarded. Each step is a ledger event (``pull_request.published``, ``change.self_merge``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.integrate._evidence import readable_evidence
from fleet.integrate._selfmerge import (
    REMOTE_FAST_FORWARD,
    SelfMerge,
    refusal,
    self_merge_locally,
)
from fleet.protocols import Forge, Ledger
from fleet.types import ChangeRef

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from fleet.forge.github import CheckReport, UnitReport
    from fleet.unit import UnitResult

__all__ = ["Handover", "change_body", "diffstat", "gate_checks", "handover",
           "self_merge_message", "unit_reports"]

PUBLISHED = "pull_request.published"
SELF_MERGE = "change.self_merge"


@dataclass(frozen=True)
class Handover:
    """What the hand-over did: the change, the self-merge (``None``: review required) and its
    one-line message, and the URLs of the check runs reported on the change."""

    ref: ChangeRef
    self_merge: SelfMerge | None = None
    self_merge_message: str = ""
    checks: tuple[str, ...] = ()


def diffstat(patch: str) -> str:
    """``git diff --stat``-like lines for a unified diff: ``path | N +-`` per file, a total."""
    files: dict[str, list[int]] = {}
    current = None
    for line in patch.splitlines():
        if line.startswith("+++ "):
            current = line[4:].removeprefix("b/")
            files.setdefault(current, [0, 0])
        elif current and line.startswith("+") and not line.startswith("+++"):
            files[current][0] += 1
        elif current and line.startswith("-") and not line.startswith("---"):
            files[current][1] += 1
    if not files:
        return ""
    width = max(len(p) for p in files)
    lines = [f" {p.ljust(width)} | {a + r:>3} {'+' * min(a, 40)}{'-' * min(r, 40)}"
             for p, (a, r) in files.items()]
    added, removed = sum(a for a, _ in files.values()), sum(r for _, r in files.values())
    lines.append(f" {len(files)} file(s) changed, {added} insertion(s)(+), "
                 f"{removed} deletion(s)(-)")
    return "\n".join(lines)


def unit_reports(ledger: Ledger, campaign: str, keys: Sequence[str],
                 results: Mapping[str, UnitResult]) -> list[UnitReport]:
    """What a reviewer needs per unit: the planned unit, its verdicts (evidence made readable),
    the ledger events that record it, the diffstat of its patch."""
    from fleet.forge.github import UnitReport
    from fleet.unit import load_units

    units = {u.key: u for u in load_units(ledger, campaign, list(keys))}
    reports = []
    for key in keys:
        unit, result = units.get(key), results.get(key)
        if unit is None or result is None:
            continue
        verdicts = tuple(dataclasses.replace(v, evidence=readable_evidence(v.evidence, 1500))
                         for v in result.verdicts)
        ids = tuple(e.seq for e in ledger.events(unit=key, campaign=campaign))
        reports.append(UnitReport(unit, verdicts, ids, diffstat(result.patch)))
    return reports


def _issue_line(refs: Sequence[str]) -> str:
    """``Closes #12, #14`` for GitHub issues (GitHub links them and closes them on merge), the
    refs as they are for another forge."""
    github = [r.split("#", 1)[1] for r in refs if r.startswith("github#")]
    other = [r for r in refs if not r.startswith("github#")]
    parts = ([f"Closes {', '.join(f'#{n}' for n in github)}"] if github else []) + other
    return "; ".join(parts)


def change_body(campaign: str, last: Mapping[str, Any], reports: Sequence[UnitReport],
                results: Mapping[str, UnitResult], issue_refs: Sequence[str]) -> str:
    """The change's body: the summary (a line per merged unit with its gate verdicts, the
    dropped units, the issues closed), then ``render_change_body``'s section per unit."""
    from fleet.forge.github import render_change_body

    tests = last.get("tests_passed")
    lines = [f"Campaign `{campaign}`: {len(last['merged'])} unit(s) merged on `{last['base']}` "
             f"(integration head `{str(last.get('head', ''))[:12]}`; tests on the combination: "
             f"{'pass' if tests else 'not run' if tests is None else 'FAIL'}).", ""]
    for key in last["merged"]:
        r = results.get(key)
        if r is not None:
            gates = ", ".join(f"{v.gate}={v.status}" for v in r.verdicts)
            lines.append(f"- unit `{key}` ({', '.join(r.paths)}): {gates}")
    for key in last.get("semantic_conflicts", []):
        lines.append(f"- unit `{key}`: dropped (semantic conflict), requeued")
    if issue_refs:
        lines += ["", f"Issues: {_issue_line(issue_refs)}"]
    return render_change_body(reports, "\n".join(lines))


def gate_checks(gates: Sequence[str], reports: Sequence[UnitReport]) -> list[CheckReport]:
    """One check per gate over the merged units: ``success`` when the gate accepted every one,
    ``failure`` when it rejected one, ``neutral`` when it judged none."""
    from fleet.forge.github import CheckReport

    checks = []
    for gate in gates:
        judged = [(r.unit.key, v) for r in reports for v in r.verdicts if v.gate == gate]
        bad = [k for k, v in judged if not v.passed]
        conclusion = "neutral" if not judged else "failure" if bad else "success"
        title = (f"{gate}: judged no unit" if not judged else
                 f"{gate}: rejected {len(bad)} of {len(judged)} unit(s)" if bad else
                 f"{gate}: accepted all {len(judged)} unit(s)")
        rows = ["| unit | verdict | evidence |", "|---|---|---|"]
        for key, v in judged:
            first = next((ln for ln in v.evidence.splitlines() if ln.strip()), "")
            rows.append(f"| `{key}` | {v.status} | {first[:200].replace('|', '/')} |")
        text = "\n\n".join(f"### `{key}` ({v.status})\n\n```\n{v.evidence}\n```"
                           for key, v in judged)
        checks.append(CheckReport(name=f"fleet/{gate}", conclusion=conclusion, title=title,
                                  summary="\n".join(rows), text=text))
    return checks


def self_merge_message(merge: SelfMerge, base_branch: str, branch: str,
                       checkout: Path | None, via: str = "local") -> str:
    """One line for the user: what moved (the pull request, the branch, the checkout's files) or
    why nothing did; never "fast-forwarded" unless a ref moved."""
    if merge.merged and via == "github":
        return (f"merged the pull request through GitHub ({merge.head[:10]}); the local "
                f"{base_branch} is unchanged (git pull to update it)")
    if merge.merged and merge.reason.startswith(REMOTE_FAST_FORWARD):  # a worker's mirror
        return (f"fast-forwarded {base_branch} to {merge.head[:10]} on the remote "
                f"{merge.reason.removeprefix(REMOTE_FAST_FORWARD)}")
    if merge.merged and checkout is not None:
        return (f"fast-forwarded {base_branch} to {merge.head[:10]}; its checkout {checkout} "
                f"was updated too (git merge --ff-only)")
    if merge.merged:
        return (f"fast-forwarded {base_branch} to {merge.head[:10]} (ref only: {base_branch} "
                f"is not checked out, no files changed)")
    if merge.reason == "already merged":
        return f"{base_branch} already at {branch}: nothing moved"
    stays = "the pull request stays open" if via == "github" else f"the change stays on {branch}"
    return f"not merged: {merge.reason}; {stays}"


def _self_merge(repo: Path, base_branch: str, branch: str, last: Mapping[str, Any],
                forge: Forge, ref: ChangeRef) -> tuple[SelfMerge, Path | None, str]:
    """Merge through the forge when the policy allows: GitHub merges the pull request (only at
    the integration head), the local forge fast-forwards the base branch."""
    from fleet.forge.github import GitHubForge

    refused = refusal(last)
    via = "github" if isinstance(forge, GitHubForge) else "local"
    if isinstance(forge, GitHubForge):
        if refused is not None:
            return refused, None, via
        done = forge.merge(ref, str(last["head"]))
        return SelfMerge(done.merged, done.reason, done.sha), None, via
    merge, checkout = self_merge_locally(repo, base_branch, branch, last)
    return merge, checkout, via


def handover(campaign: Campaign, repo: Path, base_branch: str, ledger: Ledger, forge: Forge,
             issue_refs: Mapping[str, str]) -> Handover | None:
    """Publish ``campaign``'s last integration (``None`` if it merged nothing); ``issue_refs``
    maps finding fingerprints to the issues filed for them."""
    from fleet.forge.github import GitHubForge
    from fleet.unit import latest_results

    done = ledger.events(kind="integration.finished", campaign=campaign.name)
    if not done or not done[-1].payload.get("merged"):
        return None
    last = done[-1].payload
    results = latest_results(ledger, campaign)
    reports = unit_reports(ledger, campaign.name, list(last["merged"]), results)
    closes = sorted({issue_refs[f.fingerprint] for r in reports for f in r.unit.findings
                     if f.fingerprint in issue_refs})
    branch = str(last["branch"])
    body = change_body(campaign.name, last, reports, results, closes)
    ref = forge.publish(str(repo), branch, f"fleet: {campaign.name}", body,
                        labels=("fleet", campaign.name))
    ledger.append(PUBLISHED, {"ref": dataclasses.asdict(ref), "units": list(last["merged"]),
                              "issues": closes}, campaign=campaign.name, actor="forge")
    checks: tuple[str, ...] = ()
    if isinstance(forge, GitHubForge) and last.get("head"):
        checks = tuple(forge.report_checks(ref, str(last["head"]),
                                           gate_checks(campaign.gates, reports)))
    if campaign.autonomy.mode != "self_merge":
        return Handover(ref, checks=checks)
    merge, checkout, via = _self_merge(repo, base_branch, branch, last, forge, ref)
    message = self_merge_message(merge, base_branch, branch, checkout, via)
    ledger.append(SELF_MERGE, {
        **dataclasses.asdict(merge), "base_branch": base_branch, "branch": branch,
        "checkout": str(checkout or ""), "message": message, "via": via,
    }, campaign=campaign.name, actor="forge")
    return Handover(ref, merge, message, checks)
