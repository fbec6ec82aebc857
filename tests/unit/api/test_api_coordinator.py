"""The coordinator over real HTTP: uvicorn on 127.0.0.1 (free port), a real SQLite store, and a
client that speaks only ``requests``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from fleet.api import JobDispatchBody, create_app, serve_in_thread
from fleet.store import Store, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as opened:
        yield opened


@pytest.fixture
def launched() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def base(store: Store, git_repo: Path, launched: list[tuple[str, str]]) -> Iterator[str]:
    def launcher(job_id: str, body: JobDispatchBody) -> str:
        launched.append((job_id, body.task))
        return f"run-{len(launched)}"

    running = serve_in_thread(create_app(store, git_repo, launcher=launcher))
    try:
        yield running.url
    finally:
        running.stop()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def post(base: str, path: str, token: str | None, body: dict[str, Any]) -> requests.Response:
    headers = auth(token) if token else {}
    return requests.post(base + path, json=body, headers=headers, timeout=10)


def test_lease_round_trip(base: str, store: Store) -> None:
    token, _ = store.tokens.create("agent-a", ["leases"])
    other, _ = store.tokens.create("agent-b", ["leases"])
    got = post(base, "/v1/leases/acquire", token, {"file_path": "pkg/a.py", "symbol": "Foo"})
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["acquired"] is True and body["symbol"] == "pkg/a.py::Foo"
    assert body["token"] >= 1 and body["expires_at"] > 0 and body["holder"].endswith(":agent-a")
    inner = post(
        base, "/v1/leases/acquire", other, {"file_path": "pkg/a.py", "symbol": "Foo.bar"}
    ).json()
    assert inner["acquired"] is False and inner["holder"] == body["holder"]
    assert inner["lease_id"] is None and "conflicts" in inner["reason"]
    sibling = post(base, "/v1/leases/acquire", other, {"file_path": "pkg/a.py", "symbol": "Foobar"})
    assert sibling.json()["acquired"] is True
    listed = requests.get(
        base + "/v1/leases", params={"file_path": "pkg/a.py"}, headers=auth(token), timeout=10
    ).json()
    assert sorted(x["symbol"] for x in listed["leases"]) == ["pkg/a.py::Foo", "pkg/a.py::Foobar"]
    assert post(base, "/v1/leases/renew", token, {"ttl_s": 120}).json() == {"count": 1}
    assert post(base, "/v1/leases/release", other, {"lease_id": body["lease_id"]}).json() == {
        "count": 0
    }  # not other's lease
    assert post(base, "/v1/leases/release", token, {"lease_id": body["lease_id"]}).json() == {
        "count": 1
    }
    again = post(base, "/v1/leases/acquire", other, {"file_path": "pkg/a.py", "symbol": "Foo.bar"})
    assert again.json()["acquired"] is True and again.json()["token"] > body["token"]


def test_jobs_dispatch_queue_and_launcher(
    base: str, store: Store, launched: list[tuple[str, str]]
) -> None:
    token, _ = store.tokens.create("ci", ["jobs"])
    body = {
        "task": "retire old_api",
        "target_files": ["pkg/a.py"],
        "sandbox": "bwrap",
        "model": "codemod",
    }
    first = post(base, "/v1/jobs/dispatch", token, body)
    assert first.status_code == 200, first.text
    job_id = first.json()["job_id"]
    second = post(base, "/v1/jobs/dispatch", token, body).json()["job_id"]
    assert second != job_id
    assert launched == [(job_id, "retire old_api"), (second, "retire old_api")]
    status = requests.get(f"{base}/v1/jobs/{job_id}", headers=auth(token), timeout=10).json()
    assert status["status"] == "queued" and status["run_id"] == "run-1"
    assert status["target_files"] == ["pkg/a.py"] and status["sandbox"] == "bwrap"
    (task,) = store.queue.claim("worker", ["job"])
    store.queue.complete(task.task_id, {"branch": "fleet/x"})
    done = requests.get(f"{base}/v1/jobs/{job_id}", headers=auth(token), timeout=10).json()
    assert done["status"] == "done" and done["result"] == {"branch": "fleet/x"}
    missing = requests.get(f"{base}/v1/jobs/nope", headers=auth(token), timeout=10)
    assert missing.status_code == 404
    store.controls.engage("stop")
    assert post(base, "/v1/jobs/dispatch", token, body).status_code == 409


def test_auth_errors(base: str, store: Store) -> None:
    leases_only, info = store.tokens.create("a", ["leases"])
    admin, _ = store.tokens.create("root", ["admin"])
    lease = {"file_path": "a.py", "symbol": "X"}
    no_token = post(base, "/v1/leases/acquire", None, lease)
    assert no_token.status_code == 401 and no_token.headers["WWW-Authenticate"] == "Bearer"
    assert post(base, "/v1/leases/acquire", "fleet_x_y", lease).status_code == 401
    assert post(base, "/v1/leases/acquire", leases_only + "x", lease).status_code == 401
    job = {"task": "t", "target_files": ["a.py"]}
    wrong_scope = post(base, "/v1/jobs/dispatch", leases_only, job)
    assert wrong_scope.status_code == 403 and "jobs" in wrong_scope.json()["detail"]
    assert post(base, "/v1/jobs/dispatch", admin, job).status_code == 200  # admin may do all
    kill = post(base, "/v1/admin/kill-switch", admin, {"engaged": True, "reason": "drill"})
    assert kill.json() == {"engaged": True, "reason": "drill"}
    assert post(base, "/v1/admin/kill-switch", leases_only, {"engaged": False}).status_code == 403
    store.tokens.revoke(info.token_id)
    assert post(base, "/v1/leases/acquire", leases_only, lease).status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"symbol": "X"}, "file_path"),
        ({"file_path": "a.py", "mode": "exclusive"}, "mode"),
        ({"file_path": "a.py", "ttl_s": -1}, "ttl_s"),
        ({"file_path": "a.py", "ttl_s": "soon"}, "ttl_s"),
        ({"file_path": "a.py", "colour": "red"}, "colour"),
    ],
)
def test_malformed_body_is_422_naming_the_field(
    base: str, store: Store, body: dict[str, Any], field: str
) -> None:
    token, _ = store.tokens.create("a", ["leases"])
    response = post(base, "/v1/leases/acquire", token, body)
    assert response.status_code == 422
    assert [d["loc"][-1] for d in response.json()["detail"]] == [field]


@pytest.mark.parametrize(
    "path", ["../outside.py", "/etc/passwd", "pkg/../../x.py", "a/../../b.py", "pkg\\..\\x.py"]
)
def test_paths_outside_the_repository_are_400(base: str, store: Store, path: str) -> None:
    token, _ = store.tokens.create("a", ["leases", "jobs"])
    assert post(base, "/v1/leases/acquire", token, {"file_path": path}).status_code == 400
    job = {"task": "t", "target_files": ["ok.py", path]}
    assert post(base, "/v1/jobs/dispatch", token, job).status_code == 400
    listed = requests.get(
        base + "/v1/leases", params={"file_path": path}, headers=auth(token), timeout=10
    )
    assert listed.status_code == 400


def test_symlink_escaping_the_repository_is_400(base: str, store: Store, git_repo: Path) -> None:
    (git_repo / "escape").symlink_to("/etc")
    token, _ = store.tokens.create("a", ["leases"])
    response = post(base, "/v1/leases/acquire", token, {"file_path": "escape/passwd"})
    assert response.status_code == 400


def test_client_written_against_the_openapi_schema(base: str, store: Store) -> None:
    """A client that discovers routes and fields from /openapi.json, using only requests."""
    schema = requests.get(base + "/openapi.json", timeout=10).json()
    paths = schema["paths"]
    assert {
        "/v1/leases/acquire",
        "/v1/leases/release",
        "/v1/leases/renew",
        "/v1/leases",
        "/v1/jobs/dispatch",
        "/v1/jobs/{job_id}",
    } <= set(paths)
    components = schema["components"]["schemas"]
    acquire_ref = paths["/v1/leases/acquire"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]["$ref"]
    acquire_schema = components[acquire_ref.rsplit("/", 1)[1]]
    assert {"file_path", "symbol", "mode", "ttl_s"} <= set(acquire_schema["properties"])
    assert acquire_schema["required"] == ["file_path"]
    assert "HTTPBearer" in schema["components"]["securitySchemes"]

    token, _ = store.tokens.create("client", ["leases", "jobs"])
    session = requests.Session()
    session.headers.update(auth(token))
    body = {name: None for name in acquire_schema["required"]} | {
        "file_path": "svc/api.py",
        "symbol": "Handler.get",
        "ttl_s": 30,
    }
    lease = session.post(base + "/v1/leases/acquire", json=body, timeout=10).json()
    response_ref = paths["/v1/leases/acquire"]["post"]["responses"]["200"]["content"][
        "application/json"
    ]["schema"]["$ref"]
    response_fields = set(components[response_ref.rsplit("/", 1)[1]]["properties"])
    assert {"acquired", "lease_id", "token", "expires_at", "holder"} <= response_fields
    assert set(lease) == response_fields and lease["acquired"] is True
    job = session.post(
        base + "/v1/jobs/dispatch",
        json={"task": "fix", "target_files": ["svc/api.py"], "sandbox": "bwrap", "model": "x"},
        timeout=10,
    ).json()
    status = session.get(base + "/v1/jobs/" + job["job_id"], timeout=10).json()
    assert status["job_id"] == job["job_id"] and status["status"] == "queued"
    assert session.post(base + "/v1/leases/release", json={}, timeout=10).json() == {"count": 1}
