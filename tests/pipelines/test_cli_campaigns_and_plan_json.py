"""``fleet campaigns`` shows every description whole, on a terminal of any width and through a
pipe; ``fleet plan --json`` prints the plan (only it) on stdout, ``-o FILE`` writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.campaigns.spec import builtin_campaigns, load_campaign
from tests.conftest import commit_files

FLEET = Path(sys.executable).parent / "fleet"


def _on_a_terminal(argv: list[str], columns: int) -> str:
    """``argv``'s output with a pseudo-terminal as its stdout, ``COLUMNS`` set."""
    leader, follower = os.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}
    proc = subprocess.Popen(argv, stdout=follower, stderr=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(60) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.parametrize("columns", [40, 80, 250])
def test_campaigns_are_never_cut(columns: int) -> None:
    piped = subprocess.run([str(FLEET), "campaigns"], capture_output=True, text=True,
                           env={**os.environ, "COLUMNS": str(columns)}, check=True).stdout
    tty = _on_a_terminal([str(FLEET), "campaigns"], columns)
    for out in (piped, tty):
        lines = out.splitlines()
        assert len(lines) == len(builtin_campaigns())
        for name, path in builtin_campaigns().items():
            description = " ".join(load_campaign(path).description.split())
            (line,) = [ln for ln in lines if ln.startswith(f"{name} ")]
            assert line.endswith(description), (line, description)
    rows = json.loads(subprocess.run([str(FLEET), "campaigns", "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    assert {r["name"] for r in rows} == set(builtin_campaigns())


def test_plan_json_goes_to_stdout_and_output_to_a_file(tmp_path: Path, git_repo: Path) -> None:
    commit_files(git_repo, {"app.py": "import yaml\n\n\ndef load(t):\n    return yaml.load(t)\n"},
                 "code")
    run = [str(FLEET), "plan", str(git_repo), "-c", "yaml-safe-load"]
    printed = subprocess.run([*run, "--json"], capture_output=True, text=True, check=True)
    data = json.loads(printed.stdout)  # nothing but the JSON on stdout
    assert data["summary"]["findings"] == 1 and len(data["units"]) == 1
    out = tmp_path / "plan.json"
    human = subprocess.run([*run, "-o", str(out)], capture_output=True, text=True, check=True)
    assert "findings   1" in human.stdout and f"wrote      {out}" in human.stdout
    written = json.loads(out.read_text())
    assert written["units"] == data["units"] and written["waves"] == data["waves"]
    assert written["summary"]["findings"] == 1
