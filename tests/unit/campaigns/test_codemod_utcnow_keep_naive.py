"""``keep_naive: true`` for datetime-utcnow: the naive value ``utcnow()`` returned, without the
deprecated call. Outside checks (PyPI sdists, 6 Dec 2026): the aware rewrite was rightly rejected
by the tests of WebOb 1.8.7 (``set_cookie`` subtracts it from a naive expiry) and croniter 1.3.8
(pytz's ``localize`` takes naive values only); with ``keep_naive`` the values stay as they were."""

from __future__ import annotations

from pathlib import Path

import pytest
from libcst.codemod import CodemodTest

from fleet.campaigns.codemods import ReplaceUtcnowCommand, apply_codemod
from fleet.campaigns.spec import load_campaign
from fleet.errors import ConfigError

BUILTIN = Path(__file__).resolve().parents[3] / "fleet" / "campaigns" / "builtin"


class TestKeepNaive(CodemodTest):
    TRANSFORM = ReplaceUtcnowCommand

    def test_each_call_is_made_naive_again(self) -> None:
        before = """
            import datetime as dt
            from datetime import datetime, timedelta

            a = datetime.utcnow() + timedelta(1)
            b = dt.datetime.utcfromtimestamp(ts)
            c = (datetime.utcnow()
            )
        """
        after = """
            import datetime as dt
            from datetime import UTC, datetime, timedelta

            a = datetime.now(UTC).replace(tzinfo=None) + timedelta(1)
            b = dt.datetime.fromtimestamp(ts, UTC).replace(tzinfo=None)
            c = (datetime.now(UTC).replace(tzinfo=None)
            )
        """
        self.assertCodemod(before, after, keep_naive=True)

    def test_below_3_11_it_is_timezone_utc(self) -> None:
        before = """
            from datetime import datetime

            a = datetime.utcnow()
        """
        after = """
            from datetime import datetime, timezone

            a = datetime.now(timezone.utc).replace(tzinfo=None)
        """
        self.assertCodemod(before, after, keep_naive=True, min_python="3.6")


def test_the_naive_rewrite_gives_the_same_values() -> None:
    source = ("import datetime\nfrom datetime import datetime as DT\n"
              "def now():\n    return DT.utcnow()\n"
              "def at(t):\n    return datetime.datetime.utcfromtimestamp(t)\n")
    out = apply_codemod("datetime-utcnow", source, {"keep_naive": True}).code  # type: ignore[union-attr]
    old: dict[str, object] = {}
    new: dict[str, object] = {}
    exec(compile(source, "old", "exec"), old)
    exec(compile(out, "new", "exec"), new)
    for t in (0, 1_700_000_000.25, -86_400):
        assert new["at"](t) == old["at"](t) and new["at"](t).tzinfo is None  # type: ignore[operator]
    assert new["now"]().tzinfo is None  # type: ignore[operator]
    assert abs((new["now"]() - old["now"]()).total_seconds()) < 5  # type: ignore[operator]


def test_a_campaign_copy_sets_it_and_a_bad_value_is_refused(tmp_path: Path) -> None:
    text = (BUILTIN / "datetime-utcnow.yaml").read_text()
    assert "keep_naive" in text  # the description says how
    copy = tmp_path / "naive.yaml"
    copy.write_text(text.replace("name: datetime-utcnow", "name: utcnow-naive").replace(
        "  codemod: datetime-utcnow\n",
        "  codemod: datetime-utcnow\n  params: {keep_naive: true}\n"))
    campaign = load_campaign(copy)
    assert campaign.fix.params == {"keep_naive": True}
    with pytest.raises(ConfigError, match="keep_naive must be true or false, not 'maybe'"):
        apply_codemod("datetime-utcnow", "x = 1\n", {"keep_naive": "maybe"})
