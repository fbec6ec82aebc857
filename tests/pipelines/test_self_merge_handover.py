"""The hand-over step with a ``self_merge`` campaign, on real git and a real store: it moves the
base branch only when the combination passed, never over a checkout's uncommitted changes, and
its ledger event says what moved (the checkout's files, or the ref only) or why nothing did."""

from __future__ import annotations

from pathlib import Path

from assets._fleet import publish
from fleet.campaigns.spec import load_campaign
from fleet_pipelines.resources import ForgeResource, StoreResource
from tests.conftest import git

CAMPAIGN = "unittest-aliases"  # autonomy: self_merge
BRANCH = f"fleet/{CAMPAIGN}/integration"


def _integrated(repo: Path, store: StoreResource, tests_passed: bool | None = True,
                base_tests_passed: bool | None = None) -> str:
    """An integration branch one commit ahead of main, and its ``integration.finished``."""
    base = git(repo, "rev-parse", "main").strip()
    tree = repo.parent / "integration-wt"
    git(repo, "worktree", "add", "-q", "-b", BRANCH, str(tree), "main")
    (tree / "README.md").write_text("integrated\n")
    git(tree, "commit", "-q", "-am", "integrated")
    head = git(tree, "rev-parse", "HEAD").strip()
    git(repo, "worktree", "remove", str(tree))
    store.ledger().append("integration.finished", {
        "branch": BRANCH, "base": base, "head": head, "merged": ["u1"],
        "semantic_conflicts": [], "merge_conflicts": [], "stale": [],
        "tests_passed": tests_passed, "test_runs": 1, "base_tests_passed": base_tests_passed,
        "new_failures": []}, campaign=CAMPAIGN, actor="integrator")
    return head


def _store(tmp_path: Path) -> StoreResource:
    return StoreResource(url=f"sqlite:///{tmp_path / 'fleet.db'}")


def _last_event(store: StoreResource) -> dict[str, object]:
    return store.ledger().events(kind="change.self_merge", campaign=CAMPAIGN)[-1].payload


def test_refuses_over_uncommitted_changes_and_keeps_the_branch(
    git_repo: Path, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    head = _integrated(git_repo, store)
    before = git(git_repo, "rev-parse", "main").strip()
    (git_repo / "README.md").write_text("my local edit\n")

    done = publish(load_campaign(CAMPAIGN), git_repo, "main", store, ForgeResource())

    assert done is not None and done.self_merge is not None and not done.self_merge.merged
    assert git(git_repo, "rev-parse", "main").strip() == before
    assert (git_repo / "README.md").read_text() == "my local edit\n"
    assert git(git_repo, "rev-parse", BRANCH).strip() == head
    event = _last_event(store)
    assert event["merged"] is False and event["checkout"] == str(git_repo)
    assert event["message"] == (f"not merged: {git_repo} has local changes on main; "
                                f"the change stays on {BRANCH}")
    assert done.self_merge_message == event["message"]


def test_fast_forwards_a_clean_checkout_and_says_so(git_repo: Path, tmp_path: Path) -> None:
    store = _store(tmp_path)
    head = _integrated(git_repo, store)

    done = publish(load_campaign(CAMPAIGN), git_repo, "main", store, ForgeResource())

    assert done is not None and done.self_merge is not None and done.self_merge.merged
    assert git(git_repo, "rev-parse", "main").strip() == head
    assert (git_repo / "README.md").read_text() == "integrated\n"
    assert git(git_repo, "status", "--porcelain") == ""
    assert _last_event(store)["message"] == (
        f"fast-forwarded main to {head[:10]}; its checkout {git_repo} was updated too "
        f"(git merge --ff-only)")


def test_moves_only_the_ref_when_the_base_is_not_checked_out(
    git_repo: Path, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    head = _integrated(git_repo, store)
    git(git_repo, "checkout", "-q", "-b", "work")
    (git_repo / "README.md").write_text("work in progress\n")

    done = publish(load_campaign(CAMPAIGN), git_repo, "main", store, ForgeResource())

    assert done is not None and done.self_merge is not None and done.self_merge.merged
    assert git(git_repo, "rev-parse", "main").strip() == head
    assert (git_repo / "README.md").read_text() == "work in progress\n"
    assert git(git_repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "work"
    assert _last_event(store)["message"] == (
        f"fast-forwarded main to {head[:10]} (ref only: main is not checked out, "
        f"no files changed)")


def test_no_merge_when_the_combination_fails_even_if_the_base_does(
    git_repo: Path, tmp_path: Path
) -> None:
    store = _store(tmp_path)
    _integrated(git_repo, store, tests_passed=False, base_tests_passed=False)
    before = git(git_repo, "rev-parse", "main").strip()

    done = publish(load_campaign(CAMPAIGN), git_repo, "main", store, ForgeResource())

    assert done is not None and done.self_merge is not None and not done.self_merge.merged
    assert git(git_repo, "rev-parse", "main").strip() == before
    assert _last_event(store)["message"] == (
        "not merged: the combination's tests fail (no new failure: the base fails on its "
        f"own); the change stays on {BRANCH}")


def test_review_required_campaigns_never_move_the_base(git_repo: Path, tmp_path: Path) -> None:
    store = _store(tmp_path)
    _integrated(git_repo, store)
    store.ledger().append("integration.finished", {
        "branch": "fleet/datetime-utcnow/integration", "base": "x", "head": "y",
        "merged": ["u2"], "tests_passed": True}, campaign="datetime-utcnow", actor="integrator")
    git(git_repo, "branch", "fleet/datetime-utcnow/integration", BRANCH)
    before = git(git_repo, "rev-parse", "main").strip()

    done = publish(load_campaign("datetime-utcnow"), git_repo, "main", store, ForgeResource())

    assert done is not None and done.self_merge is None
    assert git(git_repo, "rev-parse", "main").strip() == before
    assert store.ledger().events(kind="change.self_merge", campaign="datetime-utcnow") == []
