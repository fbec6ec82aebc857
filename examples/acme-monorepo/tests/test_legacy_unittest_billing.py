"""Billing tests from before the move to pytest style (unittest.TestCase)."""

import unittest

from billing import payments
from billing.invoices import InvoiceService
from billing.rates import DEFAULT_RATES
from billing.store import charges
from common.errors import NotFound, ValidationFailed
from common.money import Money


class PaymentsTestCase(unittest.TestCase):
    def setUp(self):
        charges.clear()

    def test_charge_fields(self):
        result = payments.charge(4200, "cus_ut_1", memo="ut")
        self.assertEquals(result.amount_cents, 4200)
        self.failUnlessEqual(result.customer_id, "cus_ut_1")
        self.assertNotEquals(result.charge_id, "")
        self.failIfEqual(result.status, "declined")

    def test_declined(self):
        result = payments.charge(10, "cus_declined_ut")
        self.failIf(result.ok)
        self.assert_(result.status == "declined")
        self.failUnless(charges.get(result.charge_id) is not None)

    def test_validation(self):
        self.failUnlessRaises(ValidationFailed, payments.charge, 0, "cus_ut_2")
        self.assertRaisesRegexp(ValidationFailed, "positive", payments.charge, -1, "cus_ut_2")

    def test_charge_record_subset(self):
        result = payments.charge(300, "cus_ut_3", currency="GBP")
        record = vars(charges.get(result.charge_id))
        self.assertDictContainsSubset({"currency": "GBP", "amount_cents": 300}, record)


class RatesTestCase(unittest.TestCase):
    def test_prices(self):
        self.assertEquals(DEFAULT_RATES.plan_price("team"), 4900)
        self.failUnlessAlmostEqual(float(DEFAULT_RATES.unit_price("api_calls")), 0.02)
        self.assertAlmostEquals(float(DEFAULT_RATES.unit_price("storage_gb")), 12.0, places=3)
        self.failIfAlmostEqual(float(DEFAULT_RATES.unit_price("seats")), 0.0)
        self.assertNotAlmostEquals(float(DEFAULT_RATES.unit_price("seats")), 7.99, places=2)

    def test_unknown_plan(self):
        self.failUnlessRaises(NotFound, DEFAULT_RATES.plan_price, "platinum")


class InvoiceTestCase(unittest.TestCase):
    def setUp(self):
        charges.clear()
        self.service = InvoiceService()

    def test_invoice_ids_and_totals(self):
        invoice = self.service.create("cus_ut_4", tax_rate="0.2")
        invoice.add_item("a", Money(250), 2)
        self.assertRegexpMatches(invoice.invoice_id, r"^inv_\d{6}[0-9a-f]{8}$")
        self.assertNotRegexpMatches(invoice.invoice_id, r"^cus_")
        self.assertEquals(invoice.amount_due, Money(600))


if __name__ == "__main__":
    unittest.main()
