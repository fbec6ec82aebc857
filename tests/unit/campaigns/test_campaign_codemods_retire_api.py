"""CodemodTest cases for the retire-api codemod (the pydantic-v2 ones are in
test_campaign_codemods_migrations.py)."""

from __future__ import annotations

from libcst.codemod import CodemodTest

from fleet.campaigns.codemods import RetireApiCommand

CHARGE = {
    "old": "billing.legacy.charge",
    "new": "billing.payments.charge",
    "old_params": ["customer_id", "amount_cents", "currency", "description", "idempotency_key"],
    "new_positional": ["amount_cents", "customer_id"],
    "rename": {"description": "memo"},
}


class TestRetireApi(CodemodTest):
    TRANSFORM = RetireApiCommand

    def test_from_import_repointed_in_place_and_arguments_mapped(self) -> None:
        before = """
            from billing.legacy import charge


            def renew(sub):
                # charge the renewal
                return charge(sub.customer, sub.price, "EUR", description="renewal")  # tail
        """
        after = """
            from billing.payments import charge


            def renew(sub):
                # charge the renewal
                return charge(sub.price, sub.customer, currency="EUR", memo="renewal")  # tail
        """
        self.assertCodemod(before, after, **CHARGE)

    def test_module_alias_multiline_call_keeps_comments(self) -> None:
        before = """
            from billing import legacy as old_billing
            from billing import payments

            x = old_billing.charge(
                cust,  # who
                100,  # how much
                description="d",
            )
        """
        after = """
            from billing import payments

            x = payments.charge(
                100,  # how much
                cust,  # who
                memo="d",
            )
        """
        self.assertCodemod(before, after, **CHARGE)

    def test_relative_import_and_other_names_kept(self) -> None:
        before = """
            from .legacy import charge as legacy_charge, refund
            y = legacy_charge(c, 5, currency="USD")
            refund(y)
        """
        after = """
            from .legacy import refund
            from billing.payments import charge

            y = charge(5, c, currency="USD")
            refund(y)
        """
        self.assertCodemod(
            before, after, **CHARGE, context_override=self._ctx("billing.invoices", "billing")
        )

    def test_unbindable_call_is_left_with_a_warning(self) -> None:
        before = """
            from billing.legacy import charge
            a = charge(c, 5)
            b = charge(*args)
        """
        after = """
            from billing.legacy import charge
            from billing.payments import charge as payments_charge

            a = payments_charge(5, c)
            b = charge(*args)
        """
        self.assertCodemod(
            before,
            after,
            **CHARGE,
            expected_warnings=[
                "cannot bind the arguments of a call of billing.legacy.charge; left as is"
            ],
        )

    def test_same_spelling_other_function_untouched(self) -> None:
        code = """
            from billing.payments import charge
            from billing import legacy
            charge(5, c)
            legacy.refund(c)
        """
        self.assertCodemod(code, code, **CHARGE)

    def test_restricted_to_spans(self) -> None:
        before = "from billing import legacy\na = legacy.charge(c, 1)\nb = legacy.charge(c, 2)\n"
        after = (
            "from billing import legacy\nfrom billing.payments import charge\n\n"
            "a = legacy.charge(c, 1)\nb = charge(2, c)\n"
        )
        start = before.index("b =")
        self.assertCodemod(before, after, **CHARGE, spans=[(start, len(before))])

    @staticmethod
    def _ctx(module: str, package: str):  # type: ignore[no-untyped-def]
        from libcst.codemod import CodemodContext

        return CodemodContext(full_module_name=module, full_package_name=package)
