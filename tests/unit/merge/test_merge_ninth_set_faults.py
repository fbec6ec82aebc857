"""The wrong clean merge found in the ninth unseen set (trio, gunicorn, falcon, pip-tools,
WeasyPrint, yarl), now a conflict. Reduced to the lines that matter, written anew in the same
shape.

- yarl ``cf982b039dee`` (``yarl/_url.py``, Apache-2.0): the base held two imports of
  ``urllib.parse`` binding the same names (an earlier merge had kept both); one side deleted the
  second and the other the first (keeping the second's text in its place). The structural merge
  applied both deletions and left ``SplitResult``, ``urlsplit`` and the rest bound nowhere,
  although both sides and the base bound them; every use lay in code no side changed, which the
  structural stage sets aside, so no check saw a name read and not bound. The humans kept one
  import.
- trio ``00ba1ca0aaec`` (``src/trio/_tests/test_timeouts.py``, MIT; judged *human beyond*, found
  by running ruff's F821 over every clean result): one side replaced ``from .._timeouts import
  *`` by the names the file used, the other added tests calling ``sleep_forever`` and ``trio``,
  which the star import had bound; the merge kept both, two ``NameError``s. The humans added
  the imports.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._checks import unsure
from tests.unit.merge._faults import conflicts_both_ways

BODY = (
    "\n"
    "\n"
    "def split(url):\n"
    "    parts = urlsplit(url)\n"
    "    return SplitResult(*parts)\n"
    "\n"
    "\n"
    "def join(parts):\n"
    "    return urlunsplit(parts)\n"
)
DUPLICATED_BASE = (
    "import math\n"
    "from typing import Union\n"
    "from urllib.parse import SplitResult, urlsplit, urlunsplit\n"
    "from urllib.parse import uses_relative\n"
    "from typing import Tuple, Union\n"
    "from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit\n"
) + BODY
# Ours deletes the second pair and widens the first ``typing`` import.
DUPLICATED_OURS = (
    "import math\n"
    "from typing import Tuple, Union\n"
    "from urllib.parse import SplitResult, urlsplit, urlunsplit\n"
    "from urllib.parse import uses_relative\n"
) + BODY
# Theirs deletes the first pair, moving the second pair's text to its place.
DUPLICATED_THEIRS = (
    "import math\n"
    "from typing import Tuple, Union\n"
    "from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit\n"
    "from urllib.parse import uses_relative\n"
) + BODY


def test_duplicated_imports_each_side_deleting_another_conflict() -> None:
    # Before the check both directions gave a clean result with no ``SplitResult`` import.
    conflicts_both_ways(DUPLICATED_BASE, DUPLICATED_OURS, DUPLICATED_THEIRS, "_url.py")


def test_a_result_missing_a_binding_both_sides_have_is_unsure() -> None:
    dropped = DUPLICATED_OURS.replace(
        "from urllib.parse import SplitResult, urlsplit, urlunsplit\n", ""
    )
    # Without the uses (as the structural stage sees the file once unchanged code is set aside).
    why = unsure(
        DUPLICATED_BASE.replace(BODY, ""),
        DUPLICATED_OURS.replace(BODY, ""),
        DUPLICATED_THEIRS.replace(BODY, ""),
        dropped.replace(BODY, ""),
    )
    assert why is not None and "SplitResult" in why
    # In a class: an attribute both sides keep must stay.
    klass = "class Options:\n    timeout = 10\n    retries = 3\n"
    ours = klass.replace("timeout = 10", "timeout = 20")
    theirs = klass.replace("retries = 3", "retries = 5")
    why = unsure(klass, ours, theirs, "class Options:\n    timeout = 20\n")
    assert why is not None and "Options.retries" in why


def test_bindings_the_result_keeps_or_one_side_removed_pass() -> None:
    base = "import os\nimport sys\n\nprint(sys.argv)\n"
    ours = "import sys\n\nprint(sys.argv)\n"
    # Ours removed ``os``, theirs left it: not bound by both sides, so it may go.
    assert unsure(base, ours, base, ours) is None
    # Both sides' edits of a class kept: every binding both have is still there.
    klass = "class Options:\n    timeout = 10\n    retries = 3\n"
    ours = klass.replace("timeout = 10", "timeout = 20")
    theirs = klass.replace("retries = 3", "retries = 5")
    merged = "class Options:\n    timeout = 20\n    retries = 5\n"
    assert unsure(klass, ours, theirs, merged) is None
    result = merge3(klass, ours, theirs, "options.py")
    assert isinstance(result, Clean) and result.text == merged


STAR_BASE = (
    "import time\n"
    "from typing import Callable\n"
    "\n"
    "from .timeouts import *\n"
    "\n"
    "\n"
    "def test_sleep():\n"
    "    sleep(1)\n"
)
# Ours names what the star import gave; both sides also edit the ``typing`` line, so git's line
# merge conflicts and the structural stage runs (as in the real case).
STAR_OURS = STAR_BASE.replace(
    "from .timeouts import *\n", "from .timeouts import (\n    fail_after,\n    sleep,\n)\n"
).replace("Callable", "Callable, ContextManager")
STAR_THEIRS = STAR_BASE.replace("Callable", "Callable, Protocol") + (
    "\n\ndef test_forever():\n    with fail_after(1):\n        sleep_forever()\n"
)


def test_a_use_of_what_a_replaced_star_import_bound_conflicts() -> None:
    # Before the check both directions gave a clean result calling an unbound ``sleep_forever``.
    conflicts_both_ways(STAR_BASE, STAR_OURS, STAR_THEIRS, "test_timeouts.py")


def test_star_imports_kept_or_names_still_bound_pass() -> None:
    # Theirs' new use of a name ours imports by name: bound, fine.
    theirs = STAR_THEIRS.replace("sleep_forever()", "sleep(2)")
    merged = STAR_OURS.replace("Callable, ContextManager", "Callable, ContextManager, Protocol")
    merged += theirs[len(STAR_BASE.replace("Callable", "Callable, Protocol")) :]
    assert unsure(STAR_BASE, STAR_OURS, theirs, merged) is None
    # The result keeps the star import: what it binds is unknown, so nothing is asked.
    assert unsure(STAR_BASE, STAR_BASE, STAR_THEIRS, STAR_THEIRS) is None
    # The result reads a name unbound in every version alike (a global injected by a runner).
    injected = STAR_OURS + "\n\nprint(__version_info__)\n"
    assert unsure(STAR_OURS, injected, STAR_OURS, injected) is None


def test_a_star_import_removed_beside_a_named_import_set_aside_still_merges() -> None:
    # isort d65d97e83e32 (eighth set, resolved): ours dropped ``from ... import *`` beside an
    # unchanged import of ``Sorter``, which the structural stage sets aside; theirs added a test
    # calling ``Sorter``. Every version reads ``Sorter`` unbound in what the stage sees, so it is
    # not a name only the star import gave.
    base = (
        "import os\n"
        "from sorter import Sorter\n"
        "from sorter.compat import *\n"
        "\n"
        "\n"
        "def test_one():\n"
        "    assert Sorter('a').output == 'a'\n"
        "\n"
        "\n"
        "def test_two():\n"
        "    assert Sorter('b', wrap=1).output == 'b'\n"
    )
    ours = base.replace("from sorter.compat import *\n", "").replace("wrap=1", "wrap=2")
    theirs = base.replace("== 'b'\n", "== 'b'\n    assert os.sep\n") + (
        "\n\ndef test_three():\n    assert Sorter('c').output == 'c'\n"
    )
    for one, other in ((ours, theirs), (theirs, ours)):
        result = merge3(base, one, other, "test_sorter.py")
        assert isinstance(result, Clean), result.text_with_markers
        assert "import *" not in result.text and "def test_three" in result.text
