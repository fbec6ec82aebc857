"""Benchmark: ``fleet plan`` on real code nobody here wrote (Django 5.1.4 sdist).

For every built-in campaign plus two Django-sized ones (calls of ``gettext_lazy`` and of
``force_str``, resolved through imports and aliases): findings, units, waves, expected
parallelism and seconds; fingerprints are compared across two independent runs and after
``ruff format`` of the whole tree (must be identical); seconds are medians over the three runs.
The real CLI (``fleet plan REPO --campaign <yaml> --json FILE``, a subprocess, index included) is
timed on the gettext_lazy campaign three times, and its JSON's fingerprints are checked against the
in-process plan. The peer in the same run is spelling: how
many call sites a plain text search for the callable's last name finds, against the resolved
ones.

    .venv/bin/python benchmarks/bench_plan.py [--json benchmarks/results/bench_plan.json]

Django's sdist is fetched once with ``pip download`` into benchmarks/.cache; the benchmark works
on a git copy in a temporary directory (the cache is never modified).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from _corpora import DJANGO, django_corpus  # noqa: E402

EXTRA = {
    "django-gettext-lazy": ("django.utils.translation.gettext_lazy", "gettext_lazy"),
    "django-force-str": ("django.utils.encoding.force_str", "force_str"),
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@fleet.invalid", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout


def campaign_yaml(name: str, target: str) -> str:
    return (
        f"name: {name}\ndescription: calls of {target}\nmatchers:\n"
        f"  - rule: call\n    call: {target}\nfix: {{prompt: review these calls}}\n"
        f"autonomy: {{max_parallel_agents: 8}}\nplan: {{granularity: symbol}}\n"
    )


def campaigns() -> dict[str, object]:
    from fleet.campaigns.spec import builtin_campaigns, load_campaign, parse_campaign

    out: dict[str, object] = {name: load_campaign(name) for name in builtin_campaigns()}
    for name, (target, _) in EXTRA.items():
        out[name] = parse_campaign(campaign_yaml(name, target), f"<bench {name}>")
    return out


def spelled(repo: Path, name: str) -> int:
    pattern = re.compile(rf"\b{re.escape(name)}\s*\(")
    return sum(
        len(pattern.findall(p.read_text(encoding="utf-8", errors="replace")))
        for p in repo.rglob("*.py")
    )


def run(repo: Path) -> tuple[dict[str, dict[str, object]], dict[str, set[str]], float]:
    from fleet.graph import index
    from fleet.plan import plan_campaign

    started = time.perf_counter()
    graph = index(repo)
    index_s = time.perf_counter() - started
    head = git(repo, "rev-parse", "HEAD").strip()
    rows: dict[str, dict[str, object]] = {}
    prints: dict[str, set[str]] = {}
    for name, campaign in campaigns().items():
        started = time.perf_counter()
        plan = plan_campaign(repo, campaign, graph=graph, base_commit=head)  # type: ignore[arg-type]
        rows[name] = {
            "findings": len(plan.findings),
            "units": len(plan.units),
            "waves": len(plan.waves),
            "max_wave": max((len(w) for w in plan.waves), default=0),
            "parallelism": plan.expected_parallelism,
            "seconds": round(time.perf_counter() - started, 2),
        }
        prints[name] = {f.fingerprint for f in plan.findings}
    return rows, prints, index_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    corpus = django_corpus()
    with tempfile.TemporaryDirectory(prefix="fleet-bench-plan-") as tmp:
        repo = Path(tmp) / "django"
        shutil.copytree(corpus, repo, ignore=shutil.ignore_patterns("__pycache__"))
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "django")
        files = len(list(repo.rglob("*.py")))
        first, prints1, index1 = run(repo)
        second, prints2, index2 = run(repo)
        ruff = Path(sys.executable).parent / "ruff"
        started = time.perf_counter()
        fmt = subprocess.run([str(ruff), "format", "--no-cache", "--quiet", "--exclude", "",
                              str(repo)], capture_output=True, text=True)
        format_s = time.perf_counter() - started
        changed = len(git(repo, "diff", "--name-only").split())
        git(repo, "commit", "-qam", "ruff format")
        third, prints3, index3 = run(repo)
        cli_name = "django-gettext-lazy"
        spec_file = Path(tmp) / f"{cli_name}.yaml"
        spec_file.write_text(campaign_yaml(cli_name, EXTRA[cli_name][0]))
        cli_json = Path(tmp) / "plan.json"
        fleet_exe = Path(sys.executable).parent / "fleet"
        cli_runs: list[float] = []
        for _ in range(3):
            cli_started = time.perf_counter()
            subprocess.run([str(fleet_exe), "plan", str(repo), "--campaign", str(spec_file),
                            "--json", str(cli_json), "--limit", "0"],
                           check=True, capture_output=True, text=True)
            cli_runs.append(time.perf_counter() - cli_started)
        cli_plan = json.loads(cli_json.read_text())
        cli_same = {f["fingerprint"] for f in cli_plan["findings"]} == prints1[cli_name]
        cli_s = statistics.median(cli_runs)
    result = {
        "corpus": f"Django {DJANGO} sdist", "python_files": files,
        "cpus": os.cpu_count(), "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "index_seconds": [round(index1, 2), round(index2, 2), round(index3, 2)],
        "index_seconds_median": round(statistics.median([index1, index2, index3]), 2),
        "ruff_format": {"files_changed": changed, "seconds": round(format_s, 2),
                        "exit": fmt.returncode},
        "fleet_plan_cli": {"campaign": cli_name, "seconds_median": round(cli_s, 2),
                           "seconds": [round(x, 2) for x in cli_runs],
                           "summary": cli_plan["summary"], "same_fingerprints": cli_same},
        "campaigns": {},
    }
    print(f"Django {DJANGO}: {files} .py files; index {index1:.2f}s / {index2:.2f}s / "
          f"{index3:.2f}s (run 1 / run 2 / after ruff format: {changed} files reformatted)")
    print(f"fleet plan --campaign {cli_name}.yaml --json (CLI subprocess, index included): "
          f"median {cli_s:.2f}s of {', '.join(f'{x:.2f}' for x in cli_runs)}; "
          f"same fingerprints: {cli_same}; load average {os.getloadavg()}\n")
    header = ("campaign", "findings", "units", "waves", "max wave", "parallel", "plan s",
              "same run 2", "same after fmt", "spelled")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, row in first.items():
        same2 = prints1[name] == prints2[name]
        same3 = prints1[name] == prints3[name]
        peer = spelled_count = None
        if name in EXTRA:
            spelled_count = spelled(corpus, EXTRA[name][1])
            peer = f"{spelled_count}"
        runs = [first[name]["seconds"], second[name]["seconds"], third[name]["seconds"]]
        row = {**row, "seconds": statistics.median(runs), "seconds_runs": runs}  # type: ignore[arg-type]
        cells = [name, row["findings"], row["units"], row["waves"], row["max_wave"],
                 row["parallelism"], row["seconds"], same2, same3, peer or "-"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
        result["campaigns"][name] = {  # type: ignore[index]
            **row, "stable_across_runs": same2, "stable_after_ruff_format": same3,
            "lost_after_format": len(prints1[name] - prints3[name]),
            "spelled_call_sites": spelled_count,
            "units_run2": second[name]["units"], "units_after_format": third[name]["units"],
        }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
