"""What the nineteenth unseen set (dask/distributed, pypa/warehouse, pre-commit, textual,
sqlalchemy, prefect; 6 Dec 2026) showed that the driver now handles, from excerpts shaped like
the real inputs: a wrong clean merge (a name the result reads where nothing binds it) and a
stage that raised (a segment set aside under a kind it has only in one version)."""

from __future__ import annotations

import ast

from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage, merge3
from fleet.merge._result import Clean, Conflicted
from fleet.merge._unbound import lost_local

# distributed 57e8d3f1d1e8: ours moved ``pa = importorskip(...)`` into the one test reading it,
# theirs moved it below its new imports and added tests reading it at module level.
SHUFFLE = '''from __future__ import annotations

import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")

from distributed.utils_test import gen_cluster


@gen_cluster(client=True)
async def test_basic(c, s, a, b):
    assert pd.DataFrame()


def test_schema():
    df = pd.DataFrame({"x": [1, 2]})
    assert pa.Schema.from_pandas(df)
'''
SHUFFLE_OURS = SHUFFLE.replace('''import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
''', '''import pytest

pd = pytest.importorskip("pandas")
''').replace('''def test_schema():
''', '''def test_schema():
    pa = pytest.importorskip("pyarrow")

''')
SHUFFLE_THEIRS = SHUFFLE.replace('''pa = pytest.importorskip("pyarrow")

from distributed.utils_test import gen_cluster
''', '''from distributed.utils_test import gen_cluster, gen_test

pa = pytest.importorskip("pyarrow")
''') + '''

@gen_test()
async def test_processing_chain():
    df = pd.DataFrame({"x": [1, 2]})
    schema = pa.Schema.from_pandas(df)
    assert schema
'''


def test_a_name_read_where_nothing_binds_it_any_more_is_found() -> None:
    wrong = SHUFFLE_THEIRS.replace('''import pandas as pd
import pytest
''', '''import pytest

pd = pytest.importorskip("pandas")
''').replace('''
pa = pytest.importorskip("pyarrow")
''', "").replace('''def test_schema():
''', '''def test_schema():
    pa = pytest.importorskip("pyarrow")

''')
    trees = [ast.parse(t) for t in (SHUFFLE, SHUFFLE_OURS, SHUFFLE_THEIRS, wrong)]
    assert lost_local(trees) == (
        "pa is read in test_processing_chain where nothing binds it any more")
    # every input and a result that binds it where it is read: nothing to say
    assert lost_local([*trees[:3], ast.parse(SHUFFLE_THEIRS)]) is None
    assert lost_local([*trees[:3], ast.parse(SHUFFLE_OURS)]) is None


def test_a_binding_moved_two_ways_is_a_conflict() -> None:
    result = merge3(SHUFFLE, SHUFFLE_OURS, SHUFFLE_THEIRS,
                    "distributed/shuffle/tests/test_shuffle.py")
    if isinstance(result, Clean):  # only where every read of ``pa`` has a binding
        assert lost_local([ast.parse(t) for t in (
            SHUFFLE, SHUFFLE_OURS, SHUFFLE_THEIRS, result.text)]) is None
    else:
        assert isinstance(result, Conflicted)


# sqlalchemy 036da3036643: theirs deleted ``columns = None``, so the attribute's docstring below
# it became the class's own docstring; the same text is another kind of segment there.
MIXIN = '''class ColumnCollectionMixin(object):

    columns = None
    """A collection of the columns this object refers to."""

    _allow_multiple_tables = False

    def __init__(self, *columns, **kw):
        self._column_flag = kw.pop("_column_flag", False)
        self.columns = list(columns)

    def _col_expressions(self, table):
        return [table.c[col] for col in self.columns]


class ColumnCollectionConstraint(ColumnCollectionMixin):
    def __init__(self, *columns, **kw):
        ColumnCollectionMixin.__init__(self, *columns, **kw)
'''
MIXIN_OURS = MIXIN.replace('''        self._column_flag = kw.pop("_column_flag", False)
''', '''        self._column_flag = kw.pop("_column_flag", False)
        self._autoattach = kw.pop("_autoattach", True)
''')
MIXIN_THEIRS = MIXIN.replace('''    columns = None
''', '').replace('''        self._column_flag = kw.pop("_column_flag", False)
''', '''        self._column_flag = kw.pop("_column_flag", None)
        self._gather = kw.pop("_gather_expressions", None)
''')


def test_a_segment_of_another_kind_in_one_version_is_not_set_aside() -> None:
    line = line_merge(MIXIN, MIXIN_OURS, MIXIN_THEIRS)
    assert isinstance(line, Conflicted)
    result = after_line_stage(MIXIN, MIXIN_OURS, MIXIN_THEIRS, "sqlalchemy/sql/schema.py", line)
    if isinstance(result, Clean):
        assert "_autoattach" in result.text and "_gather_expressions" in result.text
        assert '"""A collection of the columns this object refers to."""' in result.text
        ast.parse(result.text)
    else:
        assert isinstance(result, Conflicted)
