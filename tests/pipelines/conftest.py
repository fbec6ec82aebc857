"""Fixtures of the pipeline tests: a small real repository with tests (the SQLite store and the
bubblewrap sandbox come from the root conftest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import commit_files

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
def calc_repo(git_repo: Path) -> Path:
    """A git repository with a ``calc`` package and its one test, on ``main``."""
    return commit_files(git_repo, CALC_FILES, "calc")
