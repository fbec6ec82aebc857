"""``fleet rollback --unit K --to STEP`` without ``--worktree``: a unit runs through
``fleet.unit`` (real git worktrees, a real SQLite store, the Claude agent loop driven by a
ScriptedModel, the real gates in a bubblewrap sandbox), its worktree is removed, and the rollback
recreates the unit's workspace from the ledger alone and replays the recorded step into it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.agents.claude import ClaudeAgent
from fleet.agents.rollback import ROLLBACK_UNIT, STEP
from fleet.agents.scripted import ScriptedModel, tool_call, tool_response
from fleet.store import Store
from fleet.types import WorkUnit
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, repo_untouched, run_unit
from fleet_pipelines.cli import main
from tests.conftest import git

pytestmark = [pytest.mark.sandbox]

SRC = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
TEST = "from m import a, b\n\n\ndef test_m():\n    assert a() > 0 and b() > 0\n"
FIRST = SRC.replace("return 1", "return 10")
SECOND = FIRST.replace("return 2", "return 20")





def _worktree(out: str) -> Path:
    lines = [line for line in out.splitlines() if line.startswith("worktree: ")]
    assert len(lines) == 1, out
    return Path(lines[0].removeprefix("worktree: "))


def test_rollback_recreates_the_unit_workspace_at_a_step(
    git_repo: Path, store: Store, store_url: str, bwrap: object,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (git_repo / "m.py").write_text(SRC)
    (git_repo / "test_m.py").write_text(TEST)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "m")
    base = git(git_repo, "rev-parse", "HEAD").strip()
    unit = WorkUnit("u1", "camp", base, ("m.py::a", "m.py::b"), (), ())
    script = [
        tool_response(tool_call("replace_symbol", symbol="m.py::a",
                                source="def a():\n    return 10\n")),
        tool_response(tool_call("replace_symbol", symbol="m.py::b",
                                source="def b():\n    return 20\n")),
        tool_response(tool_call("finish", summary="done")),
    ]
    # no on_step here: the unit runner wires the step recorder itself
    agent = ClaudeAgent(model=ScriptedModel(script))  # type: ignore[arg-type]
    env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=agent,
                  sandbox=bwrap, workspaces=GitWorkspaces(git_repo),  # type: ignore[arg-type]
                  gates=VerifyGates(git_repo))
    result = run_unit(unit, env)
    assert result.status == "verified", result.detail
    assert git(git_repo, "show", f"{result.branch}:m.py") == SECOND
    assert agent.on_step is None  # the caller's agent is not changed; a per-unit copy is
    steps = store.ledger.events(unit="u1", kind=STEP)
    assert [e.payload["index"] for e in steps] == [0, 1, 2]
    assert all(e.payload["base"] == base and "diff" in e.payload for e in steps)
    assert "return 10" in steps[0].payload["diff"]
    assert "return 20" not in steps[0].payload["diff"]
    # the run removed its worktree: only the user's checkout is left
    assert git(git_repo, "worktree", "list", "--porcelain").count("worktree ") == 1

    # STEP is the 0-based index of the agent's tool call: 0 = the first edit
    argv = ["rollback", "--unit", "u1", "--to", "0", "--repo", str(git_repo),
            "--store", store_url]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "restored to step 0" in out
    tree = _worktree(out)
    assert tree.is_dir() and tree != git_repo
    assert (tree / "m.py").read_text() == FIRST  # the first edit, not the second
    assert "return 20" not in (tree / "m.py").read_text()
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == "fleet/camp/u1"
    assert git(tree, "rev-parse", "HEAD").strip() == base
    assert repo_untouched(git_repo)  # the user's checkout never saw any of it
    events = store.ledger.events(unit="u1", kind=ROLLBACK_UNIT)
    assert len(events) == 1
    assert events[0].payload["to_step"] == 0 and events[0].payload["worktree"] == str(tree)
    assert events[0].payload["previous_head"] == result.commit  # the verified commit is named
    kept = events[0].payload["kept_as"]  # ... and stays reachable under a ref of its own
    assert git(git_repo, "rev-parse", kept).strip() == result.commit
    assert events[0].actor == "cli"

    # again, to the second edit: the left-over workspace is taken back and recreated
    assert main([*argv[:3], "--to", "1", *argv[5:]]) == 0
    again = _worktree(capsys.readouterr().out)
    assert (again / "m.py").read_text() == SECOND
    assert len(store.ledger.events(unit="u1", kind=ROLLBACK_UNIT)) == 2

    # an unknown step is refused and changes nothing in the ledger
    before = len(store.ledger.events())
    assert main([*argv[:3], "--to", "7", *argv[5:]]) == 1
    assert "no step 7" in capsys.readouterr().err
    assert len(store.ledger.events()) == before

    assert store.ledger.verify() == []
    assert main(["ledger", "verify", "--store", store_url]) == 0


UTC_CODE = "import datetime\n\n\ndef tick():\n    return datetime.datetime.utcnow()\n"


def test_codemod_agent_steps_are_restorable_one_file_at_a_time(
    git_repo: Path, store: Store, store_url: str, bwrap: object,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fleet.agents.codemod import CodemodAgent
    from fleet.campaigns.spec import load_campaign
    from fleet.plan import plan_campaign

    for name in ("a.py", "b.py"):
        (git_repo / name).write_text(UTC_CODE)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "two files")
    campaign = load_campaign("datetime-utcnow")
    plan = plan_campaign(git_repo, campaign)
    assert {p for u in plan.units for p in u.paths} >= {"a.py", "b.py"}
    # one unit over both files, so the agent takes two steps (one per file)
    first = plan.units[0]
    unit = WorkUnit("both", campaign.name, first.base_commit,
                    tuple(s for u in plan.units for s in u.write_set), (),
                    tuple(f for u in plan.units for f in u.findings))
    assert unit.paths == ("a.py", "b.py")
    # the agent also logs steps of its own (without diffs); the runner records replayable ones
    agent = CodemodAgent(campaign, plan.graph, store.ledger)
    env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=agent,  # type: ignore[arg-type]
                  sandbox=bwrap, workspaces=GitWorkspaces(git_repo),  # type: ignore[arg-type]
                  gates=VerifyGates(git_repo))
    result = run_unit(unit, env)
    assert result.stop_reason == "finished", result.detail
    replayable = [e for e in store.ledger.events(unit="both", kind=STEP) if "diff" in e.payload]
    assert [e.payload["arguments"]["path"] for e in replayable] == ["a.py", "b.py"]
    assert "a/a.py" in replayable[0].payload["diff"]
    assert "b.py" not in replayable[0].payload["diff"]

    argv = ["rollback", "--unit", "both", "--to", "0", "--repo", str(git_repo),
            "--store", store_url]
    assert main(argv) == 0
    tree = _worktree(capsys.readouterr().out)
    assert "utcnow" not in (tree / "a.py").read_text()
    assert (tree / "b.py").read_text() == UTC_CODE  # step 1 (b.py) is not applied
    assert repo_untouched(git_repo)
    assert main(["ledger", "verify", "--store", store_url]) == 0
