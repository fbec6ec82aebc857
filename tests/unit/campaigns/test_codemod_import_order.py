"""Names a codemod adds to an existing ``from`` import go where the statement's order puts them.
Outside check (datetime-utcnow on PyPI sdists): LibCST put ``timezone`` in front of every
statement, on the first name's line, in WebOb 1.8.7's one-name-per-line import and in
python-jose 3.3.0's ``from datetime import datetime, timedelta``: diffs an isort or ruff ``I001``
check in the target's own CI fails."""

from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext, CodemodTest

from fleet.campaigns.codemods import ReplaceUtcnowCommand, ReplaceYamlLoadCommand
from fleet.campaigns.codemods._import_order import place_added_names


class TestAddedNamesInPlace(CodemodTest):
    TRANSFORM = ReplaceUtcnowCommand

    def test_one_name_per_line_gets_its_own_line_in_order(self) -> None:
        before = """
            from datetime import (
                date,
                datetime,  # the class
                timedelta,
                )

            x = datetime.utcnow()
        """
        after = """
            from datetime import (
                UTC,
                date,
                datetime,  # the class
                timedelta,
                )

            x = datetime.now(UTC)
        """
        self.assertCodemod(before, after)

    def test_without_a_trailing_comma_the_last_name_stays_last_before_the_paren(self) -> None:
        before = """
            from datetime import (
                MINYEAR,
                datetime
            )

            x = datetime.utcnow()
        """
        after = """
            from datetime import (
                MINYEAR,
                UTC,
                datetime
            )

            x = datetime.now(UTC)
        """
        self.assertCodemod(before, after)

    def test_an_unsorted_statement_gets_the_name_at_its_end(self) -> None:
        before = """
            from datetime import timedelta, datetime

            x = datetime.utcnow() + timedelta(1)
        """
        after = """
            from datetime import timedelta, datetime, UTC

            x = datetime.now(UTC) + timedelta(1)
        """
        self.assertCodemod(before, after)

    def test_a_single_name(self) -> None:
        before = """
            from datetime import datetime

            x = datetime.utcnow()
        """
        after = """
            from datetime import UTC, datetime

            x = datetime.now(UTC)
        """
        self.assertCodemod(before, after)


class TestSafeLoadInPlace(CodemodTest):
    TRANSFORM = ReplaceYamlLoadCommand

    def test_lowercase_names_sorted_alphabetically(self) -> None:
        before = """
            from yaml import dump, load

            data = load(text)
        """
        after = """
            from yaml import dump, safe_load

            data = safe_load(text)
        """
        self.assertCodemod(before, after)


def _placed(before: str, after: str) -> str:
    return place_added_names(cst.parse_module(before), cst.parse_module(after)).code


def test_a_statement_added_whole_or_untouched_is_left_as_it_is() -> None:
    before = "from b import z, a\nimport os\n"
    after = "from b import z, a\nfrom datetime import timezone, UTC\nimport os\n"
    assert _placed(before, after) == after
    assert _placed("import os\n", "from x import b, a\nimport os\n") == (
        "from x import b, a\nimport os\n")  # nothing bound before: nothing to place against


def test_a_repointed_statement_places_the_names_it_did_not_bind() -> None:
    before = "from compat.v1 import BaseModel, Field, validator\n"
    after = "from pydantic import field_validator, BaseModel, Field\n"
    assert _placed(before, after) == "from pydantic import BaseModel, Field, field_validator\n"


def test_the_codemod_command_places_its_names() -> None:
    source = "from datetime import date, datetime\n\nx = datetime.utcnow()\n"
    out = ReplaceUtcnowCommand(CodemodContext(full_module_name="m", full_package_name="")
                               ).transform_module(cst.parse_module(source)).code
    assert out.startswith("from datetime import UTC, date, datetime\n")


def test_only_top_level_statements_are_placed() -> None:
    before = ("from typing import TYPE_CHECKING, Any\n"
              "if TYPE_CHECKING:\n    from typing import Z, Any\n")
    after = ("from typing import Optional, TYPE_CHECKING, Any\n"
             "if TYPE_CHECKING:\n    from typing import Z, Any\n")
    assert _placed(before, after) == ("from typing import TYPE_CHECKING, Any, Optional\n"
                                      "if TYPE_CHECKING:\n    from typing import Z, Any\n")
