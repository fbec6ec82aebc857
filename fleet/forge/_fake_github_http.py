"""The HTTP side of ``FakeGitHub`` (``fleet/forge/fake_github.py``): its request handler, its
error response, its clock, ``Link`` pagination, and the Checks API endpoints
(``POST /repos/{o}/{r}/check-runs``, ``GET .../check-runs/{id}``,
``GET .../commits/{ref}/check-runs``), with GitHub's shapes and validation."""

from __future__ import annotations

import json
import re
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

if TYPE_CHECKING:
    from fleet.forge.fake_github import FakeGitHub, _Repo

__all__ = ["BOT", "JSON", "Handler", "HttpError", "check_runs", "now", "page"]

JSON = dict[str, Any]
BOT = {"login": "fleet-bot", "id": 1, "type": "Bot", "site_admin": False}


class HttpError(Exception):
    """A GitHub error response: status, message and the ``errors`` list."""

    def __init__(self, status: int, message: str, errors: list[JSON] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def page(url: str, query: dict[str, str], items: list[Any]) -> tuple[int, Any, dict]:
    """One page of ``items`` as GitHub pages a list (``per_page`` <= 100, ``page`` from 1),
    with a ``Link: <url?...page=N+1>; rel="next"`` header while more follow."""
    per_page = max(1, min(int(query.get("per_page", 30)), 100))
    number = max(1, int(query.get("page", 1)))
    chunk = items[(number - 1) * per_page: number * per_page]
    headers = {}
    if number * per_page < len(items):
        following = urlencode({**query, "page": number + 1})
        headers["Link"] = f'<{url}?{following}>; rel="next"'
    return 200, chunk, headers


def check_runs(fake: FakeGitHub, repo: _Repo, method: str, sub: str, query: dict[str, str],
                body: Any) -> tuple[int, Any, dict] | None:
    """The Checks API: create a check run on a commit, read one, list a commit's."""
    api = f"{fake.base_url}/repos/{repo.full_name}"
    if sub == "/check-runs" and method == "POST":
        for name in ("name", "head_sha"):
            if not body.get(name):
                raise HttpError(422, "Validation Failed",
                                 [{"resource": "CheckRun", "field": name, "code": "missing_field"}])
        status = body.get("status") or ("completed" if body.get("conclusion") else "queued")
        if status == "completed" and body.get("conclusion") not in (
                "action_required", "cancelled", "failure", "neutral", "success", "skipped",
                "stale", "timed_out"):
            raise HttpError(422, "Validation Failed",
                             [{"resource": "CheckRun", "field": "conclusion", "code": "invalid"}])
        fake._next_id += 1
        output = body.get("output") or {}
        run = {"id": fake._next_id, "node_id": f"CR_{fake._next_id}", "name": body["name"],
               "head_sha": body["head_sha"], "status": status,
               "conclusion": body.get("conclusion"), "external_id": body.get("external_id"),
               "details_url": body.get("details_url"),
               "started_at": body.get("started_at") or now(),
               "completed_at": body.get("completed_at") or (now() if status == "completed"
                                                              else None),
               "output": {"title": output.get("title"), "summary": output.get("summary"),
                          "text": output.get("text"), "annotations_count": 0},
               "url": f"{api}/check-runs/{fake._next_id}",
               "html_url": f"{fake.base_url}/{repo.full_name}/runs/{fake._next_id}",
               "app": {"id": 1, "slug": "fleet", "name": "fleet"}}
        repo.check_runs.append(run)
        return 201, run, {}
    one = re.fullmatch(r"/check-runs/(\d+)", sub)
    if one and method == "GET":
        found = next((r for r in repo.check_runs if r["id"] == int(one.group(1))), None)
        if found is None:
            raise HttpError(404, "Not Found")
        return 200, found, {}
    listed = re.fullmatch(r"/commits/([^/]+)/check-runs", sub)
    if listed and method == "GET":
        ref = listed.group(1)
        sha = ref if re.fullmatch(r"[0-9a-f]{40}", ref) else (repo.ref_sha(ref) or ref)
        runs = [r for r in repo.check_runs if r["head_sha"] == sha
                and query.get("check_name") in (None, r["name"])]
        status, chunk, headers = page(f"{api}{sub}", query, list(reversed(runs)))
        return status, {"total_count": len(runs), "check_runs": chunk}, headers
    return None


class Handler(BaseHTTPRequestHandler):
    server_version = "FakeGitHub/1.0"

    def _dispatch(self) -> None:
        fake: FakeGitHub = self.server.fake  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
            status, payload, headers = fake.handle(self.command, self.path, self.headers, body)
        except HttpError as exc:
            status, headers = exc.status, {}
            payload = {"message": exc.message,
                       "documentation_url": "https://docs.github.com/rest"}
            if exc.errors:
                payload["errors"] = exc.errors
        except (ValueError, KeyError, TypeError) as exc:
            status, payload, headers = 400, {"message": f"Problems parsing JSON: {exc}"}, {}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-RateLimit-Limit", "5000")
        self.send_header("X-RateLimit-Remaining", "4999")
        self.send_header("X-RateLimit-Reset", str(int(time.time()) + 3600))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _dispatch

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests
        pass
