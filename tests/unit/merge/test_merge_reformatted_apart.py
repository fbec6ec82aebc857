"""One side only reformatted statements of a function that the other side changed elsewhere in
the same chunk of statements. The chunk went to the changing side whole, and the other side's
edit was lost:

- django-taggit ``6b6120bcf913`` (38th unseen set): theirs requoted a ``setdefault`` in one loop,
  ours rewrote the next loop three lines below, lines git's own merge keeps apart; now each
  side's edit stays where it made it (``_reformatted.apart``);
- webob ``8f8fc888c23a`` (35th set): ours put a ``# type: ignore`` on an ``if``'s header, theirs
  took the brackets off a tuple assigned on the next line, inside that ``if``; the ``if`` is
  now merged inside (``_reformatted.within_blocks``).

Where the two sides' edits touch one statement, the changing side still takes the chunk whole
(the humans' choice on the thirty-fourth set)."""

from __future__ import annotations

from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean

SUBSCRIPT = ("            obj = items[\n"
             "                tuple(result[k] for k in lookup_keys)\n            ]\n")
SIMILAR = '''import os


class Manager:
    def similar_objects(self, qs):
        items = {}
        if len(qs) == 1:
            items = {1: 2}
        else:
            preload = {}
            for result in qs:
                preload.setdefault(result['content_type'], set())
                preload[result["content_type"]].add(result["object_id"])

            for ct, obj_ids in preload.items():
                ct = ContentType.objects.get_for_id(ct)
                for obj in ct.model_class()._default_manager.filter(pk__in=obj_ids):
                    items[(ct.pk, obj.pk)] = obj

        results = []
        for result in qs:
            obj = items[
                tuple(result[k] for k in lookup_keys)
            ]
            results.append(obj)
        return results
'''
# ours: skips an obsolete content type, and a missing item at the end
OURS = SIMILAR.replace(
    "                for obj in ct.model_class()._default_manager",
    "                model_class = ct.model_class()\n"
    "                if model_class is None:\n"
    "                    continue\n"
    "                for obj in model_class._default_manager").replace(
    SUBSCRIPT,
    "            res_items = tuple(result[k] for k in lookup_keys)\n"
    "            if res_items not in items:\n                continue\n"
    "            obj = items[res_items]\n").replace("import os\n", "import os\nimport re\n")
# theirs: black (double quotes, the subscript joined) and one change of its own above
THEIRS = SIMILAR.replace(
    "setdefault(result['content_type']", 'setdefault(result["content_type"]').replace(
    SUBSCRIPT,
    "            obj = items[tuple(result[k] for k in lookup_keys)]\n").replace(
    "items = {1: 2}", "items = {1: 3}").replace("import os\n", "import os\nimport sys\n")


def test_a_requoting_three_lines_above_the_other_sides_change_is_kept() -> None:
    result = merge3(SIMILAR, OURS, THEIRS, "taggit/managers.py")

    assert isinstance(result, Clean)
    assert result.text == OURS.replace(
        "setdefault(result['content_type']", 'setdefault(result["content_type"]').replace(
        "items = {1: 2}", "items = {1: 3}").replace("import re\n", "import re\nimport sys\n")


def test_the_same_the_other_way_round() -> None:
    result = merge3(SIMILAR, THEIRS, OURS, "taggit/managers.py")

    assert isinstance(result, Clean)
    assert 'setdefault(result["content_type"]' in result.text
    assert "if model_class is None:" in result.text and "items = {1: 3}" in result.text


FROM_FILE = '''def from_file(cls, fp):
    status = fp.readline().strip()
    if status.startswith(_http):
        (http_ver, status_num, status_text) = status.split(None, 2)
        status = f"{status_num} {status_text}"
    return status
'''


def test_a_headers_comment_and_a_reformatted_statement_below_it_are_both_kept() -> None:
    ours = FROM_FILE.replace("def from_file(cls, fp):", "def from_file(cls, fp: IO[str]) -> str:"
                             ).replace("startswith(_http):", "startswith(_http):  # type: ignore")
    theirs = FROM_FILE.replace("(http_ver, status_num, status_text) =",
                               "http_ver, status_num, status_text =")

    result = merge3(FROM_FILE, ours, theirs, "src/webob/response.py")

    assert isinstance(result, Clean)
    assert result.text == ours.replace("(http_ver, status_num, status_text) =",
                                       "http_ver, status_num, status_text =")


def test_edits_of_one_statement_still_go_to_the_changing_side_whole() -> None:
    ours = FROM_FILE.replace("status.split(None, 2)", "status.split(None, 3)")
    theirs = FROM_FILE.replace("(http_ver, status_num, status_text) =",
                               "http_ver, status_num, status_text =")

    result = merge3(FROM_FILE, ours, theirs, "src/webob/response.py")

    assert isinstance(result, Clean)
    assert result.text == ours


COLOR = '''import os


def color(value, alpha):
    if len(value) == 3:
        internal = from_int_rgb(
            value, alpha  # type: ignore
        )
    else:
        internal = from_int_rgba(value)  # type: ignore
    return internal
'''


def test_one_statement_both_sides_only_reformatted_keeps_the_changing_sides_layout() -> None:
    """manim ``fed7ba5e5dbb`` (34th set): both sides split one call's arguments over two lines,
    the ``# type: ignore`` after a different one; ours also changed the function elsewhere.
    The statement stays as ours, the changing side, wrote it."""
    call = "        internal = from_int_rgb(\n"
    split = call + "            value,{}\n            alpha,{}\n        )\n"
    joined = call + "            value, alpha  # type: ignore\n        )\n"
    ours = COLOR.replace(joined, split.format("  # type: ignore", "")).replace(
        "    return internal", "    return internal or None").replace("import os\n", "import re\n")
    theirs = COLOR.replace(joined, split.format("", "  # type: ignore")).replace(
        "import os\n", "import sys\n")

    result = merge3(COLOR, ours, theirs, "manim/utils/color/core.py")

    assert isinstance(result, Clean)
    assert split.format("  # type: ignore", "") in result.text
    assert "return internal or None" in result.text
