"""What tests/integration/test_github_forge*.py share: the fake repository's name and token, git
helpers, a GitHubForge on a FakeGitHub, findings and unit reports, and the ``remote`` (a bare
repository standing in for github.com's git side), ``fake`` and ``forge`` fixtures (a test file
imports the three ``*_fixture`` functions to use them)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.forge.fake_github import FakeGitHub
from fleet.forge.github import GitHubForge, GitHubForgeConfig, UnitReport
from fleet.types import Finding, Verdict, WorkUnit

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


@pytest.fixture(name="remote")
def remote_fixture(git_repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(git_repo, "push", "-q", str(bare), "main")
    return bare


@pytest.fixture(name="fake")
def fake_fixture(remote: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo(REPO, git_dir=remote)
        yield server


def make_forge(fake: FakeGitHub, remote: Path, **overrides: object) -> GitHubForge:
    settings: dict[str, object] = {"repo": REPO, "token": TOKEN, "base_url": fake.base_url,
                                   "push_url": str(remote), "throttle": False, "retries": 0}
    settings.update(overrides)
    return GitHubForge(GitHubForgeConfig(**settings))  # type: ignore[arg-type]


@pytest.fixture(name="forge")
def forge_fixture(fake: FakeGitHub, remote: Path) -> Iterator[GitHubForge]:
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
