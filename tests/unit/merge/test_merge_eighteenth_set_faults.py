"""The wrong clean merges read in the eighteenth unseen set (uvicorn, fastapi, kedro, meson,
optuna, python-telegram-bot; 6 Dec 2026) that a rule now finds, from excerpts shaped like their
real inputs."""

from __future__ import annotations

import ast

from fleet.merge._doubled import assigned_under_two_names, docstring_twice
from fleet.merge._merge3 import merge3
from fleet.merge._readonly import proxy_written
from fleet.merge._result import Clean, Conflicted
from fleet.merge._slots import slot_added_outside
from fleet.merge._source_moved import source_retired

# optuna 85554f71a25a: both sides gave one method a docstring, each its own.
EVALUATOR = '''import numpy as np


class PedAnovaImportanceEvaluator:
    def __init__(self, baseline_quantile=0.1):
        self._baseline_quantile = baseline_quantile

    def evaluate(self, study, params=None, target=None):
        if target is None and study._is_multi_objective():
            raise ValueError("please specify the `target`")
        return np.zeros(len(params or []))
'''
OURS_DOC = '''        """Evaluate parameter importances.

        Specify ``target`` if ``study`` is being used for multi-objective optimization.
        """
'''
THEIRS_DOC = '''        """Evaluate parameter importances.

        If ``target`` is None, trials are ranked by non-domination and the hypervolume.
        """
'''
HEAD = "    def evaluate(self, study, params=None, target=None):\n"
OURS = EVALUATOR.replace(HEAD, HEAD + OURS_DOC).replace(
    "baseline_quantile=0.1", "baseline_quantile=0.1, evaluate_on_local=True")
THEIRS = EVALUATOR.replace(HEAD, HEAD + THEIRS_DOC).replace(
    '        if target is None and study._is_multi_objective():\n'
    '            raise ValueError("please specify the `target`")\n', "").replace(
    "        self._baseline_quantile = baseline_quantile\n",
    "        self._baseline_quantile = baseline_quantile\n        self._hssp = True\n")


def test_two_docstrings_of_one_method_are_found() -> None:
    both = THEIRS.replace(HEAD + THEIRS_DOC, HEAD + OURS_DOC + THEIRS_DOC)
    trees = [ast.parse(text) for text in (EVALUATOR, OURS, THEIRS, both)]
    assert docstring_twice(trees) == (
        "both sides' docstrings of one definition kept one after the other")
    assert docstring_twice([*trees[:3], ast.parse(THEIRS)]) is None


def test_two_docstrings_of_one_method_are_a_conflict() -> None:
    result = merge3(EVALUATOR, OURS, THEIRS, "optuna/importance/_ped_anova/evaluator.py")
    if isinstance(result, Clean):  # only with one docstring
        tree = ast.parse(result.text)
        assert docstring_twice([*(ast.parse(t) for t in (EVALUATOR, OURS, THEIRS)), tree]) is None
    else:
        assert isinstance(result, Conflicted)


# uvicorn f4871bdafa75: one value added after one constant under two names.
PROTOCOLS = '''import pytest

from uvicorn.protocols.websockets.websockets_impl import WebSocketProtocol
from uvicorn.protocols.websockets.wsproto_impl import WSProtocol

WS_PROTOCOLS = [p for p in [WSProtocol, WebSocketProtocol] if p is not None]
ONLY_WEBSOCKETPROTOCOL = [p for p in [WebSocketProtocol] if p is not None]


def test_invalid_upgrade():
    assert WS_PROTOCOLS
'''
VALUE = " = [p for p in [WSProtocol] if p is not None]\n"
ANCHOR = "ONLY_WEBSOCKETPROTOCOL = [p for p in [WebSocketProtocol] if p is not None]\n"
OURS_WS = PROTOCOLS.replace(ANCHOR, ANCHOR + "ONLY_WSPROTO" + VALUE).replace(
    "import pytest\n", "import asyncio\n\nimport pytest\n")
THEIRS_WS = PROTOCOLS.replace(ANCHOR, ANCHOR + "ONLY_WS_PROTOCOL" + VALUE) + '''

def test_no_date_header():
    assert ONLY_WS_PROTOCOL
'''


