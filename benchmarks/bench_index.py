"""Benchmark: the tree-sitter symbol index against an ``ast`` peer, in the same run.

Corpora: Django 5.1.4 (sdist fetched with ``pip download`` into benchmarks/.cache) and the
running interpreter's stdlib (without site-packages). Each measurement runs in a fresh
subprocess (so peak RSS is its own), tree-sitter and ast interleaved, median of 3.

    .venv/bin/python benchmarks/bench_index.py [--runs 3] [--corpus django|stdlib ...]

Both extractors run with the cyclic garbage collector paused, as ``index()`` runs (it allocates
millions of small acyclic objects; the collector rescanning them costs about a third of a run).

Measured per corpus:
- extraction (parse + symbols + references) for both: lines per CPU-second, symbols per
  second, peak RSS; symbol ids compared per file on the files both parse cleanly;
- tree-sitter only: resolve + graph build + SCC condensation + lock ranks (CPU-s), the whole
  ``index()`` (CPU-s), save/load of a snapshot, and a 1-file incremental re-index.
Writes benchmarks/results/bench_index.json and prints a markdown table.

``--whole`` measures instead, from outside as a user runs it, the whole ``fleet index CORPUS -o
SNAPSHOT`` process (cold: no snapshot; interpreter start, imports, extraction, resolution,
graph, ranks, snapshot) with 1 extraction thread and with the default (one per core), against
the ``ast`` peer's process, interleaved: CPU-s (user + sys), wall, peak RSS from ``wait4``,
and our phases from ``fleet index``'s progress lines; the checkouts byte-compiled first, as
installed (``--no-bytecode``: not). Writes bench_index_whole.json (``benchmarks/_index_whole.py``;
the default mode's summary and table: ``benchmarks/_index_tables.py``).
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))

from _corpora import django_corpus  # noqa: E402
from _index_digest import digests  # noqa: E402
from _index_tables import compare_ids, summarize, table  # noqa: E402
from _index_whole import save_whole, whole, whole_table  # noqa: E402


# -- corpora ---------------------------------------------------------------------------------
def corpora(names: list[str]) -> dict[str, tuple[Path, list[str]]]:
    out: dict[str, tuple[Path, list[str]]] = {}
    for name in names:
        if name == "django":
            out[name] = (django_corpus(), [])
        elif name == "stdlib":
            out[name] = (Path(sysconfig.get_paths()["stdlib"]), ["site-packages"])
        else:
            raise SystemExit(f"unknown corpus {name}")
    return out


def corpus_files(root: Path, exclude: list[str]) -> list[str]:
    from fleet.graph import source_files

    return source_files(root, frozenset({"python"}), exclude)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- workers (run in a subprocess each) ------------------------------------------------------
def worker_treesitter(root: Path, exclude: list[str], ids_out: Path) -> dict[str, object]:
    from fleet.graph._extract import extract
    from fleet.graph._graph import SymbolGraph
    from fleet.graph._index import _read
    from fleet.graph._lang import spec_for
    from fleet.graph._resolve import Resolver, python_module_names

    paths = corpus_files(root, exclude)
    modules = python_module_names(paths)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    data = {}
    lines = 0
    for rel in paths:
        spec = spec_for(rel)
        assert spec is not None
        record, src = _read(root, rel, "python", 10_000_000)
        if src is None:
            continue
        lines += record.lines
        data[rel] = extract(rel, src, spec, modules[rel], record)
    cpu1, wall1 = time.process_time(), time.perf_counter()
    symbols = sum(len(d.symbols) for d in data.values())
    refs = sum(len(d.refs) for d in data.values())
    ids = {p: sorted(s.id for s in d.symbols) for p, d in data.items() if d.record.status == "ok"}
    ids_out.write_text(json.dumps(ids))
    rss_extract = rss_mb()

    cpu2 = time.process_time()
    sym_map = {s.id: s for p in sorted(data) for s in data[p].symbols}
    resolver = Resolver(data, sym_map)
    resolved, deps = {}, {}
    for p, d in data.items():  # as index() does: references and their dependency keys
        resolved[p], deps[p] = resolver.resolve_with_deps(d)
    cpu3 = time.process_time()
    graph = SymbolGraph(root, data, resolved, deps=deps)
    cpu4 = time.process_time()
    graph.lock_rank(next(iter(graph.symbols)))
    cpu5 = time.process_time()
    naive = naive_short_names(graph)
    return {
        **naive, **parse_only(root, paths),
        "files": len(paths), "lines": lines, "symbols": symbols, "references": refs,
        "extract_cpu_s": cpu1 - cpu0, "extract_wall_s": wall1 - wall0,
        "resolve_cpu_s": cpu3 - cpu2, "graph_cpu_s": cpu4 - cpu3, "rank_cpu_s": cpu5 - cpu4,
        "resolved_share": graph.resolved_share(), "sccs": len(graph.sccs()),
        "largest_scc": max((len(c) for c in graph.sccs()), default=1),
        "edges": graph.graph.number_of_edges(),
        "rss_extract_mb": rss_extract, "rss_mb": rss_mb(),
    }


def parse_only(root: Path, paths: list[str]) -> dict[str, object]:
    """The parse alone, per file interleaved: our runtime (the C extension) and
    py-tree-sitter's, so the table shows what the walk adds to the parse."""
    import tree_sitter as ts
    import tree_sitter_python

    from fleet.graph import python_extractor
    from fleet.graph._extract_native import _module

    native = _module()
    parser = ts.Parser(ts.Language(tree_sitter_python.language()))
    ours = theirs = 0.0
    clock = time.process_time
    for rel in paths:
        src = (root / rel).read_bytes()
        t0 = clock()
        parser.parse(src)
        t1 = clock()
        if native is not None:
            native.parse(src)
        ours += clock() - t1
        theirs += t1 - t0
    return {"extractor": python_extractor(), "parse_cpu_s": ours if native else None,
            "pyts_parse_cpu_s": theirs}


