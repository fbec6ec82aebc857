"""One side's edit of a run of statements holds the other side's: the same statement rewritten
alike by both, its neighbour by one more (httpx ``64fd48eaa2ae``, ``dispatch/connection.py``,
BSD-3-Clause: ``self.backend = lookup_backend(backend)`` written by both sides, ``self.http_2``
also renamed ``self.http2`` by one). git conflicts on the two lines; the humans kept the side
that holds both edits. Reduced to the lines that matter."""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._diff3 import compose_disjoint

BASE = (
    "from .base import Backend, lookup_backend\n\n\n"
    "class Connection:\n"
    "    def __init__(self, http_2=False, backend=None):\n"
    "        self.timeout = 5\n"
    "        self.http_2 = http_2\n"
    "        self.backend = Backend() if backend is None else backend\n"
    "        self.uds = None\n\n"
    "    def ssl(self):\n"
    "        return self.http_2\n"
)
THEIRS = BASE.replace(
    "Backend() if backend is None else backend\n", "lookup_backend(backend)\n"
).replace("        self.uds = None\n", "        self.uds = None\n        self.local = None\n")
OURS = (
    BASE.replace("Backend() if backend is None else backend\n", "lookup_backend(backend)\n")
    .replace("        self.http_2 = http_2\n", "        self.http2 = http_2\n")
    .replace("        return self.http_2\n", "        return self.http2\n")
)


def test_a_side_whose_edit_holds_the_others_is_the_merge() -> None:
    result = merge3(BASE, OURS, THEIRS, "connection.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert result.text == OURS.replace(
        "        self.uds = None\n", "        self.uds = None\n        self.local = None\n"
    )


def test_the_shared_statement_edited_two_ways_still_conflicts() -> None:
    theirs = THEIRS.replace("lookup_backend(backend)\n", "lookup_backend(backend or 'auto')\n")
    assert not isinstance(merge3(BASE, OURS, theirs, "connection.py"), Clean)


def test_covering_asks_for_runs_of_one_length_and_one_side_holding_the_other() -> None:
    assert compose_disjoint(["a", "b"], ["A", "X"], ["a", "X"]) == [("ours", 0), ("ours", 1)]
    assert compose_disjoint(["a", "b"], ["a", "X"], ["A", "X"]) == [("theirs", 0), ("theirs", 1)]
    assert compose_disjoint(["a", "b"], ["A", "X"], ["a", "Y"]) is None
    assert compose_disjoint(["a", "b"], ["A", "X"], ["a", "X", "c"]) is None
