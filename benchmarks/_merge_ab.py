"""``merge_history.py ab``: the stages after git's line merge under two (or more) copies of the
code, interleaved on the same git-conflicted cases, with their results compared.

Each copy (a directory holding a ``fleet`` package, e.g. ``git worktree add`` of a commit, or a
``cp -r fleet`` of it) runs in a worker process of its own that keeps libcst and the merge's
modules imported and frozen (``gc.freeze``), as the warm merge server does. Per case, every
worker in turn (the order alternating from case to case, so that a change of the machine's load
falls on both alike) runs git's line merge, timed (``git merge-file``, the peer), then
``after_line_stage`` (what ``fleet merge-driver`` runs after git's merge), timed; it reports the
digest of the result's text, its kind (``Clean:structural``, ``Conflicted:line``, ...; a fault
is ``fault:<type>``, where the driver keeps git's merge). Cases git merges cleanly are skipped.
A case whose digest or kind differs between the copies is listed: a change meant only to be
faster must list none.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

_WORKER = r"""
import hashlib, json, sys, time
code = sys.argv[1]
sys.path.insert(0, code)
from pathlib import Path
import libcst
from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage
from fleet.merge._result import Clean
import fleet.merge._merge3 as stage
import fleet.merge._python  # what the first conflicted case would import: not timed
assert stage.__file__.startswith(code), stage.__file__
import gc
gc.collect()
gc.freeze()  # as the warm merge server does before it forks a child per merge
for request in sys.stdin:
    folder = Path(request.strip())
    texts = [(folder / f"{p}.py").read_bytes().decode("utf-8", "surrogateescape")
             for p in ("base", "ours", "theirs")]
    start = time.perf_counter()
    line = line_merge(*texts)
    git_ms = (time.perf_counter() - start) * 1000
    if isinstance(line, Clean):
        print(json.dumps({"skip": True}), flush=True)
        continue
    start = time.perf_counter()
    try:
        result = after_line_stage(*texts, "case.py", line)
        text = result.text if isinstance(result, Clean) else result.text_with_markers
        kind = f"{type(result).__name__}:{result.stage}"
    except Exception as exc:  # the driver keeps git's line merge
        text, kind = line.text_with_markers, f"fault:{type(exc).__name__}"
    ms = (time.perf_counter() - start) * 1000
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
    print(json.dumps({"kind": kind, "sha": digest, "ms": ms, "git_ms": git_ms}), flush=True)
"""


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ab(corpus: Path, codes: list[Path], json_out: Path | None) -> int:
    """Interleave ``codes`` on every case under ``corpus`` (``<repository>/<case>/``); print the
    p50/p90 per copy and git's, and every case whose result differs. Exit 1 if any differs."""
    folders = sorted(
        case
        for repo in corpus.iterdir()
        if repo.is_dir()
        for case in repo.iterdir()
        if (case / "base.py").exists()
    )
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(code.resolve())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for code in codes
    ]
    rows: dict[str, dict[str, dict[str, object]]] = {}
    try:
        for index, folder in enumerate(folders):
            order = list(range(len(workers)))[:: -1 if index % 2 else 1]
            row: dict[str, dict[str, object]] = {}
            for w in order:
                assert workers[w].stdin is not None and workers[w].stdout is not None
                workers[w].stdin.write(f"{folder.resolve()}\n")
                workers[w].stdin.flush()
                row[str(codes[w])] = json.loads(workers[w].stdout.readline())
            if not any(r.get("skip") for r in row.values()):
                rows[f"{folder.parent.name}/{folder.name}"] = row
    finally:
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait()
    names = [str(code) for code in codes]
    differ = sorted(
        case
        for case, row in rows.items()
        if len({(row[n]["sha"], row[n]["kind"]) for n in names}) > 1
    )
    summary: dict[str, object] = {"cases": len(rows), "differing": differ}
    for name in names:
        ms = [float(row[name]["ms"]) for row in rows.values()]  # type: ignore[arg-type]
        git = [float(row[name]["git_ms"]) for row in rows.values()]  # type: ignore[arg-type]
        if ms:
            summary[name] = {
                "p50": statistics.median(ms),
                "p90": _pct(ms, 0.9),
                "total s": sum(ms) / 1000,
                "git p50": statistics.median(git),
                "git p90": _pct(git, 0.9),
            }
            print(f"{name}: " + json.dumps(summary[name]))
    print(f"{len(rows)} git-conflicted cases, {len(differ)} with different results")
    for case in differ:
        print(f"  differs: {case}")
    if json_out is not None:
        json_out.write_text(json.dumps({"summary": summary, "cases": rows}, indent=1) + "\n")
    return 1 if differ else 0
