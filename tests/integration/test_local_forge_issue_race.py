"""LocalGitForge files each finding once even when several processes file at the same moment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fleet.forge.local import ISSUE_FILED, LocalGitForge
from fleet.store import open_store

WORKER = r"""
import json, sys
from fleet.forge.local import LocalGitForge
from fleet.store import open_store
from fleet.types import Finding

url, start_file = sys.argv[1], sys.argv[2]
out = []
with open_store(url) as store:
    forge = LocalGitForge(store.changes, store.ledger)
    while not __import__("os").path.exists(start_file):
        pass
    for i in range(6):
        fp = f"fp{i}"
        finding = Finding(fp, "demo", "rule", f"m{i}.py::f", f"m{i}.py", 1, 0, 0, 1, "x()", "msg")
        ref = forge.file_issue(finding, f"issue {i}", "body")
        out.append([fp, ref.number, ref.created])
print(json.dumps(out))
"""


def test_concurrent_filers_agree_on_one_issue_per_fingerprint(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    open_store(url).close()  # migrate once before the race
    start = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, str(start)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    start.write_text("go")
    results = []
    for proc in procs:
        stdout, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        results.extend(json.loads(stdout))

    numbers: dict[str, set[int]] = {}
    created: dict[str, int] = {}
    for fingerprint, number, was_created in results:
        numbers.setdefault(fingerprint, set()).add(number)
        created[fingerprint] = created.get(fingerprint, 0) + int(was_created)
    assert all(len(ns) == 1 for ns in numbers.values()), numbers
    assert sorted(n for ns in numbers.values() for n in ns) == [1, 2, 3, 4, 5, 6]
    assert created == {f"fp{i}": 1 for i in range(6)}, created

    with open_store(url) as store:
        forge = LocalGitForge(store.changes, store.ledger)
        assert len({e.payload["fingerprint"] for e in store.ledger.events(kind=ISSUE_FILED)}) == 6
        assert store.ledger.verify() == []
        again = forge._issue_numbers()
        assert {fp: next(iter(ns)) for fp, ns in numbers.items()} == again
