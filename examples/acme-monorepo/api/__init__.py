"""The HTTP-facing layer: a small router, request/response schemas and the handlers."""

from api.app import App, Request, Response, build_app

__all__ = ["App", "Request", "Response", "build_app"]
