"""`fleet graph show` reports a bad repository or snapshot as a message (exit 2), and
`fleet verify` judges a patch whose bytes are not UTF-8 (a latin-1 source file) and names a
missing patch, a missing repository or one that is not git in one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_pipelines.cli import main
from tests.conftest import git

LATIN = '# -*- coding: latin-1 -*-\ndef shout(s):\n    # caf\xe9\n    return s.upper()\n'
TEST = "from pkg.latin import shout\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n"


def test_graph_show_on_a_missing_repo_is_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["graph", "show", "foo", "-r", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert f"cannot index {tmp_path / 'nope'}" in err
    assert "Traceback" not in err
    assert main(["graph", "show", "foo", "-s", str(tmp_path / "nope.json")]) == 2
    assert "cannot load graph snapshot" in capsys.readouterr().err


def test_verify_names_a_bad_repository_or_patch_in_one_line(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = tmp_path / "fix.diff"
    patch.write_text("")
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = [
        ([str(git_repo), str(tmp_path / "nope.diff")], f"the patch {tmp_path / 'nope.diff'} "
                                                       "does not exist"),
        ([str(git_repo), str(tmp_path)], f"the patch {tmp_path} is not a file"),
        ([str(tmp_path / "gone"), str(patch)], f"the repository {tmp_path / 'gone'} is not a "
                                               "directory"),
        ([str(plain), str(patch)], f"{plain} is not a git repository"),
    ]
    for argv, message in cases:
        code = main(["verify", *argv, "--sandbox", "local", "--write", "a.py::f"])
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert message in err, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_verify_a_latin1_patch(
    git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (git_repo / "pkg").mkdir()
    (git_repo / "pkg" / "__init__.py").write_text("")
    (git_repo / "pkg" / "latin.py").write_bytes(LATIN.encode("latin-1"))
    (git_repo / "tests").mkdir()
    (git_repo / "tests" / "test_latin.py").write_text(TEST)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "latin-1 module")
    (git_repo / "pkg" / "latin.py").write_bytes(
        LATIN.replace("s.upper()", "str(s).upper()").encode("latin-1")
    )
    patch_bytes = _diff_bytes(git_repo)
    assert b"caf\xe9" in patch_bytes  # the hunk context carries the latin-1 byte
    git(git_repo, "checkout", "-q", "--", ".")
    patch = tmp_path / "latin.diff"
    patch.write_bytes(patch_bytes)

    code = main(["verify", str(git_repo), str(patch), "--sandbox", "local",
                 "--write", "pkg/latin.py::shout", "--store", f"sqlite:///{tmp_path / 'f.db'}"])
    out = capsys.readouterr().out
    assert "ACCEPT   applies" in out or "ACCEPT   patch" in out, out
    assert "=> accept" in out, out
    assert code == 0
    # the checkout itself is untouched, byte for byte
    assert (git_repo / "pkg" / "latin.py").read_bytes() == LATIN.encode("latin-1")


def _diff_bytes(repo: Path) -> bytes:
    import subprocess

    return subprocess.run(["git", "diff"], cwd=repo, check=True, capture_output=True).stdout
