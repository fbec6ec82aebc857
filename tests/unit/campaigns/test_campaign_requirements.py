"""``fix.requirements``: the project's own declared requirement moved to the new range, on the
real declaration files of the four projects the pydantic-v2 campaign was run on (from their
PyPI sdists: openapi-schema-pydantic 1.2.4's setup.py, pydantic-yaml 0.11.2's and
geojson-pydantic 0.6.3's pyproject.toml, jsf 0.7.1's ``setup(**{...})`` setup.py), every other
byte kept; the planner gives the file to the unit; a bad value is a load error naming file,
line and field; and the gate's environment of the base is held below the new range."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

import pytest

from fleet.campaigns.codemods.requirements import (
    declaring_files,
    rewrite_declarations,
    rewrite_text,
)
from fleet.campaigns.spec import load_campaign, parse_campaign
from fleet.errors import ConfigError
from fleet.graph import index
from fleet.plan import plan_campaign
from fleet.verify._tree_env import held_below

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "requirements"
MOVE = {"pydantic": ">=2,<3"}


def _changed(before: str, after: str) -> list[str]:
    return [ln for ln in difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


@pytest.mark.parametrize(("project", "path", "old", "new"), [
    ("openapi-schema-pydantic-1.2.4", "setup.py",
     '    install_requires=["pydantic>=1.8.2"],\n', '    install_requires=["pydantic>=2,<3"],\n'),
    ("pydantic-yaml-0.11.2", "pyproject.toml",
     '    "pydantic>=1.8,<2",\n', '    "pydantic>=2,<3",\n'),
    ("geojson-pydantic-0.6.3", "pyproject.toml",
     'dependencies = ["pydantic~=1.0"]\n', 'dependencies = ["pydantic>=2,<3"]\n'),
    # a pants-generated setup.py: setup(**{"install_requires": ("pydantic>=1.10.4", ...)})
    ("jsf-0.7.1", "setup.py", "        'pydantic>=1.10.4',\n", "        'pydantic>=2,<3',\n"),
])
def test_the_real_declarations_move_by_one_line(project: str, path: str, old: str,
                                                new: str) -> None:
    root = REAL / project
    assert declaring_files(root, MOVE) == [path]
    text = (root / path).read_text()
    moved = rewrite_text(path, text, MOVE)
    assert _changed(text, moved) == ["-" + old, "+" + new]
    assert moved.replace(new, old) == text  # every other byte kept
    assert rewrite_text(path, moved, MOVE) == moved  # already in the range: left


def test_keywords_and_other_tables_are_not_requirements() -> None:
    """pydantic-yaml's ``keywords = ["pydantic", "yaml"]`` names pydantic too."""
    text = (REAL / "pydantic-yaml-0.11.2" / "pyproject.toml").read_text()
    moved = rewrite_text("pyproject.toml", text, MOVE)
    assert 'keywords = ["pydantic", "yaml"]' in moved
    assert 'packages = ["pydantic_yaml"]' in moved


def test_markers_extras_comments_and_line_endings_stay() -> None:
    text = ("pydantic[email] >=1.8 ; python_version>'3.7'  # pinned\r\n-r base.txt\n"
            "Pydantic_Core==2.0\npydantic @ https://example.org/p.whl\nsix\n")
    assert rewrite_text("requirements-dev.txt", text, MOVE) == text.replace(">=1.8 ;", ">=2,<3 ;")
    cfg = ("[metadata]\nname = pydantic\n[options]\ninstall_requires =\n    pydantic~=1.9\n"
           "    six\n[options.extras_require]\nemail = pydantic[email]<2\n")
    assert rewrite_text("setup.cfg", cfg, MOVE) == cfg.replace("~=1.9", ">=2,<3").replace(
        "[email]<2", "[email]>=2,<3")
    assert rewrite_text("docs/requirements.txt", "pydantic<2\n", MOVE) == "pydantic<2\n"


def test_setup_py_through_a_name_and_crlf(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_bytes(
        b"deps = ['pydantic>=1.0', 'six']\r\nsetup(install_requires=deps + ['x'])\r\n")
    assert rewrite_declarations(tmp_path, MOVE) == ["setup.py"]
    assert (tmp_path / "setup.py").read_bytes() == (
        b"deps = ['pydantic>=2,<3', 'six']\r\nsetup(install_requires=deps + ['x'])\r\n")


def test_the_planner_gives_the_declaration_to_the_unit(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        (REAL / "geojson-pydantic-0.6.3" / "pyproject.toml").read_text())
    (root / "models.py").write_text(
        "from pydantic import BaseModel\n\n\nclass P(BaseModel):\n    x: int\n\n\n"
        "def dump(p: P) -> dict:\n    return p.dict()\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    campaign = load_campaign("pydantic-v2")
    assert campaign.fix.requirements == MOVE
    (unit,) = plan_campaign(root, campaign, graph=index(root), base_commit="0" * 40).units
    assert "pyproject.toml::<module>" in unit.write_set


@pytest.mark.parametrize(("value", "error"), [
    ('">=2,<3"', "demo.yaml:6: fix.requirements: must be a non-empty mapping"),
    ('{pydantic: ">=2,,<3"}', "demo.yaml:6: fix.requirements: pydantic: not a version specifier"),
    ("{pydantic: 2}", "fix.requirements: pydantic: must be a version specifier such as"),
    ('{"py dantic": ">=2"}', "fix.requirements: 'py dantic' is not a project name"),
])
def test_a_bad_requirements_value_is_a_load_error(value: str, error: str) -> None:
    text = ("name: demo\ndescription: d\nmatchers: [{rule: r, import: [pydantic.v1]}]\n"
            f"fix:\n  codemod: pydantic-v2\n  requirements: {value}\n")
    with pytest.raises(ConfigError) as caught:
        parse_campaign(text, "demo.yaml")
    assert error in str(caught.value)


def test_the_base_environment_is_held_below_the_new_range() -> None:
    assert held_below(("pydantic>=1.8.2", "pytest"), ("pydantic>=2,<3", "pytest")) == [
        "pydantic<2"]
    assert held_below(("pydantic~=1.0",), ("pydantic>=2,<3",)) == []  # already below
    assert held_below(("pydantic>=1.8.2",), ("pydantic>=1.8.2", "six")) == []


def test_declarations_through_links_out_of_the_repository_are_left_alone(tmp_path: Path) -> None:
    # the one source reader: a requirements/ directory link (or a file link) leaving the
    # repository is neither read nor rewritten; the repository's own file still is
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "base.txt").write_text("pydantic==1.10.2\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements").symlink_to(outside)
    (root / "requirements-dev.txt").symlink_to(outside / "base.txt")
    (root / "requirements.txt").write_text("pydantic==1.10.2\n")
    assert declaring_files(root, MOVE) == ["requirements.txt"]
    assert rewrite_declarations(root, MOVE, ["requirements/base.txt", "requirements-dev.txt",
                                             "requirements.txt"]) == ["requirements.txt"]
    assert (outside / "base.txt").read_text() == "pydantic==1.10.2\n"
