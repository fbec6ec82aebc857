"""A group's head deleted by one side where the other side inserted below it (django-filter
``ced329be1b7f``, 36th unseen set): ours added ``import warnings`` inside the standard
library's imports, theirs deleted the two imports around it, the first of them the group's head
after its blank line. The insertion stays in its group, below the blank line; the member that
became the group's head in theirs does not keep a second blank line above it."""

from __future__ import annotations

from fleet.merge._line import line_merge
from fleet.merge._merge3 import merge3
from fleet.merge._reduce import reduce_unchanged
from fleet.merge._result import Clean, Conflicted

BASE = """from __future__ import unicode_literals

import datetime
from decimal import Decimal
from textwrap import dedent

from django.test import TestCase


class T(TestCase):
    def test(self):
        dedent("")
"""
OURS = BASE.replace("import datetime\n", "import datetime\nimport warnings\n")
THEIRS = BASE.replace("import datetime\nfrom decimal import Decimal\n", "")


def test_an_insertion_below_a_deleted_group_head_stays_in_its_group() -> None:
    assert isinstance(line_merge(BASE, OURS, THEIRS), Conflicted)

    result = merge3(BASE, OURS, THEIRS, "tests/test_backends.py")

    assert isinstance(result, Clean)
    assert result.text.startswith(
        "from __future__ import unicode_literals\n\n"
        "import warnings\nfrom textwrap import dedent\n\n"
        "from django.test import TestCase\n"
    ), result.text
    assert "datetime" not in result.text and "Decimal" not in result.text


def test_where_the_other_side_dropped_the_blank_line_no_blank_line_is_added() -> None:
    theirs = BASE.replace("\nimport datetime\nfrom decimal import Decimal\n", "")

    result = merge3(BASE, OURS, theirs, "tests/test_backends.py")

    assert isinstance(result, Clean)
    head = result.text.split("\n\n")[0]
    assert head.splitlines() == [
        "from __future__ import unicode_literals", "import warnings", "from textwrap import dedent",
    ], result.text


def test_a_member_whose_blank_lines_alone_changed_is_parsed_not_set_aside() -> None:
    blank_only = BASE.replace("\nfrom django.test import TestCase\n",
                              "\n\nfrom django.test import TestCase\n")
    edited = BASE.replace("dedent(\"\")", "dedent(\" \")")

    reduced = reduce_unchanged(BASE, BASE, blank_only)
    assert reduced is None or not reduced.sides
    reduced = reduce_unchanged(BASE, BASE, edited)
    assert reduced is not None and len(reduced.sides) == 1


def test_a_replaced_import_takes_the_blank_line_the_other_side_put_above_it() -> None:
    """dateutil ``44cf98c830be`` (38th set): theirs put an ``if PY3:`` block and a blank line
    above an import ours replaced by another; the blank line went with the deleted import."""
    base = "import os\nfrom six import PY3\nfrom .__init__ import tzname\n\n\ndef f():\n    pass\n"
    ours = base.replace("from .__init__ import", "from ._common import")
    shim = "if PY3:\n    ifilter = filter\nelse:\n    from itertools import ifilter\n\n"
    theirs = base.replace("from six import PY3\n", "from six import PY3\n" + shim)

    result = merge3(base, ours, theirs, "dateutil/tz/tz.py")

    assert isinstance(result, Clean)
    assert result.text == theirs.replace("from .__init__ import", "from ._common import")


def test_a_first_member_below_the_other_sides_new_first_member_keeps_its_blank_line() -> None:
    """rope ``cbd94fcd8b03`` (39th set): ours took the blank line off between a class's header
    and its first method, theirs put a constant there; the method stood right below it."""
    base = ("import re\n\n\nclass Refactoring(object):\n\n"
            "    def __init__(self, project):\n        self.project = project\n")
    ours = base.replace("(object):\n\n", "(object):\n").replace("import re\n", "import os\n")
    theirs = base.replace("(object):\n\n", "(object):\n\n    kind_prefixes = {}\n\n").replace(
        "import re\n", "import sys\n")

    result = merge3(base, ours, theirs, "rope/refactor/extract.py")

    assert isinstance(result, Clean)
    assert "    kind_prefixes = {}\n\n    def __init__(self, project):\n" in result.text


def test_lines_of_spaces_one_side_stripped_stay_stripped() -> None:
    """vispy ``a9f04f12027b`` (33rd set): theirs stripped every line of spaces, ours changed a
    method's code; the lines of spaces came back above other members (a first version of the
    rules above compared lines as libcst renders them, a line of spaces as an empty line)."""
    base = ("import os\n\n\nclass Function(object):\n    def rtype(self):\n        return 1\n"
            "    \n    def code(self):\n        return self._code\n"
            "    \n    def name(self):\n        return self._name\n")
    ours = base.replace("return self._code", "return self._code or ''").replace(
        "import os\n", "import re\n")
    theirs = base.replace("    \n", "\n").replace("import os\n", "import sys\n")

    result = merge3(base, ours, theirs, "vispy/visuals/shaders/function.py")

    assert isinstance(result, Clean)
    assert "        return self._code or ''\n\n    def name(self):" in result.text
    assert "return self._code or ''" in result.text
    reduced = reduce_unchanged(base, base, theirs)
    assert reduced is not None and reduced.sides  # set aside: its lines of spaces changed
