"""The driver faults the fortieth and forty-first unseen sets (pylint, astroid, ansible-lint,
flask-admin, django-import-export, bandit; pontoon, joblib, pyvisa, urwid, django-oauth-toolkit,
django-celery-beat; 7 Dec 2026) showed, from excerpts shaped like the real inputs: each a clean
merge that kept both sides' version of one thing, now a conflict; and the line endings one side
converted a file to, kept on the other side's new lines."""

from __future__ import annotations

import ast

from fleet.merge._commented_twin import NEAR, twins
from fleet.merge._line import line_merge
from fleet.merge._merge3 import merge3
from fleet.merge._newlines import follow_newlines
from fleet.merge._rebound import rebound_before_edit
from fleet.merge._result import Clean, Conflicted, MergeResult

VIEW = '''class ModelView(BaseModelView):
    def details_view(self):
        model = self.get_one(id)

        if model is None:
            return redirect(return_url)

        if self.details_modal and request.args.get('modal'):
            template = self.details_modal_template
        else:
            template = self.details_template

        return self.render(template, model=model)
'''
AT = "            return redirect(return_url)\n\n"
LIVE = '''        # Send the form to the template, same as the "edit" view
        form = self.edit_form(obj=model)
        self.on_form_prefill(form, id)

        widget_args = {}
        for field, _ in self.get_details_columns():
            widget_args[field] = self.form_widget_args.get(field, {})

        form_opts = FormOpts(widget_args=widget_args,
                             form_rules=self._form_edit_rules)

'''


def _commented(block: str) -> str:
    return "".join(line[:8] + "# " + line[8:] if line.strip() else line
                   for line in block.splitlines(keepends=True))


def test_a_block_one_side_added_live_and_the_other_commented_out_conflicts() -> None:
    """flask-admin ``0ecc2d5c40eb``: theirs added the form work to ``details_view``, ours the
    same block commented out; the merge ran the work ours had turned off."""
    ours = VIEW.replace(AT, AT + _commented(LIVE))
    theirs = VIEW.replace(AT, AT + LIVE)
    assert isinstance(line_merge(VIEW, ours, theirs), Conflicted)

    result = merge3(VIEW, ours, theirs, "flask_admin/model/base.py")

    assert isinstance(result, Conflicted)


def test_a_commented_block_counts_only_near_its_live_copy_in_one_block() -> None:
    live = "    value = compute(first, second)\n"
    commented = "    # value = compute(first, second)\n"
    assert twins("def f():\n" + live + "    x = 1\n" * 5 + commented) == 1
    assert twins("def f():\n" + live + "    x = 1\n" * (NEAR + 1) + commented) == 0
    # another function in between: not one block
    assert twins("def f():\n" + live + "def g():\n" + commented) == 0


MANAGER = '''class BanditManager:
    def run_tests(self):
        new_files_list = list(self.files_list)
        for fname in self.files_list:
            try:
                if fname == '-':
                    sys.stdin = _Seeker(os.fdopen(sys.stdin.fileno(), 'rb', 0))
                    self._parse_file('<stdin>', sys.stdin, new_files_list)
                else:
                    with open(fname, 'rb') as fdata:
                        self._parse_file(fname, fdata, new_files_list)
            except IOError as e:
                new_files_list.remove(fname)
'''
CALL = "                    self._parse_file('<stdin>', sys.stdin, new_files_list)\n"
REBIND = ('                    new_files_list = ["<stdin>" if x=="-" else x'
          " for x in new_files_list]\n")


def test_a_value_one_side_changes_right_above_a_statement_the_other_rewrote_conflicts() -> None:
    """bandit ``9f99d63b4d6e``: theirs renamed ``'-'`` in the list the call is given, ours
    made the call's first argument ``fname`` (``'-'``): merged, the two disagree."""
    ours = MANAGER.replace(CALL, CALL.replace("'<stdin>'", "fname"))
    theirs = MANAGER.replace(CALL, REBIND + CALL)
    assert isinstance(line_merge(MANAGER, ours, theirs), Conflicted)

    result = merge3(MANAGER, ours, theirs, "bandit/core/manager.py")

    assert isinstance(result, Conflicted)


RULES = '''class AnsibleLintRule:
    def matchtasks(self, file):
        for raw_task in file.tasks():
            task = normalize_task(raw_task)
            if skipped or 'action' not in task:
                continue

            result = self.matchtask(task, file=file)

            if not result:
                continue
'''
MATCH = "            result = self.matchtask(task, file=file)\n"


