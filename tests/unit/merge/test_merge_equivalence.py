"""``same_program``: the judge of the real-history benchmark. What a merge may order either way
is ignored; every other statement, the last ones of a body included, must be equal."""

from __future__ import annotations

import pytest

from fleet.merge.equivalence import same_program


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("x = 1\n", "x = 2\n"),  # a body's last statement counts (it was once never compared)
        ("def f():\n    pass\nx = 1\n", "def f():\n    pass\nx = 2\n"),
        ("class C:\n    a = 1\n", "class C:\n    a = 2\n"),
        ("x = 1\ny = 2\n", "y = 2\nx = 1\n"),  # statements that are not definitions keep order
        ("R = ['a', 'b']\n", "R = ['b', 'a']\n"),  # a list is ordered, unless it is __all__
        ("import a\n", "import b\n"),
        # imports in any other block keep their order; so does an ``if TYPE_CHECKING`` with else
        ("if X:\n    import a\n    import b\n", "if X:\n    import b\n    import a\n"),
        (
            "if TYPE_CHECKING:\n    import a\n    import b\nelse:\n    pass\n",
            "if TYPE_CHECKING:\n    import b\n    import a\nelse:\n    pass\n",
        ),
    ],
)
def test_different_programs(a: str, b: str) -> None:
    assert not same_program(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("def f():\n    pass\ndef g():\n    pass\n", "def g():\n    pass\ndef f():\n    pass\n"),
        ("import a\nimport b\n", "import b\nimport a\n"),
        ("from m import a, b\n", "from m import b, a\n"),
        ("__all__ = ['a', 'b']\n", "__all__ = [\n    'b',\n    'a',  # c\n]\n"),
        ("x = 1  # one\n", "x = (1)\n"),
        # imports only a type checker reads (scrapy d440e1f9ebc8, 7452277cfe06)
        (
            "if typing.TYPE_CHECKING:\n    from b import B\n    from a import A\n",
            "if typing.TYPE_CHECKING:\n    from a import A\n    from b import B\n",
        ),
    ],
)
def test_same_programs(a: str, b: str) -> None:
    assert same_program(a, b)


def test_text_that_does_not_parse_is_never_the_same() -> None:
    assert not same_program("def (:\n", "def (:\n")


def test_names_of_one_import_are_the_same_as_one_import_per_name() -> None:
    assert same_program(
        "from m import a, b\nimport x, y\n",
        "from m import a\nimport y\nimport x\nfrom m import b\n",
    )
    assert not same_program("from m import a, b\n", "from m import a\nfrom n import b\n")
