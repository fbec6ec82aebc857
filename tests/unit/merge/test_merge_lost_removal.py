"""A binding one side removed and the other left as it was must not survive the merge (pytest
387f096179c2: ``PurePath`` dropped from ``from pathlib import Path, PurePath`` on one side, the
import split into one line per name on the other)."""

from __future__ import annotations

from fleet.merge import Clean, merge3

BASE = "from pathlib import Path, PurePath\n\n\ndef f(p):\n    return PurePath(p), Path(p)\n"
OURS = "from pathlib import Path\n\n\ndef f(p):\n    return Path(p)\n"
THEIRS = BASE.replace(
    "from pathlib import Path, PurePath\n",
    "from pathlib import Path\nfrom pathlib import PurePath\n",
)


def test_a_removed_import_is_not_brought_back_by_the_other_sides_split() -> None:
    result = merge3(BASE, OURS, THEIRS, "main.py")
    assert not (isinstance(result, Clean) and "PurePath" in result.text)
