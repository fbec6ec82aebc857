"""Bad input and faults of a repository named by URL: a URL that cannot be cloned, a remote
whose pre-receive hook refuses the pushes. Each is one line naming what failed; a refused unit
push leaves the unit pending (``push_failed``), a refused integration push leaves the remote's
branches as they were and records no integration; nothing is lost for the next attempt."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from fleet.errors import FleetError
from fleet.forge.remote import RemoteError
from fleet.unit import TERMINAL, latest_results
from tests.conftest import git

pytestmark = [pytest.mark.sandbox]

CAMPAIGN = "yaml-safe-load"
REFUSE_ALL = '#!/bin/sh\necho "frozen: no pushes today" >&2\nexit 1\n'
REFUSE_INTEGRATION = """#!/bin/sh
while read old new ref; do
  case "$ref" in
    refs/heads/fleet/*/integration) echo "integration branches are frozen" >&2; exit 1;;
  esac
done
exit 0
"""


def bare_with_hook(repo: Path, where: Path, hook: str) -> Path:
    subprocess.run(["git", "clone", "--quiet", "--bare", str(repo), str(where)], check=True)
    pre = where / "hooks" / "pre-receive"
    pre.write_text(hook)
    pre.chmod(0o755)
    return where


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A worker's own state directory and store (SQLite: one worker here), cwd outside it."""
    home = tmp_path / "worker"
    for name in ("FLEET_REPO", "FLEET_REMOTE", "FLEET_BASE_BRANCH", "FLEET_DEPLOYMENT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FLEET_HOME", str(home))
    monkeypatch.setenv("FLEET_STORE_URL", f"sqlite:///{tmp_path / 'fleet.db'}")
    monkeypatch.chdir(tmp_path)
    return home


def first_unit(url: str, capsys: pytest.CaptureFixture[str]) -> str:
    import json

    from fleet_pipelines.cli import main

    assert main(["plan", url, "-c", CAMPAIGN, "--json"]) == 0
    return str(json.loads(capsys.readouterr().out)["units"][0]["key"])


def test_a_url_that_cannot_be_cloned_is_one_line(env: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from fleet_pipelines.cli import main
    from fleet_pipelines.resources import FleetSettings

    url = (tmp_path / "nowhere" / "acme.git").as_uri()
    for args in (["plan", url, "-c", CAMPAIGN], ["fix", url, "-c", CAMPAIGN, "--unit", "ab"],
                 ["index", url], ["sweep", url, "-c", CAMPAIGN]):
        assert main(args) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err, err
        assert err.removeprefix("error: ").startswith(f"cannot clone {url}: "), err
        assert "does not appear to be a git repository" in err, err
    settings = FleetSettings.from_env({"FLEET_REPO": url, "FLEET_HOME": str(env)})
    with pytest.raises(RemoteError, match=f"cannot clone {re.escape(url)}"):
        settings.checkout()
    mirrors = env / "mirrors"
    assert not mirrors.exists() or not [p for p in mirrors.iterdir() if p.is_dir()]
    with pytest.raises(FleetError, match=r"FLEET_REPO: repository URL 'ftp://x/y\.git'"):
        FleetSettings.from_env({"FLEET_REPO": "ftp://x/y.git", "FLEET_HOME": str(env)})


def test_a_refused_unit_push_leaves_the_unit_pending(
        acme_repo: Path, env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fleet.store import open_store
    from fleet_pipelines.cli import main

    bare = bare_with_hook(acme_repo, tmp_path / "frozen.git", REFUSE_ALL)
    url = bare.as_uri()
    key = first_unit(url, capsys)
    assert main(["fix", url, "-c", CAMPAIGN, "--unit", key]) == 1
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if ln.startswith("# push_failed"))
    assert (f"push of fleet/{CAMPAIGN}/{key} to {url} failed: remote rejected (pre-receive "
            "hook declined): frozen: no pushes today") in line
    assert git(bare, "for-each-ref", "refs/heads/fleet/") == ""
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        result = latest_results(store.ledger, CAMPAIGN)[key]
        assert result.status == "push_failed" and result.status not in TERMINAL
        assert [e.payload["reason"] for e in store.ledger.events(kind="unit.push_failed")] == [
            result.detail]
    # the hook lifted, the same unit runs again and its branch reaches the remote
    (bare / "hooks" / "pre-receive").unlink()
    assert main(["fix", url, "-c", CAMPAIGN, "--unit", key, "--require-verified"]) == 0
    assert git(bare, "for-each-ref", "--format=%(refname)", "refs/heads/fleet/").split() == [
        f"refs/heads/fleet/{CAMPAIGN}/{key}"]


def test_a_refused_integration_push_integrates_nothing(
        acme_repo: Path, env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from assets._fleet import integrate
    from fleet_pipelines.cli import main
    from fleet_pipelines.resources import FleetSettings, SandboxResource, StoreResource

    bare = bare_with_hook(acme_repo, tmp_path / "acme.git", REFUSE_INTEGRATION)
    url = bare.as_uri()
    key = first_unit(url, capsys)
    assert main(["fix", url, "-c", CAMPAIGN, "--unit", key, "--require-verified"]) == 0
    main_before = git(bare, "rev-parse", "main")
    settings = FleetSettings.from_env({"FLEET_REPO": url, "FLEET_HOME": str(env),
                                       "FLEET_STORE_URL": f"sqlite:///{tmp_path / 'fleet.db'}"})
    repo = settings.checkout()
    store = StoreResource(url=settings.store_url, repo=settings.repository_key())

    def run() -> object:
        return integrate(CAMPAIGN, repo, env, settings.base_branch, store,
                         SandboxResource(backend="bwrap"))

    with pytest.raises(RemoteError) as info:
        run()
    message = str(info.value)
    assert "\n" not in message and message.startswith(
        f"push of fleet/{CAMPAIGN}/integration to {url} failed: remote rejected (pre-receive "
        "hook declined): integration branches are frozen")
    assert git(bare, "for-each-ref", "refs/heads/fleet/*/integration") == ""
    assert git(bare, "rev-parse", "main") == main_before
    assert store.ledger().events(kind="integration.finished") == []
    assert latest_results(store.ledger(), CAMPAIGN)[key].status == "verified"  # not lost

    (bare / "hooks" / "pre-receive").unlink()
    result = run()
    assert result.merged == (key,)  # type: ignore[attr-defined]
    assert git(bare, "rev-parse", f"fleet/{CAMPAIGN}/integration").strip() == (
        result.head)  # type: ignore[attr-defined]
    assert len(store.ledger().events(kind="integration.finished")) == 1