def test_two_designs_of_one_feature_stacked_at_one_place_conflict() -> None:
    """ansible-lint ``c5927c78c9d6``: theirs hands the raw task to ``matchtask`` through the
    task, ours calls ``matchrawtask`` instead; merged, ``matchtask`` never sees it."""
    ours = RULES.replace(MATCH, (
        "            if self.needs_raw_task:\n"
        "                result = self.matchrawtask(raw_task, task, file=file)\n"
        "            else:\n    " + MATCH))
    theirs = RULES.replace(MATCH, (
        "            if self.needs_raw_task:\n"
        '                task["__raw_task__"] = raw_task\n\n' + MATCH))

    result = merge3(RULES, ours, theirs, "src/ansiblelint/rules/__init__.py")

    assert isinstance(result, Conflicted)


def test_a_statement_added_above_another_sides_edit_that_it_does_not_feed_merges() -> None:
    ours = MANAGER.replace(CALL, CALL.replace("'<stdin>'", "fname"))
    theirs = MANAGER.replace(CALL, '                    log.debug("reading stdin")\n' + CALL)

    result = merge3(MANAGER, ours, theirs, "bandit/core/manager.py")

    assert isinstance(result, Clean)
    assert 'log.debug("reading stdin")\n' + CALL.replace("'<stdin>'", "fname") in result.text


ADMIN = '''class PeriodicTaskAdmin(admin.ModelAdmin):
    list_display = ('__str__', 'enabled', 'interval', 'start_time',
                    'last_run_at', 'one_off')
    list_filter = ['enabled', 'one_off', 'task', 'start_time', 'last_run_at']
'''
DISPLAY = "    list_display = ('__str__', 'enabled', "


def test_one_entry_added_to_a_list_of_names_spelled_two_ways_conflicts() -> None:
    """django-celery-beat ``70b424beb7b0``: ``'schedule'`` from ours, ``'scheduler'`` from
    theirs, two columns of one schedule."""
    ours = ADMIN.replace(DISPLAY, "    list_display = ('name', 'schedule', 'enabled', ")
    theirs = ADMIN.replace(DISPLAY, "    list_display = ('name', 'enabled', 'scheduler', ")

    result = merge3(ADMIN, ours, theirs, "django_celery_beat/admin.py")

    assert isinstance(result, Conflicted)


def test_two_different_entries_added_to_a_list_of_names_merge() -> None:
    ours = ADMIN.replace(DISPLAY, "    list_display = ('name', 'schedule', 'enabled', ")
    theirs = ADMIN.replace(DISPLAY, "    list_display = ('name', 'enabled', 'description', ")

    result = merge3(ADMIN, ours, theirs, "django_celery_beat/admin.py")

    assert isinstance(result, Clean)
    assert "('name', 'schedule', 'enabled', 'description', " in result.text


HEADER = "# copyright 2003-2015 LOGILAB S.A. (Paris, FRANCE)\n#\n"
TESTS = '''class SuperTests(TestCase):
    def test_super_init(self):
        node = extract_node("super(A, self)")
        self.assertIsInstance(node, Super)

    def test_super_getattr(self):
        self.assertEqual(node.name, "A")
'''


def test_the_line_endings_one_side_converted_the_file_to_hold_on_the_others_lines() -> None:
    """astroid ``94159d53d260``: ours converted its objects test module to ``\\n``, theirs added
    a test in base's ``\\r\\n``; its lines kept ``\\r\\n`` among ours' ``\\n``. Base's
    licence header ends its lines in ``\\n`` (libcst takes the first line's ending as the
    file's, and keeps every other line's own)."""
    crlf = HEADER + TESTS.replace("\n", "\r\n")
    ours = HEADER + TESTS.replace('"A")', '"B")')
    added = ('    def test_super_pytype(self):\n'
             '        self.assertEqual(node.pytype(), "builtins.super")\n\n')
    theirs = crlf.replace("    def test_super_getattr", added.replace("\n", "\r\n")
                          + "    def test_super_getattr")

    result = merge3(crlf, ours, theirs, "astroid/tests/objects_test.py")

    assert isinstance(result, Clean)
    assert "\r" not in result.text
    assert added in result.text and '"B")' in result.text


