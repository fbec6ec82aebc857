"""Regression tests from an outside check of the coordinator: body size, content type, lease ids,
names with control characters, paths that name no file, expired leases, and the OpenAPI error
responses. Real uvicorn on 127.0.0.1, a real SQLite store, plain ``requests``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from fleet.api import create_app, serve_in_thread
from fleet.store import Store


@pytest.fixture
def base(store: Store, git_repo: Path) -> Iterator[str]:
    running = serve_in_thread(create_app(store, git_repo, max_body=64 * 1024))
    try:
        yield running.url
    finally:
        running.stop()


@pytest.fixture
def session(store: Store) -> requests.Session:
    secret, _ = store.tokens.create("guard", ["leases", "jobs"])
    s = requests.Session()
    s.headers["Authorization"] = f"Bearer {secret}"
    return s


def test_oversized_body_is_413_and_nothing_is_leased(
    base: str, session: requests.Session, store: Store
) -> None:
    big = b'{"file_path": "' + b"a" * 100_000 + b'"}'
    declared = session.post(
        base + "/v1/leases/acquire", data=big, headers={"Content-Type": "application/json"}
    )
    assert declared.status_code == 413, declared.text
    assert "body over 65536 bytes" in declared.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer encoding
        for i in range(0, len(big), 8192):
            yield big[i : i + 8192]

    chunked = session.post(
        base + "/v1/leases/acquire", data=chunks(), headers={"Content-Type": "application/json"}
    )
    assert chunked.status_code == 413
    assert store.leases.held(None) == []
    ok = session.post(base + "/v1/leases/acquire", json={"file_path": "a.py"})
    assert ok.status_code == 200 and ok.json()["acquired"] is True


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_non_json_body_is_415(
    base: str, session: requests.Session, content_type: str | None
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    response = session.post(
        base + "/v1/jobs/dispatch",
        data=b'{"task": "t", "target_files": ["a.py"]}',
        headers=headers,
    )
    assert response.status_code == 415, response.text
    assert "application/json" in response.json()["detail"]
    vendor = session.post(
        base + "/v1/jobs/dispatch",
        data=b'{"task": "t", "target_files": ["a.py"]}',
        headers={"Content-Type": "application/vnd.fleet+json; charset=utf-8"},
    )
    assert vendor.status_code == 200


@pytest.mark.parametrize("lease_id", ["nope", "\u00b2", "-1", "1.0", "", "9" * 19])
def test_malformed_lease_id_is_422_not_500(
    base: str, session: requests.Session, lease_id: str
) -> None:
    response = session.post(base + "/v1/leases/release", json={"lease_id": lease_id})
    assert response.status_code == 422, response.text
    assert [d["loc"][-1] for d in response.json()["detail"]] == ["lease_id"]


def test_unknown_and_expired_leases_count_zero(base: str, session: requests.Session) -> None:
    unknown = session.post(base + "/v1/leases/release", json={"lease_id": "424242"})
    assert unknown.status_code == 200 and unknown.json() == {"count": 0}
    short = session.post(
        base + "/v1/leases/acquire", json={"file_path": "b.py", "ttl_s": 0.2, "holder": "s"}
    ).json()
    assert short["acquired"] is True
    time.sleep(0.5)
    renewed = session.post(base + "/v1/leases/renew", json={"ttl_s": 30, "holder": "s"})
    assert renewed.json() == {"count": 0}
    taken = session.post(
        base + "/v1/leases/acquire", json={"file_path": "b.py", "holder": "other"}
    ).json()
    assert taken["acquired"] is True and taken["token"] > short["token"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"file_path": "a.py", "symbol": "x\x00y"}, "symbol"),
        ({"file_path": "a.py", "holder": "me\nforged"}, "holder"),
        ({"file_path": "a.py", "symbol": "S" * 5000}, "symbol"),
        ({"file_path": "p" * 5000}, "file_path"),
    ],
)
def test_control_characters_and_huge_names_are_422(
    base: str, session: requests.Session, body: dict[str, str], field: str
) -> None:
    response = session.post(base + "/v1/leases/acquire", json=body)
    assert response.status_code == 422, response.text
    assert [d["loc"][-1] for d in response.json()["detail"]] == [field]


@pytest.mark.parametrize("path", [".", "./", "pkg/.."])
def test_a_path_naming_the_repository_itself_is_400(
    base: str, session: requests.Session, path: str
) -> None:
    response = session.post(base + "/v1/leases/acquire", json={"file_path": path})
    assert response.status_code == 400, response.text


def test_empty_qualified_name_means_the_whole_file(base: str, session: requests.Session) -> None:
    got = session.post(base + "/v1/leases/acquire", json={"file_path": "c.py", "symbol": "c.py::"})
    assert got.json()["symbol"] == "c.py"


def test_openapi_documents_the_error_responses(base: str) -> None:
    paths = requests.get(base + "/openapi.json", timeout=10).json()["paths"]
    acquire = paths["/v1/leases/acquire"]["post"]["responses"]
    assert {"200", "400", "401", "403", "413", "415", "422", "503"} <= set(acquire)
    assert "404" in paths["/v1/jobs/{job_id}"]["get"]["responses"]
    assert "409" in paths["/v1/jobs/dispatch"]["post"]["responses"]


def test_kill_switch_events_use_the_cli_kinds(base: str, store: Store) -> None:
    admin, _ = store.tokens.create("ops", ["admin"])
    headers = {"Authorization": f"Bearer {admin}"}
    on = requests.post(
        base + "/v1/admin/kill-switch", json={"engaged": True}, headers=headers, timeout=10
    )
    assert on.json() == {"engaged": True, "reason": "engaged by ops"}
    off = requests.post(
        base + "/v1/admin/kill-switch", json={"engaged": False}, headers=headers, timeout=10
    )
    assert off.json()["engaged"] is False
    kinds = [(e.kind, e.payload, e.actor) for e in store.ledger.events()]
    assert kinds == [
        ("kill_switch.engaged", {"reason": "engaged by ops"}, "ops"),
        ("kill_switch.released", {}, "ops"),
    ]
