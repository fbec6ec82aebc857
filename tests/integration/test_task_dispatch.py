"""Free-form tasks end to end: ``POST /v1/jobs/dispatch`` with a free-text task and two target
files on a real copy of examples/acme-monorepo, the Claude agent over the real anthropic SDK
against the local fake Messages API (scripted: read, edit two symbols, run the tests, fix the
failure they show, run them again, finish), the same gates (the Claude reviewer among them),
the unit's branch as the handover, the status on ``GET /v1/jobs/{id}``; and ``fleet task``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from fleet.agents.fake_messages import FakeMessagesServer
from fleet.agents.scripted import text_response, tool_call, tool_response
from fleet.api import create_app, serve_in_thread
from fleet.store import Store, open_store
from fleet.unit import TaskLauncher, repo_untouched
from tests.conftest import git

pytestmark = pytest.mark.sandbox

TASK = "Load YAML safely: use yaml.safe_load in the plan catalog and settings readers"
FILES = ["tenants/plans.py", "common/config.py"]
LOAD = '''def load_catalog(path: str | Path) -> PlanCatalog:
    """Read ``plans: [...]`` from a YAML file."""
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    return PlanCatalog([PlanModel.parse_obj(entry) for entry in data.get("plans", [])])
'''
PARSE = '''def parse_catalog(text: str) -> PlanCatalog:
    """Parse a catalog given inline (used by the admin API's dry-run)."""
    data = yaml.safe_load(text) or {}
    return PlanCatalog([PlanModel.parse_obj(entry) for entry in data.get("plans", [])])
'''
SETTINGS_BROKEN = '''def load_settings(path: str | Path,
                  environ: dict[str, str] | None = None) -> Settings:
    """Read settings from the YAML file at ``path``."""
    with open(path, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh.read)
    sections = _merge(DEFAULTS, raw or {})
    return Settings(_apply_env(sections, dict(os.environ if environ is None else environ)))
'''
SETTINGS = SETTINGS_BROKEN.replace("yaml.safe_load(fh.read)", "yaml.safe_load(fh)")
TESTS = ["tests/test_config_yaml.py"]


def _script() -> list[dict[str, Any]]:
    accept = '{"verdict": "accept", "reason": "tenants/plans.py:43 safe_load reads the same data"}'
    return [
        tool_response(tool_call("read_symbol", symbol="tenants/plans.py::load_catalog"),
                      tool_call("read_symbol", symbol="common/config.py::load_settings")),
        tool_response(tool_call("replace_symbol", symbol="tenants/plans.py::load_catalog",
                                source=LOAD),
                      tool_call("replace_symbol", symbol="common/config.py::load_settings",
                                source=SETTINGS_BROKEN)),
        tool_response(tool_call("run_tests", paths=TESTS)),
        tool_response(tool_call("replace_symbol", symbol="common/config.py::load_settings",
                                source=SETTINGS),
                      tool_call("replace_symbol", symbol="tenants/plans.py::parse_catalog",
                                source=PARSE),
                      text="fh.read is the method, not the text: pass the stream."),
        tool_response(tool_call("run_tests", paths=TESTS)),
        tool_response(tool_call("finish", summary="every YAML reader uses safe_load")),
        text_response(accept), text_response(accept), text_response(accept),  # the reviewer
    ]


@pytest.fixture
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-task-test")


def _wait(base: str, job: str, token: str, timeout: float = 300.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = requests.get(f"{base}/v1/jobs/{job}", headers={"Authorization": f"Bearer {token}"},
                           timeout=10).json()
        if got["status"] in ("succeeded", "failed"):
            return dict(got)
        time.sleep(0.5)
    raise AssertionError(f"job {job} still {got['status']} after {timeout}s")


def _serve(store: Store, repo: Path, bwrap: object, environ: dict[str, str] | None = None
           ) -> Iterator[tuple[str, TaskLauncher]]:
    launcher = TaskLauncher(repo, store, lambda _: bwrap, environ=environ)  # type: ignore[arg-type,return-value]
    running = serve_in_thread(create_app(store, repo, launcher=launcher))
    try:
        yield running.url, launcher
    finally:
        launcher.join(60)
        running.stop()


def test_a_dispatched_free_form_task_runs_to_a_verified_branch(
    api_env: None, acme_repo: Path, tmp_path: Path, bwrap: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = (acme_repo / "common/config.py").read_text()
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store, \
            FakeMessagesServer(_script()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        token, _ = store.tokens.create("client", ["jobs"])
        for base, _launcher in _serve(store, acme_repo, bwrap):
            sent = requests.post(f"{base}/v1/jobs/dispatch", json={
                "task": TASK, "target_files": FILES, "sandbox": "bwrap",
                "model": "claude-sonnet-4-6"}, headers={"Authorization": f"Bearer {token}"},
                timeout=10)
            assert sent.status_code == 200, sent.text
            job = sent.json()["job_id"]
            status = _wait(base, job, token)
        requests_seen = [r["body"] for r in fake.requests]
    assert status["status"] == "succeeded", (status["error"], status["result"])
    result = status["result"]
    assert result["status"] == "verified"
    assert [v["gate"] for v in result["verdicts"]] == [
        "applies", "parses", "lease_scope", "security", "impacted_tests", "review"]
    # the agent's brief is the task, its model the one dispatched; the reviewer ran on the fake
    assert TASK in requests_seen[0]["messages"][0]["content"][-1]["text"]
    assert {r["model"] for r in requests_seen} == {"claude-sonnet-4-6"}
    assert len(requests_seen) == 9
    # the failing run the agent saw, and the passing one after its fix
    failing = requests_seen[3]["messages"][-1]["content"][0]
    assert failing["is_error"] and "AttributeError" in failing["content"]
    assert "FAILED tests/test_config_yaml.py::test_load_settings_with_env_override" in (
        failing["content"])
    passing = requests_seen[5]["messages"][-1]["content"][0]
    assert not passing["is_error"] and passing["content"].startswith("exit code 0")
    assert "XXX" in passing["content"]  # the three fixed readers' xfail tests now pass
    # handed over on the unit's branch; the user's checkout is untouched
    branch = result["branch"]
    assert branch.startswith(f"fleet/task-{job[:12].lower()}/")
    plans = git(acme_repo, "show", f"{branch}:tenants/plans.py")
    assert plans.count("yaml.safe_load(") == 2 and "yaml.load(" not in plans
    config = git(acme_repo, "show", f"{branch}:common/config.py")
    assert "raw = yaml.safe_load(fh)\n" in config
    assert repo_untouched(acme_repo) and (acme_repo / "common/config.py").read_text() == original


def test_without_an_api_key_the_job_fails_at_once_saying_so(
    acme_repo: Path, tmp_path: Path, bwrap: object, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        token, _ = store.tokens.create("client", ["jobs"])
        for base, launcher in _serve(store, acme_repo, bwrap):
            sent = requests.post(f"{base}/v1/jobs/dispatch", json={
                "task": TASK, "target_files": FILES}, headers={"Authorization": f"Bearer {token}"},
                timeout=10)
            job = sent.json()["job_id"]
            got = requests.get(f"{base}/v1/jobs/{job}",
                               headers={"Authorization": f"Bearer {token}"}, timeout=10).json()
            assert not launcher.threads  # nothing started, nothing queued to wait for
    assert got["status"] == "failed"
    assert "no API key configured" in got["error"] and "ANTHROPIC_API_KEY" in got["error"]


def test_fleet_task_is_the_cli_twin(
    api_env: None, acme_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fleet_pipelines.cli import main

    with FakeMessagesServer(_script()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        code = main(["task", TASK, "--files", *FILES, "--repo", str(acme_repo),
                     "--sandbox", "bwrap", "--store", f"sqlite:///{tmp_path / 'f.db'}"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "# verified (finished)" in captured.err and "# branch fleet/task-" in captured.err
    assert "+        raw = yaml.safe_load(fh)" in captured.out
    assert "fh.read)" not in captured.out
    assert repo_untouched(acme_repo)
    assert main(["task", TASK, "--files", "no/such.py", "--repo", str(acme_repo),
                 "--sandbox", "bwrap", "--store", f"sqlite:///{tmp_path / 'f.db'}"]) == 2
    assert "target_files: not an indexed source file" in capsys.readouterr().err
