"""Matcher cases met on third-party code (second round):

- WebOb 1.4 ``tests/test_response.py``: a test function's own ``import datetime`` while another
  function did ``from datetime import datetime``: its ``datetime.datetime.utcnow()`` is a site;
- Paste 2.0.3 ``paste/evalexception/middleware.py``: ``item.json()`` in a file with no Pydantic
  at all is no ``.json()`` of a model;
- fastapi-utils 0.2.1 ``api_settings.py``: ``class Config`` of a ``BaseSettings`` subclass (the
  codemod leaves it: pydantic-settings spells it ``SettingsConfigDict``) is not reported, while a
  ``BaseModel`` subclass's, also through a repository base class, is.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from libcst.codemod import TransformSuccess

from fleet.campaigns.codemods import apply_codemod
from fleet.campaigns.matchers import find_findings
from fleet.campaigns.spec import load_campaign
from fleet.graph import index

WEBOB = """\
def test_set_cookie_expires_is_datetime():
    from datetime import datetime, timedelta
    return datetime.now() + timedelta(days=1)


def test_set_cookie_expires_is_not_None_and_max_age_is_None():
    import datetime
    then = datetime.datetime.utcnow() + datetime.timedelta(days=1)
    return then
"""


def put(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def test_function_local_import_site_is_found_and_fixed(tmp_path: Path) -> None:
    put(tmp_path, {"tests/test_response.py": WEBOB})
    campaign = load_campaign("datetime-utcnow")
    findings = find_findings(index(tmp_path), campaign)
    assert [(f.path, f.line, f.snippet) for f in findings] == [
        ("tests/test_response.py", 8, "datetime.datetime.utcnow()")]
    result = apply_codemod("datetime-utcnow", WEBOB, {}, None, "tests/test_response.py")
    assert isinstance(result, TransformSuccess)
    assert "datetime.datetime.utcnow()" not in result.code
    (tmp_path / "tests/test_response.py").write_text(result.code)
    assert find_findings(index(tmp_path), campaign) == []


MODELS = """\
from pydantic import BaseModel, BaseSettings


class User(BaseModel):
    name: str

    class Config:
        orm_mode = True


class Admin(User):
    class Config:
        extra = "forbid"


class AppSettings(BaseSettings):
    debug: bool = False

    class Config:
        env_prefix = "app_"


class Plain:
    class Config:
        verbose = True
"""

USE = """\
from models import User


class Page:
    def json(self):
        return "{}"


def handler(body):
    return body.dict()


def typed():
    user = User(name="x")
    return user.json()


def page():
    p = Page()
    return p.json()


def load(raw):
    return User.parse_obj(raw)
"""

PASTE = """\
class Thing:
    pass


def show(item, raw):
    Thing.parse_obj(raw)
    return item.json()
"""


def test_pydantic_matchers_need_a_model(tmp_path: Path) -> None:
    put(tmp_path, {"models.py": MODELS, "use.py": USE, "paste_like.py": PASTE})
    campaign = load_campaign("pydantic-v2")
    findings = find_findings(index(tmp_path), campaign)
    assert [(f.rule, f.symbol, f.snippet.split("\n")[0]) for f in findings] == [
        ("v1-config-class", "models.py::User.Config", "class Config:"),
        ("v1-config-class", "models.py::Admin.Config", "class Config:"),
        ("v1-model-dump", "use.py::handler", "body.dict()"),  # untyped, in a file using models
        ("v1-model-dump", "use.py::typed", "user.json()"),
        ("v1-model-method", "use.py::load", "User.parse_obj(raw)"),
    ]
    # the codemod converts what was reported and leaves the BaseSettings Config alone
    result = apply_codemod("pydantic-v2", MODELS, {"v1_modules": ["pydantic.v1"]}, None,
                           "models.py")
    assert isinstance(result, TransformSuccess)
    assert "model_config = ConfigDict(from_attributes=True)" in result.code
    assert 'class Config:\n        env_prefix = "app_"' in result.code
    (tmp_path / "models.py").write_text(result.code)
    after = find_findings(index(tmp_path), campaign)
    assert "v1-config-class" not in {f.rule for f in after}


FREEZEGUN = """\
import datetime

real_datetime = datetime.datetime
twice = datetime.datetime
twice = None


class FakeDatetime(real_datetime):
    @classmethod
    def utcnow(cls):
        return real_datetime.utcnow()


def shadowed():
    real_datetime = FakeDatetime
    return real_datetime.utcnow()


def rebound():
    return twice.utcnow()
"""


def test_module_level_alias_is_followed_only_when_sound(tmp_path: Path) -> None:
    put(tmp_path, {"freezegun/api.py": FREEZEGUN})
    campaign = load_campaign("datetime-utcnow")
    findings = find_findings(index(tmp_path), campaign)
    # `twice` is bound twice and `shadowed` has its own local: neither is an alias use
    assert [(f.symbol, f.line, f.snippet) for f in findings] == [
        ("freezegun/api.py::FakeDatetime.utcnow", 11, "real_datetime.utcnow()")]
    result = apply_codemod("datetime-utcnow", FREEZEGUN, {}, None, "freezegun/api.py")
    assert isinstance(result, TransformSuccess)
    assert "        return real_datetime.now(UTC)\n" in result.code
    assert result.code.count(".utcnow()") == 2  # the local and the rebound name are left
    (tmp_path / "freezegun/api.py").write_text(result.code)
    assert find_findings(index(tmp_path), campaign) == []
