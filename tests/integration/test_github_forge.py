"""GitHubForge against FakeGitHub: the real PyGithub over real HTTP on 127.0.0.1, real
``git push`` into a bare repository that stands in for github.com's git side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.errors import ConfigError, ForgeError, GitError
from fleet.forge.fake_github import FakeGitHub
from fleet.forge.github import (
    BODY_LIMIT,
    GitHubForge,
    GitHubForgeConfig,
    UnitReport,
    render_change_body,
)
from fleet.protocols import Forge
from fleet.types import ChangeRef, Finding, Verdict, WorkUnit

REPO = "acme/shop"
TOKEN = "ghp_test_token_123"
ROOT = Path(__file__).resolve().parents[2]


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@fleet.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@fleet.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def commit_on(repo: Path, branch: str, name: str, text: str) -> str:
    git(repo, "checkout", "-q", "-B", branch, "main")
    (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"change {name}")
    git(repo, "checkout", "-q", "main")
    return git(repo, "rev-parse", branch)


@pytest.fixture
def remote(git_repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(git_repo, "push", "-q", str(bare), "main")
    return bare


@pytest.fixture
def fake(remote: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo(REPO, git_dir=remote)
        yield server


def make_forge(fake: FakeGitHub, remote: Path, **overrides: object) -> GitHubForge:
    settings: dict[str, object] = {"repo": REPO, "token": TOKEN, "base_url": fake.base_url,
                                   "push_url": str(remote), "throttle": False, "retries": 0}
    settings.update(overrides)
    return GitHubForge(GitHubForgeConfig(**settings))  # type: ignore[arg-type]


@pytest.fixture
def forge(fake: FakeGitHub, remote: Path) -> Iterator[GitHubForge]:
    with make_forge(fake, remote) as f:
        yield f


def finding(n: int, fingerprint: str | None = None) -> Finding:
    return Finding(fingerprint=fingerprint or f"fp{n:04d}" + "ab" * 8, campaign="retire-legacy",
                   rule="legacy-charge", symbol=f"billing/invoices.py::InvoiceService.m{n}",
                   path="billing/invoices.py", line=90 + n, col=17, start_byte=10 * n,
                   end_byte=10 * n + 5, snippet=f"legacy.charge(cid, {n})",
                   message="billing.legacy.charge is retired; use billing.payments.charge")


def unit_report(key: str, findings: tuple[Finding, ...], ledger: tuple[int, ...]) -> UnitReport:
    unit = WorkUnit(key=key, campaign="retire-legacy", base_commit="a" * 40,
                    write_set=tuple(f.symbol for f in findings), read_set=(),
                    findings=findings, rank=3, wave=1)
    verdicts = (Verdict("patch_applies", "accept", "applied cleanly to aaaaaaaaaaaa"),
                Verdict("impacted_tests", "accept", "12 passed in 0.8s | tests/test_invoices.py"),
                Verdict("reviewer", "reject", "unsure about the currency argument"))
    return UnitReport(unit, verdicts, ledger, diffstat=" billing/invoices.py | 4 ++--")


def test_forge_satisfies_the_protocol(forge: GitHubForge) -> None:
    assert isinstance(forge, Forge) and forge.name == "github"


def test_publish_pushes_the_branch_and_opens_a_pull_request(
    git_repo: Path, remote: Path, fake: FakeGitHub, forge: GitHubForge
) -> None:
    sha = commit_on(git_repo, "fleet/retire/u1", "a.txt", "one\n")
    ref = forge.publish(str(git_repo), "fleet/retire/u1", "Retire legacy charge", "body 1",
                        labels=["campaign:retire"])
    assert ref == ChangeRef("github", "fleet/retire/u1", 1, f"{fake.base_url}/{REPO}/pull/1")
    assert git(remote, "rev-parse", "refs/heads/fleet/retire/u1") == sha
    (pull,) = fake.issues(REPO, pulls=True)
    assert (pull["title"], pull["body"], pull["head"]["ref"], pull["base"]["ref"]) == (
        "Retire legacy charge", "body 1", "fleet/retire/u1", "main")
    assert pull["_labels"] == ["fleet", "campaign:retire"]


def test_publishing_again_updates_the_same_pull_request(
    git_repo: Path, remote: Path, fake: FakeGitHub, forge: GitHubForge
) -> None:
    commit_on(git_repo, "fleet/u2", "b.txt", "v1\n")
    first = forge.publish(str(git_repo), "fleet/u2", "v1", "first body")
    new_sha = commit_on(git_repo, "fleet/u2", "b.txt", "v2\n")  # rewritten branch: force push
    second = forge.publish(str(git_repo), "fleet/u2", "v2", "second body", labels=["extra"])
    assert second.number == first.number
    assert git(remote, "rev-parse", "refs/heads/fleet/u2") == new_sha
    (pull,) = fake.issues(REPO, pulls=True)
    assert (pull["title"], pull["body"], pull["_labels"]) == ("v2", "second body",
                                                              ["fleet", "extra"])
    # A third publish with nothing new changes nothing but the (idempotent) labels call.
    before = len(fake.requests)
    forge.publish(str(git_repo), "fleet/u2", "v2", "second body", labels=["extra"])
    assert [m for m, _ in fake.requests[before:]].count("PATCH") == 0


def test_status_follows_merge_and_close_and_a_closed_change_is_reopened(
    git_repo: Path, remote: Path, fake: FakeGitHub, forge: GitHubForge
) -> None:
    head = commit_on(git_repo, "fleet/u3", "c.txt", "merge me\n")
    merged = forge.publish(str(git_repo), "fleet/u3", "merge", "b")
    commit_on(git_repo, "fleet/u4", "d.txt", "close me\n")
    closed = forge.publish(str(git_repo), "fleet/u4", "close", "b")
    assert forge.status(merged) == forge.status(closed) == "open"
    merge_sha = fake.merge_pull(REPO, merged.number or 0)
    fake.set_state(REPO, closed.number or 0, "closed")
    assert forge.status(merged) == "merged" and forge.status(closed) == "closed"
    # the merge is a real merge commit on the remote's main, with the unit's commit as parent
    assert git(remote, "rev-parse", "main") == merge_sha
    assert git(remote, "rev-parse", "main^2") == head
    reopened = forge.publish(str(git_repo), "fleet/u4", "close (again)", "b")
    assert reopened.number == closed.number and forge.status(reopened) == "open"
    again = forge.publish(str(git_repo), "fleet/u3", "follow-up", "b")  # merged: a new PR
    assert again.number not in (merged.number, closed.number)


def test_a_closed_then_force_pushed_change_gets_a_new_pull_request(
    git_repo: Path, fake: FakeGitHub, forge: GitHubForge
) -> None:
    commit_on(git_repo, "fleet/u5", "h.txt", "v1\n")
    first = forge.publish(str(git_repo), "fleet/u5", "v1", "b")
    fake.set_state(REPO, first.number or 0, "closed")
    commit_on(git_repo, "fleet/u5", "h.txt", "v2\n")  # GitHub will not reopen this one
    second = forge.publish(str(git_repo), "fleet/u5", "v2", "b")
    assert second.number != first.number and forge.status(second) == "open"
    assert forge.status(first) == "closed"


def test_pull_request_body_lists_units_findings_gates_and_ledger_ids(
    git_repo: Path, fake: FakeGitHub, forge: GitHubForge
) -> None:
    reports = [unit_report("unit-aaa", (finding(1), finding(2)), (11, 12, 15)),
               unit_report("unit-bbb", (finding(3),), (16,))]
    commit_on(git_repo, "fleet/batch", "e.txt", "x\n")
    forge.publish_units(str(git_repo), "fleet/batch", "Batch", reports, summary="Nightly sweep.")
    body = fake.issues(REPO, pulls=True)[0]["body"]
    assert body.startswith("Nightly sweep.\n\n**2 work units, 3 findings.**")
    for expected in ("### Unit `unit-aaa`", "### Unit `unit-bbb`", "`billing/invoices.py:91`",
                     "`billing/invoices.py::InvoiceService.m3`", "fingerprint `fp0002abababab",
                     "| `patch_applies` | ✅ accept | applied cleanly",
                     "12 passed in 0.8s \\| tests/test_invoices.py",
                     "| `reviewer` | ❌ reject | unsure", "**Ledger events:** #11, #12, #15",
                     "**Ledger events:** #16", "gates 2/3 passed", "billing/invoices.py | 4"):
        assert expected in body, expected


def test_a_huge_body_is_cut_to_the_limit_and_names_the_rest() -> None:
    reports = [unit_report(f"unit-{i:03d}", tuple(finding(j) for j in range(40)), (i,))
               for i in range(60)]
    body = render_change_body(reports)
    assert len(body) <= BODY_LIMIT
    listed = [r.unit.key for r in reports if f"### Unit `{r.unit.key}`" in body]
    assert 0 < len(listed) < 60
    assert "`unit-059`" in body.split("_Body limit reached; further units:_")[1]


def test_a_finding_is_filed_once(fake: FakeGitHub, forge: GitHubForge, remote: Path) -> None:
    first = forge.file_issue(finding(1), "Retire legacy charge in m1", "Please fix.")
    again = forge.file_issue(finding(1), "Retire legacy charge in m1", "Please fix.")
    assert first.created and not again.created and first.number == again.number
    with make_forge(fake, remote) as fresh:  # a new client with an empty cache finds it too
        assert fresh.file_issue(finding(1), "t", "b").number == first.number
        assert fresh.find_issue(finding(2).fingerprint) is None
    (issue,) = fake.issues(REPO)
    assert issue["_labels"] == ["fleet-finding"]
    assert f"<!-- fleet-finding: {finding(1).fingerprint} -->" in issue["body"]
    assert "`billing/invoices.py:91:17` in `billing/invoices.py::InvoiceService.m1`" in (
        issue["body"])


def test_a_closed_finding_issue_is_not_filed_again(
    fake: FakeGitHub, forge: GitHubForge, remote: Path
) -> None:
    ref = forge.file_issue(finding(5), "t", "b")
    fake.set_state(REPO, ref.number, "closed")  # a human closed it as won't fix
    with make_forge(fake, remote) as next_sweep:  # a later sweep, with a cold cache
        again = next_sweep.file_issue(finding(5), "t", "b")
    assert (again.number, again.created) == (ref.number, False)
    assert len(fake.issues(REPO)) == 1


def test_issue_index_pages_through_many_issues(fake: FakeGitHub, remote: Path) -> None:
    with make_forge(fake, remote, per_page=2) as forge:
        refs = [forge.file_issue(finding(i), f"finding {i}", "b") for i in range(5)]
    with make_forge(fake, remote, per_page=2) as cold:
        assert [cold.file_issue(finding(i), "t", "b").number for i in range(5)] == [
            r.number for r in refs]
    pages = [p for m, p in fake.requests if m == "GET" and p.endswith("/issues")]
    assert len(pages) >= 3  # 5 issues at 2 per page were read through the Link header


FILE_SCRIPT = """
import json, sys
from fleet.forge.github import GitHubForge, GitHubForgeConfig
from fleet.types import Finding
cfg = GitHubForgeConfig(repo=sys.argv[1], token=sys.argv[2], base_url=sys.argv[3],
                        throttle=False, retries=0)
