"""Two rules for one statement both sides edited, found in the held set's conflicts.

- *Held lines*: git conflicts on a run of lines where one side's lines hold all of the other
  side's (equally long, the other side having at each line the base's or this side's). jinja
  ``a9895c88f69e`` (``environment.py``, BSD-3-Clause): a docstring's "will be will be" fixed by
  both sides, the next line reworded by one; the humans kept that side.
- *The same change made twice*: both sides' statements are one program, told apart by formatting
  only. black ``8b427c789db8`` (``blib2to3/pgen2/pgen.py``, MIT): ``str(self.filename)`` written
  by both, one also rewrapping the call; the humans kept the rewrapped one.

Reduced to the lines that matter. Either rule stops at a real second edit: a conflict.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._diff3 import compose_disjoint
from fleet.merge._pytext import held_lines
from tests.unit.merge._faults import conflicts_both_ways

DOC_BASE = (
    "class Environment:\n"
    "    def compile_templates(self, target, zip=True):\n"
    '        """Finds all the templates and compiles them.  If `zip` is `None`, instead of in a\n'
    "        zipfile, the templates will be will be stored in a directory.\n"
    "        By default a deflate zip algorithm is used, to switch to\n"
    "        the stored algorithm, `zip` can be set to ``'stored'``.\n"
    '        """\n'
    "        return self._compile(target, zip)\n"
)
DOC_THEIRS = DOC_BASE.replace("will be will be", "will be")
DOC_OURS = DOC_THEIRS.replace("is used, to switch to", "is used. To switch to")


