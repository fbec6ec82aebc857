"""The wrong clean merges found in the eighth unseen set (pylint, isort, sentry-python,
pyinstaller, psycopg, botocore), now conflicts. Reduced to the lines that matter, written anew in
the same shape.

- sentry-python ``6e412d7f28c6`` (``sentry_sdk/integrations/openai.py``, MIT): one side dropped
  the parameter ``manual_span_cleanup`` from ``_capture_exception``, the other added calls that
  pass ``manual_span_cleanup=False``; the merge kept both, a ``TypeError`` at each call. The
  humans dropped the keyword.
- isort ``e70653f984e4`` (``isort/isort.py``, MIT): one side appended ``","`` and ``"\\n"`` to
  ``cont_line`` before a ``return`` that formats it, the other rewrote that ``return`` to format
  in the same ``","`` and ``"\\n"`` on the same conditions; the merge kept both, so the comma came
  out twice. The humans kept the rewritten ``return`` alone.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._calls import keyword_dropped
from fleet.merge._names import added_alike
from tests.unit.merge._faults import conflicts_both_ways, trees

# Each side also adds an import at one point, so git's line merge conflicts and the structural
# stage runs (in the real case git conflicted on other lines of the file).
KEYWORD_BASE = (
    "import os\n"
    "\n"
    "\n"
    "def capture(exc, cleanup=True):\n"
    "    span = current()\n"
    "    if cleanup and span:\n"
    "        span.close()\n"
    "    report(exc)\n"
    "\n"
    "\n"
    "def run(span):\n"
    "    try:\n"
    "        work()\n"
    "    except Exception as exc:\n"
    "        capture(exc)\n"
    "        raise\n"
)
KEYWORD_OURS = (
    KEYWORD_BASE.replace("def capture(exc, cleanup=True):", "def capture(exc):")
    .replace("    if cleanup and span:\n        span.close()\n", "")
    .replace("import os\n", "import os\nimport re\n")
)
KEYWORD_THEIRS = KEYWORD_BASE.replace(
    "        capture(exc)\n", "        capture(exc, cleanup=False)\n        span.close()\n"
).replace("import os\n", "import os\nimport sys\n")


def test_a_keyword_passed_to_a_parameter_the_other_side_removed_conflicts() -> None:
    conflicts_both_ways(KEYWORD_BASE, KEYWORD_OURS, KEYWORD_THEIRS, "integration.py")


def test_keywords_the_result_still_accepts_pass_the_check() -> None:
    # The parameter stays: the call is fine.
    assert (
        keyword_dropped(trees(KEYWORD_BASE, KEYWORD_BASE, KEYWORD_THEIRS, KEYWORD_THEIRS)) is None
    )
    # **kwargs takes any keyword.
    open_ended = KEYWORD_OURS.replace("def capture(exc):", "def capture(exc, **options):")
    merged = open_ended.replace("        capture(exc)\n", "        capture(exc, cleanup=False)\n")
    assert keyword_dropped(trees(KEYWORD_BASE, open_ended, KEYWORD_THEIRS, merged)) is None
    # A keyword no input's definition accepted is not this check's business.
    odd = KEYWORD_OURS.replace("        capture(exc)\n", "        capture(exc, level=2)\n")
    assert keyword_dropped(trees(KEYWORD_BASE, KEYWORD_OURS, odd, odd)) is None
    # A method called through self, its parameter dropped on one side.
    method_base = (
        "class Client:\n"
        "    def send(self, data, retry=True):\n"
        "        return data\n"
        "\n"
        "    def flush(self):\n"
        "        return self.send(b'')\n"
    )
    method_ours = method_base.replace(", retry=True", "")
    method_merged = method_ours.replace("self.send(b'')", "self.send(b'', retry=False)")
    why = keyword_dropped(trees(method_base, method_ours, method_base, method_merged))
    assert why is not None and "retry" in why


def test_unrelated_edits_beside_a_removed_parameter_still_merge() -> None:
    other = KEYWORD_BASE.replace(
        "        work()\n", "        work()\n        log('done')\n"
    ).replace("import os\n", "import os\nimport sys\n")
    result = merge3(KEYWORD_BASE, KEYWORD_OURS, other, "integration.py")
    assert isinstance(result, Clean), result
    assert result.stage == "structural"
    assert "cleanup" not in result.text and "log('done')" in result.text


ALIKE_BASE = (
    "def wrap(line, rest, config, mode):\n"
    "    rest = indent(rest)\n"
    "    if config['parens']:\n"
    "        return '{0} (\\n{1})'.format(line, rest)\n"
    "    return line + rest\n"
)
ALIKE_OURS = ALIKE_BASE.replace(
    "    if config['parens']:\n",
    "    if config['parens']:\n"
    "        if config.get('trailing_comma'):\n"
    "            rest += ','\n"
    "        if mode in (Modes.HANGING, Modes.GRID):\n"
    "            rest += '\\n'\n",
)
ALIKE_THEIRS = ALIKE_BASE.replace(
    "        return '{0} (\\n{1})'.format(line, rest)\n",
    "        return '{0} (\\n{1}{2}{3})'.format(\n"
    "            line, rest,\n"
    "            ',' if config['trailing_comma'] else '',\n"
    "            '\\n' if mode in (Modes.HANGING, Modes.GRID) else '',\n"
    "        )\n",
)


def test_one_change_made_two_ways_at_one_point_conflicts() -> None:
    conflicts_both_ways(ALIKE_BASE, ALIKE_OURS, ALIKE_THEIRS, "isort.py")


def test_different_changes_at_one_point_still_compose() -> None:
    # A statement inserted before the one the other side rewrote, sharing no new code with it.
    logged = ALIKE_BASE.replace(
        "    if config['parens']:\n", "    if config['parens']:\n        log.debug(line)\n"
    )
    result = merge3(ALIKE_BASE, logged, ALIKE_THEIRS, "isort.py")
    assert isinstance(result, Clean), result
    assert "log.debug(line)" in result.text and "trailing_comma" in result.text
    # Each side wrapped another statement in the same new condition (black 653248558523): the
    # new code is alike, but neither side's statements read what the other's assign.
    wrapped = (
        "class Visitor:\n"
        "    def setup(self, v):\n"
        "        self.visit_try = partial(v, keywords={'try'})\n"
        "        self.visit_with = partial(v, keywords={'with'})\n"
    )
    ours = wrapped.replace(
        "        self.visit_with = partial(v, keywords={'with'})\n",
        "        if self.mode.preview:\n"
        "            self.visit_with = partial(v, keywords={'with'}, parens={'with'})\n"
        "        else:\n"
        "            self.visit_with = partial(v, keywords={'with'})\n",
    )
    theirs = wrapped.replace(
        "        self.visit_try = partial(v, keywords={'try'})\n",
        "        if self.mode.preview:\n"
        "            self.visit_try = partial(v, keywords={'try'}, parens={'try'})\n"
        "        else:\n"
        "            self.visit_try = partial(v, keywords={'try'})\n",
    )
    both = merge3(wrapped, ours, theirs, "linegen.py")
    assert isinstance(both, Clean), both
    assert both.text.count("if self.mode.preview:") == 2
    # One new name in common (``config``-style lookups of another key) is not the same change.
    assert not added_alike(
        [
            ["return f(x)"],
            ["y = settings.timeout", "return f(x)"],
            ["return f(x, settings.retries)"],
        ]
    )
    assert added_alike(
        [
            ["return f(x)"],
            ["x += Modes.GRID", "return f(x)"],
            ["return f(x + Modes.GRID)"],
        ]
    )
