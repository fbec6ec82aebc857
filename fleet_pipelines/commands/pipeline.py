"""``fleet sweep``, ``fleet demo`` and ``fleet stop``: the pipeline from the command line.

The state directory is ``--home``, else ``$FLEET_HOME``, else the repository's own
``REPO/.fleet`` (``fleet.home``); a state directory that belongs to another repository is refused
in one line. Every sweep goes through a real Dagster instance (``$DAGSTER_HOME``, default
``<home>/dagster``, SQLite), so its runs, assets and checks are in the UI (``make ui``). Any number
of fleet processes may share a repository and its state directory: the Dagster instance is
created under a lock, the index runs under a lock, and a campaign that another sweep is sweeping
there is refused in one line (exit 3). Dagster is imported inside the command functions only.

Runs are submitted to the instance (queued, launched by its daemon, re-executable from the UI).
``--in-process`` / ``FLEET_ENGINE=in-process`` executes them in the command's own process
instead (``execute_in_process``): one process to debug (breakpoints, profilers), no daemon and no
code server, but runs that the UI cannot re-execute.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleet_pipelines.commands.store import StoreOption, open_cli_store

if TYPE_CHECKING:
    from fleet_pipelines.commands._sweep import SweepReport
    from fleet_pipelines.resources import FleetSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "acme-monorepo"


def _git(repo: Path, *args: str) -> str:
    from fleet.forge._git import git

    return git(repo, *args)


def prepare_demo_repo(target: Path) -> Path:
    """A git copy of examples/acme-monorepo at ``target`` (kept if it exists: a second demo
    sweeps the same copy and finds nothing new)."""
    if (target / ".git").is_dir():
        return target
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(EXAMPLE, target,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".fleet"))
    _git(target, "init", "-q", "-b", "main")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "acme-monorepo (fleet demo copy)")
    return target


HomeOption = Annotated[Path | None, typer.Option(
    help="the fleet's state directory (default: $FLEET_HOME, else REPO/.fleet)")]
InProcessOption = Annotated[bool | None, typer.Option(
    "--in-process/--submitted", help="execute every run in this process (to debug it; the UI "
    "cannot re-execute such runs), or submit it to the instance (default: $FLEET_ENGINE, else "
    "submitted)", show_default=False)]
ENGINES = ("submitted", "in-process")
BUSY_EXIT = 3  # another sweep holds the campaign on this state directory


def resolve_home(home: Path | None, repo: Path | None = None) -> Path:
    """``--home``, else ``$FLEET_HOME``, else the state directory of the repository ``repo``
    (default: the one the current directory is in) — ``REPO/.fleet``, see ``fleet.home``."""
    from fleet.home import default_home

    if home is not None:
        return home.absolute()
    if os.environ.get("FLEET_HOME"):
        return Path(os.environ["FLEET_HOME"]).absolute()
    return default_home(repo)


def _settings(repo: Path | str, home: Path, campaigns: list[str] | None, agents: int,
              sandbox: str, forge: str, agent: str) -> FleetSettings:
    """The sweep's settings; a repository by URL (or with ``$FLEET_REMOTE``) is checked out
    first: this process's mirror under ``home`` (a ``RemoteError`` names what failed)."""
    import dataclasses

    from fleet.forge.remote import is_url
    from fleet_pipelines.resources import FleetSettings, default_base_branch

    target = str(repo) if is_url(str(repo)) else str(Path(repo).resolve())
    env = {**os.environ, "FLEET_HOME": str(home.resolve()), "FLEET_REPO": target,
           "FLEET_AGENTS": str(agents), "FLEET_SANDBOX": sandbox, "FLEET_FORGE": forge,
           "FLEET_AGENT": agent}
    explicit = bool(os.environ.get("FLEET_BASE_BRANCH"))
    if not explicit and not is_url(target):  # the repository's, not what a sweep saved
        env["FLEET_BASE_BRANCH"] = default_base_branch(Path(target))
    if campaigns:
        env["FLEET_CAMPAIGNS"] = ",".join(campaigns)
    settings = FleetSettings.from_env(env)
    if settings.url:
        checkout = settings.checkout()
        if not explicit:  # the remote's HEAD branch, as the fresh mirror knows it
            settings = dataclasses.replace(settings, base_branch=default_base_branch(checkout))
    return settings


_CHOICES = {"agent": ("codemod", "claude"), "forge": ("local", "github")}


