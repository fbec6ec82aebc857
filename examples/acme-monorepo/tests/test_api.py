import pytest

from api.app import Request, build_app
from billing.invoices import Invoice
from common.money import Money


@pytest.fixture
def app():
    return build_app()


def sign_up(app, name="acme-labs", plan="team", owner="owner@acme.test", **extra):
    response = app.handle(Request("POST", "/tenants", {"name": name, "plan": plan,
                                                       "owner_email": owner, **extra}))
    assert response.status == 200, response.body
    return response.body["tenant"]["tenant_id"], {"authorization": f"Bearer {response.body['token']}"}


def test_sign_up_and_read(app):
    tenant_id, headers = sign_up(app, express=True)
    tenant = app.directory.get(tenant_id)
    assert tenant.members == {"owner@acme.test": "owner"}
    response = app.handle(Request("GET", "/tenants/current", headers=headers))
    assert response.status == 200 and response.body["member_count"] == 1
    assert app.handle(Request("GET", "/tenants/current")).status == 401


def test_validation_errors_are_422(app):
    response = app.handle(Request("POST", "/tenants", {"name": "x", "owner_email": "nope"}))
    assert response.status == 422 and response.body["error"] == "validation_failed"


def test_charge_invite_and_refund(app):
    tenant_id, headers = sign_up(app)
    charge = app.handle(Request("POST", "/billing/charges",
                                {"amount_cents": 1500, "currency": "eur"}, headers))
    assert charge.status == 200 and charge.body["currency"] == "EUR"
    invite = app.handle(Request("POST", "/tenants/current/members",
                                {"user_id": "usr_new", "role": "billing", "seat": True}, headers))
    assert invite.body == {"members": 2}
    refund = app.handle(Request("POST", "/billing/refunds",
                                {"charge_id": charge.body["charge_id"], "amount_cents": 500},
                                headers))
    assert refund.status == 200 and refund.body["amount_cents"] == 500
    assert app.handle(Request("POST", "/billing/tip", {}, headers)).body["status"] == "succeeded"


def test_pay_invoice(app):
    tenant_id, headers = sign_up(app)
    invoice = Invoice(app.directory.get(tenant_id).customer_id)
    invoice.add_item("consulting", Money(12000))
    invoice.finalize()
    app.invoices.invoices[invoice.invoice_id] = invoice
    response = app.handle(Request("POST", f"/billing/invoices/{invoice.invoice_id}/pay", {},
                                  headers))
    assert response.body["status"] == "paid"
    missing = app.handle(Request("POST", "/billing/invoices/inv_nope/pay", {}, headers))
    assert missing.status == 404


def test_admin_endpoints_and_permissions(app):
    tenant_id, headers = sign_up(app, plan="enterprise")
    other_id, other_headers = sign_up(app, name="other-co", plan="starter", owner="o@other.test")
    manual = app.handle(Request("POST", f"/admin/tenants/{other_id}/charge",
                                {"amount_cents": 300}, headers))
    assert manual.body["status"] == "succeeded"
    bulk = app.handle(Request("POST", "/admin/bulk-charge",
                              {"amount_cents": 100, "tenant_ids": [tenant_id, other_id]}, headers))
    assert bulk.body["results"] == {tenant_id: "succeeded", other_id: "succeeded"}
    child = app.handle(Request("POST", "/tenants/current/children", {"name": "acme-kids"}, headers))
    assert child.body["parent"] == tenant_id
    review = app.handle(Request("GET", "/admin/access-review", headers=headers))
    assert review.body["members"][0]["role"] == "owner"
    app.handle(Request("POST", "/tenants/current/members", {"user_id": "m1"}, other_headers))
    token = app.signer.issue("m1", other_id)
    member_headers = {"authorization": f"Bearer {token}"}
    denied = app.handle(Request("POST", "/billing/charges", {"amount_cents": 5}, member_headers))
    assert denied.status == 403
    assert app.handle(Request("GET", "/nowhere", headers=headers)).status == 404
