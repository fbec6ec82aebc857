"""Both sides insert statements at one point of a function body: merged, ours first, when both
runs are plain assignments whose order does not matter (synapse ``976b20e1d8f2``: one
``self.msc... = experimental.get(...)`` line appended to ``read_config`` by each side;
``6bdbec1dfe2a``: a handler each in ``__init__``); anything else stays a conflict. And the
equivalence the real-history benchmark judges with: such runs in another order are the same
program inside a function, never in a class body (an Enum's members, a dataclass's fields)."""

from __future__ import annotations

import pytest

from fleet.merge._independent import independent_runs
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted
from fleet.merge.equivalence import same_program

CONFIG = '''import logging


class ExperimentalConfig(Config):
    def read_config(self, config, **kwargs):
        experimental = config.get("experimental_features") or {}

        # MSC2659: Application service ping endpoint
        self.msc2659_enabled = experimental.get("msc2659_enabled", False)

    def other(self):
        return 1
'''
POINT = '        self.msc2659_enabled = experimental.get("msc2659_enabled", False)\n'


def _sides(ours_lines: str, theirs_lines: str) -> tuple[str, str]:
    # Both sides also add an import at one place: git's line merge conflicts there too.
    ours = CONFIG.replace(POINT, POINT + ours_lines).replace(
        "import logging\n", "import logging\nimport os\n")
    theirs = CONFIG.replace(POINT, POINT + theirs_lines).replace(
        "import logging\n", "import logging\nimport sys\n")
    return ours, theirs


def test_two_settings_appended_at_one_point_are_both_kept_ours_first() -> None:
    ours_add = ('\n        # MSC3981: Recurse relations\n'
                '        self.msc3981_recurse_relations = experimental.get(\n'
                '            "msc3981_recurse_relations", False\n        )\n')
    theirs_add = ('\n        # MSC3970: Scope transaction IDs to devices\n'
                  '        self.msc3970_enabled = experimental.get("msc3970_enabled", False)\n')
    ours, theirs = _sides(ours_add, theirs_add)
    result = merge3(CONFIG, ours, theirs, "synapse/config/experimental.py")
    assert isinstance(result, Clean), result
    text = result.text
    assert text.index("msc3981_recurse_relations =") < text.index("msc3970_enabled =")
    assert "# MSC3981: Recurse relations" in text and "# MSC3970: Scope" in text
    assert "import os\n" in text and "import sys\n" in text
    # The humans' order, theirs first, is the same program; dropping one is not.
    humans = CONFIG.replace(POINT, POINT + theirs_add + ours_add).replace(
        "import logging\n", "import logging\nimport os\nimport sys\n")
    assert same_program(text, humans)
    assert not same_program(text, humans.replace(theirs_add, ""))


@pytest.mark.parametrize(
    ("ours_add", "theirs_add", "why"),
    [
        ("        self.a = hs.get_a()\n", "        self.b = self.a.child()\n",
         "theirs reads what ours binds"),
        ("        self.a = hs.get_a()\n", "        self.a = hs.get_b()\n",
         "one attribute bound two ways"),
        ("        self.a = config.pop('a', None)\n", "        self.b = config.pop('b', None)\n",
         "a call that changes what the other reads (nikola 79e2878de421)"),
        ("        self.a = next(it)\n", "        self.b = 2\n",
         "a call that draws from an iterator"),
        ("        register(a)\n", "        register(b)\n", "calls, not assignments"),
        ("        self.a = 1\n", "        if flag:\n            self.b = 2\n",
         "a compound statement"),
        ("        self.a += 1\n", "        self.b = 2\n", "an augmented assignment"),
        ("        items[0] = 1\n", "        self.b = 2\n", "a store into a subscript"),
        ("        self.a = 1\n", "        self.b = self.c = self\n", "reads self, which holds a"),
    ],
)
def test_insertions_at_one_point_that_may_not_swap_stay_a_conflict(
    ours_add: str, theirs_add: str, why: str
) -> None:
    ours, theirs = _sides(ours_add, theirs_add)
    result = merge3(CONFIG, ours, theirs, "synapse/config/experimental.py")
    assert isinstance(result, Conflicted), why


def test_the_rule_itself_needs_two_runs_of_plain_assignments() -> None:
    assert independent_runs(["x = f(1)"], ["y: int = g(2)", "z = h.i"])
    assert not independent_runs([], ["y = 1"])
    assert not independent_runs(["x = 1"], ["x = 2"])
    assert not independent_runs(["x = 1"], ["y = x"])
    assert not independent_runs(["x = await f()"], ["y = 1"])
    assert not independent_runs(["x = (y := 2)"], ["z = 1"])
    assert not independent_runs(["x = 1\ny = 2"], ["z = 1"])  # one statement per text
    assert not independent_runs(["x = ("], ["z = 1"])  # unparsable: unsure


