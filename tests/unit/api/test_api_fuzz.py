"""Fuzz of the coordinator against its own OpenAPI schema (hypothesis, pinned in pyproject):
every operation of ``/openapi.json`` gets bodies, query and path parameters built from the
schema's fields with values that are valid, out of range, of the wrong type or hostile (NaN,
±Infinity, 1e400, lone surrogates, symlink loops, links out of the repository, control
characters, huge numbers). No answer may be a 500, and every answer is JSON."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from fleet.api import create_app
from fleet.store import Store, open_store

# Hypothesis keeps caches (unicode data, constants) in ./.hypothesis, which pytest would then
# refuse to collect: keep them out of the working tree.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "fleet-hypothesis")

EXAMPLES = 400  # per test; the bench (benchmarks/bench_faults.py) runs more

RAW_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "0", "-0.0"]
HOSTILE_TEXT = [
    "\ud800",
    "a\udfffb",
    "loop_a",
    "loop_a/x.py",
    "out.py",
    "alias.py",
    "money/legacy.py",
    "billing/legacy.py",
    "../etc/passwd",
    "/etc/passwd",
    "a\x00b",
    "a\nb",
    "Foo::bar",
    "Foo..bar",
    "::",
    "alias.py::Foo",
    "\ufb01x",
    "cafe\u0301",
    "",
    ".",
    "x" * 5000,
    "18446744073709551616",
    "1",
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str, Store]]:
    tmp = tmp_path_factory.mktemp("fuzz")
    repo = tmp / "repo"
    (repo / "billing").mkdir(parents=True)
    (repo / "billing" / "legacy.py").write_text("class Foo:\n    def bar(self): ...\n")
    os.symlink("billing/legacy.py", repo / "alias.py")
    os.symlink("billing", repo / "money")
    os.symlink("/etc/passwd", repo / "out.py")
    os.symlink("loop_b", repo / "loop_a")
    os.symlink("loop_a", repo / "loop_b")
    with open_store(f"sqlite:///{tmp / 'fleet.db'}") as store:
        token, _ = store.tokens.create("fuzzer", ["leases", "jobs", "admin"])
        with TestClient(create_app(store, repo), raise_server_exceptions=False) as test_client:
            yield test_client, token, store


def _schema(client: TestClient) -> dict[str, Any]:
    got = client.get("/openapi.json")
    assert got.status_code == 200
    return dict(got.json())


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = spec["components"]["schemas"][name]
    return node


def _valid(node: dict[str, Any]) -> st.SearchStrategy[str]:
    """JSON text of a value that fits ``node`` (roughly: enough to get past validation)."""
    if "anyOf" in node:
        return st.one_of([_valid(n) for n in node["anyOf"]])
    kind = node.get("type")
    if "enum" in node:
        return st.sampled_from([json.dumps(v) for v in node["enum"]])
    if kind == "number":
        return st.floats(min_value=0.001, max_value=86400).map(json.dumps)
    if kind == "integer":
        return st.integers(0, 10**6).map(json.dumps)
    if kind == "boolean":
        return st.sampled_from(["true", "false"])
    if kind == "array":
        item = _valid(node.get("items", {}))
        return st.lists(item, min_size=1, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]")
    if kind == "null":
        return st.just("null")
    return st.sampled_from(["pkg/a.py", "billing/legacy.py", "Foo", "Foo.bar", "1"]).map(json.dumps)


def _hostile() -> st.SearchStrategy[str]:
    scalar = st.one_of(
        st.sampled_from(RAW_NUMBERS),
        st.sampled_from(HOSTILE_TEXT).map(json.dumps),  # ensure_ascii keeps "\ud800" escapes
        st.text(max_size=20).map(json.dumps),
        st.integers().map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.sampled_from(["true", "null", "{}", '{"a": 1}']),
    )
    return st.one_of(scalar, st.lists(scalar, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"))


def _value(node: dict[str, Any]) -> st.SearchStrategy[str]:
    return st.one_of(_valid(node), _hostile())


@st.composite
def _request(draw: st.DrawFn, spec: dict[str, Any]) -> tuple[str, str, str]:
    operations = [
        (path, method, op)
        for path, item in spec["paths"].items()
        if path.startswith("/v1")
        for method, op in item.items()
    ]
    path, method, op = draw(st.sampled_from(operations))
    query: list[str] = []
    for param in op.get("parameters", []):
        value = draw(st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=12)))
        # percent-encoded bytes, lone surrogates as their (invalid) UTF-8: %ED%A0%80
        quoted = quote(value.encode("utf-8", "surrogatepass"), safe="")
        if param["in"] == "path":
            path = path.replace("{" + param["name"] + "}", quoted or "x")
        elif draw(st.booleans()):
            query.append(f"{param['name']}={quoted}")
    if query:
        path += "?" + "&".join(query)
    body = ""
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if content:
        node = _resolve(spec, content["schema"])
        fields = []
        for name, prop in node.get("properties", {}).items():
            required = name in node.get("required", [])
            if required or draw(st.booleans()):
                fields.append(f"{json.dumps(name)}: {draw(_value(_resolve(spec, prop)))}")
        if draw(st.integers(0, 9)) == 0:
            fields.append(f'"extra": {draw(_hostile())}')
        body = "{" + ", ".join(fields) + "}"
    return method.upper(), path, body


def test_the_schema_has_every_route(client: tuple[TestClient, str, Store]) -> None:
    spec = _schema(client[0])
    assert {"/v1/leases/acquire", "/v1/leases", "/v1/jobs/dispatch", "/v1/jobs/{job_id}"} <= set(
        spec["paths"]
    )


def test_no_request_from_the_schema_is_answered_with_a_500(
    client: tuple[TestClient, str, Store],
) -> None:
    test_client, token, store = client
    spec = _schema(test_client)
    statuses: dict[int, int] = {}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(_request(spec))
    def one(request: tuple[str, str, str]) -> None:
        method, path, body = request
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        got = test_client.request(
            method, path, content=body.encode() if body else None, headers=headers
        )
        statuses[got.status_code] = statuses.get(got.status_code, 0) + 1
        assert got.status_code < 500, (method, path, body, got.text)
        got.json()  # every answer is JSON

    one()
    store.controls.release()
    # the fuzz reached the routes, not only the validation: some requests succeeded
    assert statuses.get(200, 0) > 0 and statuses.get(422, 0) > 0, statuses
