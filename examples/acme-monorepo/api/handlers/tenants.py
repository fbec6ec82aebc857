"""Tenant endpoints: sign-up, read, invite members, add sub-tenants."""

from __future__ import annotations

from typing import TYPE_CHECKING

from api.schemas import CreateTenantRequest, InviteRequest
from auth.seats import SEAT_PRICE_CENTS
from billing.legacy import charge
from common.errors import PaymentDeclined
from tenants.audit import audit_log
from tenants.models import TenantModel

if TYPE_CHECKING:
    from api.app import App, Request

EXPRESS_SETUP_CENTS = 9_900


def sign_up(app: App, request: Request) -> dict:
    """Public: create a tenant; ``express: true`` adds paid white-glove set-up."""
    body = CreateTenantRequest.parse_obj({k: v for k, v in request.body.items() if k != "express"})
    done = app.provisioner.provision(body.name, body.owner_email, body.plan)
    if request.body.get("express"):
        result = charge(done.tenant.customer_id, EXPRESS_SETUP_CENTS, "USD", "express set-up")
        if not result.ok:
            raise PaymentDeclined("express set-up declined")
    token = app.signer.issue(body.owner_email, done.tenant.tenant_id)
    return {"tenant": TenantModel.from_tenant(done.tenant).dict(), "token": token}


def show(app: App, request: Request) -> dict:
    assert request.auth is not None
    request.auth.require("tenant.read")
    return TenantModel.from_tenant(request.auth.tenant).summary()


def invite(app: App, request: Request) -> dict:
    assert request.auth is not None
    request.auth.require("members.invite")
    body = InviteRequest.parse_obj(request.body)
    tenant = request.auth.tenant
    app.quotas.check_members(tenant)
    if body.seat:
        seat = charge(customer_id=tenant.customer_id, amount_cents=SEAT_PRICE_CENTS,
                      description=f"seat for {body.user_id}")
        if not seat.ok:
            raise PaymentDeclined("seat purchase declined")
    tenant.add_member(body.user_id, body.role)
    audit_log.record(tenant.tenant_id, request.auth.user_id, "member.invited", **body.dict())
    return {"members": len(tenant.members)}


def add_sub_tenant(app: App, request: Request) -> dict:
    assert request.auth is not None
    request.auth.require("tenant.update")
    done = app.provisioner.add_sub_tenant(request.auth.tenant, request.body["name"],
                                          request.auth.user_id)
    return {"tenant": done.tenant.tenant_id, "parent": request.auth.tenant.tenant_id}


def register(app: App) -> None:
    app.route("POST", "/tenants", public=True)(sign_up)
    app.route("GET", "/tenants/current")(show)
    app.route("POST", "/tenants/current/members")(invite)
    app.route("POST", "/tenants/current/children")(add_sub_tenant)
