"""The day budget is shared by agents in several processes through one SQLite store: together
they never spend more than the limit, and the store holds exactly what the API reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.agents.guard import BudgetGuard
from fleet.store import open_store
from fleet.types import Budget

WORKER = r'''
import json, subprocess, sys
from pathlib import Path
from fleet.agents.claude import ClaudeAgent
from fleet.agents.guard import DayBudget
from fleet.agents.scripted import ScriptedModel, tool_call, tool_response
from fleet.store import open_store
from fleet.types import Budget, Workspace, WorkUnit
from sandbox import select_sandbox

url, repo, limit = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])
repo.mkdir()
(repo / "m.py").write_text("def f():\n    return 1\n")
for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
             "commit", "-qm", "m"]):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True,
                      text=True).stdout.strip()
store = open_store(url)
step = tool_response(tool_call("search_symbols", query="f"), input_tokens=300, output_tokens=40)
model = ScriptedModel([step], repeat_last=True)
agent = ClaudeAgent(model, controls=store.controls, day_budget=DayBudget(max_cost_usd=limit),
                    max_tokens_per_turn=100)
unit = WorkUnit(repo.name, "shared", base, ("m.py::f",), (), ())
out = agent.run(unit, Workspace(repo, "main", base, repo, repo), select_sandbox("bwrap"),
                Budget())
store.close()
print(json.dumps({"stop": str(out.stop_reason), "usd": out.cost.usd,
                  "tokens": out.cost.tokens, "calls": len(model.requests)}))
'''


@pytest.mark.sandbox
def test_four_processes_share_one_day_budget(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    open_store(url).close()  # migrate once, before the race
    limit = 0.05
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, url, str(tmp_path / f"r{i}"), str(limit)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(4)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert {r["stop"] for r in results} == {"budget_day"}
    assert sum(r["calls"] for r in results) >= 2, results  # whoever came first spent it
    store = open_store(url)
    try:
        spent = store.controls.spent(BudgetGuard(Budget(), campaign="shared").day_scope)
    finally:
        store.close()
    assert spent.usd == pytest.approx(sum(r["usd"] for r in results))
    assert spent.tokens == sum(r["tokens"] for r in results)
    assert spent.usd <= limit
