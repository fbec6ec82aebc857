"""One side retires a spelling everywhere (a dotted read, a call's arguments, a string), the other
side adds code written the old way: the clean structural result would break where the humans
rewrote the new code, so git's conflict stands (``fleet.merge._migrated``; real cases:
marshmallow ``669bea38aca0``, black ``30847e315d37``, pip ``110a26f0edf0``)."""

from __future__ import annotations

import ast

from fleet.merge import Clean, merge3
from fleet.merge._migrated import (
    access_retired,
    call_shape_retired,
    doc_line_retired,
    keyword_retired,
    string_retired,
)
from fleet.merge._python import structural_merge
from fleet.merge.profile import PYTHON

BASE = (
    "from schema import Schema\n"
    "\n"
    "\n"
    "def test_one():\n"
    "    result = Schema().dump(1)\n"
    "    assert result.data['a'] == 1\n"
    "\n"
    "\n"
    "def test_two():\n"
    "    result = Schema().dump(2)\n"
    "    assert result.data['b'] == 2\n"
    "\n"
    "\n"
    "def test_three():\n"
    "    result = Schema().dump(3)\n"
    "    assert result.data['c'] == 3\n"
)
# Ours: dump() now returns the data; every read rewritten, and a test of its own at the end.
OURS = BASE.replace("result.data[", "result[") + (
    "\n\ndef test_four():\n    result = Schema().dump(4)\n    assert result['d'] == 4\n"
)


def _theirs(body: str) -> str:
    return BASE + f"\n\ndef test_five():\n    result = Schema().dump(5)\n    {body}\n"


def test_a_read_one_side_retired_that_the_other_adds_is_a_conflict() -> None:
    theirs = _theirs("assert result.data['e'] == 5")
    alone = structural_merge(BASE, OURS, theirs, PYTHON)  # what the check turns down
    assert isinstance(alone, Clean) and "result.data['e']" in alone.text
    result = merge3(BASE, OURS, theirs, "test_schema.py")
    assert not isinstance(result, Clean)
    assert result.stage == "line"  # git's markers, around both sides' new tests


def test_the_new_spelling_on_both_sides_merges_cleanly() -> None:
    result = merge3(BASE, OURS, _theirs("assert result['e'] == 5"), "test_schema.py")
    assert isinstance(result, Clean) and result.stage == "structural"
    assert "def test_four" in result.text and "def test_five" in result.text


def _trees(*texts: str) -> list[ast.Module]:
    return [ast.parse(text) for text in texts]


def test_access_retired_needs_the_uses_rewritten_in_place() -> None:
    theirs = _theirs("assert result.data['e'] == 5")
    merged = OURS + theirs[len(BASE) :]
    texts = [BASE, OURS, theirs, merged]
    assert access_retired(texts, _trees(*texts)) == (
        "one side rewrote every result.data; the other adds uses of it"
    )
    # Ours deleted the three tests instead: a feature removed, not a spelling retired.
    deleted = "from schema import Schema\n"
    texts = [BASE, deleted, theirs, theirs]
    assert access_retired(texts, _trees(*texts)) is None


READ = (
    "def read_data(name):\n    return open(name).read()\n\n\n"
    "def test_a():\n    assert read_data('a')\n\n\n"
    "def test_b():\n    assert read_data('b')\n\n\n"
    "def test_c():\n    assert read_data('c')\n"
)
READ_SUBDIR = READ.replace("def read_data(name)", "def read_data(subdir, name)").replace(
    "read_data('", "read_data('cases', '"
)


def test_call_shape_retired() -> None:
    added = "\n\ndef test_d():\n    assert read_data('d')\n"
    merged = READ_SUBDIR + added
    assert call_shape_retired(_trees(READ, READ + added, READ_SUBDIR, merged)) == (
        "one side changed every call of read_data; the other adds calls the old way"
    )
    fitting = "\n\ndef test_d():\n    assert read_data('cases', 'd')\n"
    trees = _trees(READ, READ + fitting, READ_SUBDIR, READ_SUBDIR + fitting)
    assert call_shape_retired(trees) is None


CONFIG = (
    "def test_one(path):\n    assert (path / 'config.json').exists()\n\n\n"
    "def test_two(path):\n    assert (path / 'config.json').read_text()\n"
)
CONFIG_NAMED = CONFIG.replace("'config.json'", "f'{path.name}-config.json'")


