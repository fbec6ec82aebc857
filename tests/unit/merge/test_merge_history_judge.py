"""The real-history judge (benchmarks/_merge_judge.py): what explains a clean merge that differs
from the humans', and what does not."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import _merge_judge
from _merge_judge import human_moved, human_override, order_only


def test_independent_definitions_in_another_order_are_order_only() -> None:
    merged = "import os\n\nA = [1]\n\n\nclass E(Exception):\n    pass\n"
    human = "import os\n\n\nclass E(Exception):\n    pass\n\nA = [1]\n"
    assert order_only(merged, human)


def test_dependent_or_effectful_statements_in_another_order_are_not() -> None:
    assert not order_only("A = [1]\nB = A\n", "B = A\nA = [1]\n")  # B reads A
    assert not order_only("register('a')\nregister('b')\n", "register('b')\nregister('a')\n")
    assert not order_only("A = f()\nB = g()\n", "B = g()\nA = f()\n")  # calls: effects
    assert not order_only("A = 1\n", "A = 2\n")  # not the same statements


def test_an_uncontested_edit_undone_inside_a_function_is_explained() -> None:
    base = 'def create_event() -> "Event":\n    return make()\n'
    ours = 'def create_event() -> "Event":\n    import lib\n\n    return make()\n'
    theirs = "def create_event() -> Event:\n    return make()\n"
    merged = "def create_event() -> Event:\n    import lib\n\n    return make()\n"
    assert human_override(merged, ours, (base, ours, theirs))  # the humans kept ours whole


def test_both_sides_editing_one_statement_is_not_explained() -> None:
    base = "def f():\n    return call(a)\n"
    ours = "def f():\n    return call(b)\n"
    theirs = "def f():\n    return call(a, c)\n"
    merged = "def f():\n    return call(b, c)\n"
    # The humans kept ours and dropped theirs' argument: both sides edited the one statement.
    assert not human_override(merged, ours, (base, ours, theirs))
    # A line the humans wrote that no input has is their own edit.
    assert human_override(merged, "def f():\n    return call(b, d)\n", (base, ours, theirs))


def test_enum_members_in_another_order_are_not_an_undone_edit() -> None:
    base = "class P(Enum):\n    a = auto()\n"
    ours = "class P(Enum):\n    a = auto()\n    b = auto()\n"
    theirs = "class P(Enum):\n    a = auto()\n    c = auto()\n"
    merged = "class P(Enum):\n    a = auto()\n    b = auto()\n    c = auto()\n"
    human = "class P(Enum):\n    a = auto()\n    c = auto()\n    b = auto()\n"
    assert not human_override(merged, human, (base, ours, theirs))
    assert not order_only(merged, human)


def test_a_statement_the_humans_moved_against_a_sides_order_is_their_edit() -> None:
    # xarray bac77ee2a942: theirs added ``B = A`` below ``A = {...}``; the humans moved it up.
    base = "import os\n\nA = {}\n\nX = 1\n"
    ours = "import os\n\nA = {}\n\nX = 1\nY = 2\n"
    theirs = "import os\n\nA = {}\n\nB = A\nX = 1\n"
    merged = "import os\n\nA = {}\n\nB = A\nX = 1\nY = 2\n"
    human = "import os\n\nB = A\nA = {}\n\nX = 1\nY = 2\n"
    assert human_moved(merged, human, (base, ours, theirs))
    # Both sides' additions at one point, in the other order: no input holds the two together.
    theirs = "import os\n\nA = {}\n\nX = 1\nZ = 3\n"
    merged = "import os\n\nA = {}\n\nX = 1\nY = 2\nZ = 3\n"
    human = "import os\n\nA = {}\n\nX = 1\nZ = 3\nY = 2\n"
    assert not human_moved(merged, human, (base, ours, theirs))


def test_headers_changed_two_ways_are_not_explained_and_do_not_recurse() -> None:
    # Both sides changed the signature: the headers differ with nothing smaller to compare
    # (the judge used to recurse on the header of a header until RecursionError).
    base = "def f(a: int):\n    return a\n"
    ours = "def f(a: 'int', b=1):\n    return a\n"
    theirs = "def f(a: str):\n    return a\n"
    merged = "def f(a: str, b=1):\n    return a\n"
    # The humans kept ours whole, dropping theirs' edit of the one header both sides edited.
    assert not human_override(merged, ours, (base, ours, theirs))


def test_an_import_beside_a_type_checking_block_in_another_order_is_order_only() -> None:
    # scrapy 043b1b04ea0b: ours' import put after theirs' ``if TYPE_CHECKING:`` import block
    merged = "import a\n\nif TYPE_CHECKING:\n    from b import B\nfrom c import C\n"
    human = "import a\nfrom c import C\n\nif TYPE_CHECKING:\n    from b import B\n"
    assert order_only(merged, human)
    block = "if TYPE_CHECKING:\n    from b import B\n    f()\n"  # not only imports
    mine, humans = f"import a\n{block}from c import C\n", f"import a\nfrom c import C\n{block}"
    assert not order_only(mine, humans)


def test_an_assignment_calling_a_class_that_moves_with_it_is_order_only() -> None:
    # pydantic d926ea62f558: both sides appended; the humans put theirs first
    ours = "class S(BaseSettings):\n    pass\n\n\nsettings = S.construct()\n"
    theirs = "class M(BaseModel):\n    self: str\n"
    assert order_only(ours + "\n\n" + theirs, theirs + "\n\n" + ours)
    typevar = "T = TypeVar('T')\n\n\nclass R(Generic[T]):\n    data: T\n\n\nr = R[int](data=1)\n"
    assert order_only(theirs + "\n\n" + typevar, typevar + "\n\n" + theirs)
    # a call of something that does not move with it may have effects: not order only
    assert not order_only(theirs + "\nX = make()\n", "X = make()\n" + theirs)
    # a class that reads what the other binds
    assert not order_only("X = 1\nclass C:\n    y = X\n", "class C:\n    y = X\nX = 1\n")


def test_a_decorator_the_humans_dropped_is_seen() -> None:
    # pydantic c7ee03f41137: theirs added a test with @skip_36, the humans dropped the decorator
    base = "import a\n"
    theirs = "import a\n\n\n@skip_36\ndef test_p():\n    pass\n"
    human = "import a\n\n\ndef test_p():\n    pass\n"
    assert human_override(theirs, human, (base, base, theirs))  # the old judge saw no difference


def test_decorators_and_signature_are_separate_parts_of_a_header() -> None:
    # pytest 7250a1a59f76: ours changed the decorator, theirs dropped a parameter; the humans
    # kept the parameter (theirs' uncontested signature edit undone), fleet has both edits
    base = "@pytest.yield_fixture\ndef recwarn(request):\n    yield 1\n"
    ours = "@yield_fixture\ndef recwarn(request):\n    yield 1\n"
    theirs = "@pytest.yield_fixture\ndef recwarn():\n    yield 1\n"
    mine = "@yield_fixture\ndef recwarn():\n    yield 1\n"
    assert human_override(mine, ours, (base, ours, theirs))
    # both sides changed the decorators: contested, not explained
    other = "@other\ndef recwarn():\n    yield 1\n"
    assert not human_override(mine, base, (base, ours, other))


def test_a_module_the_compiler_refuses_is_told_apart() -> None:
    """Equal up to the order of imports, and one of them does not compile: the judge's
    ``compiles`` is what sends such a clean result to ``clean_wrong`` (dask 68253caf1a8c)."""
    right = "from __future__ import annotations\nimport dataclasses\n"
    wrong = "import dataclasses\nfrom __future__ import annotations\n"
    assert _merge_judge.compiles(right)
    assert not _merge_judge.compiles(wrong)
    assert not _merge_judge.compiles("def f(a, a):\n    pass\n")
    assert _merge_judge.compiles('if 1 is not 1:\n    x = "\\d"\n')  # warnings only


def test_an_import_every_version_has_and_the_humans_dropped_is_their_edit() -> None:
    # webargs 38423b57faad: both sides rewrote the import line (so no one line is "kept by both
    # and dropped"), each still binding ``old``; the humans dropped ``old`` themselves.
    base = "from lib import old, Error, thing\n\n__all__ = ('old', 'thing')\n"
    ours = "from lib import old, thing\n\n__all__ = ('old', 'thing')\n"
    theirs = "from lib import old, Error, thing, new\n\n__all__ = ('old', 'thing')\n"
    merged = "from lib import old, thing, new\n\n__all__ = ('old', 'thing')\n"
    human = "from lib import thing, new\n\n__all__ = ('old', 'thing')\n"
    assert human_override(merged, human, (base, ours, theirs))
    # A name one side stopped binding, kept by the merge, is a fault of the merge, not this.
    ours_drops = "from lib import thing\n\n__all__ = ('old', 'thing')\n"
    assert not human_override(merged, human, (base, ours_drops, theirs))
