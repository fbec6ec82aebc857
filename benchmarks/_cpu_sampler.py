"""CPU time over a window of wall time: the whole machine's, and the benchmark's own.

``bench_engine.py`` reads it for each fix stage:

- the machine (``/proc/stat``): the CPU-seconds all processes spent while the stage ran, and how
  many cores that is on average — whether a speedup stopped at the workers or at the cores;
- the benchmark's own process tree (``/proc/<pid>/stat`` of this process and every descendant:
  the run workers, the celery workers and their sandboxes, the daemon, PostgreSQL, Redis, the
  git daemon), which other work on a shared machine does not disturb. This process becomes a
  child subreaper, so a service that daemonizes (``pg_ctl``) stays in the tree; an exited
  process's CPU is in its parent's ``cutime`` once reaped, or in its own line while a zombie.

The tree's CPU per unit against the in-process peer's is the deployment's CPU cost per unit,
and what a machine with more cores can expect: K workers need K x (CPU-s per unit / wall per
unit) cores.
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import os
import threading
import time
from types import TracebackType
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")


def _read() -> tuple[int, int]:
    """(busy, total) jiffies over all CPUs: busy is user, nice, system, irq, softirq, steal."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(v) for v in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


_KINDS = (("celery worker", ("fleet_pipelines.engine.worker",)),
          ("celery worker", ("celery", "worker")), ("run worker", ("execute_run",)),
          ("run worker", ("execute_step",)), ("daemon", ("dagster-daemon",)),
          ("code server", ("api", "grpc")), ("fleet sweep", ("fleet", "sweep")),
          ("redis", ("redis-server",)), ("git", ("git",)), ("target tests", ("pytest",)),
          ("sandbox", ("bwrap",)))


def _kind(pid: int, root: int, comm: str) -> str:
    """What a process is, from its command line (the tree's CPU is reported by kind)."""
    if pid == root:
        return "benchmark process"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode("utf-8", "replace").split("\0")
    except OSError:
        argv = []
    if not argv or not argv[0]:  # a zombie: only its name is left
        argv = [comm]
    if argv and "postgres" in os.path.basename(argv[0]):
        return "postgresql"
    line = " ".join(argv)
    for kind, words in _KINDS:
        if all(w in line for w in words):
            return kind
    return "other: " + os.path.basename(argv[0])[:24]


def _tree(root: int, kinds: dict[int, tuple[str, str]]) -> tuple[int, dict[int, int]]:
    """utime + stime + cutime + cstime jiffies of ``root`` and all its descendants, and each
    live descendant's own utime + stime (its name and kind noted in ``kinds``, again when its
    name changes: a fork is classified again after its exec)."""
    parents: dict[int, int] = {}
    comms: dict[int, str] = {}
    ticks: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                line = f.read()
        except OSError:  # gone between listdir and open
            continue
        rest = line[line.rfind(")") + 2:].split()
        pid = int(name)
        comms[pid] = line[line.find("(") + 1:line.rfind(")")]
        parents[pid] = int(rest[1])
        own = int(rest[11]) + int(rest[12])
        ticks[pid] = (own, own + int(rest[13]) + int(rest[14]))
    total, owns = 0, {}
    for pid, (own, whole) in ticks.items():
        p, hops = pid, 0
        while p not in (root, 0, 1) and hops < 64:
            p, hops = parents.get(p, 0), hops + 1
        if p == root:
            total += whole
            owns[pid] = own
            if kinds.get(pid, ("",))[0] != comms[pid]:
                kinds[pid] = (comms[pid], _kind(pid, root, comms[pid]))
    return total, owns