def test_string_retired() -> None:
    added = "\n\ndef test_three(path):\n    assert 'x' in (path / 'config.json').read_text()\n"
    texts = [CONFIG, CONFIG + added, CONFIG_NAMED, CONFIG_NAMED + added]
    assert string_retired(texts, _trees(*texts)) == (
        "one side rewrote every use of 'config.json'; the other adds uses of it"
    )
    texts = [CONFIG, CONFIG + added, CONFIG, CONFIG + added]  # nobody rewrote it
    assert string_retired(texts, _trees(*texts)) is None


SOLVERS = (
    "from sets import S\n"
    "\n"
    "\n"
    "def solve(f):\n"
    '    """\n'
    "    >>> solve(1)\n"
    "    EmptySet()\n"
    '    """\n'
    "    return None\n"
    "\n"
    "\n"
    "def solve_all(fs):\n"
    '    """\n'
    "    >>> solve_all([1])\n"
    "    EmptySet()\n"
    '    """\n'
    "    return None\n"
)
# Theirs: the singleton now prints without parentheses; every expected output rewritten. Both
# sides import one more name on one line: git's conflict, the import merge resolves it.
SOLVERS_NEW_REPR = SOLVERS.replace("    EmptySet()\n", "    EmptySet\n").replace(
    "import S\n", "import S, Union\n"
)


def _eliminate(output: str) -> str:
    return (
        "\n\ndef eliminate(fs, x):\n"
        f'    """\n    >>> eliminate([1], 2)\n    {output}\n    """\n'
        "    return None\n"
    )


def test_a_doctest_output_one_side_retired_that_the_other_adds_is_a_conflict() -> None:
    ours = SOLVERS.replace("import S\n", "import S, Symbol\n") + _eliminate("EmptySet()")
    alone = structural_merge(SOLVERS, ours, SOLVERS_NEW_REPR, PYTHON)
    assert isinstance(alone, Clean) and alone.text.count("EmptySet()") == 1
    result = merge3(SOLVERS, ours, SOLVERS_NEW_REPR, "solveset.py")
    assert not isinstance(result, Clean)
    texts = [SOLVERS, ours, SOLVERS_NEW_REPR, alone.text]
    assert doc_line_retired(texts, _trees(*texts)) == (
        "one side rewrote every docstring line 'EmptySet()'; the other adds it"
    )


def test_a_doctest_written_the_new_way_merges_cleanly() -> None:
    ours = SOLVERS.replace("import S\n", "import S, Symbol\n") + _eliminate("EmptySet")
    result = merge3(SOLVERS, ours, SOLVERS_NEW_REPR, "solveset.py")
    assert isinstance(result, Clean) and result.stage == "structural"
    assert "def eliminate" in result.text and "import S, Symbol, Union" in result.text


SCHEDULER = "".join(
    f"\n\ndef test_{n}(s):\n    s.add_task(worker='w', task_id='{n}')\n"
    "    assert s.get_work(worker='w')\n"
    for n in ("a", "b", "c")
)


def test_a_keyword_one_side_renamed_in_every_call_that_the_other_adds_is_a_conflict() -> None:
    # luigi 9d0b84da438b: ours made every worker= worker_id=, theirs added calls with worker=.
    base = "from luigi import scheduler" + SCHEDULER
    ours = base.replace("worker=", "worker_id=").replace("scheduler", "scheduler, rpc", 1)
    added = "\n\ndef test_d(s):\n    s.add_task(worker='w', task_id='d')\n"
    theirs_base = base.replace("scheduler", "scheduler, task", 1)  # git conflicts on line 1
    theirs = theirs_base + added
    result = merge3(base, ours, theirs, "central_planner_test.py")
    assert not isinstance(result, Clean)
    merged = ours.replace("rpc", "rpc, task") + added
    texts = [base, ours, theirs, merged]
    assert keyword_retired(_trees(*texts)) == (
        "one side renamed the keyword worker= of every add_task() call; the other adds calls "
        "with it"
    )
    fitting = added.replace("worker=", "worker_id=")
    result = merge3(base, ours, theirs_base + fitting, "central_planner_test.py")
    assert isinstance(result, Clean) and "worker_id='w', task_id='d'" in result.text
