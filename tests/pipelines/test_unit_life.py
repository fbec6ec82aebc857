"""The life of one unit over real parts: SQLite leases and ledger, git worktrees, the Claude
agent loop driven by a ScriptedModel (the model is the only double), the real gates in a real
bubblewrap sandbox."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fleet.agents.claude import ClaudeAgent
from fleet.agents.scripted import ScriptedModel, text_response, tool_call, tool_response
from fleet.store import Store
from fleet.types import Acquired, Finding, LeaseRequest, WorkUnit
from fleet.unit import (
    GitWorkspaces,
    UnitEnv,
    VerifyGates,
    latest_results,
    repo_untouched,
    run_unit,
    run_units,
)
from sandbox import Sandbox
from tests.conftest import git

pytestmark = [pytest.mark.sandbox]

RATE = "calc/rates.py::rate"


def _unit(repo: Path, key: str = "u1", symbol: str = RATE) -> WorkUnit:
    path = symbol.split("::")[0]
    # the site the scripted agents rewrite (``return 2``, line 2 of calc/rates.py): a unit whose
    # patch leaves its finding's lines as they were is partial, not verified
    finding = Finding(f"fp-{key}", "calc", "rule", symbol, path, 2, 4, 16, 24, "return 2",
                      "fix it")
    return WorkUnit(key=key, campaign="calc", base_commit=git(repo, "rev-parse", "HEAD").strip(),
                    write_set=(symbol,), read_set=(), findings=(finding,))


def _agent(*turns: dict[str, object]) -> ClaudeAgent:
    return ClaudeAgent(model=ScriptedModel(list(turns)))  # type: ignore[arg-type]


def _replace(source: str, symbol: str = RATE) -> list[dict[str, object]]:
    return [tool_response(tool_call("replace_symbol", symbol=symbol, source=source)),
            tool_response(tool_call("finish", summary="done"))]


def _env(store: Store, repo: Path, sandbox: Sandbox, agent: ClaudeAgent, **kw: object
         ) -> UnitEnv:
    return UnitEnv(leases=store.leases, ledger=store.ledger, agent=agent, sandbox=sandbox,
                   workspaces=GitWorkspaces(repo), gates=VerifyGates(repo), **kw)  # type: ignore[arg-type]


def test_a_good_patch_is_verified_and_committed_on_its_branch(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    agent = _agent(*_replace("def rate():\n    return 4\n"))
    result = run_unit(_unit(calc_repo), _env(store, calc_repo, bwrap, agent))
    assert result.status == "verified", result.detail
    assert result.commit and result.branch == "fleet/calc/u1"
    assert "return 4" in git(calc_repo, "show", f"{result.branch}:calc/rates.py")
    assert {v.gate for v in result.verdicts} >= {"applies", "parses", "lease_scope",
                                                 "impacted_tests"}
    assert all(v.passed for v in result.verdicts)
    assert result.grants and result.grants[0].symbol == RATE
    assert repo_untouched(calc_repo) and git(calc_repo, "rev-parse", "--abbrev-ref",
                                             "HEAD").strip() == "main"
    kinds = [e.kind for e in store.ledger.events(unit="u1")]
    assert kinds[0] == "lease.granted" and kinds[-1] == "unit.finished"
    assert "agent.finished" in kinds and "gate.verdict" in kinds
    assert latest_results(store.ledger, "calc")["u1"].status == "verified"
    # the leases were released: someone else can take the symbol now
    assert isinstance(store.leases.try_acquire("x", "x", [LeaseRequest(RATE, "write")], 5),
                      Acquired)
    assert store.ledger.verify() == []


def test_a_patch_that_breaks_a_test_is_rejected_by_that_gate(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    agent = _agent(*_replace("def rate():\n    return 100\n"))
    result = run_unit(_unit(calc_repo), _env(store, calc_repo, bwrap, agent))
    assert result.status == "rejected"
    assert result.rejected_by == "impacted_tests"
    assert result.commit is None
    # the rejected unit's branch is gone and the user's checkout untouched
    assert git(calc_repo, "branch", "--list", "fleet/*").strip() == ""
    assert repo_untouched(calc_repo)


def test_a_failed_agent_leaves_the_repository_untouched(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    before = git(calc_repo, "for-each-ref")
    agent = _agent(text_response("I cannot do this."), text_response("still no"),
                   text_response("no"), text_response("no"))
    result = run_unit(_unit(calc_repo), _env(store, calc_repo, bwrap, agent))
    assert result.status == "agent_failed"
    assert result.patch == "" and result.verdicts == ()
    assert repo_untouched(calc_repo)
    assert git(calc_repo, "for-each-ref") == before


def test_refused_leases_back_off_and_retry_until_granted(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    held = store.leases.try_acquire("other", "other", [LeaseRequest(RATE, "write")], 30)
    assert isinstance(held, Acquired)
    timer = threading.Timer(1.0, store.leases.release, args=("other",))
    timer.start()
    agent = _agent(*_replace("def rate():\n    return 4\n"))
    env = _env(store, calc_repo, bwrap, agent, deadline_s=0.3)
    try:
        [result] = run_units([_unit(calc_repo)], env, parallel=1, attempts=6, backoff_s=0.2)
    finally:
        timer.join()
    assert result.status == "verified"
    refused = store.ledger.events(kind="unit.lease_refused", unit="u1")
    assert refused, "the first attempt should have been refused"


def test_kill_switch_stops_the_unit_before_it_takes_leases(
    calc_repo: Path, store: Store, bwrap: Sandbox
) -> None:
    store.controls.engage("test")
    agent = _agent(*_replace("def rate():\n    return 4\n"))
    env = _env(store, calc_repo, bwrap, agent, killed=store.controls.engaged)
    result = run_unit(_unit(calc_repo), env)
    assert result.status == "killed"
    assert store.ledger.events(kind="lease.granted") == []


CRASHER = r"""
import sys, time
from pathlib import Path
from fleet.store import open_store
from fleet.types import Finding, WorkUnit
from fleet.unit import GitWorkspaces, UnitEnv, VerifyGates, run_unit
from sandbox import make_sandbox

