"""Benchmark: the symbol graph's call edges against jedi's ``goto`` on real projects.

Corpora (sdists fetched with ``pip download --no-binary :all:`` into benchmarks/.cache):
Django 5.1.4 (large, untyped, deep class hierarchies) and Sphinx 8.1.3 (annotated code) by
default; SQLAlchemy 2.0.36 (large, annotated, generics and overloads, its package under ``lib/``)
and Rich 13.9.4 (annotated, a library of renderables) on request.

    .venv/bin/python benchmarks/bench_graph_accuracy.py [--sites 600] [--seed 20]
        [--corpus django sphinx sqlalchemy rich] [--project NAME==VERSION[:PACKAGE_DIR] ...]

``--project`` scores any PyPI project from its sdist (its package directory in the sdist,
``NAME`` by default: ``--project httpx==0.27.2``, ``--project SQLAlchemy==2.0.36:lib/sqlalchemy``).

Call sites: every ``ast.Call`` whose callee is a name or an attribute (``f()``, ``a.b.m()``,
``super().m()``, ``f().m()``) in the project's package directory, sampled at random with a
fixed seed. Ground truth: ``jedi.Script.goto(follow_imports=True)`` on the called name, with
the sdist root as the jedi project; jedi's answers are cached in benchmarks/.cache (they do not
depend on fleet), so a re-run after a resolver change costs one ``fleet.graph.index``.

Scores, as issue 20 defines them:
- recall: of the sites whose jedi definition is a symbol inside the repository, the share with
  a reference from the call (same line, same called name) to that symbol;
- precision: of the graph edges on the sampled sites' name and line (references to a repository
  symbol other than an enclosing one), the share pointing at a definition jedi gives; sites jedi
  resolves only outside the repository count (any edge there is wrong), sites jedi does not
  resolve at all do not. A definition jedi gives in a stub, or in another copy of the package
  (a compiled module object, the copy installed in this venv: its full name in the package),
  stands for the repository's definition of that full name.
A naive linker (every function, method or class of the called name) is scored in the same run.
Writes benchmarks/results/bench_graph_accuracy.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
CACHE = HERE / ".cache"
sys.path.insert(0, str(ROOT))

from _corpora import django_corpus, sdist_corpus  # noqa: E402

SPHINX = "8.1.3"
SQLALCHEMY = "2.0.36"
RICH = "13.9.4"
# the package's directory in the sdist; its parent is on jedi's sys.path
PACKAGES = {"django": "django", "sphinx": "sphinx", "sqlalchemy": "lib/sqlalchemy",
            "rich": "rich"}
DEFAULT = ["django", "sphinx"]


def sphinx_corpus() -> Path:
    return sdist_corpus("sphinx", SPHINX, f"sphinx-{SPHINX}")


def sqlalchemy_corpus() -> Path:
    return sdist_corpus("sqlalchemy", SQLALCHEMY, f"sqlalchemy-{SQLALCHEMY}")


def rich_corpus() -> Path:
    return sdist_corpus("rich", RICH, f"rich-{RICH}")


CORPORA = {"django": django_corpus, "sphinx": sphinx_corpus, "sqlalchemy": sqlalchemy_corpus,
           "rich": rich_corpus}


# -- call sites ------------------------------------------------------------------------------
def call_sites(root: Path, package: str) -> list[tuple[str, int, int, int, str]]:
    """(path, line of the callee, line and col of the called name, the name) per call."""
    sites: list[tuple[str, int, int, int, str]] = []
    for file in sorted((root / package).rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        try:
            tree = ast.parse(file.read_bytes())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name):
                sites.append((rel, func.lineno, func.lineno, func.col_offset, func.id))
            elif isinstance(func, ast.Attribute) and func.end_lineno is not None:
                col = (func.end_col_offset or 0) - len(func.attr)
                sites.append((rel, func.lineno, func.end_lineno, col, func.attr))
    return sites


def jedi_truth(name: str, root: Path, sites: list, package: str) -> list[list[tuple]]:
    """Per site: jedi's definitions as (path relative to root or "", line, name, type,
    full name, from a stub); "" marks a definition outside the repository. Cached per corpus,
    seed and sample."""
    import jedi

    # the sdist's package first on jedi's path: the copy of it this venv may have installed
    # (SQLAlchemy and Rich are dependencies of Dagster and Typer) is not the repository's
    environment = jedi.get_default_environment()
    first = str((root / package).parent.resolve())
    project = jedi.Project(path=str(root), smart_sys_path=False, sys_path=[
        first, *(p for p in environment.get_sys_path() if p != first)])
    out: list[list[tuple]] = []
    scripts: dict[str, jedi.Script] = {}
    for i, (rel, _line, nline, col, _called) in enumerate(sites):
        script = scripts.get(rel)
        if script is None:
            scripts.clear()
            script = scripts[rel] = jedi.Script(path=str(root / rel), project=project)
        try:
            defs = script.goto(nline, col, follow_imports=True)
        except Exception as exc:  # jedi's own failures: the site counts as unresolved
            print(f"jedi failed at {rel}:{nline}:{col}: {exc!r}", file=sys.stderr)
            defs = []
        found = []
        for d in defs:
            path = d.module_path
            inside = path is not None and Path(path).resolve().is_relative_to(root)
            rel_def = Path(path).resolve().relative_to(root).as_posix() if inside else ""
            # jedi's goto prefers the stubs it bundles (django-stubs, typeshed): a stub of a
            # module of this repository stands for the repository's definition (full_name);
            # so do a definition without a path or line (jedi inspected a module of that name
            # imported from this venv: pytest's ``_pytest._io``) and one in the copy this venv
            # installed (``score``)
            stub = path is not None and str(path).endswith(".pyi") and not inside
            found.append((rel_def, d.line or 0, d.name or "", d.type, d.full_name or "", stub))
        out.append(found)
        if (i + 1) % 100 == 0:
            print(f"  jedi {name}: {i + 1}/{len(sites)}", file=sys.stderr)
    return out


# -- scoring ---------------------------------------------------------------------------------
def symbol_at(by_path_name: dict, path: str, line: int, name: str) -> str | None:
    """The innermost repository symbol named ``name`` in ``path`` whose span holds ``line``."""
    best = None
    for sym in by_path_name.get((path, name), ()):
        if sym.start_line <= line <= sym.end_line and (
                best is None or sym.end_line - sym.start_line < best.end_line - best.start_line):
            best = sym
    return best.id if best is not None else None


def _enclosing(src: str, target: str) -> bool:
    return src == target or src.startswith(target + ".") or (
        target.endswith("::<module>") and src.startswith(target[: -len("<module>")]))


def score(graph, sites: list, truth: list, package: str = "") -> dict:
    """``package``: the package's directory in the sdist; a definition jedi gives outside the
    repository whose full name is in that package (its stub, a compiled module object, the copy
    this venv installed) stands for the repository's definition of that name."""
    top = Path(package).name + "." if package else None
    by_path_name: dict[tuple[str, str], list] = defaultdict(list)
    by_name: dict[str, list[str]] = defaultdict(list)
    for sym in graph.symbols.values():
        by_path_name[(sym.path, sym.name)].append(sym)
        if sym.kind in ("function", "method", "class"):
            by_name[sym.name].append(sym.id)
    refs_at: dict[tuple[str, int], list] = defaultdict(list)
    for path in graph.files:
        for ref in graph.references_in(path):
            if ref.kind == "call":
                refs_at[(path, ref.line)].append(ref)
    tally = {k: 0 for k in ("sites", "jedi_none", "jedi_outside", "jedi_inside",
                            "jedi_inside_unmapped")}
    ours = {"hits": 0, "edges": 0, "right": 0, "prefix_edges": 0}
    naive = {"hits": 0, "edges": 0, "right": 0}
    misses: list[str] = []
    wrong: list[str] = []
    for (rel, line, _nline, _col, called), defs in zip(sites, truth, strict=True):
        tally["sites"] += 1
        if not defs:
            tally["jedi_none"] += 1
            continue
        right = {sid for d in defs if d[0] and (sid := symbol_at(by_path_name, *d[:3]))}
        copies = [d for d in defs if not d[0] and (
            d[5] or not d[1] or (top is not None and d[4].startswith(top)))]
        for d in copies:
            sid = graph.resolve_dotted(d[4])
            if sid is not None:
                right.add(sid)
        inside = [d for d in defs if d[0]] or [d for d in copies if right]
        refs = [r for r in refs_at.get((rel, line), ())
                if r.name.rsplit(".", 1)[-1].removeprefix("()") == called
                or r.name.endswith(f").{called}")]
        all_edges = [r for r in refs
                     if r.target in graph.symbols and not _enclosing(r.src, r.target)]
        edges = [r for r in all_edges if r.exact]
        naive_edges = by_name.get(called, [])
        if not inside:
            tally["jedi_outside"] += 1
        elif not right:
            tally["jedi_inside_unmapped"] += 1
            continue  # jedi's definition is no symbol (an instance attribute, a parameter)
        else:
            tally["jedi_inside"] += 1
            if any(r.target in right for r in refs):
                ours["hits"] += 1
            else:
                misses.append(f"{rel}:{line} {called} -> {sorted(right)} "
                              f"have {[(r.name, r.target) for r in refs]}")
            naive["hits"] += any(t in right for t in naive_edges)
        ours["edges"] += len(edges)
        ours["right"] += sum(r.target in right for r in edges)
        ours["prefix_edges"] += len(all_edges) - len(edges)
        wrong.extend(f"{rel}:{line} {r.name} -> {r.target} (jedi {sorted(right) or defs})"
                     for r in edges if r.target not in right)
        naive["edges"] += len(naive_edges)
        naive["right"] += sum(t in right for t in naive_edges)
    n = max(tally["jedi_inside"], 1)
    return {
        **tally,
        "recall": round(ours["hits"] / n, 4),
        "precision": round(ours["right"] / max(ours["edges"], 1), 4),
        "edges": ours["edges"],
        # edges of references of which only a prefix resolved (``register.filter`` ->
        # ``register``): right about the prefix, no claim about the call; counted as wrong here
        "precision_with_prefix_edges": round(
            ours["right"] / max(ours["edges"] + ours["prefix_edges"], 1), 4),
        "prefix_edges": ours["prefix_edges"],
        "naive_recall": round(naive["hits"] / n, 4),
        "naive_precision": round(naive["right"] / max(naive["edges"], 1), 4),
        "naive_edges": naive["edges"],
        "misses": misses,
        "wrong": wrong,
    }