def test_one_value_under_two_names_is_found() -> None:
    both = THEIRS_WS.replace(ANCHOR, ANCHOR + "ONLY_WSPROTO" + VALUE)
    trees = [ast.parse(text) for text in (PROTOCOLS, OURS_WS, THEIRS_WS, both)]
    assert assigned_under_two_names(trees) == (
        "both sides bound one value under two names: ONLY_WSPROTO and ONLY_WS_PROTOCOL")


def test_one_value_under_two_names_is_a_conflict() -> None:
    result = merge3(PROTOCOLS, OURS_WS, THEIRS_WS, "tests/protocols/test_websocket.py")
    assert isinstance(result, Conflicted), result


def test_small_equal_values_under_two_names_are_no_twins() -> None:
    base = "import os\n\nA = 1\n"
    ours, theirs = base + "B = []\n", base + "C = []\n"
    trees = [ast.parse(text) for text in (base, ours, theirs, base + "B = []\nC = []\n")]
    assert assigned_under_two_names(trees) is None


# fastapi bbcc7cafa6b5: theirs moved every re-export from .main to .v2 (main.py deleted), ours
# added re-exports from .main.
COMPAT = '''from .main import BaseConfig as BaseConfig
from .main import ModelField as ModelField
from .main import get_schema_from_model_field as get_schema_from_model_field
from .shared import PYDANTIC_V2 as PYDANTIC_V2
'''
OMIT = "from .main import omit_by_default as omit_by_default\n"
LENIENT = "from .shared import lenient as lenient\n"
V1 = "from .shared import annotation_is_pydantic_v1\n"
SHARED = "from .shared import PYDANTIC_V2 as PYDANTIC_V2\n"
OURS_COMPAT = COMPAT.replace(SHARED, OMIT + SHARED + LENIENT)
THEIRS_COMPAT = COMPAT.replace("from .main import", "from .v2 import").replace(SHARED, SHARED + V1)


def test_a_name_from_a_module_the_other_side_moved_away_from_is_found() -> None:
    kept = THEIRS_COMPAT + "from .main import omit_by_default as omit_by_default\n"
    trees = [ast.parse(text) for text in (COMPAT, OURS_COMPAT, THEIRS_COMPAT, kept)]
    assert source_retired(trees) == (
        "omit_by_default is imported from .main, which the other side's imports moved away from")
    right = THEIRS_COMPAT + "from .v2 import omit_by_default as omit_by_default\n"
    assert source_retired([*trees[:3], ast.parse(right)]) is None


def test_a_name_from_a_module_the_other_side_moved_away_from_is_a_conflict() -> None:
    result = merge3(COMPAT, OURS_COMPAT, THEIRS_COMPAT, "fastapi/_compat/__init__.py")
    assert isinstance(result, Conflicted), result


def test_a_module_the_side_still_imports_from_is_not_moved_away_from() -> None:
    base = "from sympy import Symbol, limit, oo\n"
    side = "from sympy import Symbol\nfrom sympy.series import limit\nfrom sympy.core import oo\n"
    other = "from sympy import Symbol, limit, oo, elliptic_e\n"
    merged = side + "from sympy import elliptic_e\n"
    trees = [ast.parse(text) for text in (base, side, other, merged)]
    assert source_retired(trees) is None


# python-telegram-bot 86bec4ad0278 (``telegram/ext/dispatcher.py``): ours gave the class a
# ``__slots__`` holding every attribute its methods store; theirs added ``self.context_types``.
DISPATCHER = '''import logging


class Dispatcher:
    """Dispatches all kinds of updates to its registered handlers."""

    def __init__(self, bot, update_queue, workers=4):
        self.bot = bot
        self.update_queue = update_queue
        self.workers = workers
        self.handlers = {}
        self.running = False

    def add_handler(self, handler, group=0):
        self.handlers.setdefault(group, []).append(handler)
'''
DISPATCHER_OURS = DISPATCHER.replace(
    "import logging\n", "import logging\nimport warnings\n").replace(
    '''    """Dispatches all kinds of updates to its registered handlers."""
''', '''    """Dispatches all kinds of updates to its registered handlers."""

    __slots__ = ("bot", "update_queue", "workers", "handlers", "running", "__dict__")
''').replace("        self.workers = workers\n", "        self.workers = max(1, workers)\n")
DISPATCHER_THEIRS = DISPATCHER.replace(
    "import logging\n", "import logging\nimport typing\n").replace(
    "def __init__(self, bot, update_queue, workers=4):",
    "def __init__(self, bot, update_queue, workers=4, context_types=None):").replace(
    "        self.running = False\n",
    "        self.running = False\n        self.context_types = context_types or {}\n")


