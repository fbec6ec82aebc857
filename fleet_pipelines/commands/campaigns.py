"""``fleet plan``, ``fleet fix``, ``fleet gc`` and ``fleet campaigns``: campaigns without Dagster.

- ``fleet plan REPO --campaign C [--json] [-o FILE]``: dry run - findings, units, lock order,
  waves and the expected parallelism; ``--json`` prints the plan as JSON on stdout instead (the
  CLI's one convention), ``-o FILE`` also writes it to FILE. Changes nothing in REPO.
- ``fleet fix REPO --campaign C --unit K [--agent auto|codemod|command|claude]``: one unit end to
  end through ``fleet.unit.run_unit`` (leases, the agent in the sandbox, the campaign's gates,
  the ledger), print the patch; the unit's branch goes unless ``--keep-branch``.
  REPO may be a URL: both work in this process's mirror of it (``fleet.forge.remote``), and a
  verified unit's branch is pushed to the remote (or to ``$FLEET_REMOTE``).
- ``fleet gc REPO``: remove workspaces and branches left behind by crashed fleet processes.
- ``fleet campaigns [--json]``: list the built-in campaigns, descriptions in full (never cut to
  the terminal's width).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fleet_pipelines.commands.store import store_url_option

if TYPE_CHECKING:
    from fleet.plan import Plan

__all__ = [
    "CampaignOpt",
    "RepoArg",
    "RepoRef",
    "campaigns_command",
    "fix_command",
    "gc_command",
    "plan_command",
    "register",
]

RepoArg = Annotated[Path, typer.Argument(help="The repository (a git checkout).")]
RepoRef = Annotated[str, typer.Argument(
    metavar="REPO",
    help="The repository: a git checkout, or a URL (file://, ssh://, https://, git://) that is "
         "cloned into a mirror under $FLEET_HOME (verified branches are pushed back there).")]
CampaignOpt = Annotated[
    str, typer.Option("--campaign", "-c", help="A built-in campaign name or a campaign YAML file.")
]


def _fail(message: str) -> typer.Exit:
    print(f"error: {message}", file=sys.stderr)
    return typer.Exit(2)


def _render(plan: Plan, limit: int) -> str:
    lines = [
        f"campaign   {plan.campaign} @ {plan.base_commit[:12]}",
        f"findings   {len(plan.findings)}",
    ]
    for f in plan.findings[:limit]:
        lines.append(f"  {f.fingerprint[:12]}  {f.path}:{f.line}  {f.rule}  {f.symbol}")
    if len(plan.findings) > limit:
        lines.append(f"  ... {len(plan.findings) - limit} more (--json for all)")
    lines.append(f"units      {len(plan.units)}")
    for u in plan.units[:limit]:
        lines.append(
            f"  {u.key}  wave {u.wave}  rank {u.rank}  {len(u.findings)} finding(s)  "
            f"write {', '.join(u.write_set[:3])}{' ...' if len(u.write_set) > 3 else ''}  "
            f"read {len(u.read_set)}"
        )
    if len(plan.units) > limit:
        lines.append(f"  ... {len(plan.units) - limit} more")
    lines.append(f"lock order {len(plan.lock_order)} symbols (rank, symbol)")
    for symbol, rank in plan.lock_order[:limit]:
        lines.append(f"  {rank:>6}  {symbol}")
    if len(plan.lock_order) > limit:
        lines.append(f"  ... {len(plan.lock_order) - limit} more")
    widths = [len(w) for w in plan.waves]
    more = " ..." if len(widths) > 20 else ""
    lines.append(f"waves      {len(plan.waves)}  sizes {widths[:20]}{more}")
    lines.append(
        f"parallel   {plan.expected_parallelism} units per step "
        f"(max {plan.max_parallel} agents)"
    )
    seconds = ", ".join(f"{k} {v:.2f}s" for k, v in plan.timings.items())
    lines.append(f"seconds    {seconds}")
    return "\n".join(lines)


def plan_command(
    repo_ref: RepoRef,
    campaign: CampaignOpt,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the plan as JSON on stdout (nothing else goes there).")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Also write the plan as JSON to this file.")] = None,
    limit: Annotated[int, typer.Option(help="Rows shown per section.")] = 50,
) -> None:
    """Dry run: print the campaign's findings, work units, lock order, waves and parallelism."""
    from fleet.campaigns.spec import load_campaign
    from fleet.errors import FleetError
    from fleet.forge.remote import is_url, working_repository
    from fleet.home import home_of, repo_root, store_key
    from fleet.plan import plan_campaign
    from fleet_pipelines.commands._state import repo_state

    try:
        repo = working_repository(repo_ref)
        if not is_url(str(repo_ref)) and repo_root(repo) is not None:
            key = repo_state(repo).key  # its own state directory (checked, nothing written)
        else:  # by URL: the mirror in the URL's own state (fleet.home.default_home)
            key = store_key(home_of(str(repo_ref)), repo)
        # the units' keys are those `fleet fix` and a sweep of this repository give them
        plan = plan_campaign(repo, load_campaign(campaign), repository=key)
    except FleetError as exc:
        raise _fail(str(exc)) from exc
    data = json.dumps(plan.to_dict(), indent=1) + "\n"
    if output is not None:
        output.write_text(data, encoding="utf-8")
    if as_json:
        sys.stdout.write(data)
        return
    print(_render(plan, limit))
    if output is not None:
        print(f"wrote      {output}")


