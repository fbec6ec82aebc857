"""What the twentieth unseen set (certbot, borg, Flexget, Kinto, praw, errbot; 6 Dec 2026)
showed that the driver now handles, from excerpts shaped like the real inputs: a name read when
the module is imported that nothing binds any more, and names imported from a project module
the other side moved every import away from."""

from __future__ import annotations

import ast

from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage
from fleet.merge._migrated import access_retired
from fleet.merge._result import Clean, Conflicted
from fleet.merge._source_moved import source_retired
from fleet.merge._unbound import module_lost

# certbot 0f7c6357850a, certbot/util.py: ours annotated the module's functions, one of them
# ``-> distutils.version.StrictVersion``; theirs moved ``import distutils.version`` into that
# function (deprecated, imported only when called) and added a function below it.
UTIL = '''"""Utilities for all Certbot."""
import distutils.version
import logging
import re
import warnings

logger = logging.getLogger(__name__)


def exe_exists(exe):
    """Is the executable there?"""
    return bool(exe)


def get_strict_version(normalized):
    """Converts a normalized version to a strict version."""
    # strict version ending with "a" and a number designates a pre-release
    return distutils.version.StrictVersion(normalized.replace(".dev", "a"))


def is_wildcard_domain(domain):
    """Is domain a wildcard domain?"""
    return domain.startswith("*.")
'''
UTIL_OURS = (
    UTIL.replace("import warnings\n", "import warnings\nfrom typing import Optional\n")
    .replace("def exe_exists(exe):", "def exe_exists(exe: Optional[str]) -> bool:")
    .replace("def get_strict_version(normalized):",
             "def get_strict_version(normalized: str) -> distutils.version.StrictVersion:")
)
UTIL_THEIRS = UTIL.replace("import distutils.version\n", "").replace(
    "import warnings\n", "import warnings\nfrom typing import List\n").replace(
    '''    # strict version ending with "a" and a number designates a pre-release
    return distutils.version.StrictVersion(normalized.replace(".dev", "a"))
''', '''    warnings.warn("get_strict_version is deprecated", DeprecationWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import distutils.version
        # strict version ending with "a" and a number designates a pre-release
        return distutils.version.StrictVersion(normalized.replace(".dev", "a"))
''') + '''

def parse_loose_version(version_string):
    """Parses a version string into its components."""
    components: List[str]
    components = [x for x in re.split(r"(\\d+|[a-z]+|\\.)", version_string) if x and x != "."]
    return components
'''


def _trees(*texts: str) -> list[ast.Module]:
    return [ast.parse(text) for text in texts]


def test_a_name_read_on_import_that_nothing_binds_any_more_is_found() -> None:
    both = UTIL_THEIRS.replace("from typing import List\n", "from typing import List, Optional\n"
                               ).replace("def get_strict_version(normalized):",
                                         "def get_strict_version(normalized: str) -> "
                                         "distutils.version.StrictVersion:")
    assert module_lost(_trees(UTIL, UTIL_OURS, UTIL_THEIRS, both)) == (
        "distutils is read when the module is imported but nothing binds it there")
    # Annotations not evaluated (``from __future__ import annotations``): nothing is read.
    lazy = "from __future__ import annotations\n"
    assert module_lost(_trees(lazy + UTIL, lazy + UTIL_OURS, lazy + UTIL_THEIRS, lazy + both)
                       ) is None
    # The humans' way, the import for the type checker and the annotation a string: fine.
    humans = both.replace("import warnings\n", "import warnings\nfrom typing import "
                          "TYPE_CHECKING\nif TYPE_CHECKING:\n    import distutils.version\n"
                          ).replace("-> distutils.version.StrictVersion:",
                                    '-> "distutils.version.StrictVersion":')
    assert module_lost(_trees(UTIL, UTIL_OURS, UTIL_THEIRS, humans)) is None
    # A name that an input already read unbound on import is not the merge's doing.
    assert module_lost(_trees(UTIL + "x = undefined_here\n", UTIL_OURS, UTIL_THEIRS,
                              UTIL_THEIRS + "x = undefined_here\n")) is None


def test_an_import_moved_into_a_function_and_an_annotation_added_is_a_conflict() -> None:
    line = line_merge(UTIL, UTIL_OURS, UTIL_THEIRS)
    result = after_line_stage(UTIL, UTIL_OURS, UTIL_THEIRS, "certbot/util.py", line)
    if isinstance(result, Clean):  # only a result that binds ``distutils`` where it is read
        assert module_lost(_trees(UTIL, UTIL_OURS, UTIL_THEIRS, result.text)) is None
        compile(result.text, "util.py", "exec")
    else:
        assert isinstance(result, Conflicted)
    assert isinstance(line, Conflicted)  # git's own: the stage had something to decide


