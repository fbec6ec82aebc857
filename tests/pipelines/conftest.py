"""Fixtures of the pipeline tests: a small real repository with tests, a real SQLite store and
a real bubblewrap sandbox."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.store import Store, open_store
from tests.conftest import git

CALC_FILES = {
    "calc/__init__.py": "",
    "calc/rates.py": "def rate():\n    return 2\n",
    "calc/fees.py": "def fee():\n    return 3\n\n\ndef waiver():\n    return 0\n",
    "calc/names.py": '"""Names."""\n\nNAME = "calc"\n',
    "tests/test_calc.py": (
        "from calc.fees import fee, waiver\nfrom calc.rates import rate\n\n\n"
        "def test_total_stays_small():\n    assert rate() + fee() - waiver() < 10\n"
    ),
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as s:
        yield s


@pytest.fixture
def calc_repo(git_repo: Path) -> Path:
    """A git repository with a ``calc`` package and its one test, on ``main``."""
    for rel, text in CALC_FILES.items():
        (git_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (git_repo / rel).write_text(text)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "calc")
    return git_repo


@pytest.fixture
def bwrap() -> object:
    """The bubblewrap sandbox (fast and real); skipped only where bwrap is not installed."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    from sandbox import make_sandbox

    return make_sandbox("bwrap")