def test_line_endings_follow_the_side_that_converted_them_either_way() -> None:
    lf, crlf = "a = 1\nb = 2\n", "a = 1\r\nb = 2\r\n"
    # theirs converted to \r\n; a line ours added came in \n
    assert follow_newlines(lf, lf + "c = 3\n", crlf, crlf + "c = 3\n") == crlf + "c = 3\r\n"
    # neither converted (base already mixed, both sides mixed): left as the merge wrote it
    mixed = "a = 1\nb = 2\r\n"
    assert follow_newlines(mixed, mixed + "c\n", mixed + "d\r\n", mixed + "c\nd\r\n") == (
        mixed + "c\nd\r\n")
    # the two sides converted two ways: left as it is
    assert follow_newlines(mixed, lf, crlf, "a = 1\nb = 2\r\n") == "a = 1\nb = 2\r\n"


def test_two_neighbours_each_side_rewrote_one_of_merge() -> None:
    """astroid ``b63c90162e44``: theirs rewrote ``ast = build_module(code)``, ours renamed the
    next line's ``infered``: each side's own statement, merged as before."""
    base = ("def test_callfunc(self):\n    ast = build_module(code, __name__)\n"
            "    infered = list(ast.igetattr('un'))\n    self.assertEqual(len(infered), 1)\n")
    ours = base.replace("infered", "inferred")
    theirs = base.replace("build_module(code", "parse(code")

    result = merge3(base, ours, theirs, "tests/test_inference.py")

    assert isinstance(result, Clean)
    assert result.text == ours.replace("build_module(code", "parse(code")


PYTEST_BLOCK = '''import sys


if "pytest" in sys.modules:
    import tempfile

    def test_tagged_str_error() -> None:
        def _tagged_str_error(*args, **kwargs):
            raise AnsibleError('can only concatenate list (not "str") to list')

        collection = RulesCollection()
        WITH
            f.write(content)
        assert collection
'''.replace("        WITH\n", ('        with tempfile.NamedTemporaryFile(mode="w", suffix=".yml", '
                               'delete=False, encoding="utf-8") as f:\n'))


def test_an_unnamed_block_one_side_reformatted_keeps_that_where_lines_merge() -> None:
    """ansible-lint ``4691ffe7288f``: theirs ran black over the module's ``if "pytest" in
    sys.modules:`` block, ours rewrote a ``raise`` in it; the block went to ours whole, so
    theirs' rewrapped ``with`` header, four lines below, was lost where git merges it."""
    ours = PYTEST_BLOCK.replace(
        "            raise AnsibleError('can only concatenate list (not \"str\") to list')\n",
        "            msg = 'can only concatenate list (not \"str\") to list'\n"
        "            raise AnsibleError(msg)\n")
    theirs = PYTEST_BLOCK.replace(
        "            raise AnsibleError('can only concatenate list (not \"str\") to list')\n",
        "            raise AnsibleError(\n"
        "                'can only concatenate list (not \"str\") to list'\n"
        "            )\n").replace(
        '        with tempfile.NamedTemporaryFile(mode="w", suffix=".yml", delete=False, '
        'encoding="utf-8") as f:\n',
        "        with tempfile.NamedTemporaryFile(\n"
        '            mode="w", suffix=".yml", delete=False, encoding="utf-8"\n'
        "        ) as f:\n")

    result = merge3(PYTEST_BLOCK, ours, theirs, "src/ansiblelint/rules/jinja.py")

    assert isinstance(result, Clean)
    assert "            raise AnsibleError(msg)\n" in result.text
    assert "        with tempfile.NamedTemporaryFile(\n" in result.text


def test_a_blank_line_the_other_side_put_above_a_changed_line_is_kept() -> None:
    """ansible-lint ``763a68e91653``: theirs put a blank line between a test's docstring and
    the function it defines, ours renamed that function's parameters on the next line: git's
    conflict region went to ours whole and the blank line was lost."""
    head = "    def test_tagged_str_error() -> None:\n"
    base = PYTEST_BLOCK.replace(head, head + '        """Tests handling of tagged strings."""\n')
    ours = base.replace("def _tagged_str_error(*args, **kwargs):",
                        "def _tagged_str_error(*_args, **_kwargs):")
    theirs = base.replace('"""Tests handling of tagged strings."""\n',
                          '"""Tests handling of tagged strings."""\n\n')

    result = merge3(base, ours, theirs, "src/ansiblelint/rules/jinja.py")

    assert isinstance(result, Clean)
    assert result.text == ours.replace('"""Tests handling of tagged strings."""\n',
                                       '"""Tests handling of tagged strings."""\n\n')


