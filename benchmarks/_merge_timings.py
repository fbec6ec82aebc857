"""Process timings of the merge driver on real-history cases (``merge_history.py timings``, and
``run --driver N``): the console script, the fast line, the shell line and ``git merge-file`` as
git runs them, ``python -S -c pass`` for the interpreter's floor, and with ``--server`` the warm
merge server (served, served shell, cold)."""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fleet.merge import Clean, driver
from fleet.merge._line import line_merge

PARTS = ("base", "ours", "theirs", "actual")


def _read(folder: Path) -> list[str]:
    return [
        (folder / f"{part}.py").read_bytes().decode("utf-8", "surrogateescape") for part in PARTS
    ]



DRIVERS = {
    "console": [sys.executable, "-m", "fleet_pipelines.cli", "merge-driver"],
    "fast": [sys.executable, "-S", str(Path(driver.__file__).resolve().parent / "_run_driver.py")],
}


def _driver_ms(folder: Path) -> dict[str, float]:
    """Wall milliseconds as processes on one case: ``fleet merge-driver`` (``console``), the
    driver's fast line (``fast``, see ``fleet.merge.driver.fast_command``), its shell line
    (``shell``, ``fleet.merge.driver.shell_line``, run by ``sh -c``) and ``git merge-file``
    (``git``), each run the way git runs a merge driver (OURS rewritten in place), and
    ``python -S -c pass``, the interpreter's own start-up at that moment."""
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "ours.py"
        commands = {
            **DRIVERS,
            "shell": [],
            "git": ["git", "merge-file", "-q", "--diff3"],
            "python -S": [sys.executable, "-S", "-c", "pass"],  # the interpreter's own floor
        }
        for name, command in commands.items():
            shutil.copy(folder / "ours.py", ours)
            files = [folder / "base.py", ours, folder / "theirs.py", Path("case.py")]
            if name == "git":
                files = [ours, folder / "base.py", folder / "theirs.py"]
            elif name == "python -S":
                files = []
            if name == "shell":  # the whole line through sh, as git runs it
                line = driver.shell_line()
                for placeholder, value in zip(("%O", "%A", "%B", "%P"), files, strict=True):
                    line = line.replace(placeholder, str(value))
                command, files = ["sh", "-c", line], []
            start = time.perf_counter()
            subprocess.run(
                [*command, *map(str, files)], capture_output=True, check=False, env=NO_SERVER
            )
            times[name] = (time.perf_counter() - start) * 1000
    return times


# The lines above as they run without the warm merge server (``timings --server`` times it).
NO_SERVER = {**os.environ, "FLEET_MERGE_SERVER": "0"}


def _p50(runs: list[dict[str, float]], name: str) -> str:
    """The median of ``name`` over ``runs``, those without a figure (NaN) left out and counted."""
    values = [r[name] for r in runs if not math.isnan(r[name])]
    if not values:
        return "-"
    missing = len(runs) - len(values)
    return f"{statistics.median(values):.1f}" + (f" ({missing} unserved)" if missing else "")



def _server_ms(folder: Path, server_dir: str) -> dict[str, float]:
    """Wall milliseconds of the driver with the warm merge server (``fleet.merge._server``) in
    ``server_dir``: ``served`` (the fast line, server warm), ``served shell`` (the shell line,
    server warm), each also ``... in child`` (the merge in the server's child, from its log),
    and ``cold`` (the fast line just after the server was stopped: it starts one
    and merges in its own process); then waits until the new server listens, so that its
    warm-up does not run beside the next measurement."""
    from fleet.merge import _client

    env = {**os.environ, _client.ENABLE_ENV: "1", _client.DIR_ENV: server_dir}
    sock_path, _, log_path = _client.paths(server_dir, _client.code_key())
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "ours.py"
        files = [folder / "base.py", ours, folder / "theirs.py", Path("case.py")]
        for name in ("served", "served shell", "cold"):
            if name == "cold":
                _client.stop_servers(env)
                while os.path.exists(sock_path):
                    time.sleep(0.01)
                time.sleep(0.2)  # the stopped server's exit
            shutil.copy(folder / "ours.py", ours)
            command = [*DRIVERS["fast"], *map(str, files)]
            if name == "served shell":
                line = driver.shell_line()
                for placeholder, value in zip(("%O", "%A", "%B", "%P"), files, strict=True):
                    line = line.replace(placeholder, str(value))
                command = ["sh", "-c", line]
            before = _served_lines(log_path)
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, check=False, env=env)
            times[name] = (time.perf_counter() - start) * 1000
            if name != "cold":  # the server's child's own time for it (its log's new line)
                served = _served_lines(log_path)
                # none when the server was not listening yet (still warming up after the last
                # case's "cold" run): the driver merged in its own process; counted apart
                times[f"{name} in child"] = (float(served[-1].rsplit(" ", 2)[1])
                                             if len(served) > len(before) else math.nan)
        deadline = time.monotonic() + 120
        while not os.path.exists(sock_path) and time.monotonic() < deadline:
            time.sleep(0.02)
    return times


