"""Benchmark: code module assets on a large real repository (Django 5.1.4, ~2,900 source files).

Past ``MAX_MODULE_ASSETS`` (2,000) modules the ``code/<module>`` assets roll up to packages
(DESIGN.md "Symbols as assets"). Reported: source modules, the roll-up depth, code assets,
lineage edges between them (import edges between the rolled-up packages; a package-level import
cycle keeps one direction), the import edges they stand for, and the time to load the Dagster
definitions (``build_definitions`` + ``Definitions.validate_loadable``, what the webserver and
every sweep do) against the peer in the same run: the same definitions without code assets.

    .venv/bin/python benchmarks/bench_code_assets.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpora import DJANGO, django_corpus  # noqa: E402


def load_definitions(home: Path, repo: Path) -> tuple[float, Any]:
    from dagster import Definitions

    from fleet_pipelines.definitions import build_definitions
    from fleet_pipelines.resources import FleetSettings

    settings = FleetSettings.from_env({"FLEET_HOME": str(home), "FLEET_REPO": str(repo),
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    started = time.perf_counter()
    defs = build_definitions(settings)
    Definitions.validate_loadable(defs)
    graph = defs.get_repository_def().asset_graph
    return time.perf_counter() - started, graph


def measure(repo: Path, work: Path) -> dict[str, Any]:
    from assets._fleet import graph_dir
    from assets._modules import module_name, module_summary, save_summary
    from fleet.graph import index

    started = time.perf_counter()
    graph = index(repo)
    index_s = time.perf_counter() - started
    summary = module_summary(graph)
    home = work / "home"
    save_summary(summary, graph_dir(home))
    load_s, asset_graph = load_definitions(home, repo)
    code = [k for k in asset_graph.get_all_asset_keys() if k.path[0] == "code"]
    edges = sum(1 for k in code for p in asset_graph.get(k).parent_keys if p.path[0] == "code")
    depth = summary["rolled_up_depth"]
    package_imports = {
        (module_name(str(u).split("::")[0], depth), module_name(str(v).split("::")[0], depth))
        for u, v, data in graph.graph.edges(data=True)
        if any(str(k).startswith("import") for k in data.get("kinds") or ())
        and str(u).split("::")[0] in graph.files and str(v).split("::")[0] in graph.files
    }
    package_imports = {(a, b) for a, b in package_imports if a != b}
    empty = work / "empty-home"
    load_empty_s, _ = load_definitions(empty, repo)
    return {
        "source_modules": len(graph.files),
        "modules_unrolled": len({module_name(p) for p in graph.files}),
        "rolled_up_depth": depth,
        "code_assets": len(code),
        "lineage_edges": edges,
        "package_import_edges": len(package_imports),
        "cycle_edges_dropped": len(package_imports) - edges,
        "index_s": round(index_s, 2),
        "definitions_load_s": round(load_s, 2),
        "definitions_load_without_code_assets_s": round(load_empty_s, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    corpus = django_corpus()
    with tempfile.TemporaryDirectory(prefix="bench-code-assets-") as tmp:
        row = {"corpus": f"Django {DJANGO}", **measure(corpus, Path(tmp))}
    print(f"{row['corpus']}, {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}")
    print("| source modules | roll-up depth | code assets | lineage edges | package import "
          "edges | definitions load s | without code assets s |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {row['source_modules']} | {row['rolled_up_depth']} | {row['code_assets']} | "
          f"{row['lineage_edges']} | {row['package_import_edges']} | "
          f"{row['definitions_load_s']:.2f} | "
          f"{row['definitions_load_without_code_assets_s']:.2f} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(row, indent=1) + "\n")
    return 0 if row["code_assets"] <= 2000 and row["code_assets"] > 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
