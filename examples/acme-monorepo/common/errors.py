"""The exception hierarchy shared by all Acme services.

API handlers translate these into HTTP status codes (see ``api.app``); everything else raised
is a bug and becomes a 500.
"""


class AcmeError(Exception):
    """Root of every error Acme raises on purpose."""

    status_code = 500
    code = "internal"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict:
        return {"error": self.code, "message": self.message, "details": dict(self.details)}


class ValidationFailed(AcmeError):
    status_code = 422
    code = "validation_failed"


class NotFound(AcmeError):
    status_code = 404
    code = "not_found"


class PermissionDenied(AcmeError):
    status_code = 403
    code = "permission_denied"


class AuthenticationFailed(AcmeError):
    status_code = 401
    code = "authentication_failed"


class PaymentDeclined(AcmeError):
    status_code = 402
    code = "payment_declined"


class QuotaExceeded(AcmeError):
    status_code = 429
    code = "quota_exceeded"