def fix_command(
    repo_ref: RepoRef,
    campaign: CampaignOpt,
    unit: Annotated[str, typer.Option("--unit", "-u", help="The unit's key (or a prefix).")],
    agent: Annotated[str, typer.Option(
        help="auto (the campaign's codemod or command), codemod, command or claude.")] = "auto",
    model: Annotated[str | None, typer.Option(
        help="The Claude model (default: the campaign's, else $FLEET_MODEL, else a current "
             "Sonnet).")] = None,
    sandbox: Annotated[str, typer.Option(help="auto, microvm, gvisor, bwrap or local.")] = "auto",
    store: Annotated[str | None, typer.Option(
        callback=store_url_option,
        help="Store URL or SQLite file (default: $FLEET_STORE_URL, else fleet.db in "
             "$FLEET_HOME, else in REPO/.fleet).")] = None,
    keep_branch: Annotated[bool, typer.Option(
        "--keep-branch", help="Keep a verified unit's branch fleet/<campaign>/<unit>.")] = False,
    require_verified: Annotated[bool, typer.Option(
        "--require-verified", help="Exit 1 unless every gate accepted the patch.")] = False,
) -> None:
    """Run one unit end to end through the unit stage (leases, the agent in the sandbox, the
    campaign's gates, the ledger) and print its patch; nothing is merged. Exit 1 when the agent
    failed (or, with --require-verified, when a gate did not accept)."""
    from fleet.agents.select import agent_for
    from fleet.campaigns.spec import load_campaign
    from fleet.errors import FleetError
    from fleet.forge import run_git
    from fleet.forge.remote import is_url, working_repository
    from fleet.forge.worktree import worktree_lock
    from fleet.home import home_of, repo_root, store_key
    from fleet.plan import lease_requests, plan_campaign
    from fleet.store import default_store_url, open_store
    from fleet.store.repo_scope import scoped_store
    from fleet.unit import (
        GitWorkspaces,
        UnitEnv,
        VerifyGates,
        close_clients,
        run_unit,
        untouched_findings,
    )
    from fleet.verify import GateOptions
    from fleet_pipelines.commands._state import repo_state
    from sandbox import SandboxUnavailable, select_sandbox

    try:
        repo = working_repository(repo_ref)
        spec = load_campaign(campaign)
        # the repository's own state (REPO/.fleet; by URL its own under ./.fleet/remotes), and its
        # units, leases and ledger records on a store that may hold others (fleet.home)
        local = not is_url(str(repo_ref)) and repo_root(repo) is not None
        # (a path that is no checkout: the plan names it in one line)
        state = repo_state(repo, store=store) if local else None  # another's: refused
        key = state.key if state is not None else store_key(home_of(str(repo_ref)), repo)
        plan = plan_campaign(repo, spec, repository=key)
        if local:
            repo_state(repo, store=store, claim=True)
        target, graph = plan.unit(unit), plan.graph
        box = select_sandbox(sandbox)
        with open_store(state.store_url if state is not None
                        else store or default_store_url(None)) as raw:
            opened = scoped_store(raw, key)
            worker = agent_for(agent, spec, graph=plan.graph, ledger=opened.ledger,
                               controls=opened.controls, model=model,
                               notes=tuple(n.text for n in opened.memory.list()))
            workspaces = GitWorkspaces(repo)  # by URL: a verified unit's branch is pushed
            env = UnitEnv(leases=opened.leases, ledger=opened.ledger, agent=worker, sandbox=box,
                          workspaces=workspaces, publish=workspaces.publish,
                          gates=VerifyGates(repo, graph, GateOptions(campaign=spec.name), spec),
                          budget=spec.budget, killed=opened.controls.engaged, campaign=spec,
                          requests=None if graph is None else lambda u: lease_requests(graph, u))
            try:
                result = run_unit(target, env, worker="fix")
            finally:
                close_clients(worker, env.gates)
    except (FleetError, SandboxUnavailable) as exc:
        raise _fail(str(exc)) from exc
    for v in result.verdicts:
        print(f"# gate {v.gate}: {v.status}", file=sys.stderr)
    print(f"# {result.status} ({result.stop_reason}): {result.detail}", file=sys.stderr)
    left = untouched_findings(result.patch, target.findings) if result.patch else []
    for f in left:
        print(f"# left as it was: {f.path}:{f.line} {f.rule} {f.snippet.splitlines()[0][:80]}",
              file=sys.stderr)
    if result.status == "verified" and result.branch and not keep_branch:
        with worktree_lock(repo):  # `branch -D` lists the worktrees (fleet.forge.worktree)
            run_git(repo, "branch", "-D", result.branch)
    elif result.status == "verified":
        print(f"# branch {result.branch}", file=sys.stderr)
    sys.stdout.write(result.patch)
    if result.status in ("agent_failed", "lease_refused", "killed", "push_failed") or (
            require_verified and result.status != "verified"):
        raise typer.Exit(1)


