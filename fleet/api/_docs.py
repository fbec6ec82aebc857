"""The API's documentation pages, served without the internet.

Contract: ``GET /docs`` (Swagger UI) and ``GET /redoc`` (ReDoc) answer HTML whose scripts,
stylesheets and favicon are all served by this app under ``/docs-static/`` (from the
``fastapi-offline`` package's assets), so they work air-gapped; like ``/openapi.json`` they need
no token (they show only the schema, which is public; every API route still needs one).
"""

# No "from __future__ import annotations": FastAPI resolves the route annotations at runtime.
from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["STATIC_PREFIX", "add_docs"]

STATIC_PREFIX = "/docs-static"


def _assets() -> Path:
    return Path(str(files("fastapi_offline") / "static"))


def add_docs(app: FastAPI) -> None:
    """Mount the assets and add ``/docs`` and ``/redoc`` to ``app`` (made with
    ``docs_url=None, redoc_url=None``)."""
    app.mount(STATIC_PREFIX, StaticFiles(directory=_assets()), name="docs-static")
    openapi_url = app.openapi_url or "/openapi.json"

    def prefix(request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = prefix(request)
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{STATIC_PREFIX}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{STATIC_PREFIX}/swagger-ui.css",
            swagger_favicon_url=f"{root}{STATIC_PREFIX}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = prefix(request)
        return get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{STATIC_PREFIX}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{STATIC_PREFIX}/favicon.png",
            with_google_fonts=False,
        )
