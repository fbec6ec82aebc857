"""A free-form task's verdict names what it was judged with (issue 13: the loaded campaign is
passed down, never re-read by name): the task's own ad-hoc campaign, its version and its gates.
Before, the unit stage looked the task's campaign up by its name ``task-...`` - no such file -
and keyed the verdict with no campaign version and no gates."""

from __future__ import annotations

from pathlib import Path

from fleet.agents.scripted import ScriptedModel, tool_call, tool_response
from fleet.store import open_store
from fleet.unit import TaskRequest, run_task, task_campaign
from fleet.unit._task import TASK_GATES
from sandbox import Sandbox
from tests.conftest import commit_files


def test_a_tasks_verdict_is_keyed_with_the_tasks_own_campaign(
    git_repo: Path, tmp_path: Path, bwrap: Sandbox
) -> None:
    commit_files(git_repo, {"calc.py": "def f():\n    return 1\n"}, "calc")
    request = TaskRequest(task="make f return 2", target_files=("calc.py",))
    model = ScriptedModel([
        tool_response(tool_call("replace_symbol", symbol="calc.py::f",
                                source="def f():\n    return 2\n")),
        tool_response(tool_call("finish", summary="f returns 2")),
    ])
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        result = run_task(request, git_repo, store, bwrap, model=model)
    assert result.status in ("verified", "partial", "rejected"), result
    judged = result.judged_with
    assert judged["gates"] == list(TASK_GATES)
    assert judged["campaign_version"]  # the ad-hoc campaign as loaded, hashed
    assert result.campaign == task_campaign(request).name
