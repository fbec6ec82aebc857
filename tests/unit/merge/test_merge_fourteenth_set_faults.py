"""A suspect of the fourteenth unseen set, from an excerpt of its real inputs: one side deleted a
test, the other renamed it and rewrote it (hypothesis ``23f5e9186045``). A modify/delete stays a
conflict when the modification renamed what the other side deleted."""

from __future__ import annotations

import ast

from fleet.merge._merge3 import merge3
from fleet.merge._renamed_deleted import renamed_where_deleted
from fleet.merge._result import Clean

BASE = '''from hypothesis.internal.conjecture.data import ConjectureData


def test_drawing_zero_bits_is_free():
    x = ConjectureData.for_buffer(b"")
    assert x.draw_bits(0) == 0


def test_can_write_empty_string():
    d = ConjectureData.for_buffer([1, 1, 1])
    d.draw_bits(1)
    d.write(b"")
    d.draw_bits(1)
    d.draw_bits(0, forced=0)
    d.draw_bits(1)
    assert d.buffer == bytes([1, 1, 1])


def test_blacklist_marks():
    d = ConjectureData.for_buffer([0])
    assert d.buffer == b""
'''
GONE = BASE[BASE.index("def test_can_write_empty_string"):BASE.index("def test_blacklist")]
REWRITTEN = '''    d = ConjectureData.for_buffer([1, 1, 1])
    d.draw_boolean()
    d.draw_bytes(0)
    d.draw_boolean()
    d.draw_bytes(0, forced=b"")
    d.draw_boolean()
    assert d.buffer == bytes([1, 1, 1])


'''
OURS = BASE.replace("assert x.draw_bits(0) == 0", "assert x.draw_integer(0, 0) == 0").replace(
    GONE, "")
THEIRS = BASE.replace(GONE, "def test_can_write_empty_bytes():\n" + REWRITTEN).replace(
    'assert d.buffer == b""', 'assert d.buffer == b"" and d.index == 0')


def test_a_test_deleted_on_one_side_and_renamed_and_rewritten_on_the_other_conflicts() -> None:
    assert "def test_can_write_empty_string" not in OURS and "draw_integer" in OURS
    result = merge3(BASE, OURS, THEIRS, "test_test_data.py")
    assert not isinstance(result, Clean), result.text
    why = renamed_where_deleted([ast.parse(t) for t in (BASE, OURS, THEIRS, THEIRS)])
    assert why is not None and "test_can_write_empty_bytes" in why


def test_a_test_both_sides_deleted_and_another_added_stays_clean() -> None:
    theirs = BASE.replace(GONE, "def test_draws_a_float():\n" + REWRITTEN)
    result = merge3(BASE, OURS, theirs, "test_test_data.py")
    assert isinstance(result, Clean), result
    assert "def test_draws_a_float" in result.text and "draw_integer(0, 0)" in result.text
    assert "test_can_write_empty_string" not in result.text
