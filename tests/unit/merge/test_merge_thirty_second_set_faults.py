"""What the thirty-second unseen set (Medusa, angr, cloud-custodian, cobbler, searx, nova; 7 Dec
2026) showed that the driver now handles, from excerpts shaped like the real inputs: one chain of
schema migrations that each side extended from its last class, the same test both sides added to
one condition at two places, and two keyword arguments that pass one new variable two ways."""

from __future__ import annotations

import ast

from fleet.merge._chain import chain_forked
from fleet.merge._keywords import inserted_twice, keywords_at_one_point
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted
from fleet.merge._tokens import _changes, _pieces, merge_tokens

# Medusa 07347403f0c1 (medusa/databases/main_db.py): each migration subclasses the one before
# and tests the version that one sets; the runner walks ``__subclasses__()``.
MIGRATIONS = '''from medusa import db


class InitialSchema(db.SchemaUpgrade):
    def test(self):
        return self.connection.version >= (44, 14)


class AddReleaseIgnoreRequireExcludeOptions(InitialSchema):
    def test(self):
        return self.connection.version >= (44, 14)

    def execute(self):
        self.inc_minor_version()


class MoveSceneExceptions(AddReleaseIgnoreRequireExcludeOptions):
    def test(self):
        return self.connection.version >= (44, 15)

    def execute(self):
        self.inc_minor_version()
'''
STEP = '''

class {name}(MoveSceneExceptions):
    def test(self):
        return self.connection.version >= (44, 16)

    def execute(self):
        self.connection.action("{action}")
        self.inc_minor_version()
'''
OURS = MIGRATIONS + STEP.format(name="AddSearchTemplates", action="CREATE TABLE search_templates")
THEIRS = MIGRATIONS + STEP.format(name="AddShowLists", action="ALTER TABLE tv_shows ADD lists")


def test_two_migrations_appended_to_one_chain_are_a_conflict() -> None:
    result = merge3(MIGRATIONS, OURS, THEIRS, "medusa/databases/main_db.py")

    assert isinstance(result, Conflicted)
    assert "AddSearchTemplates" in result.text_with_markers
    assert "AddShowLists" in result.text_with_markers


def test_the_chain_rule_reads_the_whole_file_and_names_both_classes() -> None:
    both = OURS + STEP.format(name="AddShowLists", action="ALTER TABLE tv_shows ADD lists")
    trees = [ast.parse(text) for text in (MIGRATIONS, OURS, THEIRS, both)]

    reason = chain_forked(trees)

    assert reason is not None
    assert "MoveSceneExceptions" in reason and "AddSearchTemplates" in reason
    # one side's class subclassing the other's: the humans' order, no fork
    chained = OURS + STEP.format(name="AddShowLists", action="x").replace(
        "(MoveSceneExceptions)", "(AddSearchTemplates)")
    assert chain_forked([*trees[:3], ast.parse(chained)]) is None


def test_a_chain_that_branches_above_takes_siblings() -> None:
    # Medusa f9f7d007a491 (cache_db.py): two migrations were siblings in base already, and the
    # humans kept both sides' new ones as siblings too
    forked = MIGRATIONS.replace(
        "class MoveSceneExceptions", "class Other(AddReleaseIgnoreRequireExcludeOptions):\n"
        "    pass\n\n\nclass MoveSceneExceptions")
    ours, theirs = (text.replace(MIGRATIONS, forked) for text in (OURS, THEIRS))

    result = merge3(forked, ours, theirs, "medusa/databases/cache_db.py")

    assert isinstance(result, Clean)
    assert "class AddSearchTemplates(MoveSceneExceptions)" in result.text
    assert "class AddShowLists(MoveSceneExceptions)" in result.text


def test_implementations_both_sides_add_to_a_base_class_still_merge() -> None:
    base = "class Plugin:\n    name = None\n\n\nclass Hub:\n    pass\n"
    ours = base + "\n\nclass Audio(Plugin):\n    name = 'audio'\n"
    theirs = base + "\n\nclass Video(Plugin):\n    name = 'video'\n"
    merged = base + "\n\nclass Audio(Plugin):\n    name = 'audio'\n" \
        "\n\nclass Video(Plugin):\n    name = 'video'\n"
    trees = [ast.parse(text) for text in (base, ours, theirs, merged)]

    assert chain_forked(trees) is None  # Plugin had no subclass: siblings, not a fork
    result = merge3(base, ours, theirs, "plugins.py")
    assert isinstance(result, Clean)
    assert "class Audio(Plugin)" in result.text and "class Video(Plugin)" in result.text


# cobbler 8543cff22e81 (cobbler/item_repo.py): "also accept https", made on both sides
CONDITION = 'if self.mirror.startswith("http://") or self.mirror.startswith("ftp://"):\n    x()\n'
HTTPS = ' or self.mirror.startswith("https://")'


def test_one_test_both_sides_added_at_two_places_of_a_condition_is_not_kept_twice() -> None:
    ours = CONDITION.replace('("http://")', '("http://")' + HTTPS)
    theirs = CONDITION.replace('("ftp://")', '("ftp://")' + HTTPS)

    assert merge_tokens(CONDITION, ours, theirs) is None
    keys = [_pieces(text)[0] for text in (CONDITION, ours, theirs)]  # type: ignore[index]
    assert inserted_twice(keys[0], (keys[1], _changes(keys[0], keys[1])),
                          (keys[2], _changes(keys[0], keys[2])))


