"""Operator endpoints: manual adjustments and the access review."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from billing import legacy as old_billing
from common.errors import PermissionDenied, ValidationFailed
from tenants.audit import audit_log

if TYPE_CHECKING:
    from api.app import App, Request

MAX_MANUAL_CHARGE_CENTS = 100_000


def manual_charge(app: App, request: Request) -> dict:
    """Charge a tenant by hand (owners only), recorded in the audit trail."""
    assert request.auth is not None
    if request.auth.role != "owner":
        raise PermissionDenied("owners only")
    target = app.directory.get(request.params["tenant_id"])
    cents = int(request.body["amount_cents"])
    if cents > MAX_MANUAL_CHARGE_CENTS:
        raise ValidationFailed("manual charges are capped", cap=MAX_MANUAL_CHARGE_CENTS)
    result = old_billing.charge(target.customer_id, cents, request.body.get("currency", "USD"),
                                request.body.get("reason", "manual adjustment"))
    audit_log.record(target.tenant_id, request.auth.user_id, "billing.manual_charge",
                     cents=cents, status=result.status)
    return {"charge": result.charge_id, "status": result.status}


def bulk_charge(app: App, request: Request) -> dict:
    """Charge every listed tenant the same amount (e.g. a price change catch-up)."""
    assert request.auth is not None
    if request.auth.role != "owner":
        raise PermissionDenied("owners only")
    cents = int(request.body["amount_cents"])
    results = {}
    for tenant_id in request.body["tenant_ids"]:
        tenant = app.directory.get(tenant_id)
        result = old_billing.charge(
            tenant.customer_id, cents, description=request.body.get("reason", "catch-up")
        )
        results[tenant_id] = result.status
    return {"results": results}


def access_review(app: App, request: Request) -> dict:
    """Everyone who can act in the caller's tenant, and as what."""
    assert request.auth is not None
    request.auth.require("members.read")
    assert request.auth.context is not None
    people = [auth.describe() for auth in request.auth.context.member_auths()]
    return {"tenant": request.auth.tenant.tenant_id, "members": json.loads(json.dumps(people))}


def register(app: App) -> None:
    app.route("POST", "/admin/tenants/{tenant_id}/charge")(manual_charge)
    app.route("POST", "/admin/bulk-charge")(bulk_charge)
    app.route("GET", "/admin/access-review")(access_review)
