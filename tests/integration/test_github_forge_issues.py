"""GitHubForge's finding issues against FakeGitHub (real PyGithub over real HTTP on 127.0.0.1):
filed once per fingerprint, across clients, processes and racing filers; a pull request quoting
the marker is not the issue. The rest of GitHubForge's tests are in test_github_forge.py."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from fleet.forge.fake_github import FakeGitHub
from fleet.forge.github import GitHubForge
from tests.integration._github_forge import (  # noqa: F401  (the remote, fake, forge fixtures)
    REPO,
    ROOT,
    TOKEN,
    commit_on,
    fake_fixture,
    finding,
    forge_fixture,
    make_forge,
    remote_fixture,
)


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



def test_a_pull_request_quoting_a_marker_is_not_the_finding_issue(
    git_repo: Path, forge: GitHubForge
) -> None:
    commit_on(git_repo, "fleet/q", "j.txt", "x\n")
    marker = f"<!-- fleet-finding: {finding(3).fingerprint} -->"
    forge.publish(str(git_repo), "fleet/q", "t", f"fixes {marker}", labels=["fleet-finding"])
    assert forge.find_issue(finding(3).fingerprint) is None
    filed = forge.file_issue(finding(3), "t", "b")
    assert filed.created and filed.number == 2
