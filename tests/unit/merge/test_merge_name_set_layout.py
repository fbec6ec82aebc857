"""The names of one ``from`` import merge as a set even when a side moved the blank line above
it (scrapy ``3e634c77969b``, ``tests/test_utils_log.py``, BSD-3-Clause: theirs added imports
above ``from scrapy.utils.log import (...)``, which took its blank line, and names to it; ours
added one of those names. A blank line is layout; a comment above the import still counts)."""

from __future__ import annotations

from fleet.merge import Clean, merge3

BASE = (
    "import sys\n"
    "\n"
    "from scrapy.utils.log import (\n"
    "    StreamLogger,\n"
    "    failure_to_exc_info,\n"
    ")\n"
    "\n"
    "\n"
    "def test_levels():\n"
    "    return 1\n"
)
OURS = BASE.replace("    StreamLogger,\n", "    StreamLogger,\n    configure_logging,\n").replace(
    "return 1", "return configure_logging"
)
THEIRS = BASE.replace(
    "import sys\n\nfrom scrapy", "import sys\n\nfrom scrapy.settings import Settings\nfrom scrapy"
).replace(
    "    StreamLogger,\n",
    "    StreamLogger,\n    _uninstall_scrapy_root_handler,\n    configure_logging,\n",
)


def test_names_merge_when_theirs_moved_the_blank_line_above() -> None:
    result = merge3(BASE, OURS, THEIRS, "test_utils_log.py")
    assert isinstance(result, Clean), result
    assert result.text.count("configure_logging,") == 1
    assert "_uninstall_scrapy_root_handler," in result.text
    assert "from scrapy.settings import Settings\n" in result.text
    assert "return configure_logging" in result.text


def test_a_comment_added_above_the_import_still_counts() -> None:
    theirs = THEIRS.replace("from scrapy.utils.log", "# the logging helpers\nfrom scrapy.utils.log")
    result = merge3(BASE, OURS, theirs, "test_utils_log.py")
    assert not isinstance(result, Clean) or "# the logging helpers" in result.text