def test_the_equivalence_swaps_assignments_in_functions_only() -> None:
    function = "def f(hs):\n    self.a = hs.get_a()\n    self.b = hs.get_b()\n    return 1\n"
    swapped = "def f(hs):\n    self.b = hs.get_b()\n    self.a = hs.get_a()\n    return 1\n"
    assert same_program(function, swapped)
    nested = function.replace("    self.", "    if x:\n        self.", 1)
    assert not same_program(nested, swapped)  # one of the two moved into a block
    enum = "class Color(Enum):\n    RED = 1\n    BLUE = 2\n"
    assert not same_program(enum, "class Color(Enum):\n    BLUE = 2\n    RED = 1\n")
    module = "RED = 1\nBLUE = 2\n"
    assert not same_program(module, "BLUE = 2\nRED = 1\n")
    dependent = "def f():\n    a = 1\n    b = a\n"
    assert not same_program(dependent, "def f():\n    b = a\n    a = 1\n")
    drawn = "def f(it):\n    a = next(it)\n    b = next(it)\n"
    assert not same_program(drawn, "def f(it):\n    b = next(it)\n    a = next(it)\n")
    # Three in a run, one pair dependent: every order keeping that pair is the same program.
    three = "def f():\n    a = 1\n    b = g()\n    c = a\n"
    assert same_program(three, "def f():\n    b = g()\n    a = 1\n    c = a\n")
    assert same_program(three, "def f():\n    a = 1\n    c = a\n    b = g()\n")
    assert not same_program(three, "def f():\n    c = a\n    a = 1\n    b = g()\n")


# synapse a5616fbf2dc4 (synapse/rest/client/read_marker.py): ours added ``extra_content`` to the
# calls in both branches, theirs ``thread_id`` to the call in the ``else`` branch.
READ_MARKER = '''import logging


async def on_post(self, request, room_id, receipt_type, event_id, body):
    if receipt_type == "m.fully_read":
        await self.read_marker_handler.received_client_read_marker(
            room_id,
            event_id=event_id,
        )
    else:
        await self.receipts_handler.received_client_receipt(
            room_id,
            receipt_type,
            event_id=event_id,
        )
    return 200, {}
'''
EXTRA = '            event_id=event_id,\n        )\n'


def _read_marker_sides() -> tuple[str, str]:
    ours = READ_MARKER.replace(
        EXTRA, '            event_id=event_id,\n            extra_content=body.get("x", None),\n'
        '        )\n').replace("import logging\n", "import logging\nimport os\n")
    theirs = READ_MARKER.replace(
        "            receipt_type,\n            event_id=event_id,\n        )\n",
        "            receipt_type,\n            event_id=event_id,\n"
        "            # Not possible with /read_markers.\n            thread_id=None,\n        )\n",
    ).replace("import logging\n", "import logging\nimport sys\n")
    return ours, theirs


def test_keywords_added_at_one_point_of_a_call_in_an_else_branch_are_both_kept() -> None:
    ours, theirs = _read_marker_sides()
    result = merge3(READ_MARKER, ours, theirs, "synapse/rest/client/read_marker.py")
    assert isinstance(result, Clean), result
    text = result.text
    assert text.count('extra_content=body.get("x", None)') == 2
    assert text.index('extra_content=body.get("x", None),\n            # Not possible') > 0
    assert "thread_id=None,\n        )" in text
    humans = text.replace(
        '            extra_content=body.get("x", None),\n            # Not possible with '
        '/read_markers.\n            thread_id=None,\n',
        '            # Not possible with /read_markers.\n            thread_id=None,\n'
        '            extra_content=body.get("x", None),\n')
    assert humans != text and same_program(text, humans)  # keyword order is no meaning


@pytest.mark.parametrize(
    ("ours_call", "theirs_call", "why"),
    [
        ("f(a, b=1, c=2)", "f(a, b=1, c=3)", "one keyword added with two values"),
        ("f(a, b=1, c=2)", "f(a, b=1, d)", "a positional argument"),
        ("f(a, b=1, c=2)", "f(a, b=1, **kw)", "a ** argument"),
        ("dict(a, b=1, c=2)", "dict(a, b=1, d=3)", "dict(...): keywords are the keys' order"),
        ("f(a, b=1, c=next(it))", "f(a, b=1, d=3)", "a stateful call in a value"),
    ],
)
def test_keyword_insertions_that_may_not_both_go_stay_a_conflict(
    ours_call: str, theirs_call: str, why: str
) -> None:
    base = "import logging\n\n\ndef g(a, it):\n    return f(a, b=1)\n"
    ours = base.replace("f(a, b=1)", ours_call).replace("logging\n", "logging\nimport os\n")
    theirs = base.replace("f(a, b=1)", theirs_call).replace("logging\n", "logging\nimport sys\n")
    if why.startswith("dict"):
        base = base.replace("f(a, b=1)", "dict(a, b=1)")
    assert isinstance(merge3(base, ours, theirs, "m.py"), Conflicted), why


