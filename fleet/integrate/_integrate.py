"""Verified patches -> one integration branch on the latest base.

1. Order the patches by lock order (``(rank, unit key)``).
2. Refuse a patch whose fencing tokens are no longer current (its lease was lost and re-granted).
3. Merge each patch onto the growing result, file by file: untouched-by-us files take the patch's
   version; files both sides changed go through ``fleet.merge.merge3`` (line stage, then the
   structural stage); a conflict drops the patch (``merge_conflicts``).
4. Run the tests on the combination; if they fail, bisect for the first patch whose prefix fails,
   drop it as a ``semantic conflict`` (its unit is requeued on the new base), and repeat. When
   the suite fails on the base too (usual for third-party checkouts: a missing test dependency,
   a flaky test), "fails" means "breaks relative to the base" - a test passing on the base that
   fails, errors, is skipped or is gone, or a new failing test - judged on the per-test outcomes
   the runner reports (``SuiteRun.outcomes``); the result lists them in ``new_failures``.

In a worker's mirror of a remote (``fleet.forge.remote.checkout``) the unit branches come from
the remote: each is fetched, and a unit whose branch there is not its recorded commit is stale
(requeued). The integration branch is pushed there under a lease on what the remote held when
integration began, before ``integration.finished`` is recorded: a push that fails raises
``RemoteError`` and the remote keeps its previous integration branch whole. The hand-over's
checkpoint note goes to the remote's notes too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.backoff import backoff_s
from fleet.errors import GitError
from fleet.forge import remote as remotes
from fleet.forge._git import add_note, changed_paths, git, merge_file, notes, show
from fleet.forge.worktree import scratch_tree, worktree_lock
from fleet.merge import Clean, merge3
from fleet.protocols import LeaseStore, Ledger
from fleet.store.checkpoint import NOTES_REF, Checkpoint, parse_checkpoints
from fleet.types import LedgerEvent
from fleet.unit import UnitResult, requeue

__all__ = [
    "IntegrationResult",
    "StructuralMerge",
    "SuiteRun",
    "SuiteRunner",
    "fence_ok",
    "handover_checkpoints",
    "integrate",
]


@dataclass(frozen=True)
class SuiteRun:
    """One run of the test command on a tree."""

    passed: bool
    output: str
    wall_s: float
    outcomes: dict[str, str] | None = None  # test id -> passed/failed/error/skipped, if known


SuiteRunner = Callable[[Path], SuiteRun]
"""Runs the (impacted) tests in a checked-out tree; the tree is read-only to it by contract."""

StructuralMerge = Callable[[bytes, bytes, bytes, str], bytes | None]
"""``(base, ours, theirs, path) -> merged`` or ``None`` when unsure (a conflict); by default
:func:`fleet.merge.merge3`."""


@dataclass(frozen=True)
class IntegrationResult:
    """The integration branch and what happened to every patch offered to it."""

    branch: str
    base_commit: str
    head: str
    merged: tuple[str, ...]
    semantic_conflicts: tuple[str, ...] = ()
    merge_conflicts: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    tests: SuiteRun | None = None
    base_tests: SuiteRun | None = None  # run only when the combination's tests fail
    new_failures: tuple[str, ...] = ()  # what fails on the combination and not on the base
    test_runs: int = 0
    wall_s: float = 0.0
    commits: dict[str, str] = field(default_factory=dict)


def _apply(tree: Path, repo: Path, result: UnitResult,
           structural: StructuralMerge | None) -> bool:
    """Apply ``result``'s commit onto the worktree ``tree``; False (tree restored) on conflict."""
    assert result.commit is not None
    for path in changed_paths(repo, result.base_commit, result.commit):
        base = show(repo, result.base_commit, path)
        theirs = show(repo, result.commit, path)
        target = tree / path
        ours = target.read_bytes() if target.exists() else None
        if ours == base:
            merged = theirs
        elif theirs == base or ours == theirs:
            merged = ours
        elif base is None or ours is None or theirs is None:
            _restore(tree)  # added or deleted on both sides, differently
            return False
        else:
            merged = _merge(base, ours, theirs, path, structural)
            if merged is None:
                _restore(tree)
                return False
        if merged is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(merged)
    return True


def _merge(base: bytes, ours: bytes, theirs: bytes, path: str,
           structural: StructuralMerge | None) -> bytes | None:
    """The structural merge of :mod:`fleet.merge` (line stage first); ``structural`` overrides
    it. Undecodable files get git's line merge only."""
    if structural is not None:
        return structural(base, ours, theirs, path)
    try:
        texts = base.decode(), ours.decode(), theirs.decode()
    except UnicodeDecodeError:
        return merge_file(base, ours, theirs)
    result = merge3(*texts, path)
    return result.text.encode() if isinstance(result, Clean) else None


def _restore(tree: Path) -> None:
    git(tree, "reset", "-q", "--hard")
    git(tree, "clean", "-q", "-fd")