def test_a_docstring_whose_lines_one_side_holds_is_that_side() -> None:
    result = merge3(DOC_BASE, DOC_OURS, DOC_THEIRS, "environment.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert result.text == DOC_OURS
    result = merge3(DOC_BASE, DOC_THEIRS, DOC_OURS, "environment.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert result.text == DOC_OURS


def test_a_docstring_line_edited_two_ways_still_conflicts() -> None:
    theirs = DOC_THEIRS.replace("to switch to", "and to switch to")
    assert not isinstance(merge3(DOC_BASE, DOC_OURS, theirs, "environment.py"), Clean)
    # Each side edits one line only, a different one: git's conflict stays (no line composing).
    ours = DOC_BASE.replace("is used, to switch to", "is used. To switch to")
    assert not isinstance(merge3(DOC_BASE, ours, DOC_THEIRS, "environment.py"), Clean)


def test_held_lines_asks_every_region_to_be_held() -> None:
    marked = (
        "a\n<<<<<<< ours\nX\nY\n||||||| base\nx\ny\n=======\nX\ny\n>>>>>>> theirs\nb\n"
        "<<<<<<< ours\nP\n||||||| base\np\n=======\nQ\n>>>>>>> theirs\n"
    )
    assert held_lines(marked, ["a\nx\ny\nb\np\n"]) is None
    assert held_lines(marked.split("b\n")[0] + "b\n", ["a\nx\ny\nb\n"]) == "a\nX\nY\nb\n"
    # An input holding a line that reads as a marker (an RST underline) is never parsed so.
    assert held_lines(marked.split("b\n")[0] + "b\n", ["Title\n=======\n"]) is None


SAME_BASE = (
    "class ParserGenerator:\n"
    "    def raise_error(self, msg):\n"
    "        msg = msg.strip()\n"
    "        raise SyntaxError(msg, (self.filename, self.end[0], self.end[1], self.line))\n"
)
SAME_OURS = SAME_BASE.replace("(self.filename,", "(str(self.filename),")
SAME_THEIRS = SAME_BASE.replace(
    "        raise SyntaxError(msg, (self.filename, self.end[0], self.end[1], self.line))\n",
    "        raise SyntaxError(\n"
    "            msg, (str(self.filename), self.end[0], self.end[1], self.line)\n"
    "        )\n",
)


def test_the_same_change_made_twice_is_the_side_that_also_rewrapped_it() -> None:
    for ours, theirs in ((SAME_OURS, SAME_THEIRS), (SAME_THEIRS, SAME_OURS)):
        result = merge3(SAME_BASE, ours, theirs, "pgen.py")
        assert isinstance(result, Clean), result.text_with_markers
        assert result.text == SAME_THEIRS


def test_a_rewrapped_statement_with_another_change_still_conflicts() -> None:
    theirs = SAME_THEIRS.replace("self.end[1], self.line", "self.end[1], None")
    assert not isinstance(merge3(SAME_BASE, SAME_OURS, theirs, "pgen.py"), Clean)
    # A changed comment is not formatting.
    theirs = SAME_THEIRS.replace("        )\n", "        )  # the line too\n")
    assert not isinstance(merge3(SAME_BASE, SAME_OURS, theirs, "pgen.py"), Clean)


LINK_BASE = (
    "class ProtobufRequestMixin:\n"
    '    """Adds protobuf parsing.\n\n'
    "    .. _protobuf: http://code.google.com/p/protobuf/\n"
    '    """\n\n'
    "    protobuf_check_initialization = True\n"
)
LINK_THEIRS = LINK_BASE.replace(
    "http://code.google.com/p/protobuf/", "https://github.com/protocolbuffers/protobuf"
)
LINK_OURS = LINK_THEIRS.replace(
    "protocolbuffers/protobuf\n",
    "protocolbuffers/protobuf\n\n    .. deprecated:: 0.15\n        Removed in 1.0.\n",
)


def test_lines_one_side_fixed_and_the_other_fixed_alike_and_extended() -> None:
    """werkzeug ``b69901bf72a8`` (``contrib/wrappers.py``, BSD-3-Clause): the link fixed by
    both sides, a ``deprecated`` note added below it by one."""
    for ours, theirs in ((LINK_OURS, LINK_THEIRS), (LINK_THEIRS, LINK_OURS)):
        result = merge3(LINK_BASE, ours, theirs, "wrappers.py")
        assert isinstance(result, Clean), result.text_with_markers
        assert result.text == LINK_OURS
    theirs = LINK_BASE.replace("http://code.google.com/p/protobuf/", "https://protobuf.dev")
    assert not isinstance(merge3(LINK_BASE, LINK_OURS, theirs, "wrappers.py"), Clean)


def test_holding_asks_for_every_change_of_the_other_side() -> None:
    # Both added x, one also y beside it: which version is the later is unknown (issue 19).
    assert compose_disjoint([], ["x"], ["x", "y"]) is None
    assert compose_disjoint(["a"], ["A"], ["A", "y"]) == [("theirs", 0), ("theirs", 1)]
    assert compose_disjoint([], ["x"], ["y", "z"]) is None  # two insertions at one point
    assert compose_disjoint(["a", "b"], ["A", "b"], ["A"]) == [("theirs", 0)]  # and b dropped
    assert compose_disjoint(["a", "b"], ["A", "B"], ["A", "c"]) is None
    # A base item one side dropped and the other moved is no holding.
    assert compose_disjoint(["x", "y"], ["y", "c"], ["y", "x", "c", "d"]) is None


IDNA_BASE = (
    "class URL:\n"
    "    def __init__(self, url):\n"
    "        self._uri = parse(url)\n\n"
    "        # Handle IDNA domain names.\n"
    "        if self._uri.authority:\n"
    '            idna = self._uri.authority.encode("idna").decode("ascii")\n'
    "            if idna != self._uri.authority:\n"
    "                self._uri = self._uri.copy_with(\n"
    "                    authority=idna\n"
    "                )\n\n"
    "        # Normalize scheme and domain name.\n"
    "        self._uri = self._uri.normalize()\n"
)
IDNA_OURS = IDNA_BASE.replace("                )\n", "                )  # pragma: nocover\n")
IDNA_THEIRS = IDNA_BASE.replace(IDNA_BASE[IDNA_BASE.index("        # Handle") :], "").replace(
    "\n\n",
    "\n\n        # Normalize scheme and domain name.\n        self._uri = self._uri.normalize()\n",
)


def test_a_block_one_side_deleted_and_the_other_edited_inside_conflicts() -> None:
    """httpx ``0f2cf9849207`` (``models.py``, BSD-3-Clause): the IDNA block deleted on one side,
    a ``# pragma: nocover`` added inside it on the other. No side holds the other's edit."""
    assert "Handle IDNA" not in IDNA_THEIRS and "normalize()" in IDNA_THEIRS
    conflicts_both_ways(IDNA_BASE, IDNA_OURS, IDNA_THEIRS, "models.py")


CLOSE_BASE = (
    "class Response:\n"
    "    def iter_raw(self):\n"
    "        with map_exceptions():\n"
    "            for part in self.stream:\n"
    "                yield part\n"
    "        self.close()\n"
)
CLOSE_OURS = CLOSE_BASE.replace("        self.close()\n", "")
WITH = "        with map_exceptions():\n            for part in self.stream:\n"
CLOSE_THEIRS = CLOSE_BASE.replace(
    WITH + "                yield part\n        self.close()\n",
    "        chunker = ByteChunker()\n"
    "        with map_exceptions():\n"
    "            for raw in self.stream:\n"
    "                yield from chunker.decode(raw)\n"
    "        yield from chunker.flush()\n\n"
    "        self.close()\n",
)


def test_a_statement_one_side_deleted_beside_the_others_rewrite_is_not_held() -> None:
    """httpx ``bf46cad3295c`` (``_models.py``, BSD-3-Clause): ``self.close()`` (and ``close``)
    removed on one side, the loop above it rewritten on the other, which kept the call."""
    for ours, theirs in ((CLOSE_OURS, CLOSE_THEIRS), (CLOSE_THEIRS, CLOSE_OURS)):
        result = merge3(CLOSE_BASE, ours, theirs, "_models.py")
        assert not isinstance(result, Clean) or "self.close()" not in result.text, result.text


TAIL_BASE = (
    "def test_port(app):\n    return 1\n\n\n"
    "async def test_port_asgi(app):\n"
    "    port = app.port\n"
    "    assert isinstance(port, int)\n\n"
    '    delattr(app, "_port")\n'
    "    port = app.port\n"
    '    assert hasattr(app, "_port")\n\n\n'
    "def test_socket(app):\n    return 2\n"
)
TAIL_OURS = TAIL_BASE.replace('\n    delattr(app, "_port")\n    port = app.port\n', "").replace(
    '    assert hasattr(app, "_port")\n', ""
)
TAIL_THEIRS = (
    TAIL_BASE[: TAIL_BASE.index("async def")] + TAIL_BASE[TAIL_BASE.index("def test_socket") :]
)


def test_lines_dropped_from_a_function_the_other_side_deleted_conflict() -> None:
    """sanic ``055ad6bd6d13`` (``tests/test_requests.py``, MIT): a test's last lines dropped on
    one side, the whole test on the other; the humans kept the shortened test."""
    conflicts_both_ways(TAIL_BASE, TAIL_OURS, TAIL_THEIRS, "test_requests.py")


def test_items_one_side_deleted_and_the_other_deleted_with_more() -> None:
    """attrs ``25b23361f61f``: ``import warnings`` dropped on one side, the import and the
    ``warnings.warn(...)`` below it on the other. Whole statements: the larger deletion holds."""
    assert compose_disjoint(["i", "w"], ["w"], []) == []
    assert compose_disjoint(["i", "w"], [], ["w"]) == []
    # The other side rewrote what one side deleted: no holding.
    assert compose_disjoint(["i", "w"], ["w"], ["I", "w"]) is None


SETUP_BASE = (
    "from setuptools import setup\n\n"
    "setup(\n"
    '    name="marshmallow",\n'
    "    classifiers=[\n"
    '        "Programming Language :: Python :: 3",\n'
    '        "Programming Language :: Python :: 3.3",\n'
    '        "Programming Language :: Python :: 3.4",\n'
    '        "Programming Language :: Python :: 3.5",\n'
    "    ],\n"
    '    project_urls={"Issues": "https://example.org/issues"},\n'
    ")\n"
)
SETUP_THEIRS = SETUP_BASE.replace('        "Programming Language :: Python :: 3.3",\n', "")
SETUP_OURS = (
    SETUP_THEIRS.replace('        "Programming Language :: Python :: 3.4",\n', "")
    .replace('    name="marshmallow",\n', '    name="marshmallow",\n    license="MIT",\n')
    .replace('/issues"},\n', '/issues", "Changelog": "https://example.org/changes"},\n')
)


def test_lines_one_side_deleted_and_the_other_deleted_with_more_in_a_whole_file() -> None:
    """marshmallow ``bfbc63097a10`` (``setup.py``, MIT): the Python 3.3 classifier dropped on
    one side, 3.3 and 3.4 on the other (which also edited other lines of the call). The larger
    deletion of lines at the same depth holds the smaller; git's region is that side's."""
    for ours, theirs in ((SETUP_OURS, SETUP_THEIRS), (SETUP_THEIRS, SETUP_OURS)):
        result = merge3(SETUP_BASE, ours, theirs, "setup.py")
        assert isinstance(result, Clean), result.text_with_markers
        assert result.text == SETUP_OURS
