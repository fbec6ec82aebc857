"""A local fake of the Anthropic Messages API: real HTTP on 127.0.0.1, in a background thread.

``POST /v1/messages`` replays a script, one entry per request, in order. An entry is either a
Messages API response dict (see :mod:`fleet.agents.scripted` for builders) or a fault:

- ``{"fault": "rate_limit", "retry_after": 1.5}`` -> HTTP 429 with a ``retry-after`` header;
- ``{"fault": "overloaded"}`` -> HTTP 529 ``overloaded_error``;
- ``{"fault": "server_error"}`` -> HTTP 500;
- ``{"delay": 2.0, "response": {...}}`` -> the response after a delay (to drive client timeouts).

Like the real API it answers 401 without an ``x-api-key``, and 400 when the request does not
carry a ``tool_result`` for every ``tool_use`` of the previous assistant turn. Every request is
recorded in ``requests`` (headers lowercased, JSON body) for tests to inspect. Reach it with the
real SDK: ``anthropic.Anthropic(api_key=..., base_url=server.base_url)``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["FakeMessagesServer"]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_FAULTS = {"rate_limit": 429, "overloaded": 529, "server_error": 500}


class FakeMessagesServer:
    """Serves a script of responses and faults on ``http://127.0.0.1:<port>``.

    Use as a context manager (starts and stops the thread). ``exhausted`` answers once the
    script has run out: a 500 ``api_error`` naming the request number, so a runaway client is
    visible in its error.
    """

    def __init__(self, script: Sequence[dict[str, Any]], *, model: str = "claude-fake") -> None:
        self.script = list(script)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeMessagesServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self.script) - len(self.requests)

    def _next(
        self, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON body, extra headers) for one request."""
        if not headers.get("x-api-key") and not headers.get("authorization"):
            return _error(401, "x-api-key header is required")
        problem = _conversation_problem(body)
        if problem:
            return _error(400, problem)
        with self._lock:
            index = len(self.requests)
            self.requests.append({"headers": headers, "body": body, "at": time.time()})
            entry = self.script[index] if index < len(self.script) else None
        if entry is None:
            return _error(500, f"fake script exhausted at request {index + 1}")
        if "delay" in entry:
            time.sleep(float(entry["delay"]))
            entry = entry.get("response", entry)
        fault = entry.get("fault")
        if fault:
            status, extra = _FAULTS[fault], {}
            if "retry_after" in entry:
                extra["retry-after"] = str(entry["retry_after"])
            status, payload, _ = _error(status, f"fake {fault}")
            return status, payload, extra
        response = {
            "id": entry.get("id", f"msg_fake_{index + 1}"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", self.model),
            "content": entry["content"],
            "stop_reason": entry.get("stop_reason", "end_turn"),
            "stop_sequence": None,
            "usage": entry.get("usage", {"input_tokens": 0, "output_tokens": 0}),
        }
        return 200, response, {}


def _error(status: int, message: str) -> tuple[int, Any, dict[str, str]]:
    kind = _ERROR_TYPES.get(status, "api_error")
    return status, {"type": "error", "error": {"type": kind, "message": message}}, {}


def _conversation_problem(body: dict[str, Any]) -> str:
    """What the real API would refuse in the message list (tool_use without tool_result)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for i, message in enumerate(messages[:-1]):
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        wanted = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
        if not wanted:
            continue
        reply = messages[i + 1].get("content")
        given = (
            {b.get("tool_use_id") for b in reply if b.get("type") == "tool_result"}
            if isinstance(reply, list)
            else set()
        )
        missing = wanted - given
        if missing:
            return (
                f"messages.{i + 1}: tool_use ids were found without tool_result blocks "
                f"immediately after: {', '.join(sorted(missing))}"
            )
    return ""


def _handler_for(server: FakeMessagesServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.split("?", 1)[0] != "/v1/messages":
                status, payload, extra = _error(404, f"no route {self.path}")
            else:
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    status, payload, extra = _error(400, "body is not JSON")
                else:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    status, payload, extra = server._next(headers, body)
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_fake_{len(server.requests)}")
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout); nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