def gc_command(
    repo_ref: RepoRef,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would go.")] = False,
) -> None:
    """Remove fleet workspaces and branches orphaned by a crash (never the user's checkout); for
    a URL, in this process's mirror of it under $FLEET_HOME (no network needed)."""
    from fleet.errors import FleetError
    from fleet.forge.remote import mirror_of
    from fleet.forge.worktree import gc

    try:
        repo = mirror_of(repo_ref)
    except FleetError as exc:
        raise _fail(str(exc)) from exc
    if not repo.is_dir():
        raise _fail(f"{repo}: no such directory (expected a git checkout)")
    try:
        report = gc(repo, dry_run=dry_run)
    except FleetError as exc:
        raise _fail(str(exc)) from exc
    verb = "would remove" if dry_run else "removed"
    for label, items in (
        ("worktree", report.removed_worktrees),
        ("scratch", report.removed_scratch),
        ("branch", report.removed_branches),
    ):
        for item in items:
            print(f"{verb} {label} {item}")
    for item in report.kept:
        print(f"kept {item}")
    total = len(report.removed_worktrees) + len(report.removed_scratch)
    print(f"{verb} {total} workspace(s), {len(report.removed_branches)} branch(es)")


def _fixer(spec: object) -> str:
    fix = getattr(spec, "fix", None)
    if fix is None:
        return "-"
    if fix.codemod:
        return f"codemod {fix.codemod}"
    if fix.command:
        return f"command {fix.command[0]}"
    return "agent (prompt)" if fix.prompt else "-"


def campaigns_command(
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the campaigns as JSON on stdout.")] = False,
) -> None:
    """List the built-in campaigns: name, fixer, autonomy, gates and the whole description
    (one line each; never cut to the terminal's width, on a terminal or through a pipe)."""
    from fleet.campaigns.spec import builtin_campaigns, load_campaign

    rows = []
    for name, path in builtin_campaigns().items():
        spec = load_campaign(path)
        rows.append({"name": name, "fixer": _fixer(spec), "autonomy": spec.autonomy.mode,
                     "gates": list(spec.gates), "schedule": spec.schedule or "",
                     "description": " ".join(spec.description.split())})
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
        return
    width = max((len(r["name"]) for r in rows), default=4)
    fixers = max((len(r["fixer"]) for r in rows), default=5)
    for r in rows:  # plain print: no rich console, whose width would cut or wrap the line
        print(f"{r['name']:<{width}}  {r['fixer']:<{fixers}}  {r['autonomy']:<15}  "
              f"{r['description']}")


def register(app: typer.Typer) -> None:
    app.command("plan")(plan_command)
    app.command("fix")(fix_command)
    app.command("gc")(gc_command)
    app.command("campaigns")(campaigns_command)
