"""A tiny framework-free router: requests in, JSON responses out, errors translated.

Handlers are plain functions ``(app, request) -> dict``; ``AcmeError`` becomes its status code,
Pydantic validation errors become 422.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from acme_compat.pydantic_v1 import ValidationError
from auth.tokens import TokenSigner
from auth.user_auth import UserAuth
from billing.invoices import InvoiceService
from common.config import Settings, default_settings
from common.errors import AcmeError, AuthenticationFailed
from tenants.directory import TenantDirectory
from tenants.provisioning import Provisioner
from tenants.quotas import QuotaTracker

Handler = Callable[["App", "Request"], dict]


@dataclass
class Request:
    method: str
    path: str
    body: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    auth: UserAuth | None = None


@dataclass
class Response:
    status: int
    body: dict

    @property
    def json(self) -> str:
        return json.dumps(self.body, sort_keys=True, default=str)


class App:
    """Routes, shared services, and request authentication."""

    def __init__(self, settings: Settings, secret: bytes) -> None:
        self.settings = settings
        self.signer = TokenSigner(secret)
        self.directory = TenantDirectory()
        self.provisioner = Provisioner(self.directory)
        self.invoices = InvoiceService()
        self.quotas = QuotaTracker()
        self._routes: list[tuple[str, re.Pattern[str], Handler, bool]] = []

    def route(self, method: str, pattern: str, *, public: bool = False
              ) -> Callable[[Handler], Handler]:
        regex = re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern) + "$")

        def register(handler: Handler) -> Handler:
            self._routes.append((method.upper(), regex, handler, public))
            return handler

        return register

    def authenticate(self, request: Request) -> UserAuth:
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer "):
            raise AuthenticationFailed("missing bearer token")
        claims = self.signer.verify(header[len("Bearer "):])
        tenant = self.directory.get(claims.tenant_id)
        return UserAuth.for_member(tenant, claims.user_id, scopes=claims.scopes)

    def handle(self, request: Request) -> Response:
        for method, regex, handler, public in self._routes:
            match = regex.match(request.path)
            if match is None or method != request.method.upper():
                continue
            request.params = match.groupdict()
            try:
                if not public:
                    request.auth = self.authenticate(request)
                    self.quotas.record_call(request.auth.tenant)
                return Response(200, handler(self, request))
            except AcmeError as exc:
                return Response(exc.status_code, exc.to_dict())
            except ValidationError as exc:
                return Response(422, {"error": "validation_failed", "details": exc.errors()})
        return Response(404, {"error": "not_found", "message": request.path})


def build_app(settings: Settings | None = None, secret: bytes = b"acme-dev-secret-key!") -> App:
    """An app with every handler module registered."""
    from api.handlers import admin, billing, tenants

    app = App(settings or default_settings(), secret)
    for module in (billing, tenants, admin):
        module.register(app)
    return app
