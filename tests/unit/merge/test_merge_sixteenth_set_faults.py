"""The wrong clean merges read in the sixteenth unseen set (netbox, mne-python, pipenv, saleor,
sunpy; 5 Dec 2026), from excerpts shaped like their real inputs; mne-python ``e6f9faf42f47`` and
saleor ``078fae8975b3`` are also in tests/fixtures/merge/history whole."""

from __future__ import annotations

import ast

from fleet.merge._merge3 import merge3
from fleet.merge._migrated import access_retired
from fleet.merge._ordering import used_before_bound
from fleet.merge._result import Clean
from fleet.merge._retired_names import fixture_retired, member_removed


def _trees(*texts: str) -> list[ast.Module]:
    return [ast.parse(text) for text in texts]


# mne-python e6f9faf42f47: the result put a class above the base class it derives from.
EVENTS = '''from dataclasses import dataclass


@dataclass
class UIEvent:
    source: object = None


@dataclass
class Contours(UIEvent):
    kind: str = ""


def publish(fig, event):
    return event
'''
ADDED = '''

@dataclass
class ChannelsSelect(UIEvent):
    ch_names: list = None
'''
BLOCK = EVENTS[EVENTS.index("@dataclass\nclass UIEvent"):EVENTS.index("\n\n\ndef ")]
MOVED = EVENTS.replace(BLOCK + "\n\n\n", "") + "\n\n" + BLOCK + "\n"
THEIRS_EVENTS = EVENTS.replace('    kind: str = ""\n', '    kind: str = ""\n' + ADDED)
WRONG = MOVED.replace("\n\ndef publish", ADDED + "\n\ndef publish")


def test_a_class_above_its_base_class_is_found() -> None:
    assert WRONG.index("class ChannelsSelect") < WRONG.index("class UIEvent")
    why = used_before_bound(_trees(EVENTS, MOVED, THEIRS_EVENTS, WRONG))
    assert why == "UIEvent is read at import time above the statement that binds it"


def test_the_same_inputs_merged_in_order_pass() -> None:
    result = merge3(EVENTS, MOVED, THEIRS_EVENTS, "ui_events.py")
    assert isinstance(result, Clean), result
    assert result.text.index("class UIEvent") < result.text.index("class ChannelsSelect")
    assert used_before_bound(_trees(EVENTS, MOVED, THEIRS_EVENTS, result.text)) is None
    exec(compile(result.text, "ui_events.py", "exec"), {})


def test_reads_that_run_later_or_may_be_bound_elsewhere_are_not_reported() -> None:
    later = '''def make():
    return Late()


handler = lambda: Late()
names = [Late for _ in range(2)]


def build(x: Late = None):
    return x


class Late:
    pass
'''
    assert used_before_bound(_trees("", "", "", later)) is None
    starred = "from events import *\n\nclass A(B):\n    pass\n\nclass B:\n    pass\n"
    assert used_before_bound(_trees("", "", "", starred)) is None
    print_later = "print('a')\n\ndef print(*args):\n    pass\n"  # the builtin until rebound
    assert used_before_bound(_trees("", "", "", print_later)) is None


def test_an_order_an_input_already_had_is_not_the_merges_doing() -> None:
    odd = "try:\n    X = Base\nexcept NameError:\n    X = None\n\nclass A(Base):\n    pass\n"
    assert used_before_bound(_trees(odd, odd, odd, odd)) is None
    wrong = "class A(Base):\n    pass\n\n\nclass Base:\n    pass\n"
    assert used_before_bound(_trees(wrong, wrong, wrong, wrong)) is None
    assert used_before_bound(_trees("", "", "", wrong)) == (
        "Base is read at import time above the statement that binds it"
    )
    decorated = "@register\ndef f(x=DEFAULT):\n    pass\n\nDEFAULT = 1\nregister = id\n"
    assert "read at import time" in str(used_before_bound(_trees("", "", "", decorated)))


# pipenv 293b7860c094: ours renamed the fixture PipenvInstance in every test (to one of two new
# fixtures), theirs added a test taking it.
TESTS = "".join(
    f"\n\ndef test_{name}(PipenvInstance):\n    with PipenvInstance() as p:\n"
    f"        assert p.pipenv('{name}').returncode == 0\n"
    for name in ("install", "lock", "sync", "graph")
)
RENAMED = TESTS.replace("(PipenvInstance)", "(pipenv_instance_pypi)", 2).replace(
    "PipenvInstance", "pipenv_instance_private_pypi"
).replace("with pipenv_instance_private_pypi() as p:\n        assert p.pipenv('install')",
          "with pipenv_instance_pypi() as p:\n        assert p.pipenv('install')")
NEW_TEST = (
    "\n\ndef test_extra_pip_args(PipenvInstance):\n    with PipenvInstance() as p:\n"
    "        assert p.pipenv('install --extra-pip-args=--pre').returncode == 0\n"
)


def test_a_fixture_renamed_in_every_test_against_a_test_taking_it_conflicts() -> None:
    theirs = TESTS.replace("\n\ndef test_sync", NEW_TEST + "\n\ndef test_sync")
    assert "PipenvInstance" not in RENAMED
    result = merge3(TESTS, RENAMED, theirs, "tests/test_install.py")
    assert not isinstance(result, Clean), result.text


