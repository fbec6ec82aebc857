"""What the eleventh unseen set (nltk, pelican, moto, faker, cookiecutter) found: a crash and
five wrong clean merges (read among the cases the judge took for the humans' own edits), now
conflicts. Reduced to the lines that matter, written anew in the same shape.

- nltk ``dad5418ca9e8`` and four more merges of ``nltk/corpus/reader/__init__.py`` (Apache-2.0):
  the module star-imports ~40 reader modules and one of them twice (``from ...bnc import *``) in
  every version; ours and theirs each added reader modules at one place, so git conflicts. The
  structural stage tells apart repeated ``from`` imports of one module by the names they import
  and asserted that each imports names: on the repeated star import it raised
  ``AssertionError`` (the driver caught it and left git's conflict; the history replay stopped).
  A repeated star import now stays an anonymous statement, matched by its text.
- moto ``4aa3150f3a8b`` (``moto/awslambda/models.py``, Apache-2.0): ours gave
  ``get_function_by_name_or_arn`` one parameter and moved its two-argument calls to a new
  ``..._with_qualifier``; theirs added a two-argument call in a new method. The union called the
  one-parameter method with two arguments (``TypeError``).
- faker ``3b5f34b678ff``, ``49aeeec020e9``, ``a8d2b751ae0e`` (twice; address providers, MIT):
  ours made every ``@classmethod`` of a provider an instance method; theirs added
  ``@classmethod``\\ s that call ``cls.random_element``, an instance method after ours' change.
"""

from __future__ import annotations

import ast

from fleet.merge import Clean, merge3
from fleet.merge._crossed import call_misfit, decorator_dropped
from fleet.merge._python import structural_merge
from fleet.merge.profile import LanguageProfile, profile_for
from tests.unit.merge._faults import conflicts_both_ways

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


STORE = (
    "class Storage:\n"
    "    def get_function(self, name, qualifier=None):\n"
    "        return self.find(name, qualifier)\n"
    "\n"
    "    def find(self, name, qualifier):\n"
    "        return (name, qualifier)\n"
    "\n"
    "\n"
    "class Backend:\n"
    "    def invoke(self, name, qualifier):\n"
    "        return self.storage.get_function(name, qualifier)\n"
)
# Ours: one parameter; the qualified lookups through a new method.
STORE_OURS = STORE.replace(
    "    def get_function(self, name, qualifier=None):\n"
    "        return self.find(name, qualifier)\n",
    "    def get_function(self, name_or_arn):\n"
    "        return self.find(name_or_arn, None)\n"
    "\n"
    "    def get_function_with_qualifier(self, name, qualifier=None):\n"
    "        return self.find(name, qualifier)\n",
).replace("self.storage.get_function(name, qualifier)",
          "self.storage.get_function_with_qualifier(name, qualifier)")
# Theirs: a new method with a two-argument call, as the lookup was.
STORE_THEIRS = STORE + (
    "\n"
    "    def get_policy(self, name, qualifier=None):\n"
    "        fn = self.storage.get_function(name, qualifier)\n"
    "        return fn\n"
)


def test_a_call_added_the_old_way_to_a_function_the_other_side_changed_conflicts() -> None:
    conflicts_both_ways(STORE, STORE_OURS, STORE_THEIRS, "models.py")


def test_calls_that_fit_the_changed_signature_stay_clean() -> None:
    theirs = STORE_THEIRS.replace("self.storage.get_function(name, qualifier)\n        return fn",
                                  "self.storage.get_function(name)\n        return fn")
    result = merge3(STORE, STORE_OURS, theirs, "models.py")
    assert isinstance(result, Clean), result
    assert call_misfit([ast.parse(t) for t in (STORE, STORE_OURS, theirs, result.text)]) is None


def test_a_misfit_already_in_an_input_is_not_the_merges() -> None:
    odd = "def f(a):\n    return a\n\n\nX = f(1, 2)\n"
    trees = [ast.parse(t) for t in (odd, odd, odd, odd + "Y = 1\n")]
    assert call_misfit(trees) is None
    made = [ast.parse(t) for t in ("def f(a, b):\n    return a\n",) * 3] + [
        ast.parse("def f(a):\n    return a\n\n\nX = f(1, 2)\n")]
    assert call_misfit(made) == "a call of f does not fit the signature one side gave it"


PROVIDER = (
    "class Provider(BaseProvider):\n"
    "    cities = ('a', 'b')\n"
    "\n"
    "    @classmethod\n"
    "    def city_name(cls):\n"
    "        return cls.random_element(cls.cities)\n"
    "\n"
    "    @classmethod\n"
    "    def street_name(cls):\n"
    "        return cls.random_element(cls.cities)\n"
)
PROVIDER_OURS = PROVIDER.replace("    @classmethod\n", "").replace("(cls)", "(self)").replace(
    "cls.", "self.")
PROVIDER_THEIRS = PROVIDER + (
    "\n"
    "    @classmethod\n"
    "    def section_number(cls):\n"
    "        return cls.numerify(cls.random_element(('#', '##')))\n"
)


def test_a_member_added_with_a_decorator_the_other_side_removed_everywhere_conflicts() -> None:
    conflicts_both_ways(PROVIDER, PROVIDER_OURS, PROVIDER_THEIRS, "address.py")


def test_a_decorator_removed_from_one_member_only_says_nothing() -> None:
    ours = PROVIDER.replace(
        "    @classmethod\n    def city_name(cls):\n        return cls.random_element",
        "    def city_name(self):\n        return self.random_element")
    merged = PROVIDER_THEIRS.replace(
        "    @classmethod\n    def city_name(cls):\n        return cls.random_element",
        "    def city_name(self):\n        return self.random_element")
    trees = [ast.parse(t) for t in (PROVIDER, ours, PROVIDER_THEIRS, merged)]
    assert decorator_dropped(trees) is None
