"""The fault the eleventh unseen set (nltk, pelican, moto, faker, cookiecutter) found: a crash,
not a wrong merge. Reduced to the lines that matter, written anew in the same shape.

- nltk ``dad5418ca9e8`` and four more merges of ``nltk/corpus/reader/__init__.py`` (Apache-2.0):
  the module star-imports ~40 reader modules and one of them twice (``from ...bnc import *``) in
  every version; ours and theirs each added reader modules at one place, so git conflicts. The
  structural stage tells apart repeated ``from`` imports of one module by the names they import
  and asserted that each imports names: on the repeated star import it raised
  ``AssertionError`` (the driver caught it and left git's conflict; the history replay stopped).
  A repeated star import now stays an anonymous statement, matched by its text.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._python import structural_merge
from fleet.merge.profile import LanguageProfile, profile_for

BASE = (
    "from reader.plaintext import *\n"
    "from reader.util import *\n"
    "from reader.bnc import *\n"
    "from reader.wordnet import *\n"
    "from reader.bnc import *\n"
    "\n"
    "__all__ = [\n"
    "    'PlaintextReader',\n"
    "    'WordNetReader',\n"
    "]\n"
)
OURS = BASE.replace("from reader.wordnet import *\n",
                    "from reader.wordnet import *\nfrom reader.ycoe import *\n").replace(
    "    'WordNetReader',\n", "    'WordNetReader',\n    'YCOEReader',\n")
THEIRS = BASE.replace("from reader.wordnet import *\n",
                      "from reader.wordnet import *\nfrom reader.mte import *\n").replace(
    "    'WordNetReader',\n", "    'WordNetReader',\n    'MTEReader',\n")


def test_a_repeated_star_import_does_not_crash_the_structural_stage() -> None:
    for one, other in ((OURS, THEIRS), (THEIRS, OURS)):
        result = structural_merge(BASE, one, other, _python_profile())
        assert result is not None
        whole = merge3(BASE, one, other, "reader/__init__.py")
        assert isinstance(whole, Clean), whole  # both additions, the repeat kept twice
        assert whole.text.count("from reader.bnc import *\n") == 2
        for added in ("from reader.ycoe import *\n", "from reader.mte import *\n",
                      "'YCOEReader'", "'MTEReader'"):
            assert added in whole.text


def _python_profile() -> LanguageProfile:
    profile = profile_for("reader/__init__.py")
    assert profile is not None
    return profile
