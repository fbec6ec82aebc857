import base64
import datetime
import json

import pytest

from auth.tokens import TokenSigner
from common.errors import AuthenticationFailed

SECRET = b"0123456789abcdef0123"


def test_issue_and_verify_round_trip():
    signer = TokenSigner(SECRET)
    claims = signer.verify(signer.issue("usr_1", "ten_1", scopes=("billing.read",)))
    assert (claims.user_id, claims.tenant_id, claims.scopes) == ("usr_1", "ten_1", ("billing.read",))


def test_forged_and_malformed_tokens_are_rejected():
    signer = TokenSigner(SECRET)
    token = signer.issue("usr_1", "ten_1")
    with pytest.raises(AuthenticationFailed):
        TokenSigner(b"another-secret-key!!").verify(token)
    with pytest.raises(AuthenticationFailed):
        signer.verify("garbage")


def test_expired_token_is_rejected():
    signer = TokenSigner(SECRET)
    with pytest.raises(AuthenticationFailed, match="expired"):
        signer.verify(signer.issue("usr_1", "ten_1", ttl=datetime.timedelta(seconds=-1)))


def test_token_minted_by_v1_service_with_naive_expiry():
    """Tokens still in circulation from the v1 service carry a naive UTC ``exp``."""
    signer = TokenSigner(SECRET)
    body = base64.urlsafe_b64encode(
        json.dumps({"sub": "usr_2", "ten": "ten_2", "exp": "2020-06-01T12:00:00"}).encode()
    )
    token = f"{body.decode()}.{signer._sign(body)}"
    with pytest.raises(AuthenticationFailed, match="expired"):
        signer.verify(token)
    fresh = signer.encode_payload({"sub": "usr_2", "ten": "ten_2", "exp": "2999-01-01T00:00:00"})
    assert signer.verify(fresh).user_id == "usr_2"
