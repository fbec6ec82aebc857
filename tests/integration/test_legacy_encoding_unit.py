"""A unit over a file in a legacy encoding (PEP 263 ``latin-1``), end to end through
``fleet.unit`` with the Claude agent loop (ScriptedModel), the real gates in bubblewrap, the
SQLite ledger and rollback: the file keeps its encoding, the ledger keeps the diff's bytes, and
the rollback replays them. An agent that raises ends only its own unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.agents.claude import ClaudeAgent
from fleet.agents.rollback import STEP, rollback_unit
from fleet.agents.scripted import ScriptedModel, tool_call, tool_response
from fleet.store import Store
from fleet.types import Acquired, AgentOutcome, Budget, LeaseRequest, Workspace, WorkUnit
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, repo_untouched, run_unit
from tests.conftest import git

pytestmark = [pytest.mark.sandbox]

SRC = ('# -*- coding: latin-1 -*-\nLABEL = "caf\xe9"\n\n\ndef a():\n    return 1\n\n\n'
       'def b():\n    return LABEL\n')
TEST = "from m import a, b\n\n\ndef test_m():\n    assert a() > 0 and b().startswith('caf')\n"




def _repo(git_repo: Path) -> str:
    (git_repo / "m.py").write_bytes(SRC.encode("latin-1"))
    (git_repo / "test_m.py").write_text(TEST)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "m")
    return git(git_repo, "rev-parse", "HEAD").strip()


def test_latin1_file_through_agent_gates_ledger_and_rollback(
    git_repo: Path, store: Store, bwrap: object, tmp_path: Path,
) -> None:
    base = _repo(git_repo)
    unit = WorkUnit("u1", "camp", base, ("m.py::a",), (), ())
    script = [
        tool_response(tool_call("read_symbol", symbol="m.py::b")),
        tool_response(tool_call("replace_symbol", symbol="m.py::a",
                                source='def a():\n    return len("d\xe9j\xe0")\n')),
        tool_response(tool_call("finish", summary="done")),
    ]
    agent = ClaudeAgent(model=ScriptedModel(script))  # type: ignore[arg-type]
    env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=agent,
                  sandbox=bwrap, workspaces=GitWorkspaces(git_repo),  # type: ignore[arg-type]
                  gates=VerifyGates(git_repo))
    result = run_unit(unit, env)
    assert result.status == "verified", result.detail
    data = git_bytes(git_repo, f"{result.branch}:m.py")
    expected = SRC.replace("return 1", 'return len("d\xe9j\xe0")').encode("latin-1")
    assert data == expected  # written back in latin-1, not UTF-8
    assert store.ledger.verify() == []
    step = store.ledger.events(unit="u1", kind=STEP)[1]
    assert "d\udce9j\udce0" in step.payload["diff"]  # the diff's latin-1 bytes, kept

    tree = tmp_path / "restored"
    git(git_repo, "worktree", "add", "-q", "--detach", str(tree), base)
    rollback_unit(store.ledger, tree, "u1", 1)
    assert (tree / "m.py").read_bytes() == expected
    assert store.ledger.verify() == []


class _Crashing:
    """An agent with a bug: it raises something that is not a FleetError."""

    name = "crashing"

    def run(self, unit: WorkUnit, workspace: Workspace, sandbox: object,
            budget: Budget) -> AgentOutcome:
        (workspace.path / "m.py").write_text("half-written")
        raise KeyError("boom")


def test_an_agent_that_raises_fails_only_its_unit(
    git_repo: Path, store: Store, bwrap: object,
) -> None:
    base = _repo(git_repo)
    unit = WorkUnit("u2", "camp", base, ("m.py::a",), (), ())
    env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=_Crashing(),  # type: ignore[arg-type]
                  sandbox=bwrap, workspaces=GitWorkspaces(git_repo),  # type: ignore[arg-type]
                  gates=VerifyGates(git_repo))
    result = run_unit(unit, env)
    assert result.status == "agent_failed"
    assert "KeyError" in result.detail and "boom" in result.detail
    assert repo_untouched(git_repo)
    # its leases were released: another holder gets the same write lease at once
    again = store.leases.try_acquire("other", "u3", [LeaseRequest("m.py::a", "write")], 30.0)
    assert isinstance(again, Acquired), again
    finished = store.ledger.events(unit="u2", kind="agent.finished")
    assert finished and finished[0].payload["stop_reason"] == "error"


def git_bytes(repo: Path, spec: str) -> bytes:
    import subprocess

    return subprocess.run(["git", "show", spec], cwd=repo, capture_output=True,
                          check=True).stdout
