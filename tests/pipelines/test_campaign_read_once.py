"""A sweep reads each campaign file once in the CLI process (issue 13): ``preflight`` loads
the campaigns to check them and hands the loaded values on; the definitions are built from
those values, never from the files again."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.campaigns import spec as campaign_spec
from fleet_pipelines.commands._pipeline_settings import preflight, sweep_settings
from fleet_pipelines.definitions import build_campaigns


def test_preflight_hands_on_the_campaigns_it_loaded_and_the_build_reads_no_file(
    tmp_path: Path, git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (campaign_spec.BUILTIN_DIR / "yaml-safe-load.yaml").read_text()
    mine = tmp_path / "mine.yaml"
    mine.write_text(text.replace("name: yaml-safe-load", "name: mine"))
    reads: list[object] = []
    real = campaign_spec.load_campaign

    def counting(name_or_path: object) -> campaign_spec.Campaign:
        reads.append(name_or_path)
        return real(name_or_path)  # type: ignore[arg-type]

    monkeypatch.setattr(campaign_spec, "load_campaign", counting)
    monkeypatch.delenv("FLEET_TEST_PYTHON", raising=False)
    settings = sweep_settings(git_repo, tmp_path / "home", [str(mine), "datetime-utcnow"], 2,
                              "bwrap", "local", "codemod")
    loaded = preflight(settings)
    assert reads == [str(mine), "datetime-utcnow"]
    assert [c.name for c in loaded] == ["mine", "datetime-utcnow"]
    mine.write_text(text.replace("name: yaml-safe-load", "name: changed-since"))
    chains = build_campaigns(settings, loaded)
    assert reads == [str(mine), "datetime-utcnow"]  # not read again
    assert [c.spec for c in chains] == list(loaded)
    assert [c.campaign for c in chains] == ["mine", "datetime-utcnow"]
