"""Wrong clean merges found on unseen merge history (wagtail of the twelfth set, pyqtgraph of the
thirteenth; 5 Dec 2026). Each is a conflict now; the neighbouring right merges stay clean."""

from __future__ import annotations

import ast

from fleet.merge import Clean, merge3
from fleet.merge._module_prefix import prefix_retired
from fleet.merge._near_twin import near_twins
from fleet.merge._python import structural_merge
from fleet.merge.profile import PYTHON

# wagtail 340226b340c0, wagtail/contrib/settings/tests/test_admin.py: theirs made the Wagtail 2.0
# package rename (wagtail.wagtailcore -> wagtail.core); ours added an import the old way.
ADMIN = (
    "from django.test import TestCase\n"
    "\n"
    "from wagtail.tests.utils import WagtailTestUtils\n"
    "from wagtail.wagtailcore import hooks\n"
    "from wagtail.wagtailcore.models import Page, Site\n"
    "\n"
    "\n"
    "class TestSettings(TestCase, WagtailTestUtils):\n"
    "    def test_hook(self):\n"
    "        self.assertTrue(hooks.get_hooks('register_settings_menu_item'))\n"
    "\n"
    "    def test_site(self):\n"
    "        self.assertEqual(Site.objects.count(), Page.objects.count())\n"
)
PANELS = (
    "\n"
    "    def test_panels(self):\n"
    "        handler = ObjectList([FieldPanel('title')])\n"
    "        self.assertTrue(handler)\n"
)
RENAMED = ADMIN.replace("wagtail.wagtailcore", "wagtail.core")


def _with_panels(module: str) -> str:
    line = f"from {module} import FieldPanel, ObjectList\n"
    return ADMIN.replace("WagtailTestUtils\n", "WagtailTestUtils\n" + line, 1) + PANELS


def test_an_import_under_a_module_prefix_the_other_side_renamed_is_a_conflict() -> None:
    ours = _with_panels("wagtail.wagtailadmin.edit_handlers")
    merged = structural_merge(ADMIN, ours, RENAMED, PYTHON)
    assert isinstance(merged, Clean)  # the structural stage alone keeps the old spelling
    assert "from wagtail.wagtailadmin.edit_handlers import" in merged.text
    trees = [ast.parse(text) for text in (ADMIN, ours, RENAMED, merged.text)]
    assert prefix_retired([ADMIN, ours, RENAMED, merged.text], trees) == (
        "one side renamed every import under wagtail.wagtail to wagtail.; the other adds one "
        "under wagtail.wagtail"
    )
    result = merge3(ADMIN, ours, RENAMED, "test_admin.py")
    assert not isinstance(result, Clean)


def test_an_import_added_in_the_new_spelling_merges_cleanly() -> None:
    ours = _with_panels("wagtail.admin.edit_handlers")
    result = merge3(ADMIN, ours, RENAMED, "test_admin.py")
    assert isinstance(result, Clean)
    assert "from wagtail.admin.edit_handlers import FieldPanel" in result.text
    assert "wagtail.wagtail" not in result.text


def test_a_side_dropping_a_dependency_is_no_rename() -> None:
    # Theirs deleted the hooks import and its test (no import replaced it); ours added an
    # import from the same package: both kept.
    theirs = ADMIN.replace("from wagtail.wagtailcore import hooks\n", "").replace(
        "    def test_hook(self):\n"
        "        self.assertTrue(hooks.get_hooks('register_settings_menu_item'))\n\n",
        "",
    )
    ours = _with_panels("wagtail.wagtailcore.blocks")
    result = merge3(ADMIN, ours, theirs, "test_admin.py")
    assert isinstance(result, Clean)
    assert "from wagtail.wagtailcore.blocks import FieldPanel" in result.text
    assert "import hooks" not in result.text
    trees = [ast.parse(text) for text in (ADMIN, ours, theirs, result.text)]
    assert prefix_retired([ADMIN, ours, theirs, result.text], trees) is None


def test_a_rename_that_keeps_the_old_prefix_somewhere_is_not_reported() -> None:
    # Theirs still names the old package (a string), so the old prefix may still be meant.
    theirs = RENAMED + "\nAPPS = ['wagtail.wagtailcore']\n"
    ours = _with_panels("wagtail.wagtailadmin.edit_handlers")
    merged = (
        ours.replace("wagtail.wagtailcore", "wagtail.core") + "\nAPPS = ['wagtail.wagtailcore']\n"
    )
    texts = [ADMIN, ours, theirs, merged]
    assert prefix_retired(texts, [ast.parse(text) for text in texts]) is None


# pyqtgraph 6128c2dfba29, tests/parametertree/test_parametertypes.py: both sides added one test
# before test_data_race, ours reading item._defaultAct, theirs item.defaultBtn.
PARAMETERS = (
    "import pyqtgraph.parametertree as pt\n"
    "\n"
    "\n"
    "def test_opts():\n"
    "    p = pt.Parameter.create(name='int', type='int', value=1)\n"
    "    assert p.value() == 1\n"
    "\n"
    "\n"
    "def test_data_race():\n"
    "    p = pt.Parameter.create(name='int', type='int', value=0)\n"
    "    assert p.value() == 0\n"
)


