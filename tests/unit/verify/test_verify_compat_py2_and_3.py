"""Found running datetime-utcnow on freezegun 0.3.15 and ruff-up on TinyDB 3.15.2: a file written
for Python 2 and 3 at once (freezegun's ``freezegun/api.py`` uses ``collections.abc`` and
``str.decode`` behind version checks) made vermin raise ``InvalidVersionException`` (a
BaseException) and the whole gate run crash. The floor is a Python 3 one: the 2-only constructs
are set aside, and a 3.11 construct added to such a file is still caught."""

from __future__ import annotations

from pathlib import Path

from fleet.verify.compat import needs

API = (Path(__file__).resolve().parents[2] / "fixtures" / "projects" / "freezegun-0.3.15"
       / "freezegun" / "api.py")


def test_a_file_for_python_2_and_3_is_measured_on_python_3() -> None:
    source = API.read_text()
    minimum, _ = needs(source)
    assert minimum is not None and (3, 0) <= minimum < (3, 11)
    raised, found = needs(source.replace("import datetime\n",
                                         "import datetime\nfrom datetime import UTC\n", 1))
    assert raised == (3, 11)
    assert any(v == (3, 11) and "datetime.UTC" in why for v, why in found), found
    # vermin says "named expressions require": each construct is named whatever its grammar
    walrus = source.replace(
        "        if isinstance(delta, numbers.Real):\n",
        "        if (seconds := delta) and isinstance(seconds, numbers.Real):\n")
    assert walrus != source
    assert needs(walrus)[0] == (3, 8)