def naive_short_names(graph: object) -> dict[str, int]:
    """What matching a use's last name against symbol names would give: unique, ambiguous or
    no match; and how often a unique naive match disagrees with the resolved target."""
    by_name: dict[str, list[str]] = {}
    for sym in graph.symbols.values():  # type: ignore[attr-defined]
        if sym.kind != "module":
            by_name.setdefault(sym.name, []).append(sym.id)
    out = {"naive_total": 0, "naive_unique": 0, "naive_ambiguous": 0, "naive_none": 0,
           "naive_unique_agree": 0, "naive_unique_disagree": 0}
    for ref in graph.references:  # type: ignore[attr-defined]
        if ref.kind not in ("call", "attribute", "name"):
            continue
        out["naive_total"] += 1
        found = by_name.get(ref.name.rsplit(".", 1)[-1], [])
        if len(found) > 1:
            out["naive_ambiguous"] += 1
        elif not found:
            out["naive_none"] += 1
        else:
            out["naive_unique"] += 1
            if ref.exact and ref.target is not None and "::" in ref.target:
                key = "naive_unique_agree" if ref.target == found[0] else "naive_unique_disagree"
                out[key] += 1
    return out


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _chain(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def ast_extract(rel: str, src: bytes) -> tuple[list[str], int] | None:
    """The peer: the same symbol rules as the tree-sitter query, and dotted references
    (calls, attribute chains, plain names in value positions), with an iterative walk."""
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    ids = {f"{rel}::<module>"}
    refs = 0
    # (node, qualname prefix, kind of the innermost definition, directly in a body?)
    stack: list[tuple[ast.AST, str, str]] = [(tree, "", "module")]
    while stack:
        node, prefix, outer = stack.pop()
        if isinstance(node, _SCOPES):
            qual = f"{prefix}.{node.name}" if prefix else node.name
            ids.add(f"{rel}::{qual}")
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            if isinstance(node, ast.ClassDef):
                _variables(node.body, rel, qual, ids)
            for child in ast.iter_child_nodes(node):
                stack.append((child, qual, kind))
            continue
        if isinstance(node, ast.Module):
            _variables(node.body, rel, "", ids)
        if isinstance(node, ast.Call):
            if _chain(node.func) is not None:
                refs += 1
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                refs += 1  # the innermost `name.attr` of a chain, as the query captures it
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            refs += 1
        for child in ast.iter_child_nodes(node):
            stack.append((child, prefix, outer))
    return sorted(ids), refs


def _variables(body: list[ast.stmt], rel: str, prefix: str, ids: set[str]) -> None:
    for stmt in body:
        target: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            target = stmt.targets[0]
        elif isinstance(stmt, ast.AnnAssign):
            target = stmt.target
        if isinstance(target, ast.Name):
            ids.add(f"{rel}::{prefix}.{target.id}" if prefix else f"{rel}::{target.id}")


def worker_ast(root: Path, exclude: list[str], ids_out: Path) -> dict[str, object]:
    paths = corpus_files(root, exclude)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    lines = symbols = refs = failed = 0
    ids: dict[str, list[str]] = {}
    for rel in paths:
        src = (root / rel).read_bytes()
        lines += src.count(b"\n") + (1 if src and not src.endswith(b"\n") else 0)
        got = ast_extract(rel, src)
        if got is None:
            failed += 1
            continue
        ids[rel] = got[0]
        symbols += len(got[0])
        refs += got[1]
    cpu1, wall1 = time.process_time(), time.perf_counter()
    ids_out.write_text(json.dumps(ids))
    return {"files": len(paths), "lines": lines, "symbols": symbols, "references": refs,
            "unparsed": failed, "extract_cpu_s": cpu1 - cpu0, "extract_wall_s": wall1 - wall0,
            "rss_mb": rss_mb()}


def worker_index(root: Path, exclude: list[str], scratch: Path) -> dict[str, object]:
    """The whole ``index()``, a snapshot save/load, and a 1-file incremental re-index (on a
    copy of the corpus, so the cache is never modified)."""
    from fleet.graph import index, load

    copy = scratch / "corpus"
    shutil.copytree(root, copy, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", *exclude))
    cpu0 = time.process_time()
    graph = index(copy, exclude=exclude, languages={"python"})
    graph.lock_rank(next(iter(graph.symbols)))
    cpu1 = time.process_time()
    snap = graph.save(scratch / "graph.pickle")
    w0 = time.perf_counter()
    loaded = load(snap)
    load_s = time.perf_counter() - w0
    assert len(loaded.symbols) == len(graph.symbols)
    target = max((p for p in graph.files if graph.files[p].status == "ok"),
                 key=lambda p: (graph.files[p].lines < 2000, graph.files[p].lines))
    path = copy / target
    text = path.read_text(encoding="utf-8")
    # 1) a body-only edit (what a fix usually is): the file's interface is unchanged
    marker = "\n    return "
    at = text.find(marker)
    edited = text[:at] + "\n    _bench = 1" + text[at:] if at >= 0 else text + "\n# edited\n"
    path.write_text(edited, encoding="utf-8")
    c0, w1 = time.process_time(), time.perf_counter()
    body = index(copy, previous=graph, exclude=exclude, languages={"python"})
    body_cpu, body_wall = time.process_time() - c0, time.perf_counter() - w1
    # 2) an interface edit: a new function; only files that looked its name up re-resolve
    added = edited + "\n\ndef _bench_added(x):\n    return len(x)\n"
    path.write_text(added, encoding="utf-8")
    c0, w1 = time.process_time(), time.perf_counter()
    again = index(copy, previous=body, exclude=exclude, languages={"python"})
    inc_cpu, inc_wall = time.process_time() - c0, time.perf_counter() - w1
    assert f"{target}::_bench_added" in again.symbols
    # 3) the heavy interface edit: the file's most used top-level class renamed, so every
    # file that uses it re-resolves
    used: dict[str, int] = {}
    for ref in again.references:
        sym = again.symbols.get(ref.target or "")
        if (sym is not None and sym.path == target and sym.kind == "class"
                and "." not in sym.qualname):
            used[sym.name] = used.get(sym.name, 0) + 1
    cls = max(sorted(used), key=used.__getitem__)
    path.write_text(added.replace(f"class {cls}(", f"class {cls}Renamed(", 1), encoding="utf-8")
    c0, w1 = time.process_time(), time.perf_counter()
    renamed = index(copy, previous=again, exclude=exclude, languages={"python"})
    ren_cpu, ren_wall = time.process_time() - c0, time.perf_counter() - w1
    assert f"{target}::{cls}Renamed" in renamed.symbols
    return {"index_cpu_s": cpu1 - cpu0, "snapshot_mb": snap.stat().st_size / 2**20,
            "load_s": load_s, "incremental_file": target,
            "body_edit_cpu_s": body_cpu, "body_edit_wall_s": body_wall,
            "interface_edit_cpu_s": inc_cpu, "interface_edit_wall_s": inc_wall,
            "interface_edit_files": _reresolved(again, body),
            "rename_class": cls, "rename_cpu_s": ren_cpu, "rename_wall_s": ren_wall,
            "rename_files": _reresolved(renamed, again),
            "rss_mb": rss_mb()}


def _reresolved(new: object, old: object) -> int:
    """How many files' references an incremental index resolved again (not reused)."""
    return sum(1 for p in new.files  # type: ignore[attr-defined]
               if new._refs.get(p) is not old._refs.get(p))  # type: ignore[attr-defined]


# -- driver ---------------------------------------------------------------------------------
def run_worker(kind: str, root: Path, exclude: list[str], out: Path) -> dict[str, object]:
    cmd = [sys.executable, __file__, "--worker", kind, "--root", str(root), "--out", str(out),
           *(arg for pat in exclude for arg in ("--exclude", pat))]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"worker {kind} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", action="append", choices=["django", "stdlib"])
    parser.add_argument("--worker", choices=["ts", "ast", "index", "digest"],
                        help="digest: sha256 of a cold index's symbols, references, edges, "
                        "keys and file data, to compare two trees (_index_digest.py)")
    parser.add_argument("--root", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--whole", action="store_true", help="the whole fleet index process")
    parser.add_argument("--baseline", type=Path,
                        help="with --whole: also run this checkout of the project (extension "
                        "built in place) on PYTHONPATH, interleaved: before/after")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="with --whole: the checkouts not byte-compiled first")
    args = parser.parse_args()
    if args.whole:
        got = whole(corpora, args.corpus or ["stdlib"], args.runs, args.baseline,
                    not args.no_bytecode)
        save_whole(got, RESULTS / "bench_index_whole.json")
        print(whole_table(got))
        return 0
    if args.worker == "digest":
        print(json.dumps(digests(args.root, args.exclude), indent=1))
        return 0
    if args.worker:
        fn = {"ts": worker_treesitter, "ast": worker_ast, "index": worker_index}[args.worker]
        gc.disable()  # both extractors alike; index() pauses it itself
        print(json.dumps(fn(args.root, args.exclude, args.out)))
        return 0

    results: dict[str, object] = {"python": sys.version.split()[0], "cpus": os.cpu_count(),
                                  "load_avg_start": os.getloadavg()[0]}
    for name, (root, exclude) in corpora(args.corpus or ["django", "stdlib"]).items():
        runs: dict[str, list[dict[str, object]]] = {"ts": [], "ast": [], "index": []}
        with tempfile.TemporaryDirectory(prefix="bench_index_") as tmp:
            scratch = Path(tmp)
            for i in range(args.runs):  # interleaved: ts, ast, ts, ast, ...
                for kind in ("ts", "ast"):
                    runs[kind].append(run_worker(kind, root, exclude, scratch / f"{kind}.json"))
                    print(f"{name} run {i + 1} {kind}: {runs[kind][-1]['extract_cpu_s']:.2f} CPU-s",
                          file=sys.stderr)
            ids = compare_ids(json.loads((scratch / "ts.json").read_text()),
                              json.loads((scratch / "ast.json").read_text()))
            for i in range(args.runs):
                sub = scratch / f"index{i}"
                sub.mkdir()
                runs["index"].append(run_worker("index", root, exclude, sub))
        results[name] = summarize(runs, ids)
    results["load_avg_end"] = os.getloadavg()[0]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_index.json").write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
