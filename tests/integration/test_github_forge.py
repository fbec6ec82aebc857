"""GitHubForge against FakeGitHub: the real PyGithub over real HTTP on 127.0.0.1, real
``git push`` into a bare repository that stands in for github.com's git side. Filing finding
issues is tested in test_github_forge_issues.py; the shared helpers are in _github_forge.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.errors import ConfigError, ForgeError, GitError
from fleet.forge.fake_github import FakeGitHub
from fleet.forge.github import (
    BODY_LIMIT,
    GitHubForge,
    GitHubForgeConfig,
    render_change_body,
)
from fleet.protocols import Forge
from fleet.types import ChangeRef
from tests.integration._github_forge import (  # noqa: F401  (the remote, fake, forge fixtures)
    REPO,
    TOKEN,
    commit_on,
    fake_fixture,
    finding,
    forge_fixture,
    git,
    make_forge,
    remote_fixture,
    unit_report,
)


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
