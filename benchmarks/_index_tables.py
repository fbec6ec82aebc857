"""The default mode's summary and markdown table of ``bench_index.py``: medians of the
interleaved runs per corpus (tree-sitter, the ``ast`` peer, the whole ``index()``) and the
per-file comparison of the two extractors' symbol ids."""

from __future__ import annotations

import statistics


def compare_ids(ts_ids: dict[str, list[str]], peer_ids: dict[str, list[str]]) -> dict[str, int]:
    both = sorted(set(ts_ids) & set(peer_ids))
    mismatched = [p for p in both if ts_ids[p] != peer_ids[p]]
    return {"files_compared": len(both), "files_mismatched": len(mismatched),
            "symbols_ts": sum(len(ts_ids[p]) for p in both),
            "symbols_ast": sum(len(peer_ids[p]) for p in both),
            "examples": mismatched[:5]}  # type: ignore[dict-item]


def _median(rows: list[dict[str, object]], key: str) -> float:
    return statistics.median(float(r[key]) for r in rows)  # type: ignore[arg-type]


def summarize(runs: dict[str, list[dict[str, object]]], ids: dict[str, int]) -> dict[str, object]:
    ts, peer, idx = runs["ts"], runs["ast"], runs["index"]
    lines = float(ts[0]["lines"])  # type: ignore[arg-type]
    ts_cpu, ast_cpu = _median(ts, "extract_cpu_s"), _median(peer, "extract_cpu_s")
    return {
        "files": ts[0]["files"], "lines": int(lines),
        "ts_symbols": ts[0]["symbols"], "ast_symbols": peer[0]["symbols"],
        "ts_references": ts[0]["references"], "ast_references": peer[0]["references"],
        "ast_unparsed": peer[0]["unparsed"],
        "ts_extract_cpu_s": ts_cpu, "ast_extract_cpu_s": ast_cpu,
        "ts_lines_per_cpu_s": lines / ts_cpu, "ast_lines_per_cpu_s": lines / ast_cpu,
        "speedup": ast_cpu / ts_cpu,
        "ts_symbols_per_s": float(ts[0]["symbols"]) / _median(ts, "extract_wall_s"),  # type: ignore[arg-type]
        "ast_symbols_per_s": float(peer[0]["symbols"]) / _median(peer, "extract_wall_s"),  # type: ignore[arg-type]
        "ts_rss_extract_mb": _median(ts, "rss_extract_mb"), "ast_rss_mb": _median(peer, "rss_mb"),
        "ts_rss_mb": _median(ts, "rss_mb"),
        "extractor": ts[0]["extractor"],
        "parse_cpu_s": (_median(ts, "parse_cpu_s") if ts[0]["parse_cpu_s"] is not None
                        else None),
        "pyts_parse_cpu_s": _median(ts, "pyts_parse_cpu_s"),
        "resolve_cpu_s": _median(ts, "resolve_cpu_s"), "graph_cpu_s": _median(ts, "graph_cpu_s"),
        "rank_cpu_s": _median(ts, "rank_cpu_s"),
        "graph_and_ranks_cpu_s": _median(ts, "graph_cpu_s") + _median(ts, "rank_cpu_s"),
        "resolved_share": ts[0]["resolved_share"], "sccs": ts[0]["sccs"],
        "largest_scc": ts[0]["largest_scc"], "edges": ts[0]["edges"],
        "index_cpu_s": _median(idx, "index_cpu_s"), "snapshot_mb": _median(idx, "snapshot_mb"),
        "load_s": _median(idx, "load_s"), "incremental_file": idx[0]["incremental_file"],
        "body_edit_cpu_s": _median(idx, "body_edit_cpu_s"),
        "body_edit_wall_s": _median(idx, "body_edit_wall_s"),
        "interface_edit_cpu_s": _median(idx, "interface_edit_cpu_s"),
        "interface_edit_wall_s": _median(idx, "interface_edit_wall_s"),
        "interface_edit_files": idx[0]["interface_edit_files"],
        "rename_class": idx[0]["rename_class"], "rename_files": idx[0]["rename_files"],
        "rename_cpu_s": _median(idx, "rename_cpu_s"),
        "rename_wall_s": _median(idx, "rename_wall_s"),
        "symbol_comparison": ids,
        **{k: v for k, v in ts[0].items() if k.startswith("naive_")},
    }


