"""A test made to pass by ending it early is a weakened test (found planting patches on TinyDB
3.15.2 and freezegun 0.3.15, whose suites each have a test that fails on Python 3.11): a new
``return`` before the assertions, or a skip or return under a new or wider condition, rejects
like a new skip marker; the tests as they were, and ordinary edits, do not."""

from __future__ import annotations

from pathlib import Path

from fleet.verify.integrity import compare_tests

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
STRING_KEY = PROJECTS / "tinydb-3.15.2" / "tests" / "test_tinydb.py"
COROUTINE = PROJECTS / "freezegun-0.3.15" / "tests" / "test_asyncio.py"
IMPORT = "def test_string_key():\n    from collections import Mapping\n"
GUARD = "    if not asyncio:\n        raise SkipTest('asyncio required')\n"


def test_a_new_return_before_the_assertions_rejects() -> None:
    before = STRING_KEY.read_text()
    after = before.replace(IMPORT, "def test_string_key():\n    try:\n        from collections "
                           "import Mapping\n    except ImportError:\n        return\n")
    assert after != before
    assert compare_tests("tests/test_tinydb.py", before, after) == [
        "tests/test_tinydb.py::test_string_key can now end before its assertions (a new return)"]
    fixed = before.replace(IMPORT, "def test_string_key():\n    from collections.abc import "
                           "Mapping\n")
    assert compare_tests("tests/test_tinydb.py", before, fixed) == []  # the real fix


def test_a_skip_under_a_wider_condition_rejects() -> None:
    before = COROUTINE.read_text()
    wider = before.replace(GUARD, "    if not asyncio or not hasattr(asyncio, 'coroutine'):\n"
                           "        raise SkipTest('asyncio required')\n", 1)
    assert wider != before
    assert compare_tests("tests/test_asyncio.py", before, wider) == [
        "tests/test_asyncio.py::test_time_freeze_coroutine can now end before its assertions "
        "(if not asyncio or not hasattr(asyncio, 'coroutine'))"]
    early = before.replace(GUARD, GUARD + "    if not hasattr(asyncio, 'coroutine'):\n"
                           "        return\n", 1)
    assert "can now end before its assertions" in compare_tests("t.py", before, early)[0]
    assert compare_tests("tests/test_asyncio.py", before, before) == []
