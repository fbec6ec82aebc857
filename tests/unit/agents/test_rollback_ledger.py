"""Rollback as new ledger events, over a real SQLite store and real git worktrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.agents.claude import ClaudeAgent
from fleet.agents.rollback import ROLLBACK_PATCH, ROLLBACK_UNIT, STEP, step_recorder
from fleet.agents.scripted import ScriptedModel, tool_call
from fleet.agents.scripted import tool_response as turn
from fleet.store import Store
from fleet.types import Budget, StopReason, Workspace, WorkUnit
from fleet_pipelines.cli import main
from tests.conftest import git

SRC = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


@pytest.fixture
def unit_run(git_repo: Path, store: Store, sandbox_backend: object) -> tuple[Workspace, str]:
    (git_repo / "m.py").write_text(SRC)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "m")
    base = git(git_repo, "rev-parse", "HEAD").strip()
    ws = Workspace(git_repo, "main", base, git_repo.parent, git_repo)
    unit = WorkUnit("u1", "camp", base, ("m.py::a", "m.py::b"), (), ())
    script = [
        turn(tool_call("replace_symbol", symbol="m.py::a", source="def a():\n    return 10\n")),
        turn(tool_call("replace_symbol", symbol="m.py::b", source="def b():\n    return 20\n")),
        turn(tool_call("replace_symbol", symbol="m.py::a", source="def a():\n    return 99\n")),
        turn(tool_call("finish", summary="done")),
    ]
    agent = ClaudeAgent(ScriptedModel(script),
                        on_step=step_recorder(store.ledger, unit.key, unit.campaign, base))
    outcome = agent.run(unit, ws, sandbox_backend, Budget())  # type: ignore[arg-type]
    assert outcome.stop_reason is StopReason.FINISHED
    assert (git_repo / "m.py").read_text() == SRC.replace("1\n", "99\n").replace("2\n", "20\n")
    return ws, base


def steps_base(store: Store) -> str:
    return str(store.ledger.events(unit="u1", kind=STEP)[0].payload["base"])


def test_rollback_unit_restores_a_step_as_a_new_event(
    unit_run: tuple[Workspace, str], store: Store, store_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ws, base = unit_run
    assert steps_base(store) == base
    steps = store.ledger.events(unit="u1", kind=STEP)
    assert [e.payload["index"] for e in steps] == [0, 1, 2, 3]
    before = len(store.ledger.events())
    argv = ["rollback", "--unit", "u1", "--to", "1", "--worktree", str(ws.path),
            "--store", store_url]
    assert main(argv) == 0
    assert "restored to step 1" in capsys.readouterr().out
    assert (ws.path / "m.py").read_text() == SRC.replace("1\n", "10\n").replace("2\n", "20\n")
    assert main([*argv[:3], "--to", "-1", *argv[5:]]) == 0
    assert (ws.path / "m.py").read_text() == SRC
    events = store.ledger.events()
    assert len(events) == before + 2
    assert [e.kind for e in events[-2:]] == [ROLLBACK_UNIT, ROLLBACK_UNIT]
    assert store.ledger.verify() == []
    assert main([*argv[:3], "--to", "7", *argv[5:]]) == 1
    assert "has no step 7 (steps 0..3)" in capsys.readouterr().err


def test_rollback_patch_reverts_on_the_integration_branch(
    git_repo: Path, store: Store, store_url: str
) -> None:
    git(git_repo, "checkout", "-qb", "fleet/camp/integration")
    for unit, text in (("u1", "one\n"), ("u2", "two\n")):
        (git_repo / f"{unit}.txt").write_text(text)
        git(git_repo, "add", "-A")
        git(git_repo, "commit", "-qm", f"fleet(camp): unit {unit}")
    git(git_repo, "checkout", "-q", "main")
    main_head = git(git_repo, "rev-parse", "HEAD")
    code = main(["rollback", "--patch", "u1", "--campaign", "camp", "--repo", str(git_repo),
                 "--store", store_url])
    assert code == 0
    files = git(git_repo, "ls-tree", "--name-only", "fleet/camp/integration").split()
    assert "u1.txt" not in files and "u2.txt" in files
    assert git(git_repo, "log", "-1", "--format=%s", "fleet/camp/integration").startswith(
        'Revert "fleet(camp): unit u1"'
    )
    assert git(git_repo, "rev-parse", "HEAD") == main_head  # the user's checkout is untouched
    event = store.ledger.events(kind=ROLLBACK_PATCH)[-1]
    assert event.unit == "u1" and event.payload["branch"] == "fleet/camp/integration"
    assert main(["rollback", "--patch", "nope", "--branch", "fleet/camp/integration",
                 "--repo", str(git_repo), "--store", store_url]) == 1
