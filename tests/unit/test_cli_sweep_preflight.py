"""Outside check (session 3): `fleet sweep` on a directory without git died minutes later in a
Dagster step traceback, `-c nosuch` in a ConfigError traceback, and `--agent nosuch` /
`--sandbox nosuch` were accepted and silently unused when no unit ran. Now each is one line on
stderr naming the input, exit 2, before any run and before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_pipelines.cli import main
from tests.conftest import git


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-c", "nosuch"], "nosuch: no such campaign file, and not a built-in campaign"),
        (["-c", "datetime-utcnow", "--agent", "nosuch"],
         "--agent 'nosuch': expected one of codemod|claude"),
        (["-c", "datetime-utcnow", "--sandbox", "nosuch"],
         "--sandbox 'nosuch': expected one of auto|microvm|gvisor|bwrap|local"),
        (["-c", "datetime-utcnow", "--forge", "gitlab"],
         "--forge 'gitlab': expected one of local|github"),
    ],
)
def test_bad_options_stop_before_any_run(
    args: list[str], message: str, git_repo: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "home"
    assert main(["sweep", str(git_repo), *args, "--home", str(home)]) == 2
    assert f"error: {message}" in capsys.readouterr().err
    assert not home.exists()


def test_a_directory_without_git_or_commits_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLEET_BASE_BRANCH", raising=False)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n")
    home = tmp_path / "home"
    assert main(["sweep", str(plain), "-c", "datetime-utcnow", "--home", str(home)]) == 2
    assert f"error: {plain} is not a git repository" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    assert main(["sweep", str(empty), "-c", "datetime-utcnow", "--home", str(home)]) == 2
    assert "base branch 'main' does not exist in the repository" in capsys.readouterr().err
    assert not home.exists()
