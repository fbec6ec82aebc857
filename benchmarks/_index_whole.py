"""The ``--whole`` mode of ``bench_index.py`` (whose docstring says what it measures): the whole
``fleet index CORPUS -o SNAPSHOT`` process with 1 extraction worker and with the default (a
process, or a thread, per core), against the ``ast`` peer's process (``bench_index.py --worker
ast``), interleaved; its markdown table."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _index_tables import _median

BENCH = Path(__file__).resolve().with_name("bench_index.py")
PACKAGES = ("fleet", "fleet_pipelines", "assets", "sandbox")  # what the Makefile compiles


def compile_bytecode(tree: Path) -> None:
    """Byte-compile a checkout's packages (and these benchmarks, the peer's imports) in place,
    as ``pip install`` and the Makefile's ``bytecode`` step do: this machine sets
    ``PYTHONDONTWRITEBYTECODE``, so without it every process compiles each module of the
    project it imports again (~0.2 CPU-s of ``fleet index``'s start-up)."""
    compileall = [sys.executable, "-m", "compileall", "-q", "-j", "0"]
    subprocess.run([*compileall, "-x", "/fixtures/",
                    *[p for p in PACKAGES if (tree / p).is_dir()]],
                   cwd=tree, check=True, stdout=subprocess.DEVNULL)
    if (tree / "benchmarks").is_dir():  # its own modules only, not the corpora's cache
        subprocess.run([*compileall, "-l", "benchmarks"], cwd=tree, check=True,
                       stdout=subprocess.DEVNULL)


def _run_whole(cmd: list[str], env: dict[str, str]) -> tuple[dict[str, float], str, str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    w0 = time.perf_counter()
    # the pipes are small for these outputs: wait4 first, then read what is buffered
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - w0
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{cmd} failed:\n{err}")
    return ({"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall,
             "rss_mb": usage.ru_maxrss / 1024}, out, err)


def _phases(stderr: str) -> dict[str, float]:
    """CPU-s of each phase from ``fleet index``'s lines (``resolve  started  3.1 s  (CPU
    2.9 s)``): the CPU at a phase's start minus the CPU at the previous one's."""
    marks = []
    for line in stderr.splitlines():
        words = line.split()
        if "(CPU" in words:
            marks.append((words[0], float(words[words.index("(CPU") + 1])))
    out = {}
    for (name, cpu), (_, nxt) in itertools.pairwise(marks):
        out[f"{name}_cpu_s"] = round(nxt - cpu, 3)
    if marks:
        out["startup_cpu_s"] = marks[0][1]
    return out


def whole(
    corpora: Callable[[list[str]], dict[str, tuple[Path, list[str]]]],
    names: list[str],
    runs: int,
    baseline: Path | None = None,
    bytecode: bool = True,
) -> dict[str, object]:
    """``corpora``: bench_index.py's, the corpora by name. ``baseline``: another checkout of
    this project (its extension built in place), run the same way with it first on
    ``PYTHONPATH``, interleaved with ours: before/after in one run. ``bytecode``: both
    checkouts byte-compiled first (``compile_bytecode``), as an installed package runs."""
    fleet = str(Path(sys.executable).with_name("fleet"))
    if bytecode:
        for tree in (BENCH.parents[1], *([baseline] if baseline is not None else [])):
            compile_bytecode(tree)
    results: dict[str, object] = {"python": sys.version.split()[0], "cpus": os.cpu_count(),
                                  "load_avg_start": os.getloadavg()[0], "bytecode": bytecode}
    for name, (root, exclude) in corpora(names).items():
        rows: dict[str, list[dict[str, float]]] = {"ours_1": [], "ours": [], "ast": []}
        if baseline is not None:
            rows = {"base": [], "base_1": [], **rows}
        with tempfile.TemporaryDirectory(prefix="bench_whole_") as tmp:
            snap = Path(tmp) / "graph.pickle"
            ours = [fleet, "index", str(root), "-o", str(snap), "--progress-every", "1e9",
                    *[f"--exclude={p}" for p in exclude]]
            peer = [sys.executable, str(BENCH), "--worker", "ast", "--root", str(root),
                    "--out", str(Path(tmp) / "ast.json"), *[f"--exclude={p}" for p in exclude]]
            for _ in range(runs):
                for kind in rows:
                    snap.unlink(missing_ok=True)
                    env = dict(os.environ)
                    if kind.endswith("_1"):
                        env["FLEET_GRAPH_THREADS"] = "1"
                    if kind.startswith("base"):
                        env["PYTHONPATH"] = str(baseline)
                    got, out, err = _run_whole(ours if kind != "ast" else peer, env)
                    if kind == "ast":
                        got["extract_cpu_s"] = json.loads(out.strip().splitlines()[-1])[
                            "extract_cpu_s"]
                    else:
                        got.update(_phases(err))
                    rows[kind].append(got)
                    print(f"{name} {kind}: {got}", file=sys.stderr)
        med = {kind: {k: _median(v, k) for k in v[0]} for kind, v in rows.items()}  # type: ignore[arg-type]
        results[name] = {
            **med, "runs": runs,
            **{f"{kind}_runs": [r["cpu_s"] for r in got] for kind, got in rows.items()},
            **{f"{kind}_wall_runs": [r["wall_s"] for r in got] for kind, got in rows.items()},
            **{f"{kind}_rss_runs": [r["rss_mb"] for r in got] for kind, got in rows.items()},
            **_ratios(med, "ours"),
        }
        if baseline is not None:
            results[name].update({f"base_{k}": v for k, v in _ratios(med, "base").items()})
    results["load_avg_end"] = os.getloadavg()[0]
    return results


def save_whole(got: dict[str, object], saved: Path) -> None:
    """Merge ``got`` into ``saved``: one entry per corpus, the latest run's."""
    saved.parent.mkdir(exist_ok=True)
    merged = json.loads(saved.read_text()) if saved.is_file() else {}
    merged.update(got)
    saved.write_text(json.dumps(merged, indent=2) + "\n")


def _ratios(med: dict[str, dict[str, float]], kind: str) -> dict[str, float]:
    return {
        "cpu_ratio": med["ast"]["extract_cpu_s"] / med[kind]["cpu_s"],
        "rss_ratio": med[kind]["rss_mb"] / med["ast"]["rss_mb"],
        "wall_drop_threads": med[f"{kind}_1"]["wall_s"] / med[kind]["wall_s"],
    }


def whole_table(results: dict[str, object]) -> str:
    out = ["| corpus | process | CPU-s | wall-s | peak RSS MB | phases CPU-s |", "|---" * 6 + "|"]
    for name in ("django", "stdlib"):
        r = results.get(name)
        if not isinstance(r, dict):
            continue
        for kind, label in (("base", "baseline fleet index (workers: cores)"),
                            ("base_1", "baseline fleet index (1 worker)"),
                            ("ours", "fleet index (workers: cores)"),
                            ("ours_1", "fleet index (1 worker)"), ("ast", "ast peer")):
            if kind not in r:
                continue
            m = r[kind]
            phases = ", ".join(f"{k.removesuffix('_cpu_s')} {v:.2f}" for k, v in m.items()
                               if k.endswith("_cpu_s") and k != "cpu_s")
            out.append(f"| {name} | {label} | {m['cpu_s']:.2f} | {m['wall_s']:.2f} "
                       f"| {m['rss_mb']:.0f} | {phases} |")
        for prefix, who in (("base_", "baseline"), ("", "ours")):
            if f"{prefix}cpu_ratio" not in r:
                continue
            out.append(f"| {name} | {who}: peer extraction CPU / whole CPU; wall 1 worker / "
                       f"cores; RSS / peer's | {r[prefix + 'cpu_ratio']:.2f}x | "
                       f"{r[prefix + 'wall_drop_threads']:.2f}x | "
                       f"{r[prefix + 'rss_ratio']:.2f}x | |")
    return "\n".join(out)