def check_test_python(python: str, sandbox: str, cwd: Path) -> None:
    """``--test-python`` / ``$FLEET_TEST_PYTHON`` must run pytest inside the ``sandbox`` the
    tests run in (bubblewrap mounts an empty ``/tmp``: an environment kept there is not found);
    else a ``ConfigError`` naming it."""
    from fleet.errors import ConfigError
    from fleet.verify.execution import sandbox_env
    from sandbox import SandboxUnavailable, select_sandbox

    try:
        box = select_sandbox(sandbox)
    except SandboxUnavailable:
        return  # the gates then say "no sandbox": nothing to check the interpreter in
    done = box.run([python, "-m", "pytest", "--version"], cwd=cwd, env=sandbox_env(),
                   timeout=120)
    if not done.ok:
        last = ((done.stderr or done.stdout).strip().splitlines() or [""])[-1]
        raise ConfigError(
            f"--test-python {python}: `{python} -m pytest --version` fails in the {box.name} "
            f"sandbox ({last}); it needs pytest, and a path the sandbox shows (not under /tmp)")


def preflight(settings: FleetSettings) -> None:
    """What a sweep needs before its first Dagster run, each a ``ConfigError`` naming the input
    and what to do (else: a step's traceback minutes later, or an option silently unused when
    no unit runs): known --sandbox/--agent/--forge values, campaigns that load, a test
    interpreter that runs pytest, and a git repository whose base branch has a commit."""
    from assets._fleet import branch_commit
    from fleet.campaigns.spec import load_campaign
    from fleet.errors import ConfigError
    from fleet.forge import git_output
    from sandbox import BACKENDS

    for option, allowed in {"sandbox": ("auto", *BACKENDS), **_CHOICES}.items():
        value = getattr(settings, option)
        if value not in allowed:
            raise ConfigError(f"--{option} {value!r}: expected one of {'|'.join(allowed)}")
    for campaign in settings.campaigns:
        load_campaign(campaign)
    repo = Path(settings.repo)
    if git_output(repo, "rev-parse", "--git-dir") is None:
        raise ConfigError(f"{repo} is not a git repository: the fleet works on commits "
                          "(git init && git add -A && git commit -m initial)")
    branch_commit(repo, settings.base_branch)
    python = os.environ.get("FLEET_TEST_PYTHON")
    if python:
        check_test_python(python, settings.sandbox, repo)
    check_sandbox(settings.sandbox)
    from fleet_pipelines.resources import check_forge

    check_forge(settings)


def check_sandbox(name: str) -> None:
    """The sandbox must work here before the first run (else the first unit's step fails with a
    stack trace after the index): one line with what to install."""
    from fleet.errors import ConfigError
    from sandbox import SandboxUnavailable, select_sandbox

    try:
        select_sandbox(name)
    except SandboxUnavailable as exc:
        raise ConfigError(f"--sandbox {name}: {exc} On Debian: sudo apt-get install -y "
                          "bubblewrap (or run `make demo`, which installs it)") from exc


def in_process(flag: bool | None) -> bool:
    """``--in-process`` / ``--submitted`` when given, else ``$FLEET_ENGINE``: ``submitted``
    (the default) or ``in-process``; another value is a ``ConfigError`` naming it."""
    from fleet.errors import ConfigError

    if flag is not None:
        return flag
    engine = os.environ.get("FLEET_ENGINE", "").strip() or "submitted"
    if engine not in ENGINES:
        raise ConfigError(f"FLEET_ENGINE={engine!r}: expected one of {'|'.join(ENGINES)}")
    return engine == "in-process"


def _run(settings: FleetSettings, dagster_home: Path, local: bool = False) -> SweepReport:
    """Sweep on the instance at ``dagster_home``, every run submitted to it, or with ``local``
    executed in this process (``_sweep._execute`` when no engine is current)."""
    from contextlib import nullcontext

    from rich.console import Console

    from fleet_pipelines.commands._sweep import instance_for, sweep
    from fleet_pipelines.engine import ensure_run_queue, submitting
    from fleet_pipelines.storage import ensure_instance_config

    def prepare(home: Path) -> None:
        ensure_instance_config(home)
        ensure_run_queue(home, settings.agents)

    console = Console(stderr=True)
    settings.save()
    with instance_for(dagster_home.resolve(), prepare, settings.repo) as instance, console.status(
        "sweeping", spinner="dots"
    ) as status:

        # said with the sweep's first line, once it holds its campaigns' locks: a sweep refused
        # as busy prints its one error line and nothing else
        notices = (["runs execute in this process (--in-process): the UI shows them but cannot "
                    "re-execute them"] if local else [])

        def say(message: str) -> None:
            for line in [*notices, message]:
                status.update(line)
                console.log(line)
            notices.clear()

        engine = nullcontext() if local else submitting(instance, settings.env(), say)
        with engine:  # every run submitted to the instance, unless --in-process
            return sweep(settings, instance, say=say)