def _served_lines(log_path: str) -> list[str]:
    try:
        with open(log_path, encoding="utf-8") as handle:
            return [line for line in handle if " served " in line]
    except FileNotFoundError:
        return []


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"p50": statistics.median(ordered), "min": ordered[0], "p90": p90, "n": len(ordered)}


def timings(
    corpus: Path, driver: int, conflicted: int, server: bool = False, json_out: Path | None = None
) -> int:
    """Only the process timings of ``run --driver N``: every k-th case of each repository (N of
    them) and its first ``conflicted`` git-conflicted ones (git's own verdict, no
    classification), p50 per tool. ``server``: the git-conflicted cases also through the warm
    merge server (served, served shell, cold; a server of its own in a temporary directory,
    stopped at the end), each case's tools run one after the other (interleaved)."""
    names = ["shell", "fast", "console", "git", "python -S"]
    if server:
        names += ["served", "served shell", "cold", "served in child", "served shell in child"]
    header = ["repository", "sample", *(f"{name} p50 ms" for name in names)]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    server_dir = tempfile.mkdtemp(prefix="fleet-bench-")
    cases: list[dict[str, object]] = []
    rows: list[dict[str, object]] = []
    try:
        if server:  # started as the driver starts it, warm before the first case
            from fleet.merge import _client

            _client.start_server(_client.code_key(), server_dir)
            sock_path = _client.paths(server_dir, _client.code_key())[0]
            while not os.path.exists(sock_path):
                time.sleep(0.02)
        for repo in sorted(p for p in corpus.iterdir() if p.is_dir()):
            folders = sorted(p for p in repo.iterdir() if (p / "actual.py").exists())
            hard: list[Path] = []
            for folder in folders:
                if len(hard) >= conflicted:
                    break
                base, ours, theirs, _ = _read(folder)
                if not isinstance(line_merge(base, ours, theirs), Clean):
                    hard.append(folder)
            sample = folders[:: max(1, len(folders) // driver)][:driver] if driver else []
            for label, chosen in (("all", sample), ("conflicted", hard)):
                runs = []
                for folder in chosen:
                    times = _driver_ms(folder)
                    if server and label == "conflicted":
                        times.update(_server_ms(folder, server_dir))
                    runs.append(times)
                    cases.append({"case": f"{repo.name}/{folder.name}", "sample": label, **times})
                if runs:
                    cells = [_p50(runs, name) if name in runs[0] else "-" for name in names]
                    rows.append({"repository": repo.name, "sample": label, "n": len(runs)})
                    rows[-1].update(zip(names, cells, strict=True))
                    print(f"| {repo.name} | {label} {len(runs)} | " + " | ".join(cells) + " |")
    finally:
        if server:
            from fleet.merge import _client

            _client.stop_servers({_client.DIR_ENV: server_dir})
        shutil.rmtree(server_dir, ignore_errors=True)
    hard_runs = [c for c in cases if c["sample"] == "conflicted"]
    summary = {}
    for name in names:
        if hard_runs and name in hard_runs[0]:
            values = [float(c[name]) for c in hard_runs]  # type: ignore[arg-type]
            summary[name] = _spread([v for v in values if not math.isnan(v)])
    for name, spread in summary.items():
        print(f"conflicted, all repositories: {name}: " + json.dumps(spread), file=sys.stderr)
    if json_out is not None:
        out = {"corpus": str(corpus), "rows": rows, "conflicted": summary, "cases": cases}
        json_out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