def test_different_tests_added_at_two_places_still_merge() -> None:
    ours = CONDITION.replace('("http://")', '("http://")' + HTTPS)
    theirs = CONDITION.replace('("ftp://")', '("ftp://") or self.mirror.startswith("rsync://")')

    merged = merge_tokens(CONDITION, ours, theirs)

    assert merged is not None
    assert merged.count("https://") == 1 and merged.count("rsync://") == 1


def test_a_short_value_each_side_passed_to_another_call_is_two_edits() -> None:
    base = "x = f(a) + g(b)\n"
    merged = merge_tokens(base, "x = f(a, None) + g(b)\n", "x = f(a) + g(b, None)\n")

    assert merged == "x = f(a, None) + g(b, None)\n"


# angr 4c10dba21907 (tests/test_structurer.py): ours passes ``clinic``, theirs (whose commit
# removed the passing of ``clinic``) its graph
CALL = "codegen = p.analyses.StructuredCodeGenerator(main_func, s.result, cfg=cfg)\n"


def _inserted(text: str, keys_b: list[tuple[int, str]]) -> list[tuple[int, str]]:
    keys = _pieces(text)[0]  # type: ignore[index]
    ((_, _, j1, j2),) = _changes(keys_b, keys)
    return keys[j1:j2]


def test_two_keywords_passing_one_new_variable_two_ways_are_a_conflict() -> None:
    keys_b = _pieces(CALL)[0]  # type: ignore[index]
    point = [s for _, s in keys_b].index(")")
    ours = _inserted(CALL.replace("cfg=cfg)", "cfg=cfg, clinic=clinic)"), keys_b)
    theirs = _inserted(CALL.replace("cfg=cfg)", "cfg=cfg, ail_graph=clinic.graph)"), keys_b)
    other = _inserted(CALL.replace("cfg=cfg)", "cfg=cfg, timeout=limit)"), keys_b)

    assert not keywords_at_one_point(keys_b, point, ours, theirs)
    assert keywords_at_one_point(keys_b, point, ours, other)
    # a helper both values call is no shared variable (sqlfluff: ``Ref("A")``, ``Ref("B")``)
    assert keywords_at_one_point(
        keys_b, point,
        _inserted(CALL.replace("cfg=cfg)", 'cfg=cfg, a=Ref("A"))'), keys_b),
        _inserted(CALL.replace("cfg=cfg)", 'cfg=cfg, b=Ref("B"))'), keys_b))


# cloud-custodian 589b63c0f1f4 (tools/c7n_gcp/tests/test_compute.py): an import added by each
# side at the head of a group, below its blank line
IMPORTS = ("import re\nimport time\n\nfrom gcp_common import BaseTest\n"
           "from googleapiclient.errors import HttpError\n\nfrom pytest_terraform import terraform"
           "\n\n\nclass InstanceTest(BaseTest):\n    pass\n")


def test_imports_both_sides_add_below_a_blank_line_keep_one_blank_above_them() -> None:
    ours = IMPORTS.replace("import time\n\n", "import time\n\nfrom c7n.testing import C7N\n")
    theirs = IMPORTS.replace("import time\n\n", "import time\n\nfrom c7n_gcp import Snapshot\n")

    result = merge3(IMPORTS, ours, theirs, "tests/test_compute.py")

    assert isinstance(result, Clean)
    assert result.text == IMPORTS.replace(
        "import time\n\n",
        "import time\n\nfrom c7n.testing import C7N\nfrom c7n_gcp import Snapshot\n")


# angr cc88f5bdd50f (tracer/tracer.py): theirs put a blank line above an ``if`` and re-indented a
# lone statement (formatting only); ours re-indented it alike and added an ``if`` below
TRACER = '''def step(self):
    a_paths = self.active
    if self.no_follow:
        self.prune()
    else:
        self.stash()
    if len(self.active) > 1:
                    self.prune(x)

    assert x
'''


def test_a_blank_line_theirs_added_in_a_function_whose_code_ours_changed_is_kept() -> None:
    ours = TRACER.replace("                    self.prune(x)\n", "        self.prune(x)\n"
                          "    if len(self.active) > 1:  # still two\n        self.stash(y)\n")
    theirs = TRACER.replace("    a_paths = self.active\n", "    a_paths = self.active\n\n").replace(
        "                    self.prune(x)\n", "        self.prune(x)\n")

    result = merge3(TRACER, ours, theirs, "tracer/tracer.py")

    assert isinstance(result, Clean)
    assert result.text == ours.replace("    a_paths = self.active\n",
                                       "    a_paths = self.active\n\n")


# Medusa 78b0204e073a (medusa/providers/torrent/__init__.py): theirs appended a name to the last
# line of an ``__all__`` that holds several names a line; ours inserted one in the middle
PROVIDERS = '''__all__ = [
    'bitcannon', 'btn', 'thepiratebay', 'torrentleech',
    'torrenting', 'yggtorrent',
    'elitetracker'
]
'''


def test_a_name_theirs_appended_on_the_last_line_stays_on_that_line() -> None:
    ours = PROVIDERS.replace("'torrenting', ", "'torrenting', 'torznab', ")
    theirs = PROVIDERS.replace("'elitetracker'\n", "'elitetracker', 'privatehd'\n")

    result = merge3(PROVIDERS, ours, theirs, "providers/torrent/__init__.py")

    assert isinstance(result, Clean)
    assert result.text == ours.replace("'elitetracker'\n", "'elitetracker', 'privatehd'\n")