class Hang:
    name = "hang"
    def run(self, unit, workspace, sandbox, budget):
        print("agent started", flush=True)
        time.sleep(600)

repo, db, base = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
store = open_store(db)
f = Finding("fp", "calc", "rule", "calc/rates.py::rate", "calc/rates.py", 1, 0, 0, 1, "x", "m")
unit = WorkUnit("u1", "calc", base, ("calc/rates.py::rate",), (), (f,))
env = UnitEnv(leases=store.leases, ledger=store.ledger, agent=Hang(),
              sandbox=make_sandbox("bwrap"), workspaces=GitWorkspaces(repo),
              gates=VerifyGates(repo), ttl_s=1.5)
run_unit(unit, env)
"""


def test_a_crashed_unit_leaves_its_leases_to_expire_and_is_run_again(
    calc_repo: Path, store: Store, bwrap: Sandbox, tmp_path: Path
) -> None:
    unit = _unit(calc_repo)
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASHER, str(calc_repo), store.url, unit.base_commit],
        stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "agent started"
        held = store.leases.try_acquire("probe", "probe", [LeaseRequest(RATE, "write")], 5)
        assert not isinstance(held, Acquired), "the running unit holds its lease"
    finally:
        proc.kill()  # SIGKILL: no cleanup, no release
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert "u1" not in latest_results(store.ledger, "calc")  # never finished: still pending
    time.sleep(2.0)  # the TTL (1.5 s) passes without a heartbeat
    subprocess.run(["git", "worktree", "prune"], cwd=calc_repo, check=True)
    from fleet.forge.worktree import gc

    gc(calc_repo)  # what `fleet gc` does after a crash
    agent = _agent(*_replace("def rate():\n    return 4\n"))
    result = run_unit(unit, _env(store, calc_repo, bwrap, agent))
    assert result.status == "verified", result.detail
    assert repo_untouched(calc_repo)
