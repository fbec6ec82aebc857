"""fleet_pipelines/compute_logs.py: a step's stdout and stderr land in Dagster's log files (the
UI's step logs), the output still reaches where the process wrote before (the mirror, a thread),
and no ``tail`` or watcher process is started."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from dagster import DagsterInstance, job, op

from fleet_pipelines.compute_logs import MirroredComputeLogManager, mirror_to_file
from fleet_pipelines.storage import ensure_instance_config
from tests._procs import children


def _drain(fd: int, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        while chunk := os.read(fd, 65536):
            into.append(chunk)
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_the_file_gets_the_output_of_the_process_and_its_children_and_so_does_the_stream(
        tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w", buffering=1)
    got: list[bytes] = []
    reader = _drain(read_end, got)
    path = tmp_path / "logs" / "step.out"
    with mirror_to_file(stream, str(path)):
        os.write(stream.fileno(), b"from the step\n")
        subprocess.run(["sh", "-c", "echo from a child"], stdout=stream.fileno(), check=True)
    os.write(stream.fileno(), b"after the capture\n")
    stream.close()
    reader.join(10)
    assert path.read_bytes() == b"from the step\nfrom a child\n"
    assert b"".join(got) == b"from the step\nfrom a child\nafter the capture\n"


def test_a_reader_that_went_away_loses_nothing_in_the_file(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads the process's output any more
    stream = os.fdopen(write_end, "w", buffering=1)
    path = tmp_path / "step.err"
    with mirror_to_file(stream, str(path)):
        os.write(stream.fileno(), b"kept\n")
    stream.close()
    assert path.read_bytes() == b"kept\n"


def test_the_embedded_instance_captures_a_step_with_no_tail_process(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    @op
    def noisy() -> None:
        seen.append([" ".join(argv) for _, argv in children()])
        print("printed by the step", flush=True)
        print("warned by the step", file=sys.stderr, flush=True)

    @job
    def noisy_job() -> None:
        noisy()

    home = tmp_path / "dagster"
    ensure_instance_config(home)
    with DagsterInstance.from_config(str(home)) as instance:
        manager = instance.compute_log_manager
        assert isinstance(manager, MirroredComputeLogManager)
        result = noisy_job.execute_in_process(instance=instance)
        assert result.success
        assert seen and not [c for c in seen[0] if "tail" in c or "watch_orphans" in c], seen
        out = err = ""
        for path in (home / "storage").rglob("*"):
            if path.suffix == ".out":
                out += path.read_text()
            elif path.suffix == ".err":
                err += path.read_text()
        assert "printed by the step" in out
        assert "warned by the step" in err
        assert list((home / "storage").rglob("*.complete"))
