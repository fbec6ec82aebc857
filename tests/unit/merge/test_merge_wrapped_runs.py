"""Shapes of two edits of one run of statements that the merge now composes, and their
neighbours that stay conflicts, from the twenty-seventh to the thirtieth unseen sets (7 Dec
2026): statements one side wrapped in a new compound statement (or took out of one) while the
other edited them; the blank lines ending the file; one block extracted by both sides under two
names; and one setting passed to a call two ways."""

from __future__ import annotations

from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted

# synapse 817ab1d3896e (synapse/handlers/federation.py): theirs wrapped two statements in a new
# ``async with``, ours renamed what the second binds and the ``if`` after them reads.
SYNC = '''import logging


async def _sync(self, room_id):
    while True:
        logger.info("Clearing partial-state flag for %s", room_id)
        success = await self.store.clear_partial_state_room(room_id)
        if success:
            logger.info("State resync complete for %s", room_id)
            return
'''


def test_statements_one_side_wrapped_and_the_other_edited_go_inside_the_wrapper() -> None:
    ours = SYNC.replace("success = await", "new_stream_id = await").replace(
        "if success:", "if new_stream_id is not None:").replace(
        "import logging\n", "import logging\nimport os\n")
    theirs = SYNC.replace(
        '        logger.info("Clearing partial-state flag for %s", room_id)\n'
        '        success = await self.store.clear_partial_state_room(room_id)\n',
        '        async with self._linearizer.queue(room_id):\n'
        '            logger.info("Clearing partial-state flag for %s", room_id)\n'
        '            success = await self.store.clear_partial_state_room(room_id)\n\n',
    ).replace("import logging\n", "import logging\nimport sys\n")
    result = merge3(SYNC, ours, theirs, "synapse/handlers/federation.py")
    assert isinstance(result, Clean), result
    assert ("        async with self._linearizer.queue(room_id):\n"
            '            logger.info("Clearing partial-state flag for %s", room_id)\n'
            "            new_stream_id = await self.store.clear_partial_state_room(room_id)\n"
            ) in result.text
    assert "        if new_stream_id is not None:\n" in result.text
    # The wrapper side also edited a wrapped statement: which edit goes where is a guess.
    edited_inside = theirs.replace("clear_partial_state_room(room_id)\n\n",
                                   "clear_partial_state_room(room_id, True)\n\n")
    assert isinstance(merge3(SYNC, ours, edited_inside, "federation.py"), Conflicted)
    # The other side rewrote a wrapped statement into something else: a conflict.
    rewritten = SYNC.replace("success = await self.store.clear_partial_state_room(room_id)",
                             "await asyncio.sleep(0)").replace("if success:", "if self.done:")
    assert isinstance(merge3(SYNC, rewritten, theirs, "federation.py"), Conflicted)


def test_the_blank_line_one_side_removed_at_the_end_of_the_file_stays_removed() -> None:
    # PyTables 213cb10dcb30 (tables/core.py): theirs dropped the blank line ending the file. A
    # module rendered with an empty body ends in a newline with or without that line, so the
    # footers compared equal and base's was kept.
    base = "import a\n\n\nclass X:\n    pass\n\n"
    ours = base.replace("import a\n", "import a\nimport b\n")
    theirs = base.replace("import a\n", "import a\nimport c\n")[:-1]
    for one, other in ((ours, theirs), (theirs, ours)):
        result = merge3(base, one, other, "tables/core.py")
        assert isinstance(result, Clean), result
        assert result.text.endswith("class X:\n    pass\n")
        assert not result.text.endswith("\n\n")
    # Blank lines at the end changed two ways (conan 814b0639a55c: two tests appended by each
    # side, one ending in two blank lines, the other in one): ours', never the whole file given up.
    ends = base[:-1]
    two = ends.replace("import a\n", "import a\nimport b\n") + "\n\ndef f():\n    return 1\n\n\n"
    one = ends.replace("import a\n", "import a\nimport c\n") + "\n\ndef g():\n    return 2\n\n"
    result = merge3(ends, two, one, "tables/core.py")
    assert isinstance(result, Clean) and result.stage == "structural", result


# conan e37abd2b7635 (conans/model/graph_lock.py): both sides moved one block into a new method,
# under two names, theirs with a ``return True`` more.
LOCK = '''class Lockfile:
    def _resolve(self, require):
        alias = require.alias
        if alias:
            locked_alias = self._alias.get(alias)
            if locked_alias is not None:
                require.ref = locked_alias
            elif not self.partial:
                raise ConanException(f"Requirement alias '{alias}' not in lockfile")
        return require.ref

    def other(self):
        return 1
'''
BLOCK = '''            locked_alias = self._alias.get(alias)
            if locked_alias is not None:
                require.ref = locked_alias
            elif not self.partial:
                raise ConanException(f"Requirement alias '{alias}' not in lockfile")
'''


