"""Outside check on tornado 4.2: ``unittest-aliases`` renamed ``self.assertEquals(data, b"qwer")``
next to an existing ``self.assertEqual(data, b"asdf")`` and the test-integrity gate rejected it as
"changed the expected values". An alias rename is not a change of what is checked; a changed
expected value or a loosened assertion still is."""

from __future__ import annotations

from fleet.verify.integrity import compare_tests

BEFORE = '''import unittest


class StreamTest(unittest.TestCase):
    def test_stream(self):
        data = read()
        self.assertEqual(data, b"asdf")
        data = read()
        self.assertEquals(data, b"qwer")
        self.failUnlessEqual(len(data), 4)
'''


def test_renaming_a_deprecated_alias_is_not_a_weakening() -> None:
    after = BEFORE.replace("assertEquals", "assertEqual").replace("failUnlessEqual",
                                                                  "assertEqual")
    assert compare_tests("tests/test_stream.py", BEFORE, after) == []


def test_changing_an_expected_value_is_still_caught_across_a_rename() -> None:
    after = BEFORE.replace('self.assertEquals(data, b"qwer")', 'self.assertEqual(data, b"qwex")')
    assert compare_tests("tests/test_stream.py", BEFORE, after) == [
        "tests/test_stream.py::StreamTest.test_stream changed the expected values b'qwer' in "
        "its assertions"
    ]


def test_a_rename_that_loosens_the_assertion_is_still_caught() -> None:
    after = BEFORE.replace("self.assertEquals(data, b\"qwer\")", "self.assertTrue(data)")
    problems = compare_tests("tests/test_stream.py", BEFORE, after)
    assert problems == ["tests/test_stream.py::StreamTest.test_stream has weaker assertions"]
