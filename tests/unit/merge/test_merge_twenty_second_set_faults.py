"""What the twenty-second unseen set (strawberry, cherrypy, psutil, pyglet, Zope, pygame; 6 Dec
2026) showed that the driver now handles, from excerpts shaped like the real inputs: a parameter
one side added and read that the result never reads, a function both sides changed alike held
otherwise, a ``|`` chain naming one operand twice, a built-in base one side removed while the
other reads what it provided, and a class left out of an ``__all__`` the other side wrote."""

from __future__ import annotations

import ast

from fleet.merge._exports import export_missed
from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage
from fleet.merge._result import Clean, Conflicted
from fleet.merge._sides_agree import agreed_lost, builtin_base_lost, param_unread, union_doubled
from fleet.merge._unused_import import import_left_unused


def _trees(*texts: str) -> list[ast.Module]:
    return [ast.parse(text) for text in texts]


# strawberry 286bb70337ff, tests/http/clients/flask.py: theirs replaced the imported ``schema``
# with a parameter; ours made the same use ``get_schema(schema_config)``.
CLIENT = '''from typing import Optional

from strawberry.flask.views import GraphQLView
from tests.views.schema import Query, schema


class FlaskHttpClient(HttpClient):
    def __init__(
        self,
        graphiql: Optional[bool] = None,
        allow_queries_via_get: bool = True,
    ):
        self.app = Flask(__name__)
        view = GraphQLView.as_view(
            "graphql_view",
            schema=schema,
            graphiql=graphiql,
            allow_queries_via_get=allow_queries_via_get,
        )
        self.app.add_url_rule("/graphql", view_func=view)
'''
CLIENT_OURS = CLIENT.replace("from tests.views.schema import Query, schema",
                             "from strawberry.schema.config import StrawberryConfig\n"
                             "from tests.views.schema import Query, get_schema").replace(
    "        allow_queries_via_get: bool = True,\n    ):",
    "        allow_queries_via_get: bool = True,\n"
    "        schema_config: Optional[StrawberryConfig] = None,\n    ):").replace(
    "            schema=schema,", "            schema=get_schema(schema_config),")
CLIENT_THEIRS = CLIENT.replace("from tests.views.schema import Query, schema",
                               "from strawberry.schema import Schema\n"
                               "from tests.views.schema import Query").replace(
    "        self,\n        graphiql", "        self,\n        schema: Schema,\n        graphiql")


def test_a_parameter_one_side_added_and_read_that_the_result_never_reads_is_found() -> None:
    wrong = CLIENT_OURS.replace("        self,\n        graphiql",
                                "        self,\n        schema: Schema,\n        graphiql")
    trees = _trees(CLIENT, CLIENT_OURS, CLIENT_THEIRS, wrong)
    assert param_unread(trees) == ("FlaskHttpClient.__init__ takes schema, which one side added "
                                   "and read, but never reads it")
    rebound = wrong.replace("        self.app = Flask(__name__)\n",
                            "        schema = get_schema(schema_config)\n"
                            "        self.app = Flask(__name__)\n").replace(
        "schema=get_schema(schema_config),", "schema=schema,")
    assert param_unread(_trees(CLIENT, CLIENT_OURS, CLIENT_THEIRS, rebound)) is not None
    defaulted = rebound.replace("        schema = get_schema(schema_config)\n",
                                "        schema = schema or get_schema(schema_config)\n")
    assert param_unread(_trees(CLIENT, CLIENT_OURS, CLIENT_THEIRS, defaulted)) is None
    assert param_unread(_trees(CLIENT, CLIENT_OURS, CLIENT_THEIRS, CLIENT_THEIRS)) is None


# psutil 2b59a12cc00e, psutil/tests/test_process.py: both sides made the same edit, the new
# ``if`` above the comment on one side and below it on the other.
CWD = '''class TestProcess(PsutilTestCase):

    def test_cwd(self):
        for p in psutil.process_iter():
            try:
                p.cwd()
            except OSError as err:
                # directory has been removed in mean time
                if err.errno != errno.ENOENT:
                    raise
'''
CWD_OURS = CWD.replace('''                # directory has been removed in mean time
                if err.errno''', '''                if WINDOWS and err.errno in ACCESS_DENIED_SET:
                    pass
                # directory has been removed in mean time
                elif err.errno''')
CWD_THEIRS = CWD.replace(
    "                if err.errno",
    "                if WINDOWS and err.errno in ACCESS_DENIED_SET:\n"
    "                    pass\n"
    "                elif err.errno")


