"""A list of strings merged item by item keeps each side's edits of the items' text and the
comment above an item where that item is (scrapy ``2d9857b44127``, ``setup.py``, BSD-3-Clause:
ours appended a requirement with a two-line comment above it; theirs re-quoted every item and
bumped two pins. The merge used to repeat ours' comment above all 17 items and keep base's
quotes on the 14 theirs only re-quoted: a wrong clean result)."""

from __future__ import annotations

from fleet.merge import Clean, merge3

BASE = (
    "from setuptools import setup\n"
    "\n"
    "install_requires = [\n"
    "    'Twisted>=18.9.0',\n"
    "    'cryptography>=3.4.6',\n"
    "    'cssselect>=0.9.1',\n"
    "    'lxml>=4.3.0',\n"
    "]\n"
    "extras_require = {}\n"
    "\n"
    "setup(name='Scrapy', install_requires=install_requires)\n"
)
COMMENTED = (
    "    # TODO: Release a new version of xtractmime and use it as the minimum\n"
    "    # version here.\n"
    "    'xtractmime @ git+https://github.com/scrapy/xtractmime@c65d09c9',\n"
)
OURS = BASE.replace("    'lxml>=4.3.0',\n", "    'lxml>=4.3.0',\n" + COMMENTED)
THEIRS = (
    BASE.replace("'", '"')
    .replace("cryptography>=3.4.6", "cryptography>=36.0.0")
    .replace("lxml>=4.3.0", "lxml>=4.4.1")
    .replace("extras_require = {}\n", 'extras_require = {"PyPy": ["PyPyDispatcher>=2.1.0"]}\n')
)


def test_the_comment_stays_above_its_item_and_theirs_quotes_are_kept() -> None:
    result = merge3(BASE, OURS, THEIRS, "setup.py")
    assert isinstance(result, Clean), result
    assert result.text.count("# TODO: Release") == 1
    assert (
        "install_requires = [\n"
        '    "Twisted>=18.9.0",\n'
        '    "cryptography>=36.0.0",\n'
        '    "cssselect>=0.9.1",\n'
        '    "lxml>=4.4.1",\n' + COMMENTED + "]\n"
    ) in result.text
    assert 'extras_require = {"PyPy": ["PyPyDispatcher>=2.1.0"]}\n' in result.text


def test_one_item_written_two_ways_by_the_two_sides_is_a_conflict() -> None:
    ours = OURS.replace("'cssselect>=0.9.1'", "u'cssselect>=0.9.1'")
    result = merge3(BASE, ours, THEIRS, "setup.py")
    assert not isinstance(result, Clean)
    assert "    u'cssselect>=0.9.1',\n" in result.text_with_markers
    assert '    "cssselect>=0.9.1",\n' in result.text_with_markers


def test_a_comment_added_above_an_item_the_other_side_deleted_is_a_conflict() -> None:
    commented = "    # keep in step with parsel\n    'cssselect>=0.9.1',\n"
    ours = BASE.replace("    'cssselect>=0.9.1',\n", commented)
    theirs = BASE.replace("    'cssselect>=0.9.1',\n", "").replace("= {}", "= {'x': []}")
    result = merge3(BASE, ours, theirs, "setup.py")
    assert not isinstance(result, Clean)
    assert "<<<<<<< ours\n" + commented + "||||||| base\n" in result.text_with_markers
