"""The wrong clean merge found in the tenth unseen set (urllib3, beets, locust, redis-py,
jsonschema, mitmproxy), now a conflict. Reduced to the lines that matter, written anew in the
same shape.

- mitmproxy ``4791fbd906b1`` (``mitmproxy/proxy/mode_servers.py``, MIT; judged *human beyond*):
  theirs moved the abstract property ``log_desc`` from ``AsyncioServerInstance`` up into
  ``ServerInstance`` and added ``to_json`` reading it; ours removed ``log_desc`` everywhere (the
  abstract property and each server class's value) and read ``self.mode.description`` instead.
  The merge kept theirs' abstract property and ours' removals: every server class was left
  abstract, a ``TypeError`` at each instantiation that no input has. The humans dropped
  ``log_desc`` and ``to_json`` read ``self.mode.description``.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._abstract import abstract_made
from tests.unit.merge._faults import conflicts_both_ways, trees

BASE = (
    "from abc import ABCMeta, abstractmethod\n"
    "from typing import Generic, TypeVar\n"
    "\n"
    "M = TypeVar('M')\n"
    "\n"
    "\n"
    "class ServerInstance(Generic[M], metaclass=ABCMeta):\n"
    "    def __init__(self, mode):\n"
    "        self.mode = mode\n"
    "\n"
    "    @abstractmethod\n"
    "    async def start(self):\n"
    "        pass\n"
    "\n"
    "\n"
    "class AsyncioServerInstance(ServerInstance[M], metaclass=ABCMeta):\n"
    "    async def start(self):\n"
    "        print(f'{self.log_desc} listening')\n"
    "\n"
    "    @property\n"
    "    @abstractmethod\n"
    "    def log_desc(self) -> str:\n"
    "        pass\n"
    "\n"
    "\n"
    "class RegularInstance(AsyncioServerInstance[str]):\n"
    "    log_desc = 'HTTP(S) proxy'\n"
    "\n"
    "\n"
    "class ReverseInstance(AsyncioServerInstance[str]):\n"
    "    @property\n"
    "    def log_desc(self) -> str:\n"
    "        return f'reverse proxy to {self.mode}'\n"
)
# Ours: no ``log_desc`` anywhere, the mode describes itself.
OURS = (
    BASE.replace("{self.log_desc} listening", "{self.mode.description} listening")
    .replace(
        "\n    @property\n    @abstractmethod\n    def log_desc(self) -> str:\n        pass\n", ""
    )
    .replace("    log_desc = 'HTTP(S) proxy'\n", "    pass\n")
    .replace(
        "    @property\n    def log_desc(self) -> str:\n"
        "        return f'reverse proxy to {self.mode}'\n",
        "    pass\n",
    )
)
# Theirs: the abstract property moved up into ``ServerInstance``, and a new use of it there.
THEIRS = BASE.replace(
    "\n    @property\n    @abstractmethod\n    def log_desc(self) -> str:\n        pass\n", ""
).replace(
    "    async def start(self):\n        pass\n",
    "    async def start(self):\n        pass\n"
    "\n"
    "    @property\n"
    "    @abstractmethod\n"
    "    def log_desc(self) -> str:\n"
    "        pass\n"
    "\n"
    "    def to_json(self) -> dict:\n"
    "        return {'description': self.log_desc}\n",
)


def test_an_abstract_member_moved_up_on_one_side_and_removed_on_the_other_conflicts() -> None:
    assert "log_desc" not in OURS and THEIRS.count("def log_desc") == 2
    # Before the check both directions gave a clean result whose server classes are abstract.
    conflicts_both_ways(BASE, OURS, THEIRS, "mode_servers.py")


def test_a_result_leaving_a_concrete_class_abstract_is_refused() -> None:
    left = THEIRS.replace("    log_desc = 'HTTP(S) proxy'\n", "    pass\n")
    why = abstract_made(trees(BASE, THEIRS, THEIRS, left))
    assert why is not None and "RegularInstance" in why and "log_desc" in why


def test_abstract_classes_the_inputs_have_or_cannot_tell_pass() -> None:
    # Each input's own result: no class it leaves abstract is new.
    for version in (BASE, OURS, THEIRS):
        assert abstract_made(trees(BASE, OURS, THEIRS, version)) is None
    # A side that makes a class abstract on purpose: that input has it abstract too.
    made = BASE.replace("    log_desc = 'HTTP(S) proxy'\n", "    pass\n")
    assert abstract_made(trees(BASE, made, BASE, made)) is None
    # A base from another module may implement the member: nothing is said.
    foreign = "from base import Mixin\n" + THEIRS.replace(
        "class RegularInstance(AsyncioServerInstance[str]):\n    log_desc = 'HTTP(S) proxy'\n",
        "class RegularInstance(Mixin, AsyncioServerInstance[str]):\n    pass\n",
    )
    assert abstract_made(trees(BASE, THEIRS, THEIRS, foreign)) is None


def test_a_new_subclass_that_implements_the_moved_member_still_merges() -> None:
    # Theirs moves the abstract property up; ours adds a server class that defines it.
    ours = BASE + (
        "\n\nclass Socks5Instance(AsyncioServerInstance[str]):\n    log_desc = 'SOCKS v5 proxy'\n"
    )
    for one, other in ((ours, THEIRS), (THEIRS, ours)):
        result = merge3(BASE, one, other, "mode_servers.py")
        assert isinstance(result, Clean), result.text_with_markers
        assert "class Socks5Instance" in result.text and "def to_json" in result.text
