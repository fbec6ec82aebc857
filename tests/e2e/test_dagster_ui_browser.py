"""The Dagster UI in Debian's headless Chromium: after a real sweep, the campaign's asset
lineage and a unit partition's gate check results are on screen, and a rejected unit's check is
failed with ERROR severity and says which gate rejected it; on the check's Partitions tab the
units the gate rejected are red and the ones it accepted green (the colours of the status dots in
the DOM). Screenshots go to docs/img/ (the README shows them) and build/ui/.

Dagster 1.13's own Partitions tab of ``candidate_patches`` shows every judged unit green
("Materialized", "Failed (0)"), the rejected one included: it counts a partition as failed only
when it was planned and not materialized in a run that failed, and a batch run with a rejected
unit succeeds (its verified units go on to ``verified_patches``). The per-gate check's Partitions
tab is where a rejection is red at a glance."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance

from fleet.store import open_store
from fleet.unit import latest_results
from fleet_pipelines.commands._sweep import sweep
from fleet_pipelines.resources import FleetSettings
from tests.e2e._cdp import Browser, chromium_path

pytestmark = [pytest.mark.browser, pytest.mark.sandbox, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "img"
BUILD = ROOT / "build" / "ui"
# The status dot of each partition in a Partitions list: the background colours in the row of
# the element whose own text is the partition key (the rows are divs without stable class names).
PARTITION_DOTS = """(() => {
  const out = {};
  for (const e of document.querySelectorAll('*')) {
    const key = (e.innerText || '').trim();
    if (e.children.length !== 0 || !/^[0-9a-f]{16}$/.test(key)) continue;
    let row = e.parentElement;
    for (let i = 0; i < 4 && row; i++, row = row.parentElement) {
      const colours = [...row.querySelectorAll('*')].filter(d => d !== e)
        .map(d => getComputedStyle(d).backgroundColor)
        .filter(c => c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent');
      if (colours.length) { out[key] = (out[key] || []).concat(colours); break; }
    }
  }
  return out;
})()"""


def _hue(colour: str) -> str:
    """``red``, ``green`` or ``other`` for a CSS ``rgb(r, g, b)`` colour."""
    r, g, b = (int(float(x)) for x in colour[colour.index("(") + 1:colour.index(")")]
               .split(",")[:3])
    if r > 150 and g < 110 and b < 110:
        return "red"
    if g > 150 and r < 120:
        return "green"
    return "other"
CAMPAIGN = "datetime-utcnow"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _graphql(url: str, query: str) -> dict[str, object]:
    request = urllib.request.Request(f"{url}/graphql", data=json.dumps({"query": query}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        data: dict[str, object] = json.loads(response.read())
    return data


@pytest.fixture
def swept(tmp_path: Path, acme_repo: Path, monkeypatch: pytest.MonkeyPatch
          ) -> tuple[FleetSettings, Path]:
    """A real sweep of one campaign over a copy of the example repo, on an instance at
    ``DAGSTER_HOME``."""
    if not Path("/usr/bin/bwrap").exists():
        pytest.skip("bubblewrap is not installed")
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(acme_repo), "FLEET_SANDBOX": "bwrap",
                                       "FLEET_CAMPAIGNS": CAMPAIGN})
    with DagsterInstance.get() as instance:
        sweep(settings, instance, say=lambda _: None)
    return settings, home


@pytest.fixture
def webserver(swept: tuple[FleetSettings, Path]) -> Iterator[str]:
    settings, dagster_home = swept
    port = _free_port()
    env = {**os.environ, **settings.env(), "DAGSTER_HOME": str(dagster_home)}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster-webserver"), "-m",
         "fleet_pipelines.definitions", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/server_info", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("dagster-webserver did not come up") from None
                time.sleep(0.5)
        # the first-run dialog would cover the page
        assert _graphql(url, "mutation { setNuxSeen }") == {"data": {"setNuxSeen": True}}
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the webserver and the code server it started
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def browser() -> Iterator[Browser]:
    binary = chromium_path()
    if binary is None:
        pytest.skip("chromium is not installed")
    b = Browser(binary)
    try:
        yield b
    finally:
        b.close()


def _click_text(browser: Browser, text: str) -> None:
    clicked = browser.evaluate(
        "(() => { const hits = [...document.querySelectorAll('button, a, [role=tab], span, div')]"
        f".filter(e => e.children.length === 0 && e.innerText && e.innerText.trim() === "
        f"{json.dumps(text)}); if (!hits.length) return false; "
        "hits[hits.length - 1].click(); return true; })()")
    assert clicked, f"nothing to click with text {text!r}"


def test_lineage_and_a_partitions_check_results_in_the_ui(
    webserver: str, browser: Browser, swept: tuple[FleetSettings, Path]
) -> None:
    settings, _ = swept
    with open_store(settings.store_url) as store:
        results = latest_results(store.ledger, CAMPAIGN)
    unit = next((r for r in results.values() if r.status == "rejected"),
                next(iter(results.values())))
    gate = unit.rejected_by or unit.verdicts[0].gate
    verdict = next(v for v in unit.verdicts if v.gate == gate)

    browser.goto(f"{webserver}/locations/fleet_pipelines.definitions/asset-groups/"
                 "campaign_datetime_utcnow/lineage")
    browser.wait_for_text("symbol_graph", "findings", "work_units", "candidate_patches",
                          "verified_patches", "integration", "pull_requests")
    time.sleep(1.0)  # let the graph layout settle before the picture
    lineage = browser.screenshot(IMAGES / "asset-lineage.png")

    browser.goto(f"{webserver}/assets/datetime_utcnow/candidate_patches?view=checks"
                 f"&checkDetail=candidate_patches_{gate}")
    browser.wait_for_text("Execution history", f"candidate_patches_{gate}")
    _click_text(browser, "Partitions")
    browser.wait_for_text(unit.unit)
    _click_text(browser, unit.unit)
    shown = "Failed" if not verdict.passed else "Passed"
    text = browser.wait_for_text("Latest execution", "Target materialization", shown,
                                 verdict.evidence[:40])
    assert unit.unit in text
    checks = browser.screenshot(IMAGES / "partition-checks.png")
    images = [lineage, checks]

    rejected = [r for r in results.values() if r.status == "rejected" and r.rejected_by]
    assert rejected, "the example's datetime-utcnow sweep rejects a unit"
    bad = rejected[0]
    gate = str(bad.rejected_by)
    # what the UI reads for that partition: its latest evaluation failed with ERROR severity,
    # the description says the gate rejected it, the evidence has no temporary path
    data = _graphql(webserver, '{ assetCheckExecutions(assetKey: {path: ["datetime_utcnow", '
                    f'"candidate_patches"]}}, checkName: "candidate_patches_{gate}", partition: '
                    f'"{bad.unit}", limit: 10) {{ status evaluation {{ severity description '
                    'metadataEntries { label ... on TextMetadataEntry { text } } } } }')
    executions = data["data"]["assetCheckExecutions"]  # type: ignore[index]
    latest = executions[0]
    assert latest["status"] == "FAILED" and latest["evaluation"]["severity"] == "ERROR"
    assert latest["evaluation"]["description"].startswith(f"gate {gate} rejected the unit")
    shown = json.dumps(latest["evaluation"]["metadataEntries"])
    assert "/tmp/" not in shown and f"{tempfile.gettempdir()}/" not in shown  # ($TMPDIR too)
    # ... and on screen: the rejected unit's check page, its failure and the gate's words
    browser.goto(f"{webserver}/assets/datetime_utcnow/candidate_patches?view=checks"
                 f"&checkDetail=candidate_patches_{gate}")
    browser.wait_for_text("Execution history", f"candidate_patches_{gate}")
    _click_text(browser, "Partitions")
    browser.wait_for_text(bad.unit)
    _click_text(browser, bad.unit)
    browser.wait_for_text("Failed", f"gate {gate} rejected the unit")
    images.append(browser.screenshot(IMAGES / "rejected-unit-check.png"))
    # ... and at a glance in the check's Partitions list: the units this gate rejected red, the
    # units it accepted green, and the legend counts them
    judged = {k: v for k, r in results.items() for v in r.verdicts if v.gate == gate}
    failed = sorted(k for k, v in judged.items() if not v.passed)
    assert bad.unit in failed
    browser.wait_for_text(f"Failed ({len(failed)})", f"Passed ({len(judged) - len(failed)})")
    dots: dict[str, list[str]] = {}
    deadline = time.monotonic() + 30
    while set(dots) < set(judged) and time.monotonic() < deadline:
        time.sleep(0.5)
        dots = browser.evaluate(PARTITION_DOTS) or {}
    hues = {key: {_hue(c) for c in colours} for key, colours in dots.items() if key in judged}
    assert set(hues) == set(judged), dots
    for key in judged:
        want, never = ("red", "green") if key in failed else ("green", "red")
        assert want in hues[key] and never not in hues[key], (key, dots[key])
    images.append(browser.screenshot(BUILD / "rejected-unit-check-partitions.png"))
    for image in images:
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and image.stat().st_size > 20_000
