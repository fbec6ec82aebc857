"""Poetry projects: the pin mover rewrites ``[tool.poetry.*dependencies]`` in Poetry's syntax and
the gate's reader of declared requirements reads them as PEP 508, on the real ``pyproject.toml``
of two Poetry-built PyPI sdists (sqlmodel 0.0.8: ``pydantic = "^1.8.2"``, tables with extras
and ``python``; datamodel-code-generator 0.17.1: pydantic as arrays of tables, one per Python
range, in both the dependencies and the legacy dev-dependencies), every other byte kept; and
the two environments the gate makes from a Poetry project's base and patch hold pydantic 1 and
pydantic 2 (wheels from PyPI)."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.campaigns.codemods.requirements import declaring_files, rewrite_text
from fleet.verify._patch import Trees
from fleet.verify._requirements import test_requirements as requirements_of
from fleet.verify._tree_env import TreeEnvs, held_below, tree_envs
from fleet.verify.poetry import to_specifier
from tests.conftest import commit_files, git

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "requirements"
MOVE = {"pydantic": ">=2,<3"}


def _changed(before: str, after: str) -> list[str]:
    return [ln for ln in difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


@pytest.mark.parametrize(("constraint", "spec"), [
    ("^1.8", ">=1.8,<2.0"), ("^1.8.2", ">=1.8.2,<2.0.0"), ("^1", ">=1,<2"),
    ("^0.3", ">=0.3,<0.4"), ("^0.0.3", ">=0.0.3,<0.0.4"), ("^0", ">=0,<1"), ("^0.0", ">=0.0,<0.1"),
    ("~1.8", ">=1.8,<1.9"), ("~1.8.2", ">=1.8.2,<1.9.0"), ("~1", ">=1,<2"),
    ("1.10.2", "==1.10.2"), ("==1.10", "==1.10"), ("1.2.*", "==1.2.*"), ("*", ""),
    (">=1.5,<2.0", ">=1.5,<2.0"), (">= 1.2 < 2", ">=1.2,<2"), (">=1.6, !=1.7", ">=1.6,!=1.7"),
    ("~=1.4", "~=1.4"), ("^21.5-beta.1", ">=21.5b1,<22.0"),
    # no PEP 440 spelling of "or": the alternative reaching the newest versions
    ("^1.0 || ^2.0", ">=2.0,<3.0"), ("~1.9 || >=2.1", ">=2.1"), ("^1 || *", ""),
    (">=1.*", None), ("one two", None), ("", None), (">=1,,<2", None),
])
def test_poetry_constraints_as_pep_440(constraint: str, spec: str | None) -> None:
    assert to_specifier(constraint) == spec


def test_sqlmodel_caret_moves_to_a_caret_and_is_read_as_pep_440() -> None:
    root = REAL / "sqlmodel-0.0.8"
    text = (root / "pyproject.toml").read_text()
    assert declaring_files(root, MOVE) == ["pyproject.toml"]
    moved = rewrite_text("pyproject.toml", text, MOVE)
    assert _changed(text, moved) == ['-pydantic = "^1.8.2"\n', '+pydantic = "^2"\n']
    assert moved.replace('pydantic = "^2"', 'pydantic = "^1.8.2"') == text
    assert rewrite_text("pyproject.toml", moved, MOVE) == moved  # "^2" is >=2,<3 already
    # a range that is no caret range goes in as the campaign wrote it (Poetry reads PEP 440)
    assert 'pydantic = ">=2.5,<2.8"\n' in rewrite_text(
        "pyproject.toml", text, {"pydantic": ">=2.5,<2.8"})
    assert requirements_of(root) == (
        "SQLAlchemy>=1.4.17,<=1.4.41", "pydantic>=1.8.2,<2.0.0", "sqlalchemy2-stubs",
        # the dev-dependencies without mypy, flake8, black, mkdocs*, mdx-include, autoflake, isort
        "pytest>=6.2.4,<7.0.0", "coverage[toml]>=5.5,<6.0", "fastapi>=0.68.1,<0.69.0",
        "requests>=2.26.0,<3.0.0",
        'async_generator; python_version < "3.7" and python_version >= "3.6"',
        'async-exit-stack; python_version < "3.7" and python_version >= "3.6"')


def test_datamodel_code_generator_arrays_of_tables_move_each_version(tmp_path: Path) -> None:
    root = REAL / "datamodel-code-generator-0.17.1"
    text = (root / "pyproject.toml").read_text()
    moved = rewrite_text("pyproject.toml", text, MOVE)
    assert _changed(text, moved) == [
        '-pydantic =  [{extras = ["email"], version = ">=1.5.1,<2.0", python = "<3.10"}, '
        '{extras = ["email"], version = ">=1.9.0,<2.0", python = ">=3.10,<3.11"}, '
        '{extras = ["email"], version = ">=1.10.0,<2.0", python = ">=3.11"}]\n',
        '+pydantic =  [{extras = ["email"], version = "^2", python = "<3.10"}, '
        '{extras = ["email"], version = "^2", python = ">=3.10,<3.11"}, '
        '{extras = ["email"], version = "^2", python = ">=3.11"}]\n',
        '-pydantic =  [{version = ">=1.8.2,<2.0", python = "<3.10"}, '
        '{version = ">=1.9.0,<2.0", python = ">=3.10"}, ]\n',
        '+pydantic =  [{version = "^2", python = "<3.10"}, '
        '{version = "^2", python = ">=3.10"}, ]\n',
    ]
    before = [r for r in requirements_of(root) if r.startswith("pydantic")]
    assert before == [
        'pydantic[email]>=1.5.1,<2.0; python_version < "3.10"',
        'pydantic[email]>=1.9.0,<2.0; python_version < "3.11" and python_version >= "3.10"',
        'pydantic[email]>=1.10.0,<2.0; python_version >= "3.11"',
        'pydantic>=1.8.2,<2.0; python_version < "3.10"',
        'pydantic>=1.9.0,<2.0; python_version >= "3.10"']
    (tmp_path / "pyproject.toml").write_text(moved)
    after = [r for r in requirements_of(tmp_path) if r.startswith("pydantic")]
    assert after == [r.replace(r[r.index(">="):r.index(";")], ">=2,<3") for r in before]
    assert "typed-ast>=1.5.0; python_full_version >= \"3.9.8\"" in requirements_of(root)
    assert not [r for r in requirements_of(root) if r.startswith(("mypy", "types-"))]


def test_every_poetry_form_moves_and_the_rest_stays() -> None:
    text = ('[tool.poetry]\nname = "demo"\nkeywords = ["pydantic"]\r\n\r\n'
            "[tool.poetry.dependencies]\r\n"
            'python = "^3.8"\r\n'
            "Pydantic = { version = '~1.10', extras = [\"email\"], optional = true }  # v1\r\n"
            'pydantic-settings = "^0.2"\r\n'
            '\n[tool.poetry.group.test.dependencies]\n"pydantic" = "1.10.13"\n'
            'pydantic_core = "*"\n'
            "\n[tool.poetry.dev-dependencies.pydantic]\nversion = \"<2\"\npython = \"^3.8\"\n"
            "\n[tool.poetry.group.docs.dependencies]\n"
            'pydantic = {git = "https://github.com/pydantic/pydantic.git", tag = "v1.10.13"}\n'
            "pydantic2 = {path = '../p', extras = ['x']}\n")
    moved = rewrite_text("pyproject.toml", text, MOVE)
    assert moved == (text.replace("'~1.10'", "'^2'").replace('"1.10.13"', '"^2"')
                     .replace('version = "<2"', 'version = "^2"'))
    assert rewrite_text("pyproject.toml", moved, MOVE) == moved
    assert rewrite_text("pyproject.toml", '[tool.poetry.dependencies]\npydantic = "*"\n', MOVE
                        ) == '[tool.poetry.dependencies]\npydantic = "^2"\n'
    multi = ('[tool.poetry.dependencies]\npydantic = [  # one per Python\n'
             '    {version = "^1.8", python = "<3.10"},  # version = "^1.0" in a comment\n'
             "    {markers = \"sys_platform == 'linux'\", version = '~1.9', python = \">=3.10\"},\n"
             ']\nother = {version = "1", extras = ["pydantic = x"]}\n')
    assert rewrite_text("pyproject.toml", multi, MOVE) == multi.replace(
        '"^1.8"', '"^2"').replace("'~1.9'", "'^2'")


def test_the_reader_takes_optional_ones_only_for_a_test_extra(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "demo-pkg"\n[tool.poetry.dependencies]\npython = "^3.8"\n'
        'demo_pkg = "*"\nhttpx = {version = "^0.24", optional = true}\n'
        'rich = {version = "^13", optional = true}\n'
        'six = {version = "^1.16", markers = "sys_platform == \'linux\'", python = ">=3.8"}\n'
        '[tool.poetry.extras]\ntest = ["httpx"]\n'
        '[tool.poetry.group.dev.dependencies]\nblack = "^23"\nflake8-bugbear = "*"\n'
        'pytest-asyncio = "^0.21"\n')
    assert requirements_of(tmp_path) == (
        "httpx>=0.24,<0.25",
        "six>=1.16,<2.0; (python_version >= \"3.8\") and (sys_platform == 'linux')",
        "pytest-asyncio>=0.21,<0.22")


def test_the_base_of_a_poetry_project_is_already_held_below() -> None:
    base = requirements_of(REAL / "sqlmodel-0.0.8")
    assert held_below(base, tuple(r.replace(">=1.8.2,<2.0.0", ">=2,<3") for r in base)) == []


def _pydantic(python: str) -> str:
    code = "import email_validator, pydantic; print(pydantic.VERSION)"
    return subprocess.run([python, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_gate_makes_each_tree_its_poetry_environment(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate's venvs of a Poetry project's base and patch: pydantic 1 with its email extra,
    then pydantic 2 with it (PyPI wheels; ~40 s the first time, then cached)."""
    text = ('[tool.poetry]\nname = "tiny"\nversion = "0.1.0"\n\n[tool.poetry.dependencies]\n'
            'python = "^3.8"\npydantic = {version = "^1.10", extras = ["email"]}\n')
    commit_files(git_repo, {"pyproject.toml": text}, "a Poetry project on pydantic 1")
    (git_repo / "pyproject.toml").write_text(rewrite_text("pyproject.toml", text, MOVE))
    patch = git(git_repo, "diff")
    assert '+pydantic = {version = "^2", extras = ["email"]}' in patch
    with Trees(git_repo, patch) as trees:
        assert trees.applied, trees.error
        envs = tree_envs(trees, sys.executable)
    assert isinstance(envs, TreeEnvs), envs
    assert "pydantic[email]>=1.10,<2.0" in envs.lines[0]
    assert "pydantic[email]>=2,<3" in envs.lines[1]
    assert _pydantic(envs.before).startswith("1.10.")
    assert _pydantic(envs.after).startswith("2.")
