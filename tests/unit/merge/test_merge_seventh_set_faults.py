"""The wrong clean merges found in the seventh unseen set (numpy, scipy, astropy, ansible, kivy,
buildbot), now conflicts. Reduced to the lines that matter.

- ansible ``3c5fa22cacc3`` (``lib/ansible/modules/tacp/tacp_instance.py``; GPL-3.0, so the
  fixture below is written anew in the same shape, none of its lines copied): one side appended
  ``.to_dict()`` to the call that binds a name, the other to the name's one use below it; the
  merge kept both and called ``to_dict`` on the dict it returns. The humans kept one.
- kivy ``bb00aa60d135`` (``kivy/_version.py``, MIT): ``MICRO = 1`` on the maintenance branch
  (2.2.1), ``MINOR = 3`` on the main line (2.3.0); the merge gave 2.3.1, a version neither branch
  had. The humans kept 2.3.0.
"""

from __future__ import annotations

from fleet.merge import Clean, merge3
from fleet.merge._twice import applied_twice
from fleet.merge._version_parts import version_parts_combined
from tests.unit.merge._faults import conflicts_both_ways, trees

TRAILER_BASE = (
    "def state(client, uuid):\n"
    "    record = client.lookup(\n"
    "        uuid)\n"
    "    return record['status']\n"
)
TRAILER_OURS = TRAILER_BASE.replace("record['status']", "record.to_dict()['status']")
TRAILER_THEIRS = TRAILER_BASE.replace("        uuid)\n", "        uuid).to_dict()\n")


def test_one_trailer_both_sides_appended_at_two_places_conflicts() -> None:
    conflicts_both_ways(TRAILER_BASE, TRAILER_OURS, TRAILER_THEIRS, "tacp_instance.py")


def test_one_trailer_appended_once_or_at_one_place_still_merges() -> None:
    # Both sides made the same edit at the same place: one change, kept once.
    same = TRAILER_OURS.replace("def state", "def state_all")
    result = merge3(TRAILER_BASE, same, TRAILER_OURS, "tacp_instance.py")
    assert isinstance(result, Clean)
    assert result.text.count(".to_dict()") == 1
    # Different trailers at touching lines are two edits, merged as before.
    other = TRAILER_BASE.replace("        uuid)\n", "        uuid).as_record()\n")
    merged = merge3(TRAILER_BASE, TRAILER_OURS, other, "tacp_instance.py")
    assert isinstance(merged, Clean), merged
    assert "uuid).as_record()" in merged.text and "record.to_dict()['status']" in merged.text


VERSION_BASE = "\nMAJOR = 2\nMINOR = 2\nMICRO = 0\nRELEASE = True\n"
VERSION_OURS = VERSION_BASE.replace("MICRO = 0", "MICRO = 1")
VERSION_THEIRS = VERSION_BASE.replace("MINOR = 2", "MINOR = 3")


def test_two_parts_of_one_version_changed_by_two_sides_conflict() -> None:
    conflicts_both_ways(VERSION_BASE, VERSION_OURS, VERSION_THEIRS, "_version.py")


def test_version_parts_changed_on_one_side_pass_the_check() -> None:
    # One side changed the version: the result is that side's.
    assert (
        version_parts_combined(trees(VERSION_BASE, VERSION_OURS, VERSION_BASE, VERSION_OURS))
        is None
    )
    # Both sides changed it the same way.
    assert (
        version_parts_combined(trees(VERSION_BASE, VERSION_OURS, VERSION_OURS, VERSION_OURS))
        is None
    )
    # The result is one side's version whole (the other side's part dropped).
    assert (
        version_parts_combined(trees(VERSION_BASE, VERSION_OURS, VERSION_THEIRS, VERSION_THEIRS))
        is None
    )
    # One name alone is not a version spelled in parts (``PATCH_LEVEL``, ``MAX_MINOR``).
    base, ours, theirs = "A_MAJOR = 1\nX = 1\n", "A_MAJOR = 2\nX = 1\n", "A_MAJOR = 1\nX = 2\n"
    assert version_parts_combined(trees(base, ours, theirs, "A_MAJOR = 2\nX = 2\n")) is None
    combined = "MAJOR = 2\nMINOR = 3\nMICRO = 1\nRELEASE = True\n"
    found = version_parts_combined(trees(VERSION_BASE, VERSION_OURS, VERSION_THEIRS, combined))
    assert found is not None and "MINOR" in found


# scipy 6cc194deeea7 (scipy/special/_generate_pyx.py, BSD-3-Clause): a list of names kept in
# sorted order (but for one slip), "eval_jacobi" and "eval_sh_jacobi" added after "erfi" on
# one side, "erfinv" on the other. The merge put ours' first; the humans, the list's order.
UFUNCS_BASE = (
    "special_ufuncs = [\n"
    '    "erfcinv",\n    "erfcx",\n    "erfi",\n    "exp1",\n    "exp10",\n'
    '    "expi",\n    "expit",\n    "expm1",\n    "exprel",\n'
    '    "pdtrc",\n    "pbdv",\n    "pbvv",\n'
    "]\n"
)
UFUNCS_OURS = UFUNCS_BASE.replace(
    '"erfi",\n', '"erfi",\n    "eval_jacobi",\n    "eval_sh_jacobi",\n'
)
UFUNCS_THEIRS = UFUNCS_BASE.replace('"erfi",\n', '"erfi",\n    "erfinv",\n')


def test_insertions_at_one_point_of_a_sorted_list_go_in_its_order() -> None:
    expected = '"erfi",\n    "erfinv",\n    "eval_jacobi",\n    "eval_sh_jacobi",\n    "exp1",'
    for ours, theirs in ((UFUNCS_OURS, UFUNCS_THEIRS), (UFUNCS_THEIRS, UFUNCS_OURS)):
        result = merge3(UFUNCS_BASE, ours, theirs, "_generate_pyx.py")
        assert isinstance(result, Clean), result
        assert expected in result.text


def test_insertions_into_an_unsorted_list_keep_ours_first() -> None:
    base = 'X = [\n    "b",\n    "d",\n    "a",\n    "c",\n]\n'
    ours = base.replace('"d",\n', '"d",\n    "z",\n')
    theirs = base.replace('"d",\n', '"d",\n    "y",\n')
    result = merge3(base, ours, theirs, "x.py")
    assert isinstance(result, Clean), result
    assert '"z",\n    "y",' in result.text
    # An item that does not fit between its neighbours: the order is not the list's.
    sorted_base = 'X = [\n    "a",\n    "c",\n    "e",\n    "g",\n]\n'
    late = sorted_base.replace('"c",\n', '"c",\n    "x",\n')
    fits = sorted_base.replace('"c",\n', '"c",\n    "d",\n')
    result = merge3(sorted_base, late, fits, "x.py")
    assert isinstance(result, Clean), result
    assert '"x",\n    "d",' in result.text


def test_the_same_text_added_to_two_strings_is_no_trailer() -> None:
    # dask 501a293d6be6 (docs/source/conf.py, BSD-3-Clause): ".html" added to the targets of two
    # neighbouring redirects, one by each side.
    base = (
        "redirect_files = [\n"
        '    ("debugging.html", "how-to/debug"),\n'
        '    ("setup.html", "how-to/deploy-dask-clusters"),\n'
        "]\n"
    )
    ours = base.replace('"how-to/debug"', '"how-to/debug.html"')
    theirs = base.replace('"how-to/deploy-dask-clusters"', '"how-to/deploy-dask-clusters.html"')
    assert applied_twice(base, ours, theirs, ours.replace("clusters", "clusters.html")) is None
