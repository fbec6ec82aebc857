import pytest

from billing.invoices import InvoiceService
from common.errors import ValidationFailed
from common.events import bus
from common.money import Money


def test_collect_pays_and_finalizes():
    service = InvoiceService()
    invoice = service.create("cus_20", tax_rate="0.1")
    invoice.add_item("widget", Money(1000), 3)
    result = service.collect(invoice)
    assert result.ok and result.amount_cents == 3300
    assert invoice.status == "paid" and invoice.finalized_at is not None
    assert bus.names() == ["invoice.finalized", "charge.succeeded", "invoice.paid"]


def test_declines_make_an_invoice_uncollectible_after_three_attempts():
    service = InvoiceService(max_attempts=3)
    invoice = service.create("cus_declined_1")
    invoice.add_item("widget", Money(500))
    service.collect(invoice)
    service.retry(invoice)
    assert invoice.status == "open"
    service.retry(invoice)
    assert invoice.status == "uncollectible"
    assert [a.status for a in invoice.attempts] == ["declined"] * 3


def test_empty_and_paid_invoices_are_refused():
    service = InvoiceService()
    invoice = service.create("cus_21")
    with pytest.raises(ValidationFailed):
        invoice.finalize()
    invoice.add_item("thing", Money(100))
    service.collect(invoice)
    with pytest.raises(ValidationFailed):
        service.collect(invoice)


def test_partial_payment():
    service = InvoiceService()
    invoice = service.create("cus_22")
    invoice.add_item("thing", Money(1000))
    invoice.finalize()
    part = service.collect_partial(invoice, Money(400))
    assert part.amount_cents == 400 and invoice.status == "open"
    with pytest.raises(ValidationFailed):
        service.collect_partial(invoice, Money(5000))