# certbot 5befc4f790c9, certbot-nginx/.../parser.py: ours ("deprecate magic typing") imports
# every typing name from ``typing`` instead of ``acme.magic_typing``, which now warns on import
# (the tests turn warnings into errors); theirs added ``Optional`` from ``acme.magic_typing``.
PARSER = '''"""NginxParser is a member object of the NginxConfigurator class."""
import copy
import functools
import glob
import logging

from acme.magic_typing import Dict
from acme.magic_typing import List
from acme.magic_typing import Set
from acme.magic_typing import Tuple
from acme.magic_typing import Union
import pyparsing

from certbot import errors

logger = logging.getLogger(__name__)


class NginxParser:
    """Class handles the fine details of parsing the Nginx Configuration."""

    def __init__(self, root):
        self.parsed = {}  # type: Dict[str, Union[List, nginxparser.UnspacedList]]
        self.root = root

    def load(self):
        """Loads Nginx files into a parsed tree."""
        self.parsed = {}
        self._parse_recursively(self.config_root)

    def get_vhosts(self):
        """Gets list of all 'virtual hosts' found in Nginx configuration."""
        enabled = True  # type: bool
        servers = {}  # type: Dict[str, List[Tuple[str, Set[str]]]]
        return enabled, servers
'''
PARSER_OURS = PARSER.replace("from acme.magic_typing import", "from typing import")
PARSER_THEIRS = PARSER.replace("from acme.magic_typing import List\n",
                               "from acme.magic_typing import List\n"
                               "from acme.magic_typing import Optional\n").replace(
    '''    def load(self):
        """Loads Nginx files into a parsed tree."""
''', '''    def load(self):
        """Loads Nginx files into a parsed tree."""
        self._server = None  # type: Optional[str]
''')


def test_a_name_imported_from_a_module_the_other_side_left_is_found() -> None:
    kept = PARSER_OURS.replace("from typing import List\n", "from typing import List\n"
                               "from acme.magic_typing import Optional\n")
    trees = _trees(PARSER, PARSER_OURS, PARSER_THEIRS, kept)
    assert source_retired(trees) == (
        "Optional is imported from acme.magic_typing, which the other side's imports moved "
        "away from")
    humans = PARSER_OURS.replace("from typing import List\n",
                                 "from typing import List\nfrom typing import Optional\n")
    assert source_retired(_trees(PARSER, PARSER_OURS, PARSER_THEIRS, humans)) is None
    # The standard library's modules stay importable: a move off ``typing`` retires nothing.
    stdlib = [t.replace("acme.magic_typing", "typing").replace("from typing import Optional",
                                                                "from typing import Optional")
              for t in (PARSER, PARSER_THEIRS)]
    moved = PARSER.replace("from acme.magic_typing import", "from collections.abc import")
    assert source_retired(_trees(stdlib[0], moved, stdlib[1], moved.replace(
        "import pyparsing\n", "from typing import Optional\nimport pyparsing\n"))) is None


def test_an_import_source_moved_on_one_side_is_a_conflict() -> None:
    line = line_merge(PARSER, PARSER_OURS, PARSER_THEIRS)
    assert isinstance(line, Conflicted)
    result = after_line_stage(PARSER, PARSER_OURS, PARSER_THEIRS,
                              "certbot-nginx/certbot_nginx/_internal/parser.py", line)
    if isinstance(result, Clean):
        assert "acme.magic_typing" not in result.text
    else:
        assert isinstance(result, Conflicted)


# Flexget ed2ecf332266, flexget/api/core/database.py: theirs made the file's one
# ``api.schema(...)`` ``api.schema_model(...)`` (deleting ``API.schema`` in another file); ours
# rewrote the module around it and added two more ``api.schema(...)``.
DATABASE = '''from flask import jsonify

from flexget.api import APIResource, api
from flexget.api.app import base_message_schema, success_response

db_api = api.namespace('database', description='Manage Flexget DB')


class ObjectsContainer:
    plugin_list = {'type': 'array', 'items': {'type': 'string'}}


plugins_schema = api.schema('plugins_list', ObjectsContainer.plugin_list)


@db_api.route('/cleanup/')
class DBCleanup(APIResource):
    @api.response(200, model=base_message_schema)
    def get(self, session=None):
        """ Make all plugins clean un-needed data from the database """
        self.manager.db_cleanup(force=True)
        return success_response('DB Cleanup finished')
'''
DATABASE_OURS = DATABASE.replace('''    plugin_list = {'type': 'array', 'items': {'type': 'string'}}
''', '''    plugin_list = {'type': 'array', 'items': {'type': 'string'}}
    database_input_object = {'type': 'object', 'required': ['operation']}
    reset_plugin_input = dict(database_input_object)
''').replace('''plugins_schema = api.schema('plugins_list', ObjectsContainer.plugin_list)
''', '''input_schema = api.schema('db_schema', ObjectsContainer.database_input_object)
reset_plugin_input_schema = api.schema('db_schema', ObjectsContainer.reset_plugin_input)
plugins_schema = api.schema('plugins_list', ObjectsContainer.plugin_list)
''').replace('''@db_api.route('/cleanup/')
class DBCleanup(APIResource):
    @api.response(200, model=base_message_schema)
    def get(self, session=None):
''', '''@db_api.route('/')
class DBOperation(APIResource):
    @api.response(200, model=base_message_schema)
    @api.validate(input_schema)
    def post(self, session=None):
''')
DATABASE_THEIRS = DATABASE.replace("plugins_schema = api.schema(",
                                   "plugins_schema = api.schema_model(")