def _swept(settings: FleetSettings, dagster_home: Path, local: bool = False) -> SweepReport:
    """``_run``, with a campaign that another sweep holds on the state directory refused in
    one line (exit 3)."""
    from fleet.home import HomeMismatch
    from fleet_pipelines.commands._sweep import SweepBusy

    try:
        return _run(settings, dagster_home, local)
    except SweepBusy as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(BUSY_EXIT) from exc
    except HomeMismatch as exc:  # the Dagster instance is another repository's
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def print_report(report: SweepReport, settings: FleetSettings) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    nothing_new = True
    for c in report.campaigns:
        table = Table(title=f"campaign {c.campaign}: {c.findings} open finding(s), {c.fixed} "
                            f"fixed, {len(c.units)} unit(s), {c.new_units} new")
        for col in ("unit", "status", "why", "paths"):
            table.add_column(col, overflow="fold")
        for key, u in c.units.items():
            table.add_row(key[:12], u["status"], u.get("why", u["gate"]), u["paths"])
        console.print(table)
        if c.integration:
            i = c.integration
            tests = integration_tests(i)
            console.print(f"  integration branch [bold]{i['branch']}[/bold] at {i['head'][:10]}:"
                          f" {len(i['merged'])} merged, {len(i['semantic_conflicts'])} semantic "
                          f"conflict(s), tests {tests}")
        if c.change_url:
            console.print(f"  handed over: {c.change_url}")
        if c.self_merge:
            console.print(f"  self-merge ({settings.base_branch}): {c.self_merge}")
        nothing_new &= c.new_units == 0 and c.batches == 0 and not c.integrated
    if nothing_new:
        console.print("nothing new: every finding is known and every unit has a result")
    console.print(
        f"{report.runs} Dagster run(s) in {report.wall_s:.1f}s. In the UI (`make ui`, "
        f"http://127.0.0.1:3000): Assets -> symbol_graph lineage, each campaign's "
        f"candidate_patches partitions and their checks; the instance is {report.dagster_home}.")


def integration_tests(payload: dict[str, Any]) -> str:
    """How the integration's tests went, from its ``integration.finished`` ledger payload:
    ``pass``, ``not run``, ``collected none``, or the failures the patches introduced, told
    apart from those the base already had (a third-party suite often fails before any change)."""
    passed = payload.get("tests_passed")
    if passed is None:
        return "not run"
    if passed and payload.get("tests_collected") == 0:
        return "collected none (pytest found no test): nothing checked the combination"
    if passed:
        return "pass"
    new = list(payload.get("new_failures") or [])
    shown = "; ".join(new[:3]) + ("; ..." if len(new) > 3 else "")
    if payload.get("base_tests_passed") is False:
        if not new:
            return "fail, but no new failure (the base's own tests fail the same way)"
        return f"FAIL: {len(new)} new failure(s) (the base's own tests fail too): {shown}"
    return "FAIL" + (f": {shown}" if new and new != ["the test suite fails"] else "")


def _redo(settings: FleetSettings, home: Path, keys: list[str]) -> None:
    """``--redo``: requeue the named units of every campaign of the sweep (a key that names no
    unit of any of them is an error)."""
    from fleet.errors import ConfigError
    from fleet.home import store_key
    from fleet.unit import redo
    from fleet_pipelines.resources import StoreResource

    ledger = StoreResource(url=settings.store_url, repo=store_key(home, settings.repo)).ledger()
    for key in keys:
        hits = 0
        for campaign in settings.campaigns:
            try:
                hits += len(redo(ledger, campaign, [key]))
            except ConfigError:
                continue
        if not hits and key != "all":
            raise ConfigError(f"--redo {key}: no unit of {', '.join(settings.campaigns)} has "
                              "that key (or it is the prefix of several)")


