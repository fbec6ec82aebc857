"""On a shared store the code module summary is published there, so a process whose own
``FLEET_HOME`` never saw the index (the webserver, the daemon's run workers, the coordinator on
another machine) loads the same code module assets; the embedded default keeps reading the file
under its ``FLEET_HOME``."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import AssetKey

from assets._fleet import graph_dir, index
from assets._modules import load_summary, publish_summary, published_summary
from fleet.store import open_store
from fleet.store.repo_scope import scoped_store
from fleet_pipelines.definitions import build_definitions, current_summary
from fleet_pipelines.resources import FleetSettings
from tests.conftest import commit_files, git
from tests.engine.conftest import pg_url


def _repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return commit_files(path, {"billing/__init__.py": "", "billing/pay.py": "import os\n",
                               "shop/cart.py": "from billing import pay\n"}, "initial")


@pytest.mark.postgres
def test_a_process_with_another_home_loads_the_published_code_modules(
        tmp_path: Path, pg_dsn: str) -> None:
    repo = _repo(tmp_path / "repo")
    url = pg_url(pg_dsn)
    indexer = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "indexer"),
                                      "FLEET_REPO": str(repo), "FLEET_STORE_URL": url,
                                      "FLEET_DEPLOYMENT": "shared"})
    index(repo, Path(indexer.home), "main")
    summary = load_summary(graph_dir(Path(indexer.home)))
    assert summary is not None and set(summary["modules"]) >= {"billing.pay", "shop.cart"}
    with open_store(url) as raw:
        store = scoped_store(raw, indexer.repository_key())
        assert published_summary(store) is None
        assert publish_summary(store, summary)
        assert not publish_summary(store, summary)  # unchanged: no second event
        assert published_summary(store) == summary
        other = scoped_store(raw, "another-repository")
        assert published_summary(other) is None  # the repository's own, not another's

    webserver = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "webserver"),
                                        "FLEET_REPO": str(repo), "FLEET_STORE_URL": url,
                                        "FLEET_DEPLOYMENT": "shared"})
    assert not graph_dir(Path(webserver.home)).exists()
    assert current_summary(webserver) == summary
    keys = set(build_definitions(webserver).resolve_asset_graph().get_all_asset_keys())
    assert {AssetKey(["code", "billing", "pay"]), AssetKey(["code", "shop", "cart"])} <= keys


def test_the_embedded_default_reads_its_own_home(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "home"),
                                       "FLEET_REPO": str(repo)})
    assert current_summary(settings) is None  # before the first index
    index(repo, Path(settings.home), "main")
    assert current_summary(settings) == load_summary(graph_dir(Path(settings.home)))
