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