f = Finding(**json.loads(sys.argv[4]))
with GitHubForge(cfg) as forge:
    ref = forge.file_issue(f, "from another process", "body")
print(json.dumps({"number": ref.number, "created": ref.created}))
"""


def test_files_once_across_processes(fake: FakeGitHub, forge: GitHubForge) -> None:
    f = finding(7)
    mine = forge.file_issue(f, "t", "b")

    def other_process() -> dict[str, object]:
        out = subprocess.run(
            [sys.executable, "-c", FILE_SCRIPT, REPO, TOKEN, fake.base_url,
             json.dumps(f.__dict__)],
            cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
        return dict(json.loads(out.stdout))

    assert other_process() == {"number": mine.number, "created": False}
    assert len(fake.issues(REPO)) == 1


def test_concurrent_filers_converge_on_one_open_issue(fake: FakeGitHub, remote: Path) -> None:
    """Both filers see no issue, both create one (creation is slowed so they overlap); both
    then settle on the lower number and the later one is closed as a duplicate."""
    fake.latency[f"POST /repos/{REPO}/issues"] = 0.4
    forges = [make_forge(fake, remote) for _ in range(2)]
    barrier = threading.Barrier(2)
    results: list[object] = [None, None]

    def run(i: int) -> None:
        barrier.wait()
        results[i] = forges[i].file_issue(finding(9), "racy", "b")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for f in forges:
        f.close()
    numbers = {r.number for r in results}  # type: ignore[attr-defined]
    assert numbers == {1}
    assert sorted(r.created for r in results) == [False, True]  # type: ignore[attr-defined]
    issues = {i["number"]: i for i in fake.issues(REPO)}
    assert issues[1]["state"] == "open"
    assert issues[2]["state"] == "closed" and issues[2]["state_reason"] == "not_planned"
    assert ("POST", f"/repos/{REPO}/issues/2/comments") in fake.requests


def test_checks_read_the_combined_status_of_the_head(
    git_repo: Path, fake: FakeGitHub, forge: GitHubForge
) -> None:
    from github import Auth, Github

    head = commit_on(git_repo, "fleet/u9", "f.txt", "x\n")
    ref = forge.publish(str(git_repo), "fleet/u9", "t", "b")
    assert forge.checks(ref) is None
    ci = Github(auth=Auth.Token(TOKEN), base_url=fake.base_url, retry=0,
                seconds_between_requests=None, seconds_between_writes=None)
    try:
        commit = ci.get_repo(REPO).get_commit(head)
        commit.create_status("pending", context="ci/tests")
        assert forge.checks(ref) == "pending"
        commit.create_status("success", context="ci/tests")
        commit.create_status("success", context="ci/lint")
        assert forge.checks(ref) == "success"
        commit.create_status("failure", context="ci/lint")
        assert forge.checks(ref) == "failure"
    finally:
        ci.close()


def test_failures_are_forge_and_git_errors(
    git_repo: Path, remote: Path, fake: FakeGitHub, tmp_path: Path
) -> None:
    with make_forge(fake, remote, token="wrong-token") as bad, pytest.raises(
        ForgeError, match="HTTP 401 Bad credentials"
    ):
        bad.file_issue(finding(1), "t", "b")
    with make_forge(fake, remote, repo="acme/missing") as missing, pytest.raises(
        ForgeError, match="HTTP 404"
    ):
        missing.status(ChangeRef("github", "x", 1, ""))
    with make_forge(fake, remote) as forge, pytest.raises(
        GitError, match="refs/heads/no-such-branch"
    ):
        forge.publish(str(git_repo), "no-such-branch", "t", "b")
    commit_on(git_repo, "fleet/x", "g.txt", "x\n")
    with make_forge(fake, tmp_path / "nowhere.git") as unreachable, pytest.raises(
        GitError, match="git push"
    ):
        unreachable.publish(str(git_repo), "fleet/x", "t", "b")
    with make_forge(fake, remote, push_url="https://127.0.0.1:9/acme/shop.git") as https:
        with pytest.raises(GitError) as info:
            https.publish(str(git_repo), "fleet/x", "t", "b")
        assert TOKEN not in str(info.value)
    fake.add_repo("acme/nogit")  # a repository without a git side: the head must exist there
    with make_forge(fake, remote, repo="acme/nogit") as nogit:
        assert nogit.publish(str(git_repo), "fleet/x", "t", "b").number == 1
    with pytest.raises(ForgeError, match="owner/name"):
        GitHubForgeConfig(repo="not a repo", token="t")


def test_request_budget_per_operation(git_repo: Path, fake: FakeGitHub, remote: Path) -> None:
    """What each call costs against GitHub's rate limit (documented in docs/forge-github.md)."""

    def cost(action: object) -> list[str]:
        before = len(fake.requests)
        action()  # type: ignore[operator]
        return [f"{m} {p.removeprefix('/repos/' + REPO)}" for m, p in fake.requests[before:]]

    commit_on(git_repo, "fleet/b1", "i.txt", "x\n")
    with make_forge(fake, remote) as forge:
        assert cost(lambda: forge.publish(str(git_repo), "fleet/b1", "t", "b")) == [
            "GET ", "GET /pulls", "POST /pulls", "POST /issues/1/labels"]
        assert cost(lambda: forge.publish(str(git_repo), "fleet/b1", "t2", "b2")) == [
            "GET /pulls", "PATCH /pulls/1", "POST /issues/1/labels"]
        assert cost(lambda: forge.file_issue(finding(1), "t", "b")) == [
            "GET /issues", "POST /issues", "GET /issues"]
        assert cost(lambda: forge.file_issue(finding(1), "t", "b")) == []  # known: cached
        assert cost(lambda: forge.status(ChangeRef("github", "fleet/b1", 1, ""))) == [
            "GET /pulls/1"]
    with make_forge(fake, remote) as cold:
        assert cost(lambda: cold.file_issue(finding(1), "t", "b")) == ["GET ", "GET /issues"]


