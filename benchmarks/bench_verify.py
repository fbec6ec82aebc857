"""Planted-patch corpus: accept/reject matrix of the gates vs. a plain test-suite peer.

For every patch of every corpus (tests/fixtures/patches/{good,bad} against
examples/acme-monorepo, tests/fixtures/patches/<project>/{good,bad} against the real PyPI
project tests/fixtures/projects/<project>-<version>):
- gates: ``run_gates`` as ``fleet verify`` runs them (symbol graph of the base, bubblewrap
  sandbox, offline reviewer);
- peer: what a plain CI check does: apply the patch and run the whole suite (accept = green).
Prints the matrix, which gate fired per bad patch, and timings (markdown, for docs/verify.md).

    .venv/bin/python benchmarks/bench_verify.py [--sandbox bwrap] [--project NAME ...] [--no-peer]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fleet.graph import index  # noqa: E402
from fleet.verify import GateOptions, decide, rejected_by, run_gates  # noqa: E402
from fleet.verify._patch import Trees  # noqa: E402
from fleet.verify.execution import run_pytest  # noqa: E402
from sandbox import select_sandbox  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "patches"
EXAMPLE = ROOT / "examples" / "acme-monorepo"
PROJECTS = ROOT / "tests" / "fixtures" / "projects"
#: corpus name -> (source tree, patch directory)
CORPORA = {
    "acme": (EXAMPLE, CORPUS),
    "pyjwt": (PROJECTS / "pyjwt-2.0.0", CORPUS / "pyjwt"),
    "tinydb": (PROJECTS / "tinydb-3.15.2", CORPUS / "tinydb"),
    "freezegun": (PROJECTS / "freezegun-0.3.15", CORPUS / "freezegun"),
}


def make_repo(tmp: Path, source: Path = EXAMPLE) -> Path:
    repo = tmp / source.name
    shutil.copytree(source, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=b", "-c", "user.email=b@b.invalid", "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


def peer_verdict(repo: Path, patch: str, sandbox: object) -> str:
    """Plain CI: the patch applies and the whole suite passes."""
    with Trees(repo, patch) as trees:
        if not trees.applied:
            return "reject"
        result = run_pytest(sandbox, trees.patched, [])  # type: ignore[arg-type]
        bad = [o for o in result.outcomes.values() if o in ("failed", "error")]
        return "accept" if result.reported and not bad else "reject"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--project", action="append", choices=sorted(CORPORA),
                        help="only this corpus (repeatable; default: all)")
    parser.add_argument("--no-peer", action="store_true", help="skip the whole-suite peer")
    args = parser.parse_args()
    sandbox = select_sandbox(args.sandbox)
    rows = []
    for name in args.project or list(CORPORA):
        source, patches = CORPORA[name]
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp), source)
            graph = index(repo)
            for patch_file in sorted(patches.glob("*/*.patch")):
                rows.append(_row(name, repo, graph, patch_file, sandbox, not args.no_peer))
                print(json.dumps({k: v for k, v in rows[-1].items() if k != "why"}),
                      file=sys.stderr, flush=True)
    for name in dict.fromkeys(r["project"] for r in rows):
        report([r for r in rows if r["project"] == name], name)
    if len({r["project"] for r in rows}) > 1:
        report(rows, "all")
    return 0


def _row(name: str, repo: Path, graph: object, patch_file: Path, sandbox: object,
         peer_too: bool) -> dict:  # type: ignore[type-arg]
    meta = json.loads(patch_file.with_suffix(".json").read_text())
    patch = patch_file.read_text()
    start = time.perf_counter()
    verdicts = run_gates(repo, patch, meta["write_set"], sandbox=sandbox,  # type: ignore[arg-type]
                         graph=graph, options=GateOptions(bugfix=meta["bugfix"]))
    gate_s = time.perf_counter() - start
    start = time.perf_counter()
    peer = peer_verdict(repo, patch, sandbox) if peer_too else "-"
    peer_s = time.perf_counter() - start
    why = next((f"{v.gate}: {v.evidence.splitlines()[0][:200]}" for v in verdicts
                if not v.passed), "")
    return {
        "project": name, "patch": f"{patch_file.parent.name}/{patch_file.stem}",
        "expected": meta["expected"], "gate": meta["gate"],
        "outcome": decide(verdicts), "fired": rejected_by(verdicts),
        "peer": peer, "gate_s": gate_s, "peer_s": peer_s, "why": why,
    }


def report(rows: list[dict], name: str) -> None:  # type: ignore[type-arg]
    good = [r for r in rows if r["expected"] == "accept"]
    bad = [r for r in rows if r["expected"] == "reject"]
    good_ok = sum(r["outcome"] == "accept" for r in good)
    bad_ok = sum(r["outcome"] == "reject" for r in bad)
    bad_right = sum(r["outcome"] == "reject" and r["gate"] in r["fired"] for r in bad)
    peer_good = sum(r["peer"] == "accept" for r in good)
    peer_bad = sum(r["peer"] == "reject" for r in bad)
    false_accepts = [r for r in bad if r["outcome"] == "accept"]
    print(f"\n## corpus {name}: {len(good)} good, {len(bad)} bad patches; "
          f"false accepts: {len(false_accepts)}\n")
    print("| checker | good accepted | bad rejected | bad rejected by the expected gate | "
          "median s/patch |")
    print("|---|---|---|---|---|")
    print(f"| fleet gates (run_gates) | {good_ok}/{len(good)} ({100 * good_ok / len(good):.0f}%) "
          f"| {bad_ok}/{len(bad)} ({100 * bad_ok / len(bad):.0f}%) "
          f"| {bad_right}/{len(bad)} ({100 * bad_right / len(bad):.0f}%) "
          f"| {statistics.median(r['gate_s'] for r in rows):.2f} |")
    if all(r["peer"] != "-" for r in rows):
        print(f"| peer: apply + whole test suite | {peer_good}/{len(good)} "
              f"({100 * peer_good / len(good):.0f}%) | {peer_bad}/{len(bad)} "
              f"({100 * peer_bad / len(bad):.0f}%) | - "
              f"| {statistics.median(r['peer_s'] for r in rows):.2f} |")
    fired = Counter(g for r in bad for g in r["fired"][:1])
    expected = Counter(r["gate"] for r in bad)
    print("\n| gate | bad patches planted for it | first gate to reject |")
    print("|---|---|---|")
    for gate in sorted(set(fired) | set(expected)):
        print(f"| {gate} | {expected[gate]} | {fired[gate]} |")
    misses = [r for r in rows if (r["outcome"] != r["expected"])
              or (r["expected"] == "reject" and r["gate"] not in r["fired"])]
    print("\nmisses:" if misses else "\nmisses: none")
    for r in misses:
        print(f"- {r['project']}/{r['patch']}: expected {r['expected']} by {r['gate']}, got "
              f"{r['outcome']} by {r['fired']} ({r['why']})")


if __name__ == "__main__":
    raise SystemExit(main())
