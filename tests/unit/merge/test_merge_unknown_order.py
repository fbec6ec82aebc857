"""Clean merges the held-out real history showed to be guesses now conflict (docs/merge.md).

Both from the 20 held-out cases where fleet merged cleanly and differently from the humans:
black's ``Preview(Enum)`` with members appended by both sides at one point (their order is the
enum's ``auto()`` values), and httpx ``aac3740701df``, a statement added for code the other side
changed beside it.
"""

from __future__ import annotations

from fleet.merge import Clean, Conflicted, merge3

ENUM = (
    "from enum import Enum, auto\n\n\n"
    "class Preview(Enum):\n"
    '    """Preview features."""\n\n'
    "    string_processing = auto()\n"
    "    hug_parens = auto()\n\n\n"
    "def supports(feature):\n"
    "    return feature in Preview\n"
)


def _append(text: str, anchor: str, line: str) -> str:
    assert anchor in text
    return text.replace(anchor, anchor + line, 1)


def test_members_both_sides_append_to_an_enum_conflict() -> None:
    ours = _append(ENUM, "    hug_parens = auto()\n", "    multiline_strings = auto()\n")
    theirs = _append(ENUM, "    hug_parens = auto()\n", "    form_feeds = auto()\n")
    theirs = theirs.replace("return feature in Preview", "return feature in set(Preview)")
    result = merge3(ENUM, ours, theirs, "mode.py")
    assert isinstance(result, Conflicted)
    assert "multiline_strings = auto()" in result.text_with_markers
    assert "form_feeds = auto()" in result.text_with_markers


def test_fields_of_a_dataclass_both_sides_add_conflict_but_plain_attributes_merge() -> None:
    base = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Point:\n    x: int\n"
    ours = base + "    y: int\n"
    theirs = base + "    z: int = 0\n"
    assert isinstance(merge3(base, ours, theirs, "point.py"), Conflicted)
    plain = "class Invoice:\n    currency = 'EUR'\n\n    def total(self):\n        return 0\n"
    ours = _append(plain, "    currency = 'EUR'\n", "    precision = 2\n")
    theirs = _append(plain, "    currency = 'EUR'\n", "    locale = 'fr_FR'\n")
    merged = merge3(plain, ours, theirs, "invoice.py")
    assert isinstance(merged, Clean)
    assert "precision = 2\n    locale = 'fr_FR'\n" in merged.text


REDIRECTS = (
    "def test_too_many_redirects(client, url):\n"
    "    response = client.get(url)\n"
    "    while response.is_redirect:\n"
    "        response = response.call_next()\n"
    "    return response\n"
)


def test_a_statement_using_a_name_the_other_side_removed_beside_it_conflicts() -> None:
    ours = REDIRECTS.replace(
        "        response = response.call_next()\n",
        "        assert response.call_next is not None\n        response = response.call_next()\n",
    )
    theirs = REDIRECTS.replace("response.call_next()", "response.next()")
    assert isinstance(merge3(REDIRECTS, ours, theirs, "test_redirects.py"), Conflicted)
    # The same adjacent edits when the new statement does not use what the other side removed.
    ours = REDIRECTS.replace(
        "        response = response.call_next()\n",
        "        assert response.status_code < 400\n        response = response.call_next()\n",
    )
    merged = merge3(REDIRECTS, ours, theirs, "test_redirects.py")
    assert isinstance(merged, Clean)
    assert "        assert response.status_code < 400\n        response = response.next()\n" in (
        merged.text
    )