def test_a_fixture_the_other_side_stopped_using_is_not_a_rename() -> None:
    """The tests rewritten to take other fixtures (their parameter lists changed): the old
    fixture may well still exist (poetry ``84478bc11581``, merged as the humans did)."""
    rewritten = TESTS.replace("(PipenvInstance)", "(tmp_path, runner)").replace(
        "with PipenvInstance() as p:", "with runner(tmp_path) as p:"
    )
    theirs = TESTS + NEW_TEST
    merged = rewritten + NEW_TEST
    assert fixture_retired(_trees(TESTS, rewritten, theirs, merged)) is None
    assert fixture_retired(_trees(TESTS, RENAMED, theirs, RENAMED + NEW_TEST)) is not None
    defined = "import pytest\n\n\n@pytest.fixture\ndef PipenvInstance():\n    return None\n"
    assert fixture_retired(
        _trees(TESTS, RENAMED, theirs, defined + RENAMED + NEW_TEST)
    ) is None  # the file defines it itself


# saleor 078fae8975b3: ours replaced the model field ``name``, theirs added ``__str__`` reading it.
VENDOR = '''from django.db import models


class Vendor(models.Model):
    name = models.CharField(max_length=256)
    slug = models.SlugField(max_length=256)
    is_active = models.BooleanField(default=False)

    class Meta:
        ordering = ("slug",)
'''
BRANDED = VENDOR.replace(
    "    name = models.CharField(max_length=256)\n",
    "    brand_name = models.CharField(max_length=256)\n"
    "    first_name = models.CharField(max_length=256, blank=True)\n",
).replace('ordering = ("slug",)', 'ordering = ("brand_name",)')
STR = "\n    def __str__(self):\n        return self.name or self.slug\n"
WITH_STR = VENDOR + STR


def test_a_member_removed_against_a_new_read_of_it_conflicts() -> None:
    result = merge3(VENDOR, BRANDED, WITH_STR, "models.py")
    assert not isinstance(result, Clean), result.text
    merged = BRANDED + STR
    assert member_removed(_trees(VENDOR, BRANDED, WITH_STR, merged)) == (
        "one side removed Vendor.name; the other adds self.name reads"
    )


def test_a_member_still_bound_somewhere_is_not_reported() -> None:
    merged = BRANDED + STR
    assigned = merged + "\n    def save(self):\n        self.name = self.brand_name\n"
    assert member_removed(_trees(VENDOR, BRANDED, WITH_STR, assigned)) is None
    rebased = BRANDED.replace("(models.Model)", "(NamedModel)")  # it may come from a new base
    assert member_removed(_trees(VENDOR, rebased, WITH_STR, merged)) is None
    named = "class Named:\n    name = None\n\n\n" + merged.replace("(models.Model)", "(Named)")
    assert member_removed(_trees(VENDOR, BRANDED, WITH_STR, named)) is None


# saleor 0dfef9812fc1: ours made the resolvers' root a wrapper (``root.node.currency``), theirs
# added a resolver reading ``root.currency``.
TYPES = '''class CheckoutLine(ModelObjectType):
    @staticmethod
    def resolve_unit_price(root, info):
        return calculate(root.variant, root.currency)

    @staticmethod
    def resolve_total_price(root, info):
        return total(root.quantity, root.currency)

    @staticmethod
    def resolve_undiscounted_unit_price(root, info):
        return base_price(root.variant, root.currency)
'''
WRAPPED = TYPES.replace("root.", "root.node.")
PRIOR = TYPES + '''
    @staticmethod
    def resolve_prior_total_price(root, info):
        return prior(root.quantity, root.currency)
'''


def test_an_attribute_reached_through_a_new_wrapper_everywhere_conflicts() -> None:
    result = merge3(TYPES, WRAPPED, PRIOR, "types.py")
    assert not isinstance(result, Clean), result.text


def test_an_attribute_reached_through_a_shorter_path_is_not_reported() -> None:
    """The other way round (sphinx ``84d3c6508741``: ``self.env.config`` -> ``self.config``, the
    environment still read) the old path may still work."""
    base = "".join(
        f"    def {name}(self):\n        return self.env.config.{name}, self.env.docname\n\n"
        for name in ("language", "root_doc", "source_suffix")
    )
    base = "class Builder:\n" + base
    ours = base.replace("self.env.config.", "self.config.")
    theirs = base + "    def today(self):\n        return self.env.config.today\n"
    merged = ours + "    def today(self):\n        return self.env.config.today\n"
    texts = [base, ours, theirs, merged]
    assert access_retired(texts, _trees(*texts)) is None
    texts = [TYPES, WRAPPED, PRIOR, WRAPPED + PRIOR[len(TYPES):]]
    assert access_retired(texts, _trees(*texts)) == (
        "one side rewrote every root.currency; the other adds uses of it"
    )


def test_an_attribute_of_self_reached_through_a_new_member_is_not_reported() -> None:
    """sunpy ``fa70048bd2ab`` (``map/sources/soho.py``): ``self.plot_settings[...]`` made
    ``self.plotter.plot_settings[...]`` on one side, one more ``self.plot_settings`` use on the
    other; the class keeps the old attribute delegating (the humans kept the use)."""
    base = "class EITMap(GenericMap):\n" + "".join(
        f"    def {name}(self):\n        self.plot_settings['{key}'] = {key!r}\n\n"
        for name, key in (("setup", "cmap"), ("norm", "norm"), ("title", "title"))
    )
    ours = base.replace("self.plot_settings[", "self.plotter.plot_settings[")
    added = "    def extra(self):\n        self.plot_settings['extra'] = 1\n"
    texts = [base, ours, base + added, ours + added]
    assert access_retired(texts, _trees(*texts)) is None