def _become_subreaper() -> None:
    """Orphaned descendants (daemonized services) are re-parented to this process, not init."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _loop_ms(n: int = 200_000) -> float:
    """This thread's CPU milliseconds for a fixed pure-Python loop: how fast a core runs the
    same work now. Not a measure of the host alone: on this 2-vCPU machine (7 Dec 2026) the loop
    took ~11 ms while one worker's sweep kept one core busy and 5.5-9 ms while two kept both
    busy, so it is recorded beside each row, never used to correct a wall time."""
    t0 = time.thread_time()
    total = 0
    for i in range(n):
        total += i
    return (time.thread_time() - t0) * 1000


class CpuSampler:
    """Samples ``/proc/stat`` every ``every_s`` in a daemon thread while open, and the host's
    speed (:func:`_loop_ms`) every ``probe_s``."""

    def __init__(self, every_s: float = 0.5, probe_s: float = 3.0) -> None:
        self.every_s, self.probe_s = every_s, probe_s
        self.probes: list[tuple[float, float]] = []  # (epoch s, loop ms)
        self.samples: list[tuple[float, int, int, int]] = []
        self.owns: list[dict[int, int]] = []  # per sample: each live descendant's own ticks
        self.kinds: dict[int, tuple[str, str]] = {}
        self.root = os.getpid()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def _run(self) -> None:
        while True:
            if not self.probes or time.time() - self.probes[-1][0] >= self.probe_s:
                self.probes.append((time.time(), _loop_ms()))
            self._sample()
            if self._stop.wait(self.every_s):
                self._sample()
                return

    def _sample(self) -> None:
        total, owns = _tree(self.root, self.kinds)
        self.samples.append((time.time(), *_read(), total))
        self.owns.append(owns)

    def __enter__(self) -> CpuSampler:
        _become_subreaper()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def window(self, begin: float, end: float, units: int) -> dict[str, Any]:
        """CPU between the samples just before ``begin`` and just after ``end`` (epoch s):
        ``cpu_s`` (machine CPU-seconds), ``cores_busy`` (cpu_s / wall), ``cpu_busy_share``
        (of all cores), ``cpu_s_per_unit``; ``tree_cpu_s``, ``tree_cores`` and
        ``tree_cpu_s_per_unit`` the same for this process's tree, and ``tree_by_kind``: CPU-s per
        unit of each kind of process (``unsampled``: processes that lived less than a sample
        interval); ``host_loop_ms``: the median of the host-speed probes in the window (and
        ``host_probes``, how many). Empty when not sampled."""
        stamps = [s[0] for s in self.samples]
        probed = sorted(ms for t, ms in self.probes if begin <= t <= end)
        i = max(bisect.bisect_right(stamps, begin) - 1, 0)
        j = bisect.bisect_left(stamps, end)
        if not self.samples or j >= len(self.samples) or j <= i:
            return {}
        (t0, busy0, total0, tree0), (t1, busy1, total1, tree1) = self.samples[i], self.samples[j]
        cpu_s, tree_s, wall = (busy1 - busy0) / _TICK, (tree1 - tree0) / _TICK, max(t1 - t0, 1e-9)
        return {"cpu_s": round(cpu_s, 1), "cores_busy": round(cpu_s / wall, 2),
                "cpu_busy_share": round((busy1 - busy0) / max(total1 - total0, 1), 3),
                "cpu_s_per_unit": round(cpu_s / max(units, 1), 2),
                "tree_cpu_s": round(tree_s, 1), "tree_cores": round(tree_s / wall, 2),
                "tree_cpu_s_per_unit": round(tree_s / max(units, 1), 2),
                "tree_by_kind": self._by_kind(i, j, tree1 - tree0, units),
                **({"host_loop_ms": round(probed[len(probed) // 2], 2),
                    "host_probes": len(probed)} if probed else {})}

    def _by_kind(self, i: int, j: int, tree: int, units: int) -> dict[str, float]:
        start, last = self.owns[i], {}
        for owns in self.owns[i:j + 1]:
            last.update(owns)
        kinds: dict[str, int] = {}
        for pid, value in last.items():
            kind = self.kinds.get(pid, ("", "other"))[1]
            kinds[kind] = kinds.get(kind, 0) + value - start.get(pid, 0)
        kinds["unsampled"] = tree - sum(kinds.values())
        return {k: round(v / _TICK / max(units, 1), 3)
                for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]) if v}