def _build(tree: Path, repo: Path, base: str, patches: Sequence[UnitResult],
           structural: StructuralMerge | None) -> tuple[list[UnitResult], list[UnitResult],
                                                         dict[str, str]]:
    """Reset ``tree`` to ``base`` and apply ``patches`` in order, one commit each."""
    git(tree, "reset", "-q", "--hard", base)
    git(tree, "clean", "-q", "-fd")
    applied: list[UnitResult] = []
    conflicts: list[UnitResult] = []
    commits: dict[str, str] = {}
    for patch in patches:
        if not _apply(tree, repo, patch, structural):
            conflicts.append(patch)
            continue
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "--no-verify", "--allow-empty", "-m",
            f"fleet({patch.campaign}): integrate unit {patch.unit}")
        commits[patch.unit] = git(tree, "rev-parse", "HEAD").strip()
        applied.append(patch)
    return applied, conflicts, commits


def fence_ok(leases: LeaseStore, result: UnitResult) -> bool:
    """Every write grant of the unit still carries the current fencing token."""
    return all(leases.check_fence(g.symbol, g.token) for g in result.grants if g.mode == "write")


def integrate(
    repo: Path,
    patches: Sequence[UnitResult],
    *,
    base_branch: str,
    branch: str,
    leases: LeaseStore,
    ledger: Ledger,
    run_tests: SuiteRunner,
    structural: StructuralMerge | None = None,
    actor: str = "integrator",
) -> IntegrationResult:
    """Merge the verified ``patches`` onto ``base_branch`` into ``branch`` (created or moved).

    Never modifies the user's checkout: the work happens in a scratch worktree. Returns which
    units were merged, dropped as semantic conflicts (requeued), merge conflicts (requeued) or
    stale (fencing token lost; requeued). Raises ``GitError`` for git faults.
    """
    started = time.perf_counter()
    repo = repo.resolve()
    base = git(repo, "rev-parse", f"refs/heads/{base_branch}").strip()
    campaign = patches[0].campaign if patches else None
    ordered = sorted((p for p in patches if p.status == "verified" and p.commit),
                     key=lambda p: (p.rank, p.unit))
    stale = [p for p in ordered if not fence_ok(leases, p)]
    for p in stale:
        ledger.append("integration.stale", {"reason": "fencing token no longer current"},
                      unit=p.unit, campaign=p.campaign, actor=actor)
        requeue(ledger, p.unit, p.campaign, "stale fencing token", actor)
    remote = remotes.push_remote(repo)
    candidates = [p for p in ordered if p not in stale]
    if remote is not None:
        candidates, moved, published = _from_remote(repo, remote, candidates, branch)
        for p in moved:
            ledger.append("integration.stale", {"reason": "its branch on the remote is not its "
                          f"commit {p.commit}"}, unit=p.unit, campaign=p.campaign, actor=actor)
            requeue(ledger, p.unit, p.campaign, "branch on the remote moved", actor)
        stale += moved

    runs = 0
    semantic: list[UnitResult] = []
    base_run: SuiteRun | None = None
    # The merge tree is a registered worktree (forge.worktree): created and removed under the
    # worktree lock that units take, collected by `fleet gc` and the next run after a kill -9.
    with scratch_tree(repo, "integrate", base) as tree:
        applied, conflicts, commits = _build(tree, repo, base, candidates, structural)
        tests = run_tests(tree) if applied else None
        runs += 1 if applied else 0
        if tests is not None and not tests.passed:
            # A third-party suite often fails on the base already (a missing dependency, a flaky
            # test): then only what breaks relative to the base is the patches' doing.
            _build(tree, repo, base, [], structural)
            base_run = run_tests(tree)
            runs += 1
            applied, conflicts, commits = _build(tree, repo, base, candidates, structural)
        while tests is not None and _broken(tests, base_run) and applied:
            culprit, bisect_runs = _bisect(tree, repo, base, applied, structural, run_tests,
                                           base_run)
            runs += bisect_runs
            if culprit is None:
                break  # nothing to blame on a patch
            semantic.append(culprit)
            ledger.append("integration.semantic_conflict",
                          {"reason": "tests fail on the combination",
                           "output": tests.output[-4000:]},
                          unit=culprit.unit, campaign=culprit.campaign, actor=actor)
            requeue(ledger, culprit.unit, culprit.campaign, "semantic conflict", actor)
            remaining = [p for p in applied if p is not culprit]
            applied, more, commits = _build(tree, repo, base, remaining, structural)
            conflicts += more
            tests = run_tests(tree) if applied else None
            runs += 1 if applied else 0
        for p in conflicts:
            ledger.append("integration.merge_conflict", {"reason": "patches conflict"},
                          unit=p.unit, campaign=p.campaign, actor=actor)
            requeue(ledger, p.unit, p.campaign, "merge conflict", actor)
        head = git(tree, "rev-parse", "HEAD").strip()
        if remote is not None:
            _push_branch(repo, remote, branch, published, head)
        with worktree_lock(repo):  # `branch -f` lists the worktrees (forge.worktree)
            git(repo, "branch", "-f", branch, head)
    outcome = IntegrationResult(
        branch=branch, base_commit=base, head=head,
        merged=tuple(p.unit for p in applied),
        semantic_conflicts=tuple(p.unit for p in semantic),
        merge_conflicts=tuple(p.unit for p in conflicts),
        stale=tuple(p.unit for p in stale),
        tests=tests, base_tests=base_run,
        new_failures=tuple(_new_failures(tests, base_run)) if tests is not None else (),
        test_runs=runs, wall_s=time.perf_counter() - started, commits=commits,
    )
    finished = ledger.append("integration.finished", {
        "branch": branch, "base": base, "head": head, "merged": list(outcome.merged),
        "semantic_conflicts": list(outcome.semantic_conflicts),
        "merge_conflicts": list(outcome.merge_conflicts), "stale": list(outcome.stale),
        "tests_passed": None if tests is None else tests.passed, "test_runs": runs,
        "base_tests_passed": None if base_run is None else base_run.passed,
        "new_failures": list(outcome.new_failures),
        # 0 when pytest collected nothing: "passed" then proves nothing (no self-merge on it)
        "tests_collected": None if tests is None or tests.outcomes is None
        else len(tests.outcomes),
    }, campaign=campaign, actor=actor)
    if remote is not None:
        text = Checkpoint(finished.seq, finished.hash).text()
        remotes.push_notes(repo, NOTES_REF, head, text, remote)
    else:
        _checkpoint(repo, head, finished)
    return outcome


