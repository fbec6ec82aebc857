"""What the thirty-seventh unseen set (django-silk, django-guardian, responses, pytest-django,
packaging, billiard; 7 Dec 2026) showed, from an excerpt shaped like the real input: both sides
added at one place, one side a constant, the other a constant and new functions; the first
side's constant landed below the other side's functions (pytest-django ``58e3062a96f6``), out
of the block of constants and without the blank lines a module-level statement after a
function takes. Each side's own order is kept, and an assignment its side follows with a
function or class stays with them (napari ``6b0e3496b1fc``)."""

from __future__ import annotations

from fleet.merge._line import line_merge
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted

BASE = '''import os


SETTINGS_MODULE_ENV = 'DJANGO_SETTINGS_MODULE'
CONFIGURATION_ENV = 'DJANGO_CONFIGURATION'


def pytest_addoption(parser):
    group = parser.getgroup('django')
'''
OURS_ADDED = '''DJANGO_ASSERTS = {
    (1, 3): ('assertContains', 'assertFormError'),
}


def populate_namespace():
    return dict((name, name) for name in DJANGO_ASSERTS)


def pytest_namespace():
    return {}
'''
ANCHOR = "CONFIGURATION_ENV = 'DJANGO_CONFIGURATION'\n"


def _added(text: str) -> str:
    """``BASE`` with ``text`` added after ``CONFIGURATION_ENV``, where both sides added."""
    return BASE.replace(ANCHOR, ANCHOR + text)


OURS = _added(OURS_ADDED)
THEIRS = _added("INVALID_TEMPLATE_VARS_ENV = 'FAIL_INVALID_TEMPLATE_VARS'\n")


def _merged(ours: str, theirs: str) -> str:
    """The clean merge of ``ours`` and ``theirs`` over ``BASE`` (asserted clean)."""
    result = merge3(BASE, ours, theirs, "pytest_django/plugin.py")
    assert isinstance(result, Clean)
    return result.text


def test_a_constant_beside_the_other_sides_constant_and_functions_stays_with_constants() -> None:
    assert isinstance(line_merge(BASE, OURS, THEIRS), Conflicted)

    text = _merged(OURS, THEIRS)
    constant = text.index("INVALID_TEMPLATE_VARS_ENV = ")
    # before ours' constant and functions, as the humans put it: ours' constant goes with them
    assert constant < text.index("DJANGO_ASSERTS = {") < text.index("def populate_namespace")
    assert text.index("def populate_namespace") < text.index("def pytest_namespace")


def test_each_sides_own_order_is_kept() -> None:
    # ours: a function, then a constant computed by it; theirs: a constant
    ours = _added("\n\ndef _default():\n    return 1\n\n\nDEFAULT = _default()\n")
    text = _merged(ours, THEIRS)
    assert text.index("def _default") < text.index("DEFAULT = _default()")
    assert text.index("INVALID_TEMPLATE_VARS_ENV") < text.index("def _default")


def test_an_assignment_followed_by_its_sides_class_stays_above_that_class() -> None:
    # napari 6b0e3496b1fc: theirs' ``A = TypeVar('A')`` above theirs' new class using it, ours'
    # new functions at the same place
    theirs = _added("A = TypeVar('A')\n\n\nclass Key(Generic[A]):\n    pass\n")
    text = _merged(OURS, theirs)
    assert text.index("A = TypeVar('A')") < text.index("class Key(Generic[A])")
    assert text.index("def pytest_namespace") < text.index("A = TypeVar('A')")
