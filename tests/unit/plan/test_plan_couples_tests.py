"""``plan: {coupled: file+tests}`` (the datetime-utcnow campaign's): a test file's findings go
with those of the modules it imports or names. Found on itsdangerous 0.24: the library's
``utcfromtimestamp`` and its tests' ``utcfromtimestamp`` were two units; each alone mixed aware
and naive datetimes and failed the 89 tests, together they pass."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fleet.campaigns.spec import PlanSettings, load_campaign, parse_campaign
from fleet.errors import ConfigError
from fleet.plan import plan_campaign
from tests.conftest import commit_files

FILES = {
    "pkg/__init__.py": "",
    "pkg/stamps.py": "from datetime import datetime\n\n\ndef to_dt(ts):\n"
                     "    return datetime.utcfromtimestamp(ts)\n",
    "pkg/clock.py": "import datetime\n\n\ndef now():\n    return datetime.datetime.utcnow()\n",
    "tests/test_stamps.py": "from datetime import datetime\n\nfrom pkg.stamps import to_dt\n\n\n"
                            "def test_to_dt():\n"
                            "    assert to_dt(0) == datetime.utcfromtimestamp(0)\n",
    "tests/test_clock.py": "import datetime\n\nimport pkg.clock\n\n\ndef test_now():\n"
                           "    assert pkg.clock.now() <= datetime.datetime.utcnow()\n",
    "tests/test_alone.py": "import datetime\n\n\ndef test_alone():\n"
                           "    assert datetime.datetime.utcnow()\n",
}


def _repo(root: Path) -> Path:
    return commit_files(root, FILES, "stamps")


def _groups(repo: Path, coupled: str) -> list[list[str]]:
    campaign = load_campaign("datetime-utcnow")
    campaign = dataclasses.replace(campaign, plan=dataclasses.replace(campaign.plan,
                                                                      coupled=coupled))
    plan = plan_campaign(repo, campaign)
    assert len(plan.findings) == 5
    return sorted(sorted(u.paths) for u in plan.units)


def test_a_test_file_goes_with_the_modules_it_imports_or_names(git_repo: Path) -> None:
    repo = _repo(git_repo)
    assert load_campaign("datetime-utcnow").plan.coupled == "file+tests"
    assert _groups(repo, "file+tests") == [
        ["pkg/clock.py", "tests/test_clock.py"],    # `import pkg.clock`: named by dotted name
        ["pkg/stamps.py", "tests/test_stamps.py"],  # `from pkg.stamps import to_dt`
        ["tests/test_alone.py"],
    ]
    assert _groups(repo, "file") == [["pkg/clock.py"], ["pkg/stamps.py"], ["tests/test_alone.py"],
                                     ["tests/test_clock.py"], ["tests/test_stamps.py"]]


def test_the_spec_accepts_file_plus_tests_and_names_every_choice() -> None:
    text = ("name: x\ndescription: d\nmatchers: [{rule: r, call: [a.b], message: m}]\n"
            "fix: {prompt: p}\nplan: {coupled: %s}\n")
    assert parse_campaign(text % "file+tests").plan == PlanSettings(coupled="file+tests")
    with pytest.raises(ConfigError, match="none, file, file\\+tests, connected, all"):
        parse_campaign(text % "tests")
