"""What the thirty-sixth unseen set (django-filter, eve, keyring, html5lib, colander, apispec;
7 Dec 2026) showed that the driver now handles, from an excerpt shaped like the real input: one
statement both sides wrapped in the same ``with``, one side also editing it, was wrapped twice
(eve ``e8b39170e20e``, ``eve/tests/io/media.py``)."""

from __future__ import annotations

from fleet.merge._line import line_merge
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted

BASE = '''class TestMedia(TestBase):
    def test_gridfs_media_storage_put(self):
        r, s = self.assertMediaField(_id, encoded, clean)

        # and of course, the ordinary field has been updated too
        self.assertEqual(r[test_field], test_value)

        # previous media doesn't exist anymore (it's been deleted)
        self.assertFalse(self.app.media.exists(media_id))
'''
WITH = "        with self.app.test_request_context():\n"
INNER = (
    "        # previous media doesn't exist anymore (it's been deleted)\n"
    "        self.assertFalse(self.app.media.exists(media_id))\n"
)


def _wrapped(inner: str, header: str = WITH) -> str:
    return BASE.replace(INNER, header + "".join("    " + line for line in inner.splitlines(True)))


def test_one_statement_both_sides_wrapped_alike_one_also_edited_is_wrapped_once() -> None:
    ours = _wrapped(INNER)  # ours: the wrapper alone
    theirs = _wrapped(INNER.replace("exists(media_id)", "exists(media_id, self.resource)"))
    assert isinstance(line_merge(BASE, ours, theirs), Conflicted)

    result = merge3(BASE, ours, theirs, "eve/tests/io/media.py")

    assert isinstance(result, Clean)
    assert result.text == theirs  # one wrapper, theirs' argument inside it
    assert result.text.count("test_request_context") == 1
    # the other way round, the same
    mirrored = merge3(BASE, theirs, ours, "eve/tests/io/media.py")
    assert isinstance(mirrored, Clean) and mirrored.text == theirs


def test_one_side_wrapping_and_the_other_editing_still_merge_inside_the_wrapper() -> None:
    ours = _wrapped(INNER)
    theirs = BASE.replace("exists(media_id)", "exists(media_id, self.resource)")

    result = merge3(BASE, ours, theirs, "eve/tests/io/media.py")

    assert isinstance(result, Clean)
    assert result.text == _wrapped(INNER.replace("(media_id)", "(media_id, self.resource)"))


def test_one_statement_wrapped_in_two_different_withs_is_not_nested_by_guess() -> None:
    ours = _wrapped(INNER)
    theirs = _wrapped(INNER.replace("exists(media_id)", "exists(media_id, self.resource)"),
                      header="        with self.app.app_context():\n")

    result = merge3(BASE, ours, theirs, "eve/tests/io/media.py")

    assert isinstance(result, Conflicted)
