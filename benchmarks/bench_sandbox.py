"""Benchmark: cold start to exit of every sandbox backend, against a bare subprocess peer.

Per backend (bare subprocess, local, bwrap, gvisor, microvm): p50/p90 wall time over ``--runs``
runs of ``true``, ``python -c pass`` and a tiny pytest (one file, two tests), each run a fresh
sandbox; then starts per second with 8 concurrent sandboxes running ``true``. The microVM under
TCG takes seconds per command: it gets ``--microvm-runs`` runs (default 5) — the table says so.

    .venv/bin/python benchmarks/bench_sandbox.py [--runs 30] [--microvm-runs 5]
        [--backends bare,local,bwrap,gvisor,microvm] [--replace]

Variants: ``microvm-blk`` (the block transport Firecracker uses, under QEMU) and
``bwrap-nocgroup`` (root without cgroups: the per-run uid under RLIMIT_NPROC).

Updates benchmarks/results/bench_sandbox.json (rows of backends not measured are kept, each with
the load average it was measured under) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))

from sandbox import Sandbox, make_sandbox  # noqa: E402
from sandbox.bwrap import BwrapConfig, BwrapSandbox  # noqa: E402
from sandbox.local import LocalSandbox  # noqa: E402
from sandbox.microvm import MicroVMConfig, MicroVMSandbox  # noqa: E402

PY = sys.executable
TINY_TEST = """
def add(a, b):
    return a + b


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-2, -3) == -5
"""
WORKLOADS: dict[str, list[str]] = {
    "true": ["/bin/true"],
    "python -c pass": [PY, "-c", "pass"],
    "tiny pytest": [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py"],
}
Runner = Callable[[Sequence[str], Path], bool]


def runner_for(name: str) -> Runner:
    if name == "bare":

        def bare(argv: Sequence[str], cwd: Path) -> bool:
            return subprocess.run(list(argv), cwd=cwd, capture_output=True).returncode == 0

        return bare
    box = LocalSandbox(warn=False) if name == "local" else _variant(name) or make_sandbox(name)

    def in_box(argv: Sequence[str], cwd: Path) -> bool:
        return box.run(argv, cwd, timeout=600).ok

    return in_box


def _variant(name: str) -> Sandbox | None:
    """Backend variants measured beside their default: the microVM's block transport (the
    Firecracker guest protocol, here under QEMU) and bwrap as root without cgroups (per-run uid
    under RLIMIT_NPROC)."""
    if name == "microvm-blk":
        return MicroVMSandbox(MicroVMConfig(vmm="qemu", transport="blk"))
    if name == "bwrap-nocgroup":
        return BwrapSandbox(BwrapConfig(use_cgroups=False))
    return None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(run: Runner, argv: Sequence[str], work: Path, runs: int) -> dict[str, float]:
    if not run(argv, work):  # warm-up (page cache, image build); must succeed
        raise RuntimeError(f"{argv} failed")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        ok = run(argv, work)
        times.append(time.perf_counter() - start)
        if not ok:
            raise RuntimeError(f"{argv} failed")
    return {
        "p50_ms": percentile(times, 0.5) * 1000,
        "p90_ms": percentile(times, 0.9) * 1000,
        "mean_ms": statistics.fmean(times) * 1000,
        "runs": runs,
    }


def concurrent_starts(run: Runner, work: Path, total: int, workers: int = 8) -> float:
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        oks = list(pool.map(lambda _: run(["/bin/true"], work), range(total)))
    elapsed = time.perf_counter() - start
    if not all(oks):
        raise RuntimeError("a concurrent start failed")
    return total / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--microvm-runs", type=int, default=5)
    parser.add_argument("--backends", default="bare,local,bwrap,gvisor,microvm")
    parser.add_argument("--replace", action="store_true", help="drop rows not measured now")
    args = parser.parse_args()
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        work = Path(tmp)
        (work / "test_tiny.py").write_text(TINY_TEST)
        for name in args.backends.split(","):
            slow = name.startswith("microvm")
            runs = args.microvm_runs if slow else args.runs
            try:
                run = runner_for(name)
                row: dict[str, object] = {}
                for label, argv in WORKLOADS.items():
                    row[label] = measure(run, argv, work, runs)
                    print(f"{name:8} {label:15} p50 {row[label]['p50_ms']:9.1f} ms", flush=True)  # type: ignore[index]
                total = 8 if slow else 48
                row["starts_per_s_8_concurrent"] = concurrent_starts(run, work, total)
                row["load_avg_1m"] = os.getloadavg()[0]
                results[name] = row
            except (OSError, RuntimeError) as exc:
                print(f"{name}: not measured: {exc}", file=sys.stderr)
    RESULTS.mkdir(exist_ok=True)
    meta: dict[str, object] = {"cpus": os.cpu_count(), "load_avg_1m": os.getloadavg()[0]}
    out = RESULTS / "bench_sandbox.json"
    # Rows of backends not measured this time are kept (each row carries its own load average).
    kept = json.loads(out.read_text()) if out.exists() and not args.replace else {}
    kept.pop("meta", None)
    out.write_text(json.dumps({"meta": meta, **kept, **results}, indent=2))
    print_table(results, meta)
    return 0


def print_table(results: dict[str, dict[str, object]], meta: dict[str, object]) -> None:
    head = "| backend | runs | " + " | ".join(f"{w} p50 / p90 (ms)" for w in WORKLOADS)
    print(f"\n{head} | starts/s, 8 concurrent |")
    print("|" + "---|" * (len(WORKLOADS) + 3))
    bare = results.get("bare", {})
    for name, row in results.items():
        cells = []
        for w in WORKLOADS:
            m = row[w]
            assert isinstance(m, dict)
            cells.append(f"{m['p50_ms']:.1f} / {m['p90_ms']:.1f}")
        runs = row["true"]["runs"]  # type: ignore[index]
        print(f"| {name} | {runs} | " + " | ".join(cells)
              + f" | {row['starts_per_s_8_concurrent']:.1f} |")  # fmt: skip
    if bare and "bwrap" in results:
        ratio = results["bwrap"]["true"]["p50_ms"] / bare["true"]["p50_ms"]  # type: ignore[index]
        print(f"\nbwrap `true` p50 = {ratio:.1f}x bare subprocess")
    print(f"({meta['cpus']} CPUs, 1-min load average at the end: {meta['load_avg_1m']:.1f})")


if __name__ == "__main__":
    raise SystemExit(main())
