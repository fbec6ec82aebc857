"""Matcher cases met on third-party code: a compatibility shim that *defines* a removed
``TestCase`` alias is not a use of it (paramiko 1.10.1 style ``tests/util.py``), while reading
the alias anywhere is; the codemod then fixes exactly what was reported."""

from __future__ import annotations

from pathlib import Path

from libcst.codemod import TransformSuccess

from fleet.campaigns.codemods import apply_codemod
from fleet.campaigns.matchers import find_findings
from fleet.campaigns.spec import load_campaign
from fleet.graph import index

COMPAT = """\
import unittest

if not hasattr(unittest.TestCase, "assertEquals"):
    unittest.TestCase.assertEquals = unittest.TestCase.assertEqual
    (unittest.TestCase.failIf, spare) = (None, None)
    del unittest.TestCase.assert_
    unittest.TestCase.failUnless += 1
    chained = unittest.TestCase.assertNotEquals = None


class ParamikoTest(unittest.TestCase):
    if not hasattr(unittest.TestCase, "assertTrue"):
        assertTrue = unittest.TestCase.failUnless

    def test_x(self):
        check = self.assertEquals
        check(1, 1)
"""


def test_defining_an_alias_is_not_a_finding_but_reading_one_is(tmp_path: Path) -> None:
    (tmp_path / "compat.py").write_text(COMPAT)
    campaign = load_campaign("unittest-aliases")
    findings = find_findings(index(tmp_path), campaign)
    assert [(f.line, f.snippet) for f in findings] == [
        (13, "unittest.TestCase.failUnless"),
        (16, "self.assertEquals"),
    ]
    result = apply_codemod("unittest-aliases", COMPAT, {}, None, "compat.py")
    assert isinstance(result, TransformSuccess)
    fixed = result.code
    assert "assertTrue = unittest.TestCase.assertTrue" in fixed
    assert "check = self.assertEqual\n" in fixed
    assert [line for line in fixed.splitlines()[:8]] == COMPAT.splitlines()[:8]  # shims kept
    (tmp_path / "compat.py").write_text(fixed)
    assert find_findings(index(tmp_path), campaign) == []
