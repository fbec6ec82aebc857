"""The real anthropic SDK against the local fake Messages API: retries, faults, the tool loop."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.agents.anthropic_model import AnthropicModel, ModelUnavailable, usage_cost
from fleet.agents.claude import ClaudeAgent
from fleet.agents.fake_messages import FakeMessagesServer
from fleet.agents.scripted import text_response, tool_call, tool_response
from fleet.errors import ConfigError
from fleet.types import Budget, StopReason, Workspace, WorkUnit

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")


_made: list[AnthropicModel] = []


@pytest.fixture(autouse=True)
def _close_models() -> Iterator[None]:
    yield
    while _made:
        _made.pop().close()


def _model(server: FakeMessagesServer, **kw: object) -> AnthropicModel:
    waits: list[float] = []  # recorded in model.retries; no real sleeping in tests
    model = AnthropicModel(model="claude-fake", base_url=server.base_url,
                           sleep=waits.append, **kw)  # type: ignore[arg-type]
    _made.append(model)
    return model


def test_a_plain_reply_round_trips_through_the_sdk() -> None:
    with FakeMessagesServer([text_response("hello", input_tokens=7, output_tokens=3)]) as server:
        reply = _model(server).complete("sys", MESSAGES, [], 100)
    assert reply["content"] == [{"type": "text", "text": "hello"}]
    assert reply["usage"]["input_tokens"] == 7
    sent = server.requests[0]
    auth = sent["headers"].get("x-api-key") or sent["headers"]["authorization"]
    assert auth.endswith("sk-ant-test-key")
    assert sent["body"]["system"] == "sys" and sent["body"]["model"] == "claude-fake"


def test_a_model_dropped_unclosed_closes_its_connections() -> None:
    import gc
    import warnings

    with FakeMessagesServer([text_response("hello")]) as server:
        model = AnthropicModel(model="claude-fake", base_url=server.base_url)
        model.complete("sys", MESSAGES, [], 100)  # a pooled keep-alive connection now
        client = model._client
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            del model  # an owner that forgot close()
            gc.collect()
        assert client.is_closed


def test_429_and_529_are_retried_honouring_retry_after() -> None:
    script = [
        {"fault": "rate_limit", "retry_after": 7},
        {"fault": "overloaded"},
        {"fault": "server_error"},
        text_response("ok"),
    ]
    with FakeMessagesServer(script) as server:
        model = _model(server, backoff_base_s=0.25)
        reply = model.complete("s", MESSAGES, [], 10)
    assert reply["content"][0]["text"] == "ok"
    assert [r["reason"] for r in model.retries] == ["HTTP 429", "HTTP 529", "HTTP 500"]
    assert model.retries[0]["wait_s"] == 7.0  # the server's retry-after, not our backoff
    assert 0.25 <= model.retries[1]["wait_s"] <= 0.5 and 0.5 <= model.retries[2]["wait_s"] <= 1.0
    assert len(server.requests) == 4


def test_a_slow_response_times_out_and_is_retried() -> None:
    # spare "fast" replies keep the test stable on a loaded machine (a retry may time out too)
    script = [{"delay": 4.0, "response": text_response("late")}, *[text_response("fast")] * 3]
    with FakeMessagesServer(script) as server:
        model = _model(server, timeout_s=1.0)
        reply = model.complete("s", MESSAGES, [], 10)
    assert reply["content"][0]["text"] == "fast"
    assert model.retries[0]["reason"] == "APITimeoutError"


def test_retries_run_out_into_model_unavailable() -> None:
    with FakeMessagesServer([{"fault": "overloaded"}] * 3) as server:
        model = _model(server, max_retries=2)
        with pytest.raises(ModelUnavailable, match="gave up after 3 attempts"):
            model.complete("s", MESSAGES, [], 10)
    assert len(model.retries) == 2


def test_a_missing_tool_result_is_refused_like_the_real_api() -> None:
    call = tool_call("finish", summary="x")
    bad = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [call]},
           {"role": "user", "content": "no result"}]
    with (
        FakeMessagesServer([text_response("never")]) as server,
        pytest.raises(ModelUnavailable, match="HTTP 400"),
    ):
        _model(server).complete("s", bad, [], 10)
    assert server.requests == []


def test_the_key_comes_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicModel(base_url="http://127.0.0.1:9")


def test_usage_cost_uses_the_model_price() -> None:
    cost = usage_cost("claude-sonnet-4-5", {"input_tokens": 1_000_000, "output_tokens": 100_000})
    assert cost.tokens == 1_100_000 and cost.usd == pytest.approx(4.5)
    assert usage_cost("claude-opus-4-5-x", {"input_tokens": 1_000_000}).usd == pytest.approx(5.0)


@pytest.mark.sandbox
def test_claude_agent_over_the_sdk_and_the_fake(git_repo: Path, sandbox_backend: object) -> None:
    (git_repo / "m.py").write_text("def f():\n    return 1\n")
    subprocess.run(["git", "add", "-A"], cwd=git_repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"],
                   cwd=git_repo, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=git_repo, check=True,
                          capture_output=True, text=True).stdout.strip()
    ws = Workspace(git_repo, "main", base, git_repo.parent, git_repo)
    unit = WorkUnit("u", "c", base, ("m.py::f",), (), ())
    script = [
        {"fault": "rate_limit", "retry_after": 0},
        tool_response(tool_call("replace_symbol", symbol="m.py::f",
                                source="def f():\n    return 2\n"),
                      text="Fixing f.", input_tokens=50, output_tokens=10),
        tool_response(tool_call("run", command="python -c 'import m; print(m.f())'")),
        tool_response(tool_call("finish", summary="f returns 2")),
    ]
    with FakeMessagesServer(script) as server:
        agent = ClaudeAgent(_model(server))
        outcome = agent.run(unit, ws, sandbox_backend, Budget(max_tool_calls=10))  # type: ignore[arg-type]
    assert outcome.stop_reason is StopReason.FINISHED, outcome.detail
    assert "+    return 2" in outcome.patch
    assert outcome.steps[1].result.split("\n", 1)[1].strip() == "2"
    assert outcome.cost.input_tokens == 70
    # the conversation the fake saw carried each tool_result back (else it answers 400)
    last = server.requests[-1]["body"]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert last[-1]["content"][0]["tool_use_id"] == last[-2]["content"][0]["id"]


def test_claude_reviewer_over_the_sdk_one_call_per_lens() -> None:
    from fleet.verify import ClaudeReviewer, ReviewInput
    from fleet.verify._patch import parse_patch
    from fleet.verify.reviewer import gate_review

    patch = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f():\n"
        "-    return 1\n+    return 2\n"
    )
    accept = '{"verdict": "accept", "reason": "m.py:2 returns the documented value"}'
    script = [text_response(accept), {"fault": "overloaded"}, text_response(accept),
              text_response('{"verdict": "reject", "reason": "m.py:2 breaks callers"}')]
    with FakeMessagesServer(script) as server:
        reviewer = ClaudeReviewer(_model(server))
        got = gate_review(reviewer, ReviewInput(patch, parse_patch(patch), ("m.py::f",)))
    assert got.status == "reject" and "review:runs: m.py:2 breaks callers" in got.evidence
    assert [r["body"]["messages"][0]["content"].split(".")[0] for r in server.requests] == [
        "Lens: correctness", "Lens: security", "Lens: security", "Lens: runs",
    ]
    assert "adversarial" in server.requests[0]["body"]["system"]
