"""Signed bearer tokens: ``<base64 payload>.<hex HMAC>``.

Payloads carry ``sub`` (user id), ``ten`` (tenant id) and ``exp``, a naive UTC ISO timestamp
(tokens minted by the v1 auth service, still in circulation, carry the same format).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from common.errors import AuthenticationFailed

DEFAULT_TTL = timedelta(minutes=60)


@dataclass(frozen=True)
class TokenClaims:
    user_id: str
    tenant_id: str
    expires_at: datetime
    scopes: tuple[str, ...] = ()

    def is_expired(self) -> bool:
        return datetime.utcnow() >= self.expires_at


class TokenSigner:
    """Mints and verifies tokens with one secret key."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("token secret must be at least 16 bytes")
        self._secret = secret

    def _sign(self, body: bytes) -> str:
        return hmac.new(self._secret, body, hashlib.sha256).hexdigest()

    def encode_payload(self, payload: dict) -> str:
        body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode())
        return f"{body.decode()}.{self._sign(body)}"

    def issue(self, user_id: str, tenant_id: str, *, ttl: timedelta = DEFAULT_TTL,
              scopes: tuple[str, ...] = ()) -> str:
        expires_at = datetime.utcnow() + ttl
        return self.encode_payload(
            {"sub": user_id, "ten": tenant_id, "exp": expires_at.isoformat(),
             "scp": list(scopes)}
        )

    def verify(self, token: str) -> TokenClaims:
        """The token's claims; raises ``AuthenticationFailed`` if forged, malformed or expired."""
        try:
            body, signature = token.rsplit(".", 1)
        except ValueError:
            raise AuthenticationFailed("malformed token") from None
        if not hmac.compare_digest(self._sign(body.encode()), signature):
            raise AuthenticationFailed("bad token signature")
        try:
            payload = json.loads(base64.urlsafe_b64decode(body.encode()))
            claims = TokenClaims(
                user_id=payload["sub"],
                tenant_id=payload["ten"],
                expires_at=datetime.fromisoformat(payload["exp"]),
                scopes=tuple(payload.get("scp", ())),
            )
        except (ValueError, KeyError, TypeError):
            raise AuthenticationFailed("malformed token payload") from None
        if claims.is_expired():
            raise AuthenticationFailed("token expired", user=claims.user_id)
        return claims
