"""The expression-level merge of one statement (``fleet.merge._tokens``): both sides' token
edits combined only when an unchanged token separates them."""

from __future__ import annotations

import pytest

from fleet.merge._tokens import merge_tokens


def test_separated_edits_of_one_call_combine() -> None:
    base = "x = f(a, b)  # note\n"
    assert merge_tokens(base, "x = g(a, b)  # note\n", "x = f(a, c)  # note\n") == (
        "x = g(a, c)  # note\n"
    )


def test_ours_line_breaks_are_kept() -> None:
    base = "call(one=1, two=2)\n"
    ours = "call(\n    one=10,\n    two=2,\n)\n"
    theirs = "call(one=1, two=2, three=3)\n"
    # theirs added ``, three=3`` after ``2``, where ours added a trailing comma: one point
    assert merge_tokens(base, ours, theirs) is None
    assert merge_tokens(base, "call(\n    one=10, two=2)\n", theirs) == (
        "call(\n    one=10, two=2, three=3)\n"
    )


@pytest.mark.parametrize(
    ("base", "ours", "theirs"),
    [
        ('RATE = D("0.2")\n', 'RATE = D("0.21")\n', 'RATE = D("0.19")\n'),  # one token
        ("from m import a\n", "from m import a, b\n", "from m import a  # noqa\n"),  # one point
        ("f(a, b)\n", "f(a, c)\n", "f(a, d)\n"),  # same argument
        ("return x\n", "return x + 1\n", "return x or 0\n"),  # both after x
        ("f(a)\n", "f(a,)\n", "f(b)\n"),  # touching
    ],
)
def test_touching_or_overlapping_edits_stay_unsure(base: str, ours: str, theirs: str) -> None:
    assert merge_tokens(base, ours, theirs) is None


def test_result_must_stay_one_statement_of_the_same_kind() -> None:
    assert merge_tokens("a = 1\n", "a = 2\n", "a = 1\n") is None  # one side only: not ours to do
    assert merge_tokens("x = [1, 2, 3]\n", "x = [0, 2, 3]\n", "x = [1, 2, 4]\n") == (
        "x = [0, 2, 4]\n"
    )


def test_an_item_beside_an_item_the_other_side_rewrote_is_unsure() -> None:
    # flask 89731d86b6d2: a classifier added after "2.7" where the other side replaced the 2.x
    # classifiers by "3"; only a comma lies between the two edits.
    base = "c = [\n    'Python',\n    'Python :: 2.6',\n    'Python :: 2.7',\n    'Topic',\n]\n"
    ours = base.replace("    'Python :: 2.7',\n", "    'Python :: 2.7',\n    'Python :: 3.3',\n")
    theirs = base.replace("    'Python :: 2.6',\n    'Python :: 2.7',\n", "    'Python :: 3',\n")
    assert merge_tokens(base, ours, theirs) is None


def test_an_edit_both_sides_made_alike_is_made_once() -> None:
    base = 's(l="BSD", a="x", m="P T")\n'
    ours = 's(l="BSD-3", a="x", m="P T")\n'
    theirs = 's(l="BSD-3", a="x", m="P")\n'
    assert merge_tokens(base, ours, theirs) == 's(l="BSD-3", a="x", m="P")\n'


def test_an_entry_beside_an_entry_whose_key_the_other_side_changed_is_unsure() -> None:
    # marshmallow f5ddb4f4e6b0 (setup.py): ours added 'Changelog' after 'Bug Reports', theirs
    # renamed that key 'Issues'; the value between the two edits is no separation, since the
    # new entry may belong before or after the renamed one (the humans put it before).
    base = "s(u={\n    'Bug Reports': 'a',\n    'Funding': 'b',\n})\n"
    ours = base.replace("    'Funding'", "    'Changelog': 'c',\n    'Funding'")
    theirs = base.replace("'Bug Reports'", "'Issues'")
    assert merge_tokens(base, ours, theirs) is None
    # An edit nested inside the neighbour (an item added to its list) is not its rewrite.
    base = 's(v="1", r=["a"], x=1)\n'
    assert merge_tokens(base, 's(v="2", r=["a"], x=1)\n', 's(v="1", r=["a", "b"], x=1)\n') == (
        's(v="2", r=["a", "b"], x=1)\n'
    )
    assert merge_tokens("f(a, b, c)\n", "f(a, b, c, d)\n", "f(z, b, c)\n") == "f(z, b, c, d)\n"
    assert merge_tokens("f(a, b, c)\n", "f(a, b, c, d)\n", "f(a, b, z)\n") is None


def test_one_side_holding_the_other_sides_edits_and_more_wins() -> None:
    # httpx de980db9f68f: both renamed the first parameter alike, ours also retyped the second.
    base = "def f(versions: T = None, backend: B = None): ...\n"
    ours = 'def f(http_2: bool = False, backend: U = "auto"): ...\n'
    theirs = "def f(http_2: bool = False, backend: B = None): ...\n"
    assert merge_tokens(base, ours, theirs) == ours
    assert merge_tokens(base, theirs, ours) == ours


def test_arguments_added_to_a_call_the_other_side_rewrote_are_unsure() -> None:
    # scrapy 66e1732248db (redirect.py): theirs replaced the callee and moved its receiver into
    # the arguments; ours added ``cookies=None``, which the new callee passes itself.
    base = "r = request.replace(url=u)\n"
    ours = "r = request.replace(url=u, cookies=None)\n"
    theirs = "r = _build(request, url=u)\n"
    assert merge_tokens(base, ours, theirs) is None
    assert merge_tokens(base, theirs, ours) is None
    # only the called name changed: the other side's argument still combines
    assert merge_tokens("x = f(a, b)\n", "x = g(a, b)\n", "x = f(a, c)\n") == "x = g(a, c)\n"
    # both sides renamed the callee alike, one also added an argument: that side wins
    assert merge_tokens("f(a)\n", "g(a)\n", "g(a, b)\n") == "g(a, b)\n"


def test_a_comment_only_edit_composes_with_code_edits_a_delimiter_away() -> None:
    # trio 669c345c2cc7 / 77cd6099ef5c (ninth set): a ``noqa`` comment added after the colon of a
    # ``with`` header, the code before the colon rewritten by the other side. A comment changes
    # no code, so the code is the other side's whichever order the two land in.
    base = "with pytest.raises(KeyError):\n    pass\n"
    noqa = "with pytest.raises(KeyError):  # pragma: no cover\n    pass\n"
    named = "with pytest.raises(KeyError) as excinfo:\n    pass\n"
    both = "with pytest.raises(KeyError) as excinfo:  # pragma: no cover\n    pass\n"
    assert merge_tokens(base, noqa, named) == both
    assert merge_tokens(base, named, noqa) == both
    # A comment changed beside an element the other side rewrote, one comma away.
    base = "x = [\n    1,  # one\n    2,\n]\n"
    ours = base.replace("# one", "# the first")
    theirs = base.replace("    2,", "    3,")
    assert merge_tokens(base, ours, theirs) == "x = [\n    1,  # the first\n    3,\n]\n"
    # At one point it stays unsure (which first?), and so does a comment edited on both sides.
    assert merge_tokens("f(a)\n", "f(a)  # x\n", "f(a) + 1\n") is None
    assert merge_tokens("f(a)  # x\n", "f(a)  # y\n", "f(b)  # z\n") is None