def test_an_attribute_added_outside_slots_the_other_side_completed_is_found() -> None:
    wrong = DISPATCHER_OURS.replace(
        "def __init__(self, bot, update_queue, workers=4):",
        "def __init__(self, bot, update_queue, workers=4, context_types=None):").replace(
        "        self.running = False\n",
        "        self.running = False\n        self.context_types = context_types or {}\n")
    trees = [ast.parse(t) for t in (DISPATCHER, DISPATCHER_OURS, DISPATCHER_THEIRS, wrong)]
    assert slot_added_outside(trees) == (
        "Dispatcher.__slots__ was completed on one side, and context_types, added on the "
        "other, has no slot in the result")
    with_slot = wrong.replace('"running", "__dict__"', '"running", "context_types", "__dict__"')
    assert slot_added_outside([*trees[:3], ast.parse(with_slot)]) is None
    assert slot_added_outside([*trees[:3], ast.parse(DISPATCHER_OURS)]) is None


def test_an_attribute_added_outside_slots_the_other_side_completed_is_a_conflict() -> None:
    result = merge3(DISPATCHER, DISPATCHER_OURS, DISPATCHER_THEIRS, "telegram/ext/dispatcher.py")
    if isinstance(result, Clean):  # only with a slot for it
        assert slot_added_outside([*(ast.parse(t) for t in (
            DISPATCHER, DISPATCHER_OURS, DISPATCHER_THEIRS)), ast.parse(result.text)]) is None
    else:
        assert isinstance(result, Conflicted)


# python-telegram-bot d6e49e8a6bb2 (``telegram/ext/_dispatcher.py``): theirs made ``chat_data`` a
# read-only ``MappingProxyType`` (writes through ``_chat_data``); ours added a method writing
# into ``self.chat_data[...]``.
PROXY = '''from collections import defaultdict


class Dispatcher:
    def __init__(self, bot):
        self.bot = bot
        self.chat_data = defaultdict(dict)
        self.handlers = {}

    def add_handler(self, handler, group=0):
        self.handlers.setdefault(group, []).append(handler)
'''
MIGRATE = '''
    def migrate_chat_data(self, old_chat_id, new_chat_id):
        self.chat_data[new_chat_id] = self.chat_data[old_chat_id]
        del self.chat_data[old_chat_id]
'''
PROXY_OURS = PROXY.replace(
    "from collections import defaultdict\n",
    "from collections import defaultdict\nimport logging\n") + MIGRATE
PROXY_THEIRS = PROXY.replace(
    "from collections import defaultdict\n",
    "from collections import defaultdict\nfrom types import MappingProxyType\n").replace(
    "        self.chat_data = defaultdict(dict)\n",
    "        self._chat_data = defaultdict(dict)\n"
    "        self.chat_data = MappingProxyType(self._chat_data)\n")


def test_a_write_into_a_read_only_mapping_proxy_is_found() -> None:
    wrong = PROXY_THEIRS + MIGRATE
    assert "def migrate_chat_data" in wrong and "MappingProxyType(self._chat_data)" in wrong
    trees = [ast.parse(t) for t in (PROXY, PROXY_OURS, PROXY_THEIRS, wrong)]
    assert proxy_written(trees) == (
        "Dispatcher.chat_data is a read-only MappingProxyType the result writes into")
    through = wrong.replace("self.chat_data[new_chat_id] =", "self._chat_data[new_chat_id] =")
    through = through.replace("del self.chat_data[old_chat_id]", "del self._chat_data[old_chat_id]")
    assert proxy_written([*trees[:3], ast.parse(through)]) is None


def test_a_write_into_a_read_only_mapping_proxy_is_a_conflict() -> None:
    result = merge3(PROXY, PROXY_OURS, PROXY_THEIRS, "telegram/ext/_dispatcher.py")
    if isinstance(result, Clean):  # only with the writes going through ``_chat_data``
        assert proxy_written([*(ast.parse(t) for t in (PROXY, PROXY_OURS, PROXY_THEIRS)),
                              ast.parse(result.text)]) is None
    else:
        assert isinstance(result, Conflicted)