INIT = '''"""Python Abstract Syntax Tree New Generation"""
from astroid.nodes import *
from astroid.util import YES

# transform utilities (filters and decorator)
from astroid.manager import AstroidManager
MANAGER = AstroidManager()
'''


def _init_merge(theirs_import: str) -> MergeResult:
    """ours renames ``YES`` to ``Uninferable`` in the package's import; theirs imports
    ``theirs_import`` instead of ``YES`` and sets a flag on the manager further down."""
    ours = INIT.replace("import YES\n", "import Uninferable\n")
    theirs = INIT.replace("import YES\n", f"import {theirs_import}\n").replace(
        "MANAGER = AstroidManager()\n", "MANAGER = AstroidManager()\nMANAGER.always_load = True\n")
    return merge3(INIT, ours, theirs, "astroid/__init__.py")


def test_a_name_one_side_renamed_and_the_other_kept_beside_the_new_one_conflicts() -> None:
    """astroid ``d052e7e223d3``: ours renamed ``YES`` to ``Uninferable`` in the package's
    import, theirs imported ``Uninferable`` beside ``YES``, kept for the package's users."""
    assert isinstance(_init_merge("Uninferable, YES"), Conflicted)


def test_a_name_dropped_where_the_other_side_added_another_merges() -> None:
    result = _init_merge("YES, lazy_import")

    assert isinstance(result, Clean)
    assert "from astroid.util import Uninferable, lazy_import\n" in result.text


def test_a_value_set_above_a_definition_the_other_side_annotated_merges() -> None:
    """responses ``e3ac0f2631e1``: theirs turned numbers in ``params`` into strings above the
    nested ``def match``, ours annotated its signature; the body runs later, on the new value."""
    base = ("def query_param_matcher(params):\n\n    def match(request):\n"
            "        return params == request.params\n\n    return match\n")
    ours = base.replace("def match(request):", "def match(request: PreparedRequest) -> bool:")
    loop = ("    for k, v in params.items():\n        if isinstance(v, (int, float)):\n"
            "            params[k] = str(v)\n\n")
    theirs = base.replace("    def match(request):", loop + "    def match(request):")

    result = merge3(base, ours, theirs, "responses/matchers.py")

    assert isinstance(result, Clean)
    assert loop + "    def match(request: PreparedRequest) -> bool:" in result.text


SHAPES = '''from manim.mobject.types.vectorized_mobject import VGroup, VMobject


class ThreeDVMobject(VMobject):
    pass
'''


def test_a_name_the_keeping_side_uses_goes_with_the_uses_the_other_side_replaced() -> None:
    """manim ``d6ea8412d696``: ours moved ``ThreeDVMobject`` off ``VMobject`` and dropped it
    from the import where theirs only added ``VectorizedPoint``: nothing reads it any more."""
    ours = SHAPES.replace("import VGroup, VMobject\n", "import VectorizedPoint, VGroup\n").replace(
        "(VMobject)", "(OpenGLVMobject)")
    theirs = SHAPES.replace("import VGroup, VMobject\n",
                            "import VectorizedPoint, VGroup, VMobject\n").replace(
        "    pass\n", "    shade_in_3d = True\n")

    result = merge3(SHAPES, ours, theirs, "manim/mobject/three_d/three_dimensions.py")

    assert isinstance(result, Clean)
    assert "import VectorizedPoint, VGroup\n" in result.text




def test_the_rebound_check_counts_lines_as_the_parser_does() -> None:
    """``str.splitlines`` also splits at a form feed, where the parser does not: with the
    function's lines counted that way, its last line (ours' edit) fell outside the text
    compared, and the function read as one ours left alone."""
    base = ("def first():\n    return 'a\x0cb'\n\n\n"
            "def run(self):\n    files = list(self.files)\n"
            "    self._parse_file('<stdin>', files)\n")
    ours = base.replace("('<stdin>', files)", "(fname, files)")
    theirs = base.replace("    self._parse_file(",
                          '    files = ["<stdin>" if x == "-" else x for x in files]\n'
                          "    self._parse_file(")
    merged = theirs.replace("('<stdin>', files)", "(fname, files)")
    texts = [base, ours, theirs, merged]

    assert rebound_before_edit([ast.parse(text) for text in texts], texts) is not None
