"""Invoices: line items, tax, finalization and payment collection."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

from billing import legacy
from billing.payments import ChargeResult
from common import ids
from common.errors import ValidationFailed
from common.events import bus
from common.money import Money, total


@dataclass
class LineItem:
    description: str
    unit_price: Money
    quantity: int = 1

    @property
    def amount(self) -> Money:
        return Money(self.unit_price.amount * self.quantity, self.unit_price.currency)


@dataclass
class Invoice:
    """A customer's invoice: ``draft`` until finalized, then ``open``, ``paid`` or ``uncollectible``."""

    customer_id: str
    currency: str = "USD"
    tax_rate: Decimal = Decimal("0")
    invoice_id: str = field(default_factory=lambda: ids.new_id("invoice"))
    items: list[LineItem] = field(default_factory=list)
    status: str = "draft"
    finalized_at: dt.datetime | None = None
    attempts: list[ChargeResult] = field(default_factory=list)

    def add_item(self, description: str, unit_price: Money, quantity: int = 1) -> LineItem:
        if self.status != "draft":
            raise ValidationFailed("only draft invoices can change", invoice=self.invoice_id)
        if unit_price.currency != self.currency:
            raise ValidationFailed("line item currency differs from the invoice's")
        if quantity <= 0:
            raise ValidationFailed("quantity must be positive", quantity=quantity)
        item = LineItem(description, unit_price, quantity)
        self.items.append(item)
        return item

    @property
    def subtotal(self) -> Money:
        return total([item.amount for item in self.items], self.currency)

    @property
    def tax(self) -> Money:
        return self.subtotal.times(self.tax_rate)

    @property
    def amount_due(self) -> Money:
        return self.subtotal + self.tax

    def finalize(self) -> Invoice:
        """Freeze the invoice; an empty invoice cannot be finalized."""
        if not self.items:
            raise ValidationFailed("an invoice needs at least one line item")
        self.status = "open"
        self.finalized_at = dt.datetime.utcnow()
        bus.publish("invoice.finalized", invoice_id=self.invoice_id, amount=self.amount_due.amount)
        return self


class InvoiceService:
    """Collects payment for invoices through the billing backend."""

    def __init__(self, max_attempts: int = 3) -> None:
        self.max_attempts = max_attempts
        self.invoices: dict[str, Invoice] = {}

    def create(self, customer_id: str, currency: str = "USD", tax_rate: str = "0") -> Invoice:
        invoice = Invoice(customer_id, currency, Decimal(tax_rate))
        self.invoices[invoice.invoice_id] = invoice
        return invoice

    def collect(self, invoice: Invoice) -> ChargeResult:
        """Finalize if needed and charge the amount due once."""
        if invoice.status == "draft":
            invoice.finalize()
        if invoice.status == "paid":
            raise ValidationFailed("invoice already paid", invoice=invoice.invoice_id)
        result = legacy.charge(
            invoice.customer_id,
            invoice.amount_due.amount,
            invoice.currency,
            f"Invoice {invoice.invoice_id}",
            idempotency_key=f"{invoice.invoice_id}-{len(invoice.attempts)}",
        )
        return self._record(invoice, result)

    def retry(self, invoice: Invoice) -> ChargeResult:
        """Retry a failed collection; after ``max_attempts`` the invoice is uncollectible."""
        if invoice.status != "open":
            raise ValidationFailed("only open invoices are retried", status=invoice.status)
        result = legacy.charge(
            customer_id=invoice.customer_id,
            amount_cents=invoice.amount_due.amount,
            currency=invoice.currency,
            description=f"Invoice {invoice.invoice_id} (retry {len(invoice.attempts)})",
            idempotency_key=f"{invoice.invoice_id}-{len(invoice.attempts)}",
        )
        return self._record(invoice, result)

    def collect_partial(self, invoice: Invoice, amount: Money) -> ChargeResult:
        """Charge part of the amount due (a customer-initiated partial payment)."""
        if amount.currency != invoice.currency or amount > invoice.amount_due:
            raise ValidationFailed("partial payment exceeds the amount due")
        result = legacy.charge(invoice.customer_id, amount.amount, amount.currency)
        invoice.attempts.append(result)
        return result

    def _record(self, invoice: Invoice, result: ChargeResult) -> ChargeResult:
        invoice.attempts.append(result)
        if result.ok:
            invoice.status = "paid"
            bus.publish("invoice.paid", invoice_id=invoice.invoice_id)
        elif len(invoice.attempts) >= self.max_attempts:
            invoice.status = "uncollectible"
            bus.publish("invoice.uncollectible", invoice_id=invoice.invoice_id)
        return result

    def open_invoices(self, customer_id: str | None = None) -> list[Invoice]:
        return [
            inv
            for inv in self.invoices.values()
            if inv.status == "open" and (customer_id is None or inv.customer_id == customer_id)
        ]