def _reset_test(name: str, control: str) -> str:
    return (
        f"def test_set_to_default_updates_reset_{name}():\n"
        "    p = pt.Parameter.create(name='int', type='int', value=1, default=2)\n"
        "    tree = pt.ParameterTree()\n"
        "    tree.addParameters(p)\n"
        "\n"
        "    item = next(iter(p.items))\n"
        f"    assert item.{control}.isEnabled() is True\n"
        "\n"
        "    p.setToDefault()\n"
        f"    assert item.{control}.isEnabled() is False\n"
        "\n"
        "\n"
    )


def _before_data_race(test: str) -> str:
    return PARAMETERS.replace("def test_data_race", test + "def test_data_race", 1)


def test_one_test_added_by_both_sides_under_two_names_written_two_ways_is_a_conflict() -> None:
    ours = _before_data_race(_reset_test("action", "_defaultAct"))
    theirs = _before_data_race(_reset_test("button", "defaultBtn"))
    both = _before_data_race(
        _reset_test("action", "_defaultAct") + _reset_test("button", "defaultBtn")
    )
    trees = [ast.parse(text) for text in (PARAMETERS, ours, theirs, both)]
    assert near_twins(trees) == (
        "both sides added one definition at one place under two names, written two ways: "
        "test_set_to_default_updates_reset_action and test_set_to_default_updates_reset_button"
    )
    assert structural_merge(PARAMETERS, ours, theirs, PYTHON) is None
    result = merge3(PARAMETERS, ours, theirs, "test_parametertypes.py")
    assert not isinstance(result, Clean)


def _typed_test(kind: str, body: str) -> str:
    return f"def test_foo_{kind}():\n{body}\n\n"


def test_two_different_tests_added_side_by_side_merge_cleanly() -> None:
    ours = _before_data_race(
        _typed_test("int", "    x = foo(1)\n    assert x == 1\n    assert isinstance(x, int)\n")
    )
    theirs = _before_data_race(
        _typed_test("float", "    y = foo(1.5)\n    assert y > 1\n    assert y < 2\n")
    )
    result = merge3(PARAMETERS, ours, theirs, "test_parametertypes.py")
    assert isinstance(result, Clean)
    assert "def test_foo_int" in result.text and "def test_foo_float" in result.text


def test_two_tests_named_for_the_identifier_they_differ_in_merge_cleanly() -> None:
    def body(kind: str) -> str:
        return f"    x = Value('1')\n    assert x.as_{kind}() == 1\n    assert x.is_{kind}\n"

    ours = _before_data_race(_typed_test("int", body("int")))
    theirs = _before_data_race(_typed_test("float", body("float")))
    result = merge3(PARAMETERS, ours, theirs, "test_parametertypes.py")
    assert isinstance(result, Clean)
    assert "def test_foo_int" in result.text and "def test_foo_float" in result.text


def test_one_test_written_two_ways_at_two_places_is_not_reported() -> None:
    action = _reset_test("action", "_defaultAct")
    ours = _before_data_race(action)
    button = _reset_test("button", "defaultBtn")
    theirs = PARAMETERS.replace("def test_opts", button + "def test_opts", 1)
    both = PARAMETERS.replace("def test_opts", button + "def test_opts", 1)
    both = both.replace("def test_data_race", action + "def test_data_race", 1)
    trees = [ast.parse(text) for text in (PARAMETERS, ours, theirs, both)]
    assert near_twins(trees) is None


def test_one_module_moved_is_no_package_rename() -> None:
    # Theirs moved the one import from pkg.sub to pkg.other; pkg.sub may well stay.
    base = "from pkg.sub import X\n\nX()\n"
    theirs = "from pkg.other import X\n\nX()\n"
    ours = "from pkg.sub import X\nfrom pkg.sub.extra import Y\n\nX()\nY()\n"
    merged = "from pkg.other import X\nfrom pkg.sub.extra import Y\n\nX()\nY()\n"
    texts = [base, ours, theirs, merged]
    assert prefix_retired(texts, [ast.parse(text) for text in texts]) is None
    # Another name from a module base imports (it stays) is no sign either.
    two = "from pkg.sub import X\nfrom pkg.sub.more import Z\n\nX(Z)\n"
    moved = two.replace("pkg.sub", "pkg.other")
    added = two.replace(
        "from pkg.sub.more import Z\n", "from pkg.sub.more import Z\nfrom pkg.sub import W\n"
    )
    kept = moved.replace(
        "from pkg.other.more import Z\n", "from pkg.other.more import Z\nfrom pkg.sub import W\n"
    )
    texts = [two, added, moved, kept]
    assert prefix_retired(texts, [ast.parse(text) for text in texts]) is None
    renamed = kept.replace("from pkg.sub import W", "from pkg.sub.new import W")
    ours_new = added.replace("from pkg.sub import W", "from pkg.sub.new import W")
    texts = [two, ours_new, moved, renamed]
    assert prefix_retired(texts, [ast.parse(text) for text in texts]) is not None
