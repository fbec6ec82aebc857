"""Wrong clean merges read in the new unseen history (3 Dec 2026), now conflicts:

- aiohttp ``6f7667336b92`` (``web_runner.py``): one side removed the parameter
  ``shutdown_timeout`` from ``BaseSite.__init__``, the other added a deprecation warning that
  reads it; the merge read a name nothing bound (a ``NameError`` when a site is made);
- aiohttp ``e33fd6148e2a`` (``test_resolver.py``): ``loop = asyncio.get_running_loop()`` written
  by both sides at one point of a test (one replacing a statement, one inserting above it) was
  kept twice;
- sphinx ``02e781313470`` (``testing/fixtures.py``): ``Callable`` imported inside
  ``if TYPE_CHECKING:`` from ``typing`` on one side, ``collections.abc`` on the other, and kept
  twice.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3

PARAM_BASE = (
    "from m import a\n\n\n"
    "def wait(timeout):\n    return timeout\n\n\n"
    "def make(runner, *, timeout=60.0, backlog=128):\n"
    "    check(runner)\n"
    "    site = Site(runner)\n"
    "    site.timeout = timeout\n"
    "    site.backlog = backlog\n"
    "    return site\n"
)
PARAM_OURS = (
    "from m import a, b\n\n\n"
    "def wait(timeout):\n    return timeout or 1.0\n\n\n"
    "def make(runner, *, backlog=128):\n"
    "    check(runner)\n"
    "    site = Site(runner)\n"
    "    site.backlog = backlog\n"
    "    return site\n"
)
PARAM_THEIRS = (
    "from m import a, c\n\n\n"
    "def wait(timeout):\n    return timeout\n\n\n"
    "def make(runner, *, timeout=60.0, backlog=128):\n"
    "    check(runner)\n"
    "    if timeout != 60.0:\n"
    "        warn('set timeout on the runner')\n"
    "        runner.timeout = timeout\n"
    "    site = Site(runner)\n"
    "    site.backlog = backlog\n"
    "    return site\n"
)


def test_a_statement_reading_a_parameter_the_other_side_removed_conflicts() -> None:
    result = merge3(PARAM_BASE, PARAM_OURS, PARAM_THEIRS, "runner.py")
    assert not isinstance(result, Clean), result.text


def test_a_parameter_both_sides_kept_still_merges() -> None:
    ours = PARAM_BASE.replace("    site.backlog = backlog\n", "    site.backlog = backlog or 1\n")
    result = merge3(PARAM_BASE, ours, PARAM_THEIRS.replace("    site.timeout", ""), "runner.py")
    assert isinstance(result, Clean)
    assert "runner.timeout = timeout" in result.text and "backlog or 1" in result.text


LOOP_BASE = (
    "async def test_default_loop(loop):\n"
    "    asyncio.set_event_loop(loop)\n"
    "    resolver = Resolver()\n"
    "    assert resolver.loop is loop\n"
)
LOOP_OURS = (
    "async def test_default_loop():\n"
    "    loop = asyncio.get_running_loop()\n"
    "    resolver = Resolver()\n"
    "    assert resolver.loop is loop\n"
)
LOOP_THEIRS = (
    "async def test_default_loop():\n"
    "    loop = asyncio.get_running_loop()\n"
    "    asyncio.set_event_loop(loop)\n"
    "    resolver = Resolver()\n"
    "    assert resolver.loop is loop\n"
)


def test_one_local_assignment_both_sides_wrote_is_not_kept_twice() -> None:
    result = merge3(LOOP_BASE, LOOP_OURS, LOOP_THEIRS, "test_resolver.py")
    assert not (isinstance(result, Clean) and result.text.count("loop = asyncio") > 1)


TC_BASE = (
    "from typing import TYPE_CHECKING, Any, Callable\n"
    "\n"
    "if TYPE_CHECKING:\n"
    "    from pathlib import Path\n"
    "\n"
    "\n"
    "def app(make: Callable, p: 'Path') -> Any:\n"
    "    return make(p)\n"
)
TC_OURS = TC_BASE.replace(", Any, Callable\n", "\n").replace(
    "    from pathlib import Path\n",
    "    from pathlib import Path\n    from typing import Any, Callable\n",
)
TC_THEIRS = TC_BASE.replace(", Any, Callable\n", "\n").replace(
    "    from pathlib import Path\n",
    "    from collections.abc import Callable\n    from pathlib import Path\n"
    "    from typing import Any\n",
)


def test_one_name_imported_two_ways_inside_type_checking_conflicts() -> None:
    result = merge3(TC_BASE, TC_OURS, TC_THEIRS, "fixtures.py")
    assert not (isinstance(result, Clean) and result.text.count("Callable\n") > 1), result.text