def add_project(spec: str) -> str:
    """``NAME==VERSION[:PACKAGE_DIR]`` as a corpus of its own; its name."""
    pinned, _, package = spec.partition(":")
    project, sep, version = pinned.partition("==")
    if not sep or not project or not version:
        raise SystemExit(f"--project {spec!r}: expected NAME==VERSION[:PACKAGE_DIR]")
    name = f"{project.lower()}-{version}"
    CORPORA[name] = lambda: sdist_corpus(project, version)
    PACKAGES[name] = package or project.lower().replace("-", "_")
    return name


def run(name: str, n_sites: int, seed: int) -> dict:
    from fleet.graph import index

    root = CORPORA[name]().resolve()
    if not (root / PACKAGES[name]).is_dir():
        raise SystemExit(f"{name}: no package directory {PACKAGES[name]!r} in {root}; "
                         "name it: --project NAME==VERSION:PACKAGE_DIR")
    sites = call_sites(root, PACKAGES[name])
    sample = random.Random(seed).sample(sites, min(n_sites, len(sites)))
    cache = CACHE / f"jedi2-{name}-{seed}-{len(sample)}.json"
    if cache.is_file():
        truth = [[tuple(d) for d in defs] for defs in json.loads(cache.read_text())]
    else:
        started = time.perf_counter()
        truth = jedi_truth(name, root, sample, PACKAGES[name])
        cache.write_text(json.dumps(truth))
        print(f"  jedi {name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    started = time.perf_counter()
    graph = index(root)
    seconds = time.perf_counter() - started
    result = score(graph, sample, truth, PACKAGES[name])
    return {"corpus": name, "call_sites": len(sites), "sampled": len(sample), "seed": seed,
            "index_seconds": round(seconds, 2), **result}


def save(results: list[dict], path: Path) -> None:
    """Write ``results`` into ``path``: a row of the same corpus and sample size replaced,
    the other corpora's rows kept (one file for runs of different corpora)."""
    rows = [{k: v for k, v in r.items() if k not in ("misses", "wrong")} for r in results]
    new = {(r["corpus"], r["sampled"]) for r in rows}
    kept = json.loads(path.read_text()) if path.is_file() else []
    kept = [r for r in kept if (r.get("corpus"), r.get("sampled")) not in new]
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(kept + rows, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sites", type=int, default=600)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--corpus", nargs="*", default=DEFAULT, choices=list(CORPORA),
                    help="the built-in corpora (`--corpus` alone: none, with --project)")
    ap.add_argument("--project", action="append", default=[], metavar="NAME==VERSION[:DIR]",
                    help="also a PyPI project from its sdist (its package directory in it)")
    ap.add_argument("--show", type=int, default=0, help="print this many misses and wrong edges")
    args = ap.parse_args()
    names = list(args.corpus) + [add_project(p) for p in args.project]
    results = [run(name, args.sites, args.seed) for name in names]
    save(results, RESULTS / "bench_graph_accuracy.json")
    print("| corpus | sites (jedi in repo / outside / none) | recall | precision | edges "
          "| precision with prefix edges | naive recall | naive precision | naive edges |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['corpus']} | {r['sampled']} ({r['jedi_inside']} / {r['jedi_outside']} / "
              f"{r['jedi_none']}, {r['jedi_inside_unmapped']} not a symbol) | {r['recall']:.3f} "
              f"| {r['precision']:.3f} | {r['edges']} "
              f"| {r['precision_with_prefix_edges']:.3f} ({r['prefix_edges']}) "
              f"| {r['naive_recall']:.3f} "
              f"| {r['naive_precision']:.3f} | {r['naive_edges']} |")
        for line in r["misses"][: args.show]:
            print("  miss", line)
        for line in r["wrong"][: args.show]:
            print("  wrong", line)


if __name__ == "__main__":
    main()