def test_a_function_both_sides_changed_alike_is_kept_as_they_have_it() -> None:
    twice = CWD_OURS.replace('''                # directory has been removed in mean time
''', '''                # directory has been removed in mean time
                if WINDOWS and err.errno in ACCESS_DENIED_SET:
                    pass
''')
    texts = [CWD, CWD_OURS, CWD_THEIRS, twice]
    assert agreed_lost(texts, _trees(*texts)) == (
        "TestProcess.test_cwd was changed the same way by both sides, and the result differs")
    texts[3] = CWD_OURS
    assert agreed_lost(texts, _trees(*texts)) is None


# pyglet 0c996946e61c, pyglet/app/__init__.py: ``float`` made optional two ways.
RUN = '''def run(interval: float = 1/60) -> None:
    """Begin processing events."""
    event_loop.run(interval)
'''
RUN_OURS = RUN.replace("interval: float =", "interval: None | float =")
RUN_THEIRS = RUN.replace("interval: float =", "interval: float | None =")


def test_a_union_naming_one_operand_twice_is_found() -> None:
    spliced = RUN.replace("interval: float =", "interval: None | float | None =")
    assert union_doubled(_trees(RUN, RUN_OURS, RUN_THEIRS, spliced)) == (
        "a | chain names one operand twice, which no input does")
    assert union_doubled(_trees(RUN, RUN_OURS, RUN_THEIRS, RUN_THEIRS)) is None


# pyglet 90e7f097adda, pyglet/window/mouse.py: ours took ``MouseStateHandler`` off ``dict``,
# theirs added ``on_deactivate`` calling ``self.clear()``.
MOUSE = '''class MouseStateHandler(dict):
    """Simple handler that tracks the state of buttons from the mouse."""

    def __init__(self):
        self["x"] = 0
        self["y"] = 0

    def on_mouse_press(self, x, y, button, modifiers):
        self[button] = True
'''
MOUSE_OURS = MOUSE.replace("class MouseStateHandler(dict):", "class MouseStateHandler:").replace(
    '''        self["x"] = 0
        self["y"] = 0''', '''        self.data = {"x": 0, "y": 0}''').replace(
    "        self[button] = True", "        self.data[button] = True")
MOUSE_THEIRS = MOUSE + '''
    def on_deactivate(self):
        self.clear()
'''


def test_a_read_of_what_only_a_removed_builtin_base_provided_is_found() -> None:
    wrong = MOUSE_OURS + '''
    def on_deactivate(self):
        self.clear()
'''
    assert builtin_base_lost(_trees(MOUSE, MOUSE_OURS, MOUSE_THEIRS, wrong)) == (
        "MouseStateHandler reads self.clear, which only the base dict one side removed provides")
    humans = wrong.replace("        self.clear()", "        self.data.clear()")
    assert builtin_base_lost(_trees(MOUSE, MOUSE_OURS, MOUSE_THEIRS, humans)) is None


# strawberry 600c5e2d972d, strawberry/types/execution.py: theirs listed the module's classes in
# a new ``__all__``; ours added a class.
EXECUTION = '''from dataclasses import dataclass


@dataclass
class ExecutionContext:
    query: str


@dataclass
class ExecutionResult:
    data: dict


class ParseOptions:
    max_tokens: int
'''
EXECUTION_OURS = EXECUTION + '''

class SubscriptionExecutionResult(Protocol):
    def __aiter__(self): ...
'''
EXECUTION_THEIRS = EXECUTION + '''

__all__ = ["ExecutionContext", "ExecutionResult", "ParseOptions"]
'''


def test_a_class_left_out_of_the_all_the_other_side_wrote_is_found() -> None:
    wrong = EXECUTION_OURS + '''

__all__ = ["ExecutionContext", "ExecutionResult", "ParseOptions"]
'''
    texts = [EXECUTION, EXECUTION_OURS, EXECUTION_THEIRS, wrong]
    assert export_missed(texts, _trees(*texts)) == (
        "SubscriptionExecutionResult is defined but not in the __all__ the other side wrote")
    texts[3] = wrong.replace('"ParseOptions"]', '"ParseOptions", "SubscriptionExecutionResult"]')
    assert export_missed(texts, _trees(*texts)) is None