def _extracted(name: str, extra: str) -> str:
    method = (f"    def {name}(self, require, alias):\n" + BLOCK.replace("            ", "        ")
              .replace("require.ref = locked_alias\n", "require.ref = locked_alias\n" + extra))
    return LOCK.replace(BLOCK, f"            self.{name}(require, alias)\n").replace(
        "    def other(self):", method + "\n    def other(self):")


def test_one_block_extracted_by_both_sides_under_two_names_is_a_conflict() -> None:
    ours = _extracted("resolve_alias", "")
    theirs = _extracted("replace_alias", "            return True\n")
    result = merge3(LOCK, ours, theirs, "conans/model/graph_lock.py")
    assert isinstance(result, Conflicted), result
    # Two tests, one the other with an assertion more, are two tests: merged.
    tests_o = _extracted("test_alias", "").replace("self.test_alias(require, alias)\n", "pass\n")
    tests_t = _extracted("test_alias_more", "            assert True\n").replace(
        "self.test_alias_more(require, alias)\n", "pass\n")
    assert isinstance(merge3(LOCK, tests_o, tests_t, "test_lock.py"), Clean)


# conan 1a5f7f471272 (a test module): theirs took a test's statements out of its outer
# ``with``, ours took them out of the inner one; the humans dropped both wrappers.
WRAPPED = '''import logging


def test_gnu_extension(self):
    with patched_system("Linux"):
        with patched_distro():
            with patched_default("17"):
                with self.assertRaises(ConanException) as raises:
                    check_min_cppstd(conanfile, "17", True)
                self.assertEqual("The extension is required", str(raises.exception))
'''


def test_wrappers_taken_away_one_by_each_side_both_go() -> None:
    ours = WRAPPED.replace(
        '            with patched_default("17"):\n'
        '                with self.assertRaises(ConanException) as raises:\n'
        '                    check_min_cppstd(conanfile, "17", True)\n'
        '                self.assertEqual("The extension is required", str(raises.exception))\n',
        '            with self.assertRaises(ConanException) as raises:\n'
        '                check_min_cppstd(conanfile, "17", True)\n'
        '            self.assertEqual("The extension is required", str(raises.exception))\n',
    ).replace("import logging\n", "import logging\nimport os\n")
    theirs = '''import logging
import sys


def test_gnu_extension(self):
    with patched_system("Linux"):
        with patched_default("17"):
            with self.assertRaises(ConanException) as raises:
                check_min_cppstd(conanfile, "17", True)
            self.assertEqual("The extension is required", str(raises.exception))
'''
    result = merge3(WRAPPED, ours, theirs, "test_cppstd.py")
    assert isinstance(result, Clean), result
    assert "patched_distro" not in result.text and "patched_default" not in result.text
    assert '    with patched_system("Linux"):\n        with self.assertRaises' in result.text


def test_one_setting_passed_two_ways_stays_a_conflict() -> None:
    # conan c60946255569: ``strict_lockfile=...`` and ``strict=...`` added to one call.
    base = "import logging\n\n\ndef graph(args, api):\n    return compute(args, api)\n"
    ours = base.replace("compute(args, api)",
                        "compute(args, api, strict_lockfile=not args.lockfile_nostrict)").replace(
        "import logging\n", "import logging\nimport os\n")
    theirs = base.replace("compute(args, api)", "compute(args, api, strict=args.lockfile_strict)"
                          ).replace("import logging\n", "import logging\nimport sys\n")
    assert isinstance(merge3(base, ours, theirs, "conans/cli/commands/graph.py"), Conflicted)


def test_a_token_after_theirs_insertion_is_spaced_as_theirs() -> None:
    # hy 9c28e0292d1a: theirs wrote ``compiler.`` before the called name, ours an argument; the
    # name kept ours' space (after ``=``), behind theirs' new tokens: ``compiler. HyASTCompiler``.
    from fleet.merge._tokens import merge_tokens

    merged = merge_tokens("self.c = HyASTCompiler()\n", "self.c = HyASTCompiler('')\n",
                          "self.c = compiler.HyASTCompiler()\n")
    assert merged == "self.c = compiler.HyASTCompiler('')\n"
    merged = merge_tokens("x = to_decimal(a)\n", "x = to_decimal(a, 2)\n",
                          "x = helpers.to_decimal(a)\n")
    assert merged == "x = helpers.to_decimal(a, 2)\n"