def test_two_integrations_at_once_one_wins_whole(
        acme_repo: Path, env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two workers integrate the same units at the same moment (both read the remote before
    either pushes: a barrier after their tests): one push wins, the other is refused in one
    line and records nothing; the remote's integration branch is the winner's whole result."""
    import threading

    from fleet.home import store_key
    from fleet.integrate import integrate, pytest_runner
    from fleet.store import open_store
    from fleet.store.repo_scope import scoped_store
    from fleet_pipelines.cli import main
    from fleet_pipelines.resources import FleetSettings
    from sandbox import select_sandbox

    bare = tmp_path / "acme.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(acme_repo), str(bare)], check=True)
    url = bare.as_uri()
    key = first_unit(url, capsys)
    assert main(["fix", url, "-c", CAMPAIGN, "--unit", key, "--require-verified"]) == 0
    tests = pytest_runner(select_sandbox("bwrap"))
    barrier = threading.Barrier(2, timeout=120)

    def run_tests(tree: Path) -> object:
        done = tests(tree)
        barrier.wait()  # both have read the remote's heads and built their branch
        return done

    outcomes: dict[str, object] = {}

    def worker(name: str) -> None:
        settings = FleetSettings.from_env({"FLEET_REPO": url, "FLEET_HOME": str(tmp_path / name),
                                           "FLEET_STORE_URL": f"sqlite:///{tmp_path / 'fleet.db'}"})
        repo = settings.checkout()
        with open_store(settings.store_url) as raw:
            # the repository's view, as `fleet fix` and a sweep's integration use it: its units'
            # fencing tokens are in the repository's lease namespace
            store = scoped_store(raw, store_key(Path(settings.home), repo))
            results = [r for r in latest_results(store.ledger, CAMPAIGN).values()
                       if r.status == "verified"]
            try:
                outcomes[name] = integrate(
                    repo, results, base_branch="main", branch=f"fleet/{CAMPAIGN}/integration",
                    leases=store.leases, ledger=store.ledger, run_tests=run_tests)  # type: ignore[arg-type]
            except RemoteError as exc:
                outcomes[name] = exc

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("w1", "w2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    won = [o for o in outcomes.values() if not isinstance(o, RemoteError)]
    lost = [o for o in outcomes.values() if isinstance(o, RemoteError)]
    assert len(won) == 1 and len(lost) == 1, outcomes
    message = str(lost[0])
    assert "\n" not in message and f"fleet/{CAMPAIGN}/integration" in message and url in message
    head = won[0].head  # type: ignore[attr-defined]
    assert git(bare, "rev-parse", f"fleet/{CAMPAIGN}/integration").strip() == head
    assert git(bare, "log", "--format=%s", f"main..{head}").splitlines() == [
        f"fleet({CAMPAIGN}): integrate unit {key}"]
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        assert len(store.ledger.events(kind="integration.finished")) == 1
