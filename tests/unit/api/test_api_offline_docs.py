"""``/docs`` and ``/redoc`` work without the internet: every script, stylesheet and icon they load
is served by the app itself, without a token. Real uvicorn on 127.0.0.1, a real SQLite store."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from fleet.api import create_app, serve_in_thread
from fleet.store import Store

_ASSET = re.compile(r"""<(?:script|link)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.I)


@pytest.fixture
def base(store: Store, git_repo: Path) -> Iterator[str]:
    running = serve_in_thread(create_app(store, git_repo))
    try:
        yield running.url
    finally:
        running.stop()


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("/docs", {"swagger-ui-bundle.js": "javascript", "swagger-ui.css": "text/css"}),
        ("/redoc", {"redoc.standalone.js": "javascript"}),
    ],
)
def test_docs_pages_load_only_local_assets_without_a_token(
    base: str, page: str, expected: dict[str, str]
) -> None:
    html = requests.get(base + page, timeout=10)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "cdn.jsdelivr.net" not in html.text and "fonts.googleapis.com" not in html.text
    assets = _ASSET.findall(html.text)
    assert assets, html.text
    for url in assets:
        assert url.startswith("/") and not url.startswith("//"), url
    names = {url.rsplit("/", 1)[-1]: url for url in assets}
    assert set(expected) <= set(names), assets
    for url in assets:
        got = requests.get(base + url, timeout=10)
        assert got.status_code == 200, url
        assert len(got.content) > 1000, url
    for name, kind in expected.items():
        got = requests.get(base + names[name], timeout=10)
        assert kind in got.headers["content-type"], (name, got.headers["content-type"])
    # The page's schema is reachable too, and still no token is needed for it.
    assert requests.get(base + "/openapi.json", timeout=10).json()["info"]["title"]


def test_api_routes_still_need_a_token(base: str) -> None:
    assert requests.get(base + "/v1/leases", timeout=10).status_code == 401
    missing = requests.get(base + "/docs-static/nope.js", timeout=10)
    assert missing.status_code == 404
    schema = requests.get(base + "/openapi.json", timeout=10).json()
    assert not any(p.startswith(("/docs", "/redoc")) for p in schema["paths"])
