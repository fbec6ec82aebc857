"""CLI regressions from an outside check: read-only store commands in the wrong directory, the
merge driver's help, and help texts that match the README."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_pipelines.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["ledger", "verify"],
        ["ledger", "show"],
        ["memory", "list"],
        ["memory", "remove", "1"],
        ["token", "list"],
        ["token", "revoke", "abc"],
    ],
)
def test_read_only_commands_refuse_a_missing_default_store(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "no fleet store at sqlite:///" in err and "--store" in err
    assert not (tmp_path / ".fleet").exists()  # nothing created in the wrong directory
    explicit = f"sqlite:///{tmp_path / 'missing.db'}"
    assert main([*argv, "--store", explicit]) == 2
    assert not (tmp_path / "missing.db").exists()


def test_commands_that_write_still_create_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("FLEET_STORE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["memory", "add", "first note"]) == 0
    assert (tmp_path / ".fleet" / "fleet.db").is_file()
    assert main(["memory", "list"]) == 0
    assert "first note" in capsys.readouterr().out
    assert main(["ledger", "verify"]) == 0


def test_merge_driver_help_exits_0_and_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["merge-driver", "--help"]) == 0
    out = capsys.readouterr().out
    # the set-up names fleet by its absolute path (git's shell may not have fleet on its PATH)
    [setup] = [line for line in out.splitlines() if "git config merge.fleet.driver" in line]
    command = setup.split('"')[1]
    assert command.endswith(" merge-driver %O %A %B %P") and Path(command.split()[0]).is_absolute()
    assert Path(command.split()[0]).name == "fleet"
    assert main(["merge-driver", "only-one-arg"]) == 2
    assert main(["--help"]) == 0
    listing = capsys.readouterr().out
    assert "merge-driver" in listing
    serve_line = next(line for line in listing.splitlines() if " serve " in line)
    assert "``" not in listing and "HTTP API" in serve_line


def test_sandbox_run_help_states_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "exits 128+N" in out and "exits 127" in out and "Exits 2" in out
    assert "--unsafe-local" in out and "(then exit 137)" in out


def test_gc_reports_a_missing_repository_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file.py").write_text("x = 1\n")
    for target in (tmp_path / "nope", tmp_path / "file.py"):
        assert main(["gc", str(target)]) == 2
        assert main(["gc", str(target), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("no such directory (expected a git checkout)") == 4
    assert "Traceback" not in err and "FileNotFoundError" not in err


@pytest.mark.parametrize("timeout", ["0", "-1", "nan"])
def test_sandbox_run_refuses_a_timeout_that_is_not_positive(
    timeout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Used to run and report "timeout after 0.01s" with exit 0.
    argv = ["sandbox", "run", "-b", "local", "--unsafe-local", "-w", str(tmp_path)]
    assert main([*argv, "-t", timeout, "--", "touch", "ran"]) == 2
    assert "--timeout must be above 0 seconds" in capsys.readouterr().err
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--no-launch", "--port", "99999"],  # used to hang, "listening" on :99999
        ["serve", "--no-launch", "--port", "0"],
        ["serve", "--no-launch", "--repo", "/nonexistent/repo"],  # used to serve anyway
    ],
)
def test_serve_refuses_bad_port_or_repo_before_listening(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLEET_STORE_URL", f"sqlite:///{tmp_path / 'fleet.db'}")
    assert main(argv) == 2


def test_token_scopes_comma_separated_and_empty_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fleet.store import open_store

    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    monkeypatch.setenv("FLEET_STORE_URL", url)
    assert main(["token", "create", "--scope", "leases,jobs", "--name", "both"]) == 0
    secret = capsys.readouterr().out.strip()
    with open_store(url) as store:
        info = store.tokens.verify(secret)
        assert info is not None and set(info.scopes) == {"leases", "jobs"}
    assert main(["token", "create", "--scope", "leases,root"]) == 2
    assert main(["memory", "add", "  "]) == 2  # used to be a ValueError traceback
    err = capsys.readouterr().err
    assert "a note needs text" in err and "Traceback" not in err