def table(results: dict[str, object]) -> str:
    names = [n for n in ("django", "stdlib") if n in results]
    rows = [
        ("files / lines", lambda r: f"{r['files']} / {r['lines']:,}"),
        ("extract CPU-s: tree-sitter / ast (median of 3)",
         lambda r: f"{r['ts_extract_cpu_s']:.2f} / {r['ast_extract_cpu_s']:.2f}"),
        ("lines per CPU-s: tree-sitter / ast",
         lambda r: f"{r['ts_lines_per_cpu_s']:,.0f} / {r['ast_lines_per_cpu_s']:,.0f}"),
        ("speed-up over ast", lambda r: f"{r['speedup']:.2f}x"),
        ("Python extractor; parse alone CPU-s: ours / py-tree-sitter",
         lambda r: f"{r['extractor']}; " + (f"{r['parse_cpu_s']:.2f}" if r["parse_cpu_s"]
                                            else "-") + f" / {r['pyts_parse_cpu_s']:.2f}"),
        ("symbols per s: tree-sitter / ast",
         lambda r: f"{r['ts_symbols_per_s']:,.0f} / {r['ast_symbols_per_s']:,.0f}"),
        ("symbols: tree-sitter / ast (all files)",
         lambda r: f"{r['ts_symbols']:,} / {r['ast_symbols']:,}"),
        ("files both parse: compared / symbol sets differ",
         lambda r: f"{r['symbol_comparison']['files_compared']} / "
                   f"{r['symbol_comparison']['files_mismatched']}"),
        ("peak RSS MB: tree-sitter extract / ast",
         lambda r: f"{r['ts_rss_extract_mb']:.0f} / {r['ast_rss_mb']:.0f}"),
        ("resolve CPU-s", lambda r: f"{r['resolve_cpu_s']:.2f}"),
        ("graph build + condensation + ranks CPU-s",
         lambda r: f"{r['graph_cpu_s']:.2f} + {r['rank_cpu_s']:.2f}"),
        ("whole index() CPU-s", lambda r: f"{r['index_cpu_s']:.2f}"),
        ("references resolved (repo symbol or external dotted name)",
         lambda r: f"{r['resolved_share']:.1%}"),
        ("naive short-name match: unique / ambiguous / none",
         lambda r: f"{r['naive_unique'] / r['naive_total']:.0%} / "
                   f"{r['naive_ambiguous'] / r['naive_total']:.0%} / "
                   f"{r['naive_none'] / r['naive_total']:.0%}"),
        ("SCCs (>1) / largest", lambda r: f"{r['sccs']} / {r['largest_scc']}"),
        ("snapshot MB / load s", lambda r: f"{r['snapshot_mb']:.0f} / {r['load_s']:.2f}"),
        ("1-file re-index, body edit: CPU-s / wall-s",
         lambda r: f"{r['body_edit_cpu_s']:.2f} / {r['body_edit_wall_s']:.2f}"),
        ("1-file re-index, new function: CPU-s / wall-s (files re-resolved)",
         lambda r: f"{r['interface_edit_cpu_s']:.2f} / {r['interface_edit_wall_s']:.2f} "
                   f"({r['interface_edit_files']})"),
        ("1-file re-index, most used class renamed: CPU-s / wall-s (files re-resolved)",
         lambda r: f"{r['rename_cpu_s']:.2f} / {r['rename_wall_s']:.2f} ({r['rename_files']})"),
    ]
    out = ["| measure | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, fmt in rows:
        out.append(f"| {label} | " + " | ".join(fmt(results[n]) for n in names) + " |")
    return "\n".join(out)