def register(app: typer.Typer) -> None:
    @app.command("sweep")
    def sweep_cmd(
        repo: Annotated[str, typer.Argument(help="the git repository to sweep: a checkout, or "
                                            "a URL (file://, ssh://, https://, git://)")],
        campaign: Annotated[list[str], typer.Option("--campaign", "-c",
                                                    help="campaign name or YAML (repeatable)")],
        agents: Annotated[int, typer.Option(help="agents at once (the agent_sandbox pool)")] = 2,
        sandbox: Annotated[str, typer.Option(help="auto|microvm|gvisor|bwrap|local")] = "auto",
        forge: Annotated[str, typer.Option(help="local|github")] = "local",
        agent: Annotated[str, typer.Option(help="codemod|claude")] = "codemod",
        home: HomeOption = None,
        test_python: Annotated[Path | None, typer.Option(
            "--test-python", help="the target's own interpreter (its venv, with pytest) for "
            "its tests; default $FLEET_TEST_PYTHON, else the fleet's")] = None,
        redo: Annotated[list[str] | None, typer.Option(
            "--redo", help="judge these units again whatever their verdict: a unit key, its "
            "12-character prefix, or all (repeatable)")] = None,
        in_process_flag: InProcessOption = None,
    ) -> None:
        """Index REPO, plan the campaign, run the agents, verify, integrate and hand over.

        REPO may be a URL: the sweep then works in a mirror under the state directory and
        pushes unit and integration branches to the remote (or $FLEET_REMOTE; docs/remote.md).

        The state directory is --home, else $FLEET_HOME, else REPO/.fleet (kept out of git
        through .git/info/exclude); one that belongs to another repository is refused (exit 2).
        A campaign another sweep is sweeping on the same state directory is refused (exit 3)."""
        from fleet.errors import FleetError
        from fleet.forge.remote import is_url
        from fleet.home import claim_home

        if not is_url(repo) and not Path(repo).is_dir():
            typer.echo(f"error: {repo}: no such directory (a git checkout or a URL)", err=True)
            raise typer.Exit(2)
        home = resolve_home(home, None if is_url(repo) else Path(repo))
        dagster_home = Path(os.environ.get("DAGSTER_HOME") or home / "dagster")
        if test_python is not None:  # read by the gates and the integration (inherited by runs)
            os.environ["FLEET_TEST_PYTHON"] = str(test_python.absolute())
        try:
            local = in_process(in_process_flag)
            settings = _settings(repo, home, campaign, agents, sandbox, forge, agent)
            preflight(settings)
            claim_home(home, Path(settings.repo))
            if redo:
                _redo(settings, home, redo)
        except FleetError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        print_report(_swept(settings, dagster_home, local), settings)

    @app.command("demo")
    def demo_cmd(
        agents: Annotated[int, typer.Option(help="agents at once")] = 2,
        sandbox: Annotated[str, typer.Option(help="auto|microvm|gvisor|bwrap|local")] = "auto",
        home: Annotated[Path, typer.Option(help="the fleet's state directory")] = Path(".fleet"),
        fresh: Annotated[bool, typer.Option(help="start over from a new copy")] = False,
        in_process_flag: InProcessOption = None,
    ) -> None:
        """Sweep the built-in campaigns over a copy of examples/acme-monorepo (.fleet/demo/)."""
        from fleet.errors import FleetError
        from fleet.home import claim_home
        from fleet_pipelines.resources import builtin_campaign_names

        if fresh and home.exists():
            shutil.rmtree(home)
        repo = prepare_demo_repo(home / "demo" / "acme-monorepo")
        settings = _settings(repo, home, list(builtin_campaign_names()), agents, sandbox,
                             "local", "codemod")
        try:
            local = in_process(in_process_flag)
            check_sandbox(sandbox)
            claim_home(home, repo)
        except FleetError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        dagster_home = Path(os.environ.get("DAGSTER_HOME") or home / "dagster")
        print_report(_swept(settings, dagster_home, local), settings)

    @app.command("stop")
    def stop_cmd(
        reason: Annotated[str, typer.Option(help="why (recorded)")] = "fleet stop",
        off: Annotated[bool, typer.Option("--off", help="release the kill switch")] = False,
        home: HomeOption = None,
        store: StoreOption = None,
        create: Annotated[bool, typer.Option(
            "--create", help="engage even if the store does not exist yet (creates it)")] = False,
    ) -> None:
        """The kill switch: every agent loop, step and sensor stops at its next check.

        The store is --store, else $FLEET_STORE_URL, else <home>/fleet.db (home: --home, else
        $FLEET_HOME, else the .fleet of the repository the current directory is in); a store
        that does not exist there is an error (exit 2) unless --create: a switch engaged in a
        fresh store that no fleet reads stops nothing."""
        from fleet.errors import ConfigError
        from fleet_pipelines.resources import FleetSettings

        home = resolve_home(home)
        url = store
        if not url:
            try:
                url = FleetSettings.from_env({**os.environ,
                                              "FLEET_HOME": str(home.resolve())}).store_url
            except ConfigError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from exc
        with open_cli_store(url, existing=not create) as opened:
            if off:
                opened.controls.release()
                opened.ledger.append("kill_switch.released", {}, actor="fleet stop")
                typer.echo(f"kill switch released ({url})")
            else:
                opened.controls.engage(reason)
                opened.ledger.append("kill_switch.engaged", {"reason": reason},
                                     actor="fleet stop")
                typer.echo(f"kill switch engaged ({reason}) in {url}; "
                           "`fleet stop --off` releases it")
