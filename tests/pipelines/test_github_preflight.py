"""``fleet sweep --forge github`` checks the forge before any run, in one line naming the
variables docs/forge-github.md documents: no repository, no token, a token GitHub refuses
(FakeGitHub on 127.0.0.1, reached by the real PyGithub)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.forge.fake_github import FakeGitHub
from fleet_pipelines.cli import main


def _sweep(repo: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["sweep", str(repo), "-c", "yaml-safe-load", "--forge", "github",
                 "--sandbox", "bwrap", "--home", str(home)])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    return code, err


@pytest.mark.sandbox
def test_github_settings_are_checked_before_any_run(
    tmp_path: Path, git_repo: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "state"
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    for name in ("FLEET_GITHUB_REPO", "FLEET_GITHUB_TOKEN", "GITHUB_TOKEN",
                 "FLEET_GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)

    code, err = _sweep(git_repo, home, capsys)
    assert code == 2 and len(err) == 1 and "FLEET_GITHUB_REPO is not set" in err[0], err

    monkeypatch.setenv("FLEET_GITHUB_REPO", "acme/shop")
    code, err = _sweep(git_repo, home, capsys)
    assert code == 2 and len(err) == 1, err
    assert "set FLEET_GITHUB_TOKEN (or GITHUB_TOKEN)" in err[0]

    with FakeGitHub(token="right") as fake:
        fake.add_repo("acme/shop")
        monkeypatch.setenv("FLEET_GITHUB_API_URL", fake.base_url)
        monkeypatch.setenv("FLEET_GITHUB_TOKEN", "wrong")
        code, err = _sweep(git_repo, home, capsys)
        assert code == 2 and len(err) == 1, err
        assert "HTTP 401 Bad credentials" in err[0] and "wrong" not in err[0]
        monkeypatch.setenv("FLEET_GITHUB_REPO", "acme/nope")
        monkeypatch.setenv("FLEET_GITHUB_TOKEN", "right")
        code, err = _sweep(git_repo, home, capsys)
        assert code == 2 and len(err) == 1 and "HTTP 404" in err[0], err
    assert not (tmp_path / "dagster").exists()  # no Dagster run was started
