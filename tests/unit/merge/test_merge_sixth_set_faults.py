"""The wrong clean merges found in the sixth unseen set (setuptools, paramiko, Pillow, conda,
spyder, sympy), now conflicts. Reduced to the lines that matter.

- conda ``11973bda8aaf`` (``tests/test_create.py``, BSD-3-Clause): ``conda_cli("install",
  f"--prefix={tmp_path}", "--yes")`` given a package two ways, ``"python"`` inserted after
  ``"install"`` on one side, ``"favicon"`` appended on the other; the merge passed both. Both
  sides adding positional arguments to one call shift each other's positions.
- Pillow ``bb324671270d`` (``Tests/test_file_mpo.py``, MIT-CMU): ``assert mpinfo is not None``
  added inside the ``with`` block on one side and after it on the other; the merge kept both.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._tokens import merge_tokens
from tests.unit.merge._faults import conflicts_both_ways

INSTALL_BASE = (
    "def test_install_in_nonenv(tmp_path, conda_cli):\n"
    "    (tmp_path / 'tempfile.txt').write_text('hello world')\n"
    "    with pytest.raises(DirectoryNotACondaEnvironmentError):\n"
    '        conda_cli("install", f"--prefix={tmp_path}", "--yes")\n'
)
INSTALL_OURS = INSTALL_BASE.replace('"--yes")', '"--yes", "favicon")')
INSTALL_THEIRS = INSTALL_BASE.replace('"install",', '"install", "python",')


def test_positional_arguments_added_to_one_call_by_both_conflict() -> None:
    conflicts_both_ways(INSTALL_BASE, INSTALL_OURS, INSTALL_THEIRS, "test_create.py")


def test_argument_edits_that_shift_no_position_still_merge() -> None:
    assert merge_tokens("f(a, b)\n", "f(a, x, b)\n", "f(a, b, y)\n") is None
    assert merge_tokens("f(a, b, c)\n", "f(a, c)\n", "f(a, b, c, d)\n") is None
    # A keyword argument has no position; an edit of an argument travels with it.
    assert merge_tokens("f(a, b)\n", "f(a, x, b)\n", "f(a, b, y=1)\n") == "f(a, x, b, y=1)\n"
    assert merge_tokens("f(a, b, c)\n", "f(A, b, c)\n", "f(a, b, c, d)\n") == "f(A, b, c, d)\n"
    # Elements of a nested list, or of a list display, are not the call's positions.
    nested = merge_tokens("f(a, [1, 2], c)\n", "f(a, [1, 2, 3], c)\n", "f(a, [1, 2], c, d)\n")
    assert nested == "f(a, [1, 2, 3], c, d)\n"
    display = merge_tokens("x = [a, b]\n", "x = [z, a, b]\n", "x = [a, b, y]\n")
    assert display == "x = [z, a, b, y]\n"


MPO_BASE = (
    "def test_mp_attribute(test_file):\n"
    "    with Image.open(test_file) as im:\n"
    "        mpinfo = im._getmp()\n"
    "    for frame_number, mpentry in enumerate(mpinfo[0xB002]):\n"
    "        assert mpentry['Attribute']\n"
)
MPO_OURS = MPO_BASE.replace(
    "        mpinfo = im._getmp()\n",
    "        assert isinstance(im, MpoImageFile)\n"
    "        mpinfo = im._getmp()\n"
    "        assert mpinfo is not None\n",
)
MPO_THEIRS = MPO_BASE.replace(
    "        mpinfo = im._getmp()\n",
    "        mpinfo = im._getmp()\n    assert mpinfo is not None\n",
)


def test_one_statement_both_sides_added_at_two_places_conflicts() -> None:
    conflicts_both_ways(MPO_BASE, MPO_OURS, MPO_THEIRS, "test_file_mpo.py")


def test_statements_added_at_two_places_once_each_still_merge() -> None:
    """Different statements, or a trivial one (``return``) both added: no repetition asked."""
    theirs = MPO_BASE.replace(
        "        mpinfo = im._getmp()\n",
        "        mpinfo = im._getmp()\n    assert mpinfo\n",
    )
    result = merge3(MPO_BASE, MPO_OURS, theirs, "test_file_mpo.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert result.text.count("assert mpinfo") == 2
    base = "def f(x):\n    if x:\n        a()\n    else:\n        b()\n"
    ours = base.replace("        a()\n", "        a()\n        return\n")
    theirs = base.replace("        b()\n", "        b()\n        return\n")
    result = merge3(base, ours, theirs, "f.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert result.text.count("return") == 2


def test_a_statement_the_merge_wrote_from_two_edits_is_no_repetition() -> None:
    """One statement edited by both, merged token by token into a text no input has (conda
    ``d31ddda3a1c5``, spyder ``c3714adb5326``: the first version of the check took that for a
    statement added twice)."""
    base = "def f(a, b, c):\n    x = g(a, c, b)\n    return x\n"
    ours = base.replace("g(a, c, b)", "g(A, c, b)")
    theirs = base.replace("g(a, c, b)", "g(a, c, B)")
    result = merge3(base, ours, theirs, "f.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert "x = g(A, c, B)" in result.text
