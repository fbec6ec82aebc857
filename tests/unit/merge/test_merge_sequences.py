"""Lists of strings other than ``__all__`` are sequences: merged in order, item by item (the
shape of requests' ``setup.py`` ``requires`` merged at d1942c003b8f)."""

from __future__ import annotations

from fleet.merge import Clean, Conflicted, merge3

BASE = "requires = [\n    'chardet',\n    'idna',\n    'urllib3',\n    'certifi',\n]\n"
OURS = BASE.replace("    'idna',\n", "    'idna<3; py2',\n    'idna<4; py3',\n")
THEIRS = BASE.replace("    'chardet',\n", "    'charset_normalizer',\n    'chardet; py2',\n")


def test_disjoint_item_edits_keep_the_order_of_both_sides() -> None:
    result = merge3(BASE, OURS + "A = 1\n", THEIRS + "B = 2\n", "setup.py")
    assert isinstance(result, Clean), result
    assert result.text.startswith(
        "requires = [\n    'charset_normalizer',\n    'chardet; py2',\n    'idna<3; py2',\n"
        "    'idna<4; py3',\n    'urllib3',\n    'certifi',\n]\n"
    )


def test_one_item_edited_two_ways_conflicts() -> None:
    ours = BASE.replace("'idna'", "'idna<3'") + "A = 1\n"
    theirs = BASE.replace("'idna'", "'idna<4'") + "B = 2\n"
    assert isinstance(merge3(BASE, ours, theirs, "setup.py"), Conflicted)


def test_all_is_still_a_set() -> None:
    base = "__all__ = [\n    'a',\n    'b',\n]\n"
    ours = base.replace("    'b',\n", "    'b',\n    'c',\n")
    theirs = base.replace("    'b',\n", "    'b',\n    'd',\n")
    result = merge3(base, ours, theirs, "m.py")
    assert isinstance(result, Clean)
    assert "'c'" in result.text and "'d'" in result.text


def test_both_appending_keeps_ours_then_theirs_unless_one_name_changed_two_ways() -> None:
    # xarray ff16169e31aa doc/conf.py: each side appended a Sphinx extension.
    base = "extensions = [\n    'a',\n    'b',\n]\n"
    ours = base.replace("    'b',\n", "    'b',\n    'jupyterlite_sphinx',\n")
    theirs = base.replace("    'b',\n", "    'b',\n    'sphinx_llm.txt',\n")
    result = merge3(base, ours + "A = 1\n", theirs + "B = 2\n", "conf.py")
    assert isinstance(result, Clean)
    assert "    'b',\n    'jupyterlite_sphinx',\n    'sphinx_llm.txt',\n]" in result.text
    pins = base.replace("    'b',\n", "    'b',\n    'pytest>=7',\n")
    other = base.replace("    'b',\n", "    'b',\n    'pytest>=8',\n")
    assert isinstance(merge3(base, pins + "A = 1\n", other + "B = 2\n", "s.py"), Conflicted)
