"""Issue 17, defect 4: sites that are not a call of the qualified name. A reference to the
callable (``_UTCNOW = datetime.datetime.utcnow``) is a site, and so is each call of that alias
(``_UTCNOW()``); methods on models imported through a package's re-exports are found."""

from __future__ import annotations

from pathlib import Path

from fleet.campaigns.spec import load_campaign
from fleet.plan import plan_campaign
from tests.conftest import commit_files

CLOCK = '''import datetime

_UTCNOW = datetime.datetime.utcnow


def stamp():
    return _UTCNOW()


def local():
    _UTCNOW = str  # a local of the same name is no alias use
    return _UTCNOW()


def callback(run):
    return run(datetime.datetime.utcnow)
'''
USER = "from pydantic import BaseModel\n\n\nclass User(BaseModel):\n    name: str\n"
VIEWS = '''from app import User
from app import models


def load(data):
    return User.parse_obj(data)


def load_qualified(data):
    return models.User.parse_obj(data)
'''


def _found(repo: Path, campaign: str) -> list[tuple[str, int, str]]:
    plan = plan_campaign(repo, load_campaign(campaign))
    return sorted((f.path, f.line, f.snippet) for u in plan.units for f in u.findings)


def test_a_reference_to_utcnow_and_the_calls_of_its_alias_are_sites(git_repo: Path) -> None:
    commit_files(git_repo, {"clock.py": CLOCK}, "clock")
    assert _found(git_repo, "datetime-utcnow") == [
        ("clock.py", 3, "datetime.datetime.utcnow"),
        ("clock.py", 7, "_UTCNOW()"),
        ("clock.py", 16, "datetime.datetime.utcnow"),
    ]


def test_model_methods_through_a_packages_re_exports(git_repo: Path) -> None:
    commit_files(git_repo, {
        "app/models/user.py": USER,
        "app/models/__init__.py": 'from .user import User\n\n__all__ = ["User"]\n',
        "app/__init__.py": "from .models import User\n",
        "views.py": VIEWS,
    }, "models re-exported")
    assert _found(git_repo, "pydantic-v2") == [
        ("views.py", 6, "User.parse_obj(data)"),
        ("views.py", 10, "models.User.parse_obj(data)"),
    ]