def test_config_from_environment() -> None:
    config = GitHubForgeConfig.from_env({"FLEET_GITHUB_REPO": "acme/shop", "GITHUB_TOKEN": "t",
                                         "FLEET_GITHUB_API_URL": "https://ghe.example/api/v3"})
    assert (config.repo, config.token, config.base_url, config.push_url) == (
        "acme/shop", "t", "https://ghe.example/api/v3", None)
    with pytest.raises(ConfigError, match="FLEET_GITHUB_REPO"):
        GitHubForgeConfig.from_env({"GITHUB_TOKEN": "t"})
    with pytest.raises(ConfigError, match="TOKEN"):
        GitHubForgeConfig.from_env({"FLEET_GITHUB_REPO": "acme/shop"})


def test_a_pull_request_quoting_a_marker_is_not_the_finding_issue(
    git_repo: Path, forge: GitHubForge
) -> None:
    commit_on(git_repo, "fleet/q", "j.txt", "x\n")
    marker = f"<!-- fleet-finding: {finding(3).fingerprint} -->"
    forge.publish(str(git_repo), "fleet/q", "t", f"fixes {marker}", labels=["fleet-finding"])
    assert forge.find_issue(finding(3).fingerprint) is None
    filed = forge.file_issue(finding(3), "t", "b")
    assert filed.created and filed.number == 2


