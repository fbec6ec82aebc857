"""Auth tests from before the move to pytest style (unittest.TestCase)."""

import unittest

from auth import passwords
from auth.policies import default_policy
from tenants.directory import TenantDirectory
from tenants.plans import default_catalog


class PasswordTestCase(unittest.TestCase):
    def test_hash_and_verify(self):
        encoded = passwords.hash_password("Correct-Horse-9")
        self.failUnless(passwords.verify_password("Correct-Horse-9", encoded))
        self.failIf(passwords.verify_password("wrong", encoded))
        self.assertEquals(len(encoded.split("$")), 4)
        self.assertRegexpMatches(encoded, r"^pbkdf2_sha256\$\d+\$")

    def test_strength(self):
        self.assertEquals(passwords.validate_strength("Sturdy-Passw0rd"), [])
        self.assertNotEquals(passwords.validate_strength("short"), [])
        self.assert_(passwords.needs_rehash("md5$1$x$y"))


class PolicyTestCase(unittest.TestCase):
    def test_roles(self):
        self.failUnlessEqual(default_policy.known_roles(), ["admin", "billing", "member", "owner"])
        self.failUnless(default_policy.allows("billing", "billing.refund"))
        self.failIf(default_policy.allows("member", "members.invite"))


class DirectoryTestCase(unittest.TestCase):
    def test_owner_is_kept(self):
        directory = TenantDirectory()
        tenant = directory.create("ut-corp", "usr_ut")
        self.failUnlessRaises(Exception, tenant.remove_member, "usr_ut")
        self.assertRaisesRegexp(Exception, "unknown role", tenant.add_member, "u2", "king")
        self.failIfEqual(tenant.tenant_id, tenant.customer_id)
        self.assertDictContainsSubset({"usr_ut": "owner"}, tenant.members)

    def test_plans(self):
        self.assertNotRegexpMatches(default_catalog.to_json(), "price")
        self.failUnlessEqual(default_catalog.names(), ["enterprise", "starter", "team"])


if __name__ == "__main__":
    unittest.main()