def test_the_one_use_of_a_method_renamed_while_the_other_side_adds_two_is_a_conflict() -> None:
    line = line_merge(DATABASE, DATABASE_OURS, DATABASE_THEIRS)
    assert isinstance(line, Conflicted)
    result = after_line_stage(DATABASE, DATABASE_OURS, DATABASE_THEIRS,
                              "flexget/api/core/database.py", line)
    if isinstance(result, Clean):
        assert "api.schema(" not in result.text
    else:
        assert isinstance(result, Conflicted)
    # One use added by the other side is not enough to say the rename was everywhere.
    once = DATABASE_OURS.replace(
        "reset_plugin_input_schema = api.schema('db_schema', "
        "ObjectsContainer.reset_plugin_input)\n", "")
    trees = _trees(DATABASE, once, DATABASE_THEIRS, once.replace(
        "plugins_schema = api.schema(", "plugins_schema = api.schema_model("))
    texts = [DATABASE, once, DATABASE_THEIRS, ""]
    assert access_retired(texts, trees) is None
    assert access_retired([DATABASE, DATABASE_OURS, DATABASE_THEIRS, ""], _trees(
        DATABASE, DATABASE_OURS, DATABASE_THEIRS, DATABASE_OURS.replace(
            "plugins_schema = api.schema(", "plugins_schema = api.schema_model("))) == (
        "one side rewrote every api.schema; the other adds uses of it")


def test_a_module_read_once_and_rewritten_is_no_rename() -> None:
    """plotly.py ``5fb9ee3ae6ff`` (the twenty-first set, found by the A/B of the rule above):
    ours rewrote the file's one ``np.testing.assert_array_almost_equal(...)``, theirs added two
    ``np.testing.assert_almost_equal(...)``; ``np.testing`` is a module's, read as a prefix of
    longer names: the merge the humans made too."""
    base = (
        "import numpy as np\n\n\ndef test_contour():\n"
        "    np.testing.assert_array_almost_equal(a, b, decimal=3)\n"
    )
    ours = base.replace("np.testing.assert_array_almost_equal(a, b, decimal=3)",
                        "assert a == pytest.approx(b)")
    theirs = base + (
        "\n\ndef compare(x, y):\n    np.testing.assert_almost_equal(x[0], y[0])\n"
        "    np.testing.assert_almost_equal(x[1], y[1])\n"
    )
    merged = ours + theirs[len(base):]
    texts = [base, ours, theirs, merged]
    assert access_retired(texts, _trees(*texts)) is None


def test_a_call_replaced_by_its_body_at_one_place_is_no_rename() -> None:
    """pyglet ``4dba2daf861d`` (the twenty-second set, found by the A/B of the one-use reading):
    theirs put ``set_region``'s work in place of the file's one ``attribute.set_region(...)``,
    ours added two more calls; the method stays, and the humans kept ours' calls."""
    base = (
        "class VertexList:\n    def set_attribute_data(self, name, data):\n"
        "        attribute = self.domain.attribute_names[name]\n"
        "        attribute.set_region(attribute.buffer, self.start, self.count, data)\n"
    )
    theirs = base.replace(
        "        attribute.set_region(attribute.buffer, self.start, self.count, data)\n",
        "        start = attribute.count * self.start\n"
        "        end = attribute.count * self.count + start\n"
        "        attribute.buffer.data[start:end] = data\n"
        "        attribute.buffer.invalidate_region(self.start, self.count)\n")
    ours = base + (
        "\n    def set_instance(self, attribute, instance_id, data):\n"
        "        attribute.set_region(attribute.buffer, instance_id - 1, 1, data)\n"
        "\n    def resize(self, attribute, count, data):\n"
        "        attribute.set_region(attribute.buffer, self.start, count, data)\n"
    )
    merged = theirs + ours[len(base):]
    texts = [base, ours, theirs, merged]
    assert access_retired(texts, _trees(*texts)) is None
    renamed = theirs.replace(
        "        start = attribute.count * self.start\n"
        "        end = attribute.count * self.count + start\n"
        "        attribute.buffer.data[start:end] = data\n"
        "        attribute.buffer.invalidate_region(self.start, self.count)\n",
        "        attribute.set_data(attribute.buffer, self.start, self.count, data)\n")
    texts = [base, ours, renamed, renamed + ours[len(base):]]
    assert access_retired(texts, _trees(*texts)) == (
        "one side rewrote every attribute.set_region; the other adds uses of it")
