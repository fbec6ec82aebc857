"""Issue 21 for a repository named by URL: its default state directory is its own
(``./.fleet/remotes/<name>-<hash>``, its mirror inside), so two URLs swept one after the other
from one directory without ``--home`` each get theirs. Before, both used ``./.fleet`` and the
second sweep was refused ("state directory ... belongs to the repository <the first mirror>")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fleet.home import default_home, recorded_identity
from tests.conftest import commit_files

FILES = {"app/__init__.py": "", "app/config.py": "import yaml\n\n\n"
         "def load_config(text):\n    return yaml.load(text)\n",
         "tests/test_config.py": "from app.config import load_config\n\n\n"
         "def test_load_config():\n    assert load_config('a: 1') == {'a': 1}\n"}


def _bare(source: Path, where: Path) -> str:
    subprocess.run(["git", "clone", "--quiet", "--bare", str(source), str(where)], check=True)
    return where.as_uri()


def test_two_urls_swept_from_one_directory_each_keep_their_own_state(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FLEET_HOME", "FLEET_STORE_URL", "FLEET_REPO", "FLEET_REMOTE", "DAGSTER_HOME"):
        monkeypatch.delenv(name, raising=False)
    commit_files(git_repo, FILES, "config reader")
    first = _bare(git_repo, tmp_path / "first.git")
    commit_files(git_repo, {"app/other.py": "import yaml\n\n\ndef other(t):\n"
                                            "    return yaml.load(t)\n",
                            "tests/test_other.py": "from app.other import other\n\n\n"
                            "def test_other():\n    assert other('- 1') == [1]\n"},
                 "another reader")
    second = _bare(git_repo, tmp_path / "second.git")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    homes = [default_home(first), default_home(second)]
    assert homes[0] != homes[1]
    assert all(h.parent == work / ".fleet" / "remotes" for h in homes)
    for url, home in zip((first, second), homes, strict=True):
        # each sweep its own process, as a user runs them one after the other
        done = subprocess.run([str(Path(sys.executable).with_name("fleet")), "sweep", url, "-c",
                               "yaml-safe-load", "--sandbox", "bwrap", "--in-process"],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        recorded = recorded_identity(home)
        assert recorded is not None and Path(recorded.root).is_relative_to(home / "mirrors")
        assert (home / "fleet.db").is_file()
    # each remote's integration branch has its own findings fixed, and only those
    for url, paths in ((first, ["app/config.py"]), (second, ["app/config.py", "app/other.py"])):
        bare = Path(url.removeprefix("file://"))
        for path in paths:
            text = subprocess.run(["git", "-C", str(bare), "show",
                                   f"fleet/yaml-safe-load/integration:{path}"],
                                  capture_output=True, text=True, check=True).stdout
            assert "yaml.safe_load(" in text and "yaml.load(" not in text, (url, path)
    listed = subprocess.run(["git", "-C", str(tmp_path / "first.git"), "ls-tree", "-r",
                             "--name-only", "fleet/yaml-safe-load/integration"],
                            capture_output=True, text=True, check=True).stdout.split()
    assert "app/other.py" not in listed
