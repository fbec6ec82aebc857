"""A wrong clean merge read in the fourth unseen history (4 Dec 2026), now a conflict:

mkdocs ``9d56fa21d9ef`` (``mkdocs/commands/build.py``, BSD-2-Clause): one side moved
``from mkdocs.structure.pages import Page`` under ``if TYPE_CHECKING:`` (every use was an
annotation), the other added ``Page(None, file, config)`` to ``build()``; the merge bound ``Page``
only for the type checker and called it at run time (a ``NameError``). The humans imported it at
module level again. Reduced to the lines that matter.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3

BASE = (
    "from __future__ import annotations\n\n"
    "import logging\n\n"
    "from mkdocs.config.defaults import MkDocsConfig\n"
    "from mkdocs.structure.files import Files\n"
    "from mkdocs.structure.pages import Page\n\n\n"
    "class DuplicateFilter:\n"
    "    def __call__(self, record: logging.LogRecord) -> bool:\n"
    "        return True\n\n\n"
    "def _populate_page(page: Page, config: MkDocsConfig, files: Files) -> None:\n"
    "    page.read_source(config)\n\n\n"
    "def build(config: MkDocsConfig, files: Files) -> None:\n"
    "    for file in files.documentation_pages():\n"
    "        _populate_page(file.page, config, files)\n"
)
OURS = BASE.replace(
    "from mkdocs.structure.pages import Page\n\n\n"
    "class DuplicateFilter:\n"
    "    def __call__(self, record: logging.LogRecord) -> bool:\n"
    "        return True\n",
    "from mkdocs.structure.pages import Page\n"
    "from mkdocs.utils import DuplicateFilter  # noqa - legacy re-export\n",
).replace(
    "    for file in files.documentation_pages():\n",
    "    for file in files.documentation_pages():\n"
    "        if file.page is None:\n"
    "            Page(None, file, config)\n",
)
THEIRS = BASE.replace(
    "import logging\n\n"
    "from mkdocs.config.defaults import MkDocsConfig\n"
    "from mkdocs.structure.files import Files\n"
    "from mkdocs.structure.pages import Page\n",
    "import logging\n"
    "from typing import TYPE_CHECKING\n\n"
    "from mkdocs.structure.files import Files\n\n"
    "if TYPE_CHECKING:\n"
    "    from mkdocs.config.defaults import MkDocsConfig\n"
    "    from mkdocs.structure.pages import Page\n",
)


def test_a_call_of_a_name_the_other_side_moved_under_type_checking_conflicts() -> None:
    result = merge3(BASE, OURS, THEIRS, "build.py")
    assert not isinstance(result, Clean), result.text


def test_the_same_move_against_an_edit_that_only_annotates_still_merges() -> None:
    ours = OURS.replace(
        "        if file.page is None:\n            Page(None, file, config)\n",
        "        page: Page | None = file.page\n",
    )
    result = merge3(BASE, ours, THEIRS, "build.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert "    from mkdocs.structure.pages import Page\n" in result.text
    assert "page: Page | None = file.page" in result.text


def test_a_function_that_imports_the_name_itself_still_merges() -> None:
    ours = OURS.replace(
        "        if file.page is None:\n",
        "        if file.page is None:\n            from mkdocs.structure.pages import Page\n\n",
    )
    result = merge3(BASE, ours, THEIRS, "build.py")
    assert isinstance(result, Clean), result.text_with_markers
    assert "            Page(None, file, config)\n" in result.text