def test_publishes_states_and_issues_are_ledgered(
    git_repo: Path, remote: Path, fake: FakeGitHub, tmp_path: Path
) -> None:
    from fleet.store import open_store

    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        forge = GitHubForge(GitHubForgeConfig(repo=REPO, token=TOKEN, base_url=fake.base_url,
                                              push_url=str(remote), throttle=False, retries=0),
                            ledger=store.ledger, actor="forge-test")
        with forge:
            head = commit_on(git_repo, "fleet/l1", "k.txt", "x\n")
            ref = forge.publish(str(git_repo), "fleet/l1", "t", "b", labels=["campaign:c"])
            fake.merge_pull(REPO, ref.number or 0)
            assert forge.status(ref) == "merged"
            forge.file_issue(finding(1), "t", "b")
            forge.file_issue(finding(1), "t", "b")  # known: not ledgered again
        (published,) = store.ledger.events(kind="change.published")
        assert published.payload["head"] == head and published.actor == "forge-test"
        assert published.payload["labels"] == ["fleet", "campaign:c"]
        (status,) = store.ledger.events(kind="change.status")
        assert status.payload["state"] == "merged"
        (filed,) = store.ledger.events(kind="issue.filed")
        assert filed.payload["fingerprint"] == finding(1).fingerprint
        assert filed.campaign == "retire-legacy"
        assert store.ledger.verify() == []


