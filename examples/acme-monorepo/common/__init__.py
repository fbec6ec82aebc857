"""Small building blocks shared by every Acme package: money, clocks, ids, errors, config."""

from common.errors import AcmeError, NotFound, PermissionDenied, ValidationFailed
from common.money import Money

__all__ = ["AcmeError", "Money", "NotFound", "PermissionDenied", "ValidationFailed"]
