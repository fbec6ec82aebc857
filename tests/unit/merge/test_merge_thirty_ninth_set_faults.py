"""The two driver faults the thirty-ninth unseen set (pyparsing, rope, pyflakes, pycodestyle,
wtforms, django-polymorphic; 7 Dec 2026) showed, from excerpts shaped like the real inputs:
each a clean merge that kept both sides' version of one thing, now a conflict."""

from __future__ import annotations

from fleet.merge._commented_twin import twins
from fleet.merge._line import line_merge
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted

CHECKER = '''class Checker:
    def handleFields(self, node, tree):
        for name, fields in iter_child_nodes(node):
            self.handleNode(fields, node)

    def handleChildren(self, tree):
        pass
'''
AT = "    def handleFields(self, node, tree):\n"


def test_a_line_one_side_added_live_and_the_other_commented_out_conflicts() -> None:
    """pyflakes ``a3e40d91f382``: ours added ``g.trace(...)  ###``, theirs the same line as
    ``### g.trace(...)``; the merge ran the trace theirs had turned off."""
    ours = CHECKER.replace(AT, AT + "        g.trace(node.__class__.__name__)  ###\n")
    theirs = CHECKER.replace(AT, AT + "        ### g.trace(node.__class__.__name__)\n")
    assert isinstance(line_merge(CHECKER, ours, theirs), Conflicted)

    result = merge3(CHECKER, ours, theirs, "pyflakes/checker.py")

    assert isinstance(result, Conflicted)


def test_a_line_commented_out_by_one_side_alone_merges() -> None:
    base = CHECKER.replace(AT, AT + "        g.trace(node.__class__.__name__)\n")
    ours = base.replace("        g.trace(", "        # g.trace(")
    theirs = base.replace("    def handleChildren(self, tree):\n        pass\n",
                          "    def handleChildren(self, tree):\n        return None\n")

    result = merge3(base, ours, theirs, "pyflakes/checker.py")

    assert isinstance(result, Clean)
    assert "        # g.trace(node.__class__.__name__)\n" in result.text


def test_twins_are_counted_only_for_code_of_some_length() -> None:
    assert twins("x = compute(a, b)\n# x = compute(a, b)\n") == 1
    assert twins("pass\n# pass\n") == 0
    assert twins("# x = compute(a, b)\ny = compute(a, b)\n") == 0


MODELS = '''from django.db import models


class MROBase2(models.Model):
    field1 = models.CharField(max_length=10)


class MROBase3(models.Model):
    objects = PolymorphicManager()


class MRODerived(MROBase2, MROBase3):
    pass
'''
MODEL = "class MROBase3(models.Model):\n"


def test_a_primary_key_each_side_gave_one_model_under_its_own_name_conflicts() -> None:
    """django-polymorphic ``a3c9bcb14a8b``: ``id2`` by ours, ``base_3_id`` by theirs, both
    ``models.AutoField(primary_key=True)``: a model Django refuses."""
    ours = MODELS.replace(MODEL, MODEL + "    id2 = models.AutoField(primary_key=True)  # clash\n")
    theirs = MODELS.replace(MODEL, MODEL + "    base_3_id = models.AutoField(primary_key=True)\n")

    result = merge3(MODELS, ours, theirs, "polymorphic/tests/__init__.py")

    assert isinstance(result, Conflicted)


def test_two_fields_alike_without_a_primary_key_and_two_key_columns_merge() -> None:
    ours = MODELS.replace(MODEL, MODEL + "    email = models.CharField(max_length=100)\n")
    theirs = MODELS.replace(MODEL, MODEL + "    phone = models.CharField(max_length=100)\n")
    result = merge3(MODELS, ours, theirs, "app/models.py")
    assert isinstance(result, Clean)
    assert "email = " in result.text and "phone = " in result.text

    # SQLAlchemy: several primary-key columns make one composite key
    ours = MODELS.replace(MODEL, MODEL + "    a = Column(Integer, primary_key=True)\n")
    theirs = MODELS.replace(MODEL, MODEL + "    b = Column(Integer, primary_key=True)\n")
    result = merge3(MODELS, ours, theirs, "app/models.py")
    assert isinstance(result, Clean)
