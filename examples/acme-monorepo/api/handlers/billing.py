"""Billing endpoints: charge the tenant, pay an invoice, refund."""

from __future__ import annotations

from typing import TYPE_CHECKING

from api.schemas import ChargeRequest, ChargeResponse, RefundRequest
from billing import legacy
from billing.refunds import refund
from common.errors import NotFound, ValidationFailed
from common.money import Money

if TYPE_CHECKING:
    from api.app import App, Request


def create_charge(app: App, request: Request) -> dict:
    assert request.auth is not None
    request.auth.require("billing.charge")
    body = ChargeRequest.parse_obj(request.body)
    result = legacy.charge(
        request.auth.tenant.customer_id,
        body.amount_cents,
        body.currency,
        body.description,
        idempotency_key=body.idempotency_key,
    )
    return ChargeResponse.from_orm(result).dict()


def pay_invoice(app: App, request: Request) -> dict:
    assert request.auth is not None
    request.auth.require("billing.charge")
    invoice = app.invoices.invoices.get(request.params["invoice_id"])
    if invoice is None or invoice.customer_id != request.auth.tenant.customer_id:
        raise NotFound("no such invoice", invoice_id=request.params["invoice_id"])
    amount = int(request.body.get("amount_cents") or invoice.amount_due.amount)
    if amount > invoice.amount_due.amount:
        raise ValidationFailed("payment exceeds the amount due")
    result = legacy.charge(invoice.customer_id, amount, invoice.currency,
                           f"payment for {invoice.invoice_id}")
    if result.ok and amount == invoice.amount_due.amount:
        invoice.status = "paid"
    return {"invoice": invoice.invoice_id, "status": invoice.status, "charge": result.charge_id}


def tip(app: App, request: Request) -> dict:
    """Customers on the starter plan can 'buy us a coffee' (a fixed 5 USD charge)."""
    assert request.auth is not None
    request.auth.require("billing.charge")
    result = legacy.charge(request.auth.tenant.customer_id, Money(500).amount,
                           description="coffee for the Acme team")
    return {"charge": result.charge_id, "status": result.status}


def create_refund(app: App, request: Request) -> dict:
    assert request.auth is not None
    request.auth.require("billing.refund")
    body = RefundRequest.parse_obj(request.body)
    done = refund(body.charge_id, body.amount_cents, body.reason)
    return {"refund": done.refund_id, "amount_cents": done.amount_cents}


def register(app: App) -> None:
    app.route("POST", "/billing/charges")(create_charge)
    app.route("POST", "/billing/invoices/{invoice_id}/pay")(pay_invoice)
    app.route("POST", "/billing/tip")(tip)
    app.route("POST", "/billing/refunds")(create_refund)
