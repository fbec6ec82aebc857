"""Each worker of the test deployment in a mount namespace of its own (as root, with
``unshare``; tests/distributed/_cluster.py): looked at from inside each worker's namespace
(``nsenter -m``, the worker's own pid), its own ``FLEET_HOME`` (its mirror) is there and no
other worker's home, nor the coordinator's instance file or the daemon's directory, is
visible, not even as a path the worker made in its own namespace — while all of them exist on
this machine."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.distributed._cluster import Cluster

pytestmark = [pytest.mark.postgres, pytest.mark.sandbox, pytest.mark.slow,
              pytest.mark.timeout(300)]


def _sees(pid: int, path: str) -> bool:
    """Whether ``path`` exists in the mount namespace of process ``pid``."""
    proc = subprocess.run(["nsenter", "-t", str(pid), "-m", "--", "test", "-e", path],
                          capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode == 0


@pytest.mark.xdist_group("cluster-b")
def test_a_worker_cannot_see_another_workers_home(cluster: Cluster) -> None:
    if os.geteuid() != 0:
        pytest.fail("mount namespaces need root here (unshare --mount)")
    assert cluster.isolated
    # the coordinator's and the daemon's directories: neither their files nor a path a worker
    # made there itself (a step's logs written under the run worker's DAGSTER_HOME path did,
    # before deploy/dagster.yaml put them under the worker's own)
    others = [cluster.root / "coordinator", cluster.root / "daemon"]
    for name, worker in cluster.workers.items():
        assert worker.proc.poll() is None, worker.log.read_text()[-2000:]
        assert (worker.home / "mirrors").is_dir()  # what a worker sees of its own state
        assert _sees(worker.proc.pid, str(worker.home / "mirrors"))
        for other_name, other in cluster.workers.items():
            if other_name != name:
                assert other.home.is_dir()  # there on the machine, not in this namespace
                assert not _sees(worker.proc.pid, str(other.home)), (name, other_name)
        for path in others:
            assert path.exists() and not _sees(worker.proc.pid, str(path)), (name, path)