def _from_remote(repo: Path, remote: str, patches: list[UnitResult], branch: str
                 ) -> tuple[list[UnitResult], list[UnitResult], str | None]:
    """The patches whose unit branch on ``remote`` is their commit (fetched into the mirror),
    the others, and the remote's integration ``branch`` now (``None``: absent)."""
    names = [p.branch for p in patches if p.branch]
    heads = remotes.remote_heads(repo, [*names, branch], remote)
    here = [p for p in patches if p.branch and heads.get(p.branch) == p.commit]
    remotes.fetch(repo, [p.branch for p in here if p.branch], remote)
    return here, [p for p in patches if p not in here], heads.get(branch)


def _push_branch(repo: Path, remote: str, branch: str, expect: str | None, head: str) -> None:
    """The integration branch onto the remote, or ``RemoteError`` (nothing moved there)."""
    pushed = remotes.push(repo, branch, expect, commit=head, remote=remote)
    if isinstance(pushed, remotes.Refused):
        raise remotes.RemoteError(
            f"integration branch {branch} not pushed to {remotes.remote_url(repo, remote)}: "
            f"{pushed.reason} (another integration ran at the same time); nothing integrated")


def _checkpoint(repo: Path, head: str, finished: LedgerEvent) -> None:
    """The hand-over's ledger checkpoint, outside the database: a git note on the integration
    branch's commit (``refs/notes/fleet-ledger``), which ``fleet ledger verify`` holds the
    ledger against (:mod:`fleet.store.checkpoint`). Two integrations noting at once race on the
    notes ref: the loser retries."""
    text = Checkpoint(finished.seq, finished.hash).text()
    for attempt in range(5):
        try:
            add_note(repo, NOTES_REF, head, text)
            return
        except GitError:
            if attempt == 4:
                raise
            time.sleep(backoff_s(attempt, 0.05, 0.4, "equal"))


def handover_checkpoints(repo: Path) -> list[Checkpoint]:
    """The ledger checkpoints the hand-overs into ``repo`` left (git notes under
    ``refs/notes/fleet-ledger``), oldest seq first; none when ``repo`` has no such notes."""
    found = [
        c
        for commit, text in notes(repo, NOTES_REF)
        for c in parse_checkpoints(text, f"hand-over {commit[:12]}")
    ]
    return sorted(found, key=lambda c: c.seq)


def _new_failures(run: SuiteRun, base_run: SuiteRun | None) -> list[str]:
    """What ``run`` breaks relative to the base: a test passing there that fails, errors, is
    skipped or is gone here, or a new test that fails. Without a base run or per-test outcomes:
    everything, when ``run`` failed."""
    if run.passed:
        return []
    if base_run is None or base_run.passed or base_run.outcomes is None or run.outcomes is None:
        return ["the test suite fails"]
    from fleet.verify.evidence import compare_runs
    from fleet.verify.execution import PytestRun

    return compare_runs(PytestRun(outcomes=dict(base_run.outcomes), reported=True),
                        PytestRun(outcomes=dict(run.outcomes), reported=True))


def _broken(run: SuiteRun, base_run: SuiteRun | None) -> bool:
    return bool(_new_failures(run, base_run))


def _bisect(tree: Path, repo: Path, base: str, applied: list[UnitResult],
            structural: StructuralMerge | None, run_tests: SuiteRunner,
            base_run: SuiteRun | None = None) -> tuple[UnitResult | None, int]:
    """The first patch whose prefix breaks the tests (the full list is known to), judged
    against ``base_run`` when the base fails on its own."""
    runs = 0

    def fails(k: int) -> bool:
        nonlocal runs
        _build(tree, repo, base, applied[:k], structural)
        runs += 1
        return _broken(run_tests(tree), base_run)

    if base_run is None and fails(0):  # with a base run, the base is the reference
        return None, runs
    lo, hi = 0, len(applied)  # prefix lo passes, prefix hi fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    return applied[hi - 1], runs
