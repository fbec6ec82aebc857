"""What ``fleet sweep`` and ``fleet demo`` are given, and what they check before the first Dagster
run: the state directory (``--home``, ``$FLEET_HOME``, ``REPO/.fleet``), the sweep's settings
(a repository by URL checked out into this process's mirror first), the engine (submitted or
in-process), and the preflight - every option and campaign, the test interpreter, the sandbox,
the forge - each a ``ConfigError`` naming the input and what to do, in one line. Dagster is not
imported here."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from fleet_pipelines.resources import FleetSettings

__all__ = ["ENGINES", "check_sandbox", "check_test_python", "in_process", "preflight",
           "resolve_home", "sweep_settings"]

ENGINES = ("submitted", "in-process")
_CHOICES = {"agent": ("codemod", "claude"), "forge": ("local", "github")}


def resolve_home(home: Path | None, repo: Path | str | None = None) -> Path:
    """``--home``, else ``$FLEET_HOME``, else the state directory of the repository ``repo``
    (default: the one the current directory is in) — ``REPO/.fleet``; a URL (a ``str``): its
    own under the current directory's ``.fleet/remotes``, see ``fleet.home``."""
    from fleet.home import default_home

    if home is not None:
        return home.absolute()
    if os.environ.get("FLEET_HOME"):
        return Path(os.environ["FLEET_HOME"]).absolute()
    return default_home(repo)


def sweep_settings(repo: Path | str, home: Path, campaigns: list[str] | None, agents: int,
                   sandbox: str, forge: str, agent: str) -> FleetSettings:
    """The sweep's settings; a repository by URL (or with ``$FLEET_REMOTE``) is checked out
    first: this process's mirror under ``home`` (a ``RemoteError`` names what failed)."""
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


def preflight(settings: FleetSettings) -> list[Campaign]:
    """What a sweep needs before its first Dagster run, each a ``ConfigError`` naming the input
    and what to do (else: a step's traceback minutes later, or an option silently unused when
    no unit runs): known --sandbox/--agent/--forge values, campaigns that load, a test
    interpreter that runs pytest, and a git repository whose base branch has a commit. Returns
    the campaigns as loaded, in ``settings.campaigns``' order: the sweep builds from them and
    reads no campaign file again."""
    from fleet.campaigns.spec import load_campaign
    from fleet.errors import ConfigError
    from fleet.forge import branch_commit, git_output
    from sandbox import BACKENDS

    for option, allowed in {"sandbox": ("auto", *BACKENDS), **_CHOICES}.items():
        value = getattr(settings, option)
        if value not in allowed:
            raise ConfigError(f"--{option} {value!r}: expected one of {'|'.join(allowed)}")
    campaigns = [load_campaign(campaign) for campaign in settings.campaigns]
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
    return campaigns


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
