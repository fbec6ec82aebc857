"""Through the API (uvicorn on 127.0.0.1, a real SQLite store, a real repository with links):
every alias of a held symbol is refused as the same lease, and hostile input is a 400/422 that
names the field, never a 500."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from fleet.api import create_app, serve_in_thread
from fleet.store import Store, open_store


@pytest.fixture
def repo(git_repo: Path) -> Path:
    (git_repo / "billing").mkdir()
    (git_repo / "billing" / "legacy.py").write_text("class Foo:\n    def bar(self): ...\n")
    os.symlink("billing/legacy.py", git_repo / "alias.py")
    os.symlink("billing", git_repo / "money")
    os.symlink("/etc/passwd", git_repo / "out.py")
    os.symlink("loop_b", git_repo / "loop_a")
    os.symlink("loop_a", git_repo / "loop_b")
    return git_repo


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as opened:
        yield opened


@pytest.fixture
def base(store: Store, repo: Path) -> Iterator[str]:
    running = serve_in_thread(create_app(store, repo))
    try:
        yield running.url
    finally:
        running.stop()


@pytest.fixture
def tokens(store: Store) -> tuple[str, str]:
    a, _ = store.tokens.create("agent-a", ["leases", "jobs"])
    b, _ = store.tokens.create("agent-b", ["leases", "jobs"])
    return a, b


def acquire(base: str, token: str, body: dict[str, Any] | str) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if isinstance(body, str):  # raw JSON text: NaN, 1e400, "\ud800" escapes
        return requests.post(base + "/v1/leases/acquire", data=body, headers=headers, timeout=10)
    return requests.post(base + "/v1/leases/acquire", json=body, headers=headers, timeout=10)


HELD = {"file_path": "billing/legacy.py", "symbol": "Foo.bar"}
NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")


@pytest.mark.parametrize(
    ("first", "alias"),
    [
        (HELD, {"file_path": "alias.py", "symbol": "Foo.bar"}),
        (HELD, {"file_path": "money/legacy.py", "symbol": "Foo.bar"}),
        (HELD, {"file_path": "billing/legacy.py", "symbol": "Foo::bar"}),
        (HELD, {"file_path": "billing/legacy.py", "symbol": "billing/legacy.py::Foo.bar"}),
        (HELD, {"file_path": "billing/legacy.py", "symbol": "alias.py::Foo::bar"}),
        (HELD, {"file_path": "./billing//legacy.py", "symbol": "Foo.bar"}),
        (HELD, {"file_path": "alias.py"}),
        ({"file_path": "m.py", "symbol": NFC}, {"file_path": "m.py", "symbol": NFD}),
        ({"file_path": "m.py", "symbol": "fix"}, {"file_path": "m.py", "symbol": "\ufb01x"}),
        # a path's NFC and NFD spellings (a file not there yet: one key, its NFC form)
        ({"file_path": f"{NFC}.py", "symbol": "x"}, {"file_path": f"{NFD}.py", "symbol": "x"}),
    ],
)
def test_an_alias_of_a_held_lease_is_refused(
    base: str, tokens: tuple[str, str], first: dict[str, Any], alias: dict[str, Any]
) -> None:
    a, b = tokens
    got = acquire(base, a, first)
    assert got.status_code == 200 and got.json()["acquired"] is True, got.text
    second = acquire(base, b, alias)
    assert second.status_code == 200, second.text
    assert second.json()["acquired"] is False, second.json()
    assert second.json()["holder"] == got.json()["holder"]


def test_the_response_names_the_canonical_key(base: str, tokens: tuple[str, str]) -> None:
    got = acquire(base, tokens[0], {"file_path": "alias.py", "symbol": f"Foo::{NFD}"})
    assert got.json()["symbol"] == f"billing/legacy.py::Foo.{NFC}"


@pytest.mark.parametrize(
    ("body", "status", "names"),
    [
        ('{"file_path": "a.py", "ttl_s": NaN}', 422, "ttl_s"),
        ('{"file_path": "a.py", "ttl_s": Infinity}', 422, "ttl_s"),
        ('{"file_path": "a.py", "ttl_s": -Infinity}', 422, "ttl_s"),
        ('{"file_path": "a.py", "ttl_s": 1e400}', 422, "ttl_s"),
        ('{"file_path": "a.py", "ttl_s": 1e-400}', 422, "ttl_s"),
        ('{"file_path": "a.py", "symbol": "\\ud800"}', 422, "symbol"),
        ('{"file_path": "\\udfff.py"}', 422, "file_path"),
        ('{"file_path": "a.py", "holder": "x\\ud800"}', 422, "holder"),
        ('{"file_path": "loop_a"}', 400, "symlink loop"),
        ('{"file_path": "loop_a/x.py", "symbol": "Foo"}', 400, "symlink loop"),
        ('{"file_path": "out.py"}', 400, "leaving the repository"),
        ('{"file_path": "billing/legacy.py", "symbol": "other.py::Foo"}', 400, "another file"),
        ('{"file_path": "a.py", "symbol": "Foo..bar"}', 400, "empty name"),
        ('{"file_path": "a.py", "symbol": "::"}', 400, "empty name"),
    ],
)
def test_hostile_acquire_is_refused_naming_the_field(
    base: str, tokens: tuple[str, str], body: str, status: int, names: str
) -> None:
    got = acquire(base, tokens[0], body)
    assert got.status_code == status, got.text
    assert names in got.text


def test_renew_and_list_and_dispatch_refuse_hostile_input(
    base: str, tokens: tuple[str, str]
) -> None:
    headers = {"Authorization": f"Bearer {tokens[0]}", "Content-Type": "application/json"}
    renew = requests.post(
        base + "/v1/leases/renew", data='{"ttl_s": NaN}', headers=headers, timeout=10
    )
    assert renew.status_code == 422 and "ttl_s" in renew.text
    listed = requests.get(
        base + "/v1/leases", params={"file_path": "loop_a"}, headers=headers, timeout=10
    )
    assert listed.status_code == 400 and "symlink loop" in listed.text
    for body, field in [
        ('{"task": "\\ud800", "target_files": ["a.py"]}', "task"),
        ('{"task": "t", "target_files": ["loop_b"]}', "target_files"),
        ('{"task": "t", "target_files": ["a.py"], "model": "\\udc00"}', "model"),
    ]:
        got = requests.post(base + "/v1/jobs/dispatch", data=body, headers=headers, timeout=10)
        assert got.status_code in (400, 422) and field in got.text, got.text