def test_each_excerpt_merges_to_a_conflict_or_to_what_its_check_accepts() -> None:
    for base, ours, theirs in ((CLIENT, CLIENT_OURS, CLIENT_THEIRS), (CWD, CWD_OURS, CWD_THEIRS),
                               (RUN, RUN_OURS, RUN_THEIRS), (MOUSE, MOUSE_OURS, MOUSE_THEIRS),
                               (EXECUTION, EXECUTION_OURS, EXECUTION_THEIRS)):
        line = line_merge(base, ours, theirs)
        assert isinstance(line, Conflicted)  # git's own: the stage has something to decide
        result = after_line_stage(base, ours, theirs, "module.py", line)
        if isinstance(result, Clean):
            texts = [base, ours, theirs, result.text]
            trees = _trees(*texts)
            assert param_unread(trees) is None
            assert agreed_lost(texts, trees) is None
            assert union_doubled(trees) is None
            assert builtin_base_lost(trees) is None
            assert export_missed(texts, trees) is None
        else:
            assert isinstance(result, Conflicted)


# Zope 4a96a238ac1a, src/OFS/misc_.py: theirs moved two imports out of the class body to module
# level; ours deleted the icons that read them (and, in another file, one of the packages).
MISC = '''from os.path import dirname

from App.ImageFile import ImageFile


class p_:
    "Shared system information"

    here = dirname(__file__)
    broken = ImageFile('www/broken.gif', here)

    import OFS
    ofs_dir = dirname(OFS.__file__)
    User_icon = ImageFile('www/User_icon.gif', ofs_dir)

    import HelpSys
    HelpSys_icon = ImageFile('images/HelpSys.gif', dirname(HelpSys.__file__))
'''
MISC_OURS = MISC.replace('''
    import OFS
    ofs_dir = dirname(OFS.__file__)
    User_icon = ImageFile('www/User_icon.gif', ofs_dir)

    import HelpSys
    HelpSys_icon = ImageFile('images/HelpSys.gif', dirname(HelpSys.__file__))
''', '''    locked = ImageFile('www/modified.gif', here)
''')
MISC_THEIRS = MISC.replace("from App.ImageFile import ImageFile\n",
                           "from App.ImageFile import ImageFile\nimport HelpSys\nimport OFS\n"
                           ).replace("    import OFS\n", "").replace("    import HelpSys\n", "")


def test_an_import_moved_to_module_level_that_the_other_side_stopped_reading_is_found() -> None:
    wrong = MISC_OURS.replace("from App.ImageFile import ImageFile\n",
                              "from App.ImageFile import ImageFile\nimport HelpSys\nimport OFS\n")
    assert import_left_unused(_trees(MISC, MISC_OURS, MISC_THEIRS, wrong)) == (
        "an import of HelpSys one side moved to module level is left unused")
    assert import_left_unused(_trees(MISC, MISC_OURS, MISC_THEIRS, MISC_OURS)) is None
    line = line_merge(MISC, MISC_OURS, MISC_THEIRS)
    result = after_line_stage(MISC, MISC_OURS, MISC_THEIRS, "src/OFS/misc_.py", line)
    if isinstance(result, Clean):
        assert import_left_unused(_trees(MISC, MISC_OURS, MISC_THEIRS, result.text)) is None
    else:
        assert isinstance(result, Conflicted)


def test_a_parameter_the_side_itself_binds_anew_before_reading_is_not_a_use() -> None:
    """python-telegram-bot ``4de323ae7ff4`` (found by the A/B of ``param_unread``): both sides
    renamed the fixture ``cdp`` to ``dp``, which the test binds anew (``dp =
    updater.dispatcher``) before it reads it; the merge the humans made too."""
    base = (
        "class TestBasePersistence:\n    def test_handlers(self, cdp, bot):\n"
        "        updater = Updater(bot=bot, use_context=True)\n"
        "        dp = updater.dispatcher\n        dp.add_handler(known_user)\n"
    )
    ours = base.replace("cdp, bot", "dp, bot").replace("bot=bot, use_context=True", "bot=bot")
    theirs = base.replace("cdp, bot", "dp, bot").replace(
        "        dp.add_handler(known_user)\n",
        "        dp.add_handler(known_user)\n        dp.add_handler(known_chat)\n")
    merged = ours.replace("        dp.add_handler(known_user)\n",
                          "        dp.add_handler(known_user)\n"
                          "        dp.add_handler(known_chat)\n")
    assert param_unread(_trees(base, ours, theirs, merged)) is None
