"""Past ~2,000 modules the code module assets roll up to packages (DESIGN.md "Symbols as
assets"): over a generated repository of 2,210 modules, the ``code/<package>`` assets are the
packages, their lineage edges are the import edges between those packages, every key is a valid
Dagster key that stays the same across re-indexing, and the definitions load quickly."""

from __future__ import annotations

import time
from pathlib import Path

from dagster import AssetKey, Definitions

from assets._fleet import index
from assets._modules import MAX_MODULE_ASSETS, asset_key_parts, load_summary
from assets.graph import code_module_assets
from fleet_pipelines.definitions import build_definitions
from fleet_pipelines.resources import FleetSettings
from tests.conftest import git

TOPS, SUBS, MODS = 10, 10, 21  # 2,100 modules + 110 package __init__ modules (+ 4 odd ones)
# packages whose names are not identifiers: their keys must still be valid and distinct
ODD = ("data-loaders", "data_loaders")


def make_large_repo(root: Path) -> set[tuple[str, str]]:
    """Nested packages ``pkg_<t>.sub_<s>`` of tiny modules; every module of ``pkg_<t>.sub_<s>``
    imports its namesake in ``pkg_<t+1>.sub_<s>`` and a sibling in its own package. Returns the
    expected package-level import edges ``(importer, imported)``."""
    edges: set[tuple[str, str]] = set()
    for t in range(TOPS):
        (root / f"pkg_{t}").mkdir(parents=True)
        (root / f"pkg_{t}" / "__init__.py").write_text("")
        for s in range(SUBS):
            package = root / f"pkg_{t}" / f"sub_{s}"
            package.mkdir()
            (package / "__init__.py").write_text(f'"""pkg_{t}.sub_{s}."""\n')
            for m in range(MODS):
                lines = []
                if t + 1 < TOPS:
                    lines.append(f"from pkg_{t + 1}.sub_{s}.mod_{m} import f_{m} as up\n")
                    edges.add((f"pkg_{t}.sub_{s}", f"pkg_{t + 1}.sub_{s}"))
                if m:
                    lines.append(f"from pkg_{t}.sub_{s}.mod_{m - 1} import f_{m - 1}\n")
                lines.append(f"\n\ndef f_{m}():\n    return {m}\n")
                (package / f"mod_{m}.py").write_text("".join(lines))
    for name in ODD:
        (root / name).mkdir()
        (root / name / "__init__.py").write_text("")
        (root / name / "reader.py").write_text("from pkg_0.sub_0.mod_0 import f_0\n")
        edges.add((f"{name}.reader", "pkg_0.sub_0"))
    return edges


def test_large_repository_rolls_up_to_packages(tmp_path: Path) -> None:
    repo = tmp_path / "large"
    expected_edges = make_large_repo(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "large")
    home = tmp_path / "home"

    stats = index(repo, home)
    assert stats["files"] > MAX_MODULE_ASSETS  # 2,214 Python modules
    summary = load_summary(home / "graph")
    assert summary is not None and summary["rolled_up_depth"] == 2
    packages = set(summary["modules"])
    assert packages == ({f"pkg_{t}.sub_{s}" for t in range(TOPS) for s in range(SUBS)}
                        | {f"pkg_{t}" for t in range(TOPS)} | set(ODD)
                        | {f"{name}.reader" for name in ODD})
    assert stats["modules"] == len(packages) <= MAX_MODULE_ASSETS

    settings = FleetSettings.from_env({"FLEET_HOME": str(home), "FLEET_REPO": str(repo),
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    started = time.perf_counter()
    defs = build_definitions(settings)
    Definitions.validate_loadable(defs)
    graph = defs.get_repository_def().asset_graph
    load_s = time.perf_counter() - started
    assert load_s < 60, f"definitions took {load_s:.1f}s to load"

    code = {k for k in graph.get_all_asset_keys() if k.path[0] == "code"}
    key = {name: AssetKey(asset_key_parts(name)) for name in packages}
    assert code == set(key.values())  # one asset per package, keys distinct
    assert key["data-loaders"] != key["data_loaders"]
    # lineage edges = the import edges between the rolled-up packages, plus symbol_graph
    # (a package module `pkg_<t>` imports nothing itself; its sub-packages do)
    found = {(importer, imported) for importer in packages for imported in packages
             if key[imported] in graph.get(key[importer]).parent_keys}
    assert found == expected_edges
    for k in code:
        assert AssetKey("symbol_graph") in graph.get(k).parent_keys

    # stable: re-indexing the unchanged repository (incrementally) gives the same keys and deps
    def lineage() -> dict[AssetKey, set[AssetKey]]:
        return {spec.key: {d.asset_key for d in spec.deps}
                for a in code_module_assets(home) for spec in a.specs}

    before = lineage()
    index(repo, home)
    assert lineage() == before and set(before) == code
