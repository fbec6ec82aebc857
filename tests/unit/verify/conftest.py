"""Small real git repositories and patches made with real ``git diff`` for the gate tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git

LIB = '''"""A small library."""

import subprocess


class Account:
    def deposit(self, amount):
        self.balance = getattr(self, "balance", 0) + amount
        return self.balance

    def withdraw(self, amount):
        self.balance = getattr(self, "balance", 0) - amount
        return self.balance


class Accountant:
    pass


def total(values):
    return sum(values)


def run_report(name):
    return subprocess.run(["echo", name], capture_output=True, text=True).stdout
'''
TESTS = '''from lib import Account, total


def test_deposit():
    assert Account().deposit(5) == 5


def test_total():
    assert total([1, 2, 3]) == 6
    assert total([]) == 0


class TestWithdraw:
    def test_withdraw(self):
        assert Account().withdraw(2) == -2
'''


def edit_diff(repo: Path, rel: str, text: str) -> str:
    """``git diff HEAD`` of ``rel`` rewritten as ``text`` in ``repo``, the file restored."""
    (repo / rel).write_text(text)
    diff = git(repo, "diff", "HEAD")
    git(repo, "checkout", "-q", "--", rel)
    return diff


@pytest.fixture
def lib_repo(git_repo: Path) -> Path:
    (git_repo / "lib.py").write_text(LIB)
    (git_repo / "tests").mkdir()
    (git_repo / "tests" / "test_lib.py").write_text(TESTS)
    (git_repo / "conftest.py").write_text("")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "lib")
    return git_repo


MakePatch = Callable[[dict[str, str | None]], str]


@pytest.fixture
def make_patch(lib_repo: Path) -> MakePatch:
    """Write the given files (None deletes), return ``git diff HEAD``, restore the tree."""

    def make(changes: dict[str, str | None]) -> str:
        for path, text in changes.items():
            target = lib_repo / path
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        git(lib_repo, "add", "-A")
        diff = git(lib_repo, "diff", "--cached", "HEAD")
        git(lib_repo, "reset", "-q", "--hard", "HEAD")
        return diff

    return make


@pytest.fixture
def bwrap_sandbox() -> object:
    from sandbox import SandboxUnavailable, select_sandbox

    try:
        return select_sandbox("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap does not work here: {exc}")