def test_parameters_added_at_one_point_of_a_def_stay_a_conflict() -> None:
    base = "import logging\n\n\ndef g(a, b=1):\n    return a\n"
    ours = base.replace("b=1)", "b=1, c=2)").replace("logging\n", "logging\nimport os\n")
    theirs = base.replace("b=1)", "b=1, d=3)").replace("logging\n", "logging\nimport sys\n")
    assert isinstance(merge3(base, ours, theirs, "m.py"), Conflicted)


def test_an_else_branch_both_sides_edited_is_merged_unless_the_condition_changed() -> None:
    base = ("import logging\n\n\ndef g(x):\n    if x:\n        a = 1\n    else:\n"
            "        b = f(1)\n        c = 2\n    return x\n")
    ours = base.replace("b = f(1)", "b = f(1, k=2)").replace("logging\n", "logging\nimport os\n")
    theirs = base.replace("c = 2", "c = 3").replace("logging\n", "logging\nimport sys\n")
    result = merge3(base, ours, theirs, "m.py")
    assert isinstance(result, Clean), result
    assert "b = f(1, k=2)\n        c = 3\n" in result.text
    # One side also changed the condition the else branch depends on: a conflict.
    moved = ours.replace("if x:", "if x > 1:")
    assert isinstance(merge3(base, moved, theirs, "m.py"), Conflicted)
    # An elif both sides edited, the same way merged inside.
    elif_base = base.replace("    else:\n", "    elif x is None:\n")
    elif_ours = ours.replace("    else:\n", "    elif x is None:\n")
    elif_theirs = theirs.replace("    else:\n", "    elif x is None:\n")
    merged = merge3(elif_base, elif_ours, elif_theirs, "m.py")
    assert isinstance(merged, Clean), merged
    assert "elif x is None:\n        b = f(1, k=2)\n        c = 3\n" in merged.text


# sqlfluff 83b372ebd546 (src/sqlfluff/dialects/dialect_postgres.py): two module-level calls
# next to each other, both edited by both sides.
DIALECT = '''from sqlfluff.core.dialects import load_raw_dialect

postgres_dialect = load_raw_dialect("ansi").copy_as("postgres")

postgres_dialect.add(
    JsonOperatorSegment=TypedParser("json_operator", SymbolSegment),
    SimpleGeometryGrammar=AnyNumberOf(Ref("NumericLiteralSegment")),
)

postgres_dialect.replace(
    LikeGrammar=OneOf("LIKE", "ILIKE"),
    NonWithNonSelectableGrammar=OneOf(),
)
'''


def test_two_adjacent_calls_both_sides_edited_are_merged_one_by_one() -> None:
    ours = DIALECT.replace(
        '    SimpleGeometryGrammar=AnyNumberOf(Ref("NumericLiteralSegment")),\n',
        '    SimpleGeometryGrammar=AnyNumberOf(Ref("NumericLiteralSegment")),\n'
        '    WalrusOperatorSegment=StringParser(":=", SymbolSegment),\n').replace(
        '    NonWithNonSelectableGrammar=OneOf(),\n',
        '    NonWithNonSelectableGrammar=OneOf(),\n    DateTimeLiteralGrammar=Sequence("DATE"),\n')
    theirs = DIALECT.replace(
        'TypedParser("json_operator", SymbolSegment)',
        'TypedParser("json_operator", SymbolSegment, type="binary_operator")').replace(
        '    NonWithNonSelectableGrammar=OneOf(),\n',
        '    NonWithNonSelectableGrammar=OneOf(),\n'
        '    BracketedSetExpressionGrammar=Bracketed(Ref("SetExpressionSegment")),\n')
    result = merge3(DIALECT, ours, theirs, "src/sqlfluff/dialects/dialect_postgres.py")
    assert isinstance(result, Clean), result
    text = result.text
    for piece in ('type="binary_operator"', "WalrusOperatorSegment=", "DateTimeLiteralGrammar=",
                  "BracketedSetExpressionGrammar="):
        assert text.count(piece) == 1, piece
    assert text.index("DateTimeLiteralGrammar") < text.index("BracketedSetExpressionGrammar")
    # The same run where one statement is another call on one side: no pairing, a conflict.
    other = theirs.replace("postgres_dialect.replace(", "postgres_dialect.patch(")
    assert isinstance(merge3(DIALECT, ours, other, "dialect_postgres.py"), Conflicted)


def test_a_long_run_of_assignments_keeps_its_order_and_costs_little() -> None:
    # Putting a run in order is cubic in its length: past 64 statements the run stays as it is.
    body = "".join(f'    self.a{i} = hs.get("{i}")\n' for i in range(3000))
    swapped = body.replace('    self.a0 = hs.get("0")\n    self.a1 = hs.get("1")\n',
                           '    self.a1 = hs.get("1")\n    self.a0 = hs.get("0")\n')
    assert same_program("def f(hs):\n" + body, "def f(hs):\n" + body)
    assert not same_program("def f(hs):\n" + body, "def f(hs):\n" + swapped)