def test_check_runs_per_gate_on_the_head_and_a_merge_pinned_to_it(
    forge: GitHubForge, fake: FakeGitHub, git_repo: Path, remote: Path
) -> None:
    from fleet.forge.github import CheckReport

    head = commit_on(git_repo, "fleet/c/integration", "a.py", "x = 1\n")
    ref = forge.publish(str(git_repo), "fleet/c/integration", "fleet: c", "body")
    checks = [CheckReport("fleet/applies", "success", "applies: accepted all 1 unit(s)",
                          "| unit | verdict |"),
              CheckReport("fleet/impacted_tests", "failure", "impacted_tests: rejected 1",
                          "| unit | verdict |", "details")]
    urls = forge.report_checks(ref, head, checks)
    runs = fake.checks(REPO, head)
    assert len(urls) == len(runs) == 2
    assert {(r["name"], r["status"], r["conclusion"]) for r in runs} == {
        ("fleet/applies", "completed", "success"),
        ("fleet/impacted_tests", "completed", "failure")}
    assert runs[1]["output"]["text"] == "details"
    # read back through PyGithub's own Checks API listing of the commit
    listed = forge._repo().get_commit(head).get_check_runs()
    assert sorted(r.name for r in listed) == ["fleet/applies", "fleet/impacted_tests"]

    # a merge pinned to an older head is refused (the branch moved), as a value
    moved = commit_on(git_repo, "fleet/c/integration", "b.py", "y = 2\n")
    git(git_repo, "push", "-q", "-f", str(remote), "fleet/c/integration")
    refused = forge.merge(ref, head)
    assert not refused.merged and "HTTP 409" in refused.reason
    done = forge.merge(ref, moved)
    assert done.merged and done.sha
    assert forge.status(ref) == "merged"
    assert git(remote, "merge-base", "--is-ancestor", moved, "main") == ""
    assert not forge.merge(ref, moved).merged  # already merged: a value, not an error
    forge.reachable()
    with pytest.raises(ForgeError, match="HTTP 404"):
        make_forge(fake, remote, repo="acme/nope").reachable()
