"""Step logs (stdout/stderr) captured to files as Dagster's ``LocalComputeLogManager`` does,
mirrored to the process's own output by a thread instead of by processes.

Dagster's local manager redirects a step's stdout and stderr to files under ``base_dir`` (what
the UI shows as the step's logs) and, to keep the output visible where the process writes it,
starts a ``tail -F`` of each file and a Python watcher that kills the ``tail`` if the process
dies: four processes per captured step or run, each watcher a Python interpreter start (0.02-0.06
CPU-s each, 22 of them in one in-process sweep of the example repository, measured with process
accounting on 5 Dec 2026), and a cleanup that can wait out ``subprocess.communicate``'s 30 s
timeout per stream (tests/pipelines/test_dispatch_run_cleanup.py). Here the same files are
written the same way (the streams' file descriptors redirected to them, so the output of child
processes is captured too) and a thread copies what is appended to the stream's descriptor as
it was before the redirect, as ``tail -F`` did, reading to the end when the capture ends. Nothing
outlives the process: the thread is a daemon thread.

Selected by ``dagster.yaml``'s ``compute_logs`` (``fleet_pipelines.storage.instance_config``,
deploy/dagster.yaml); the files, their names and the completion marker are the local manager's,
so the webserver reads them unchanged.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import IO, Any

from assets._dagster_private import (
    IO_TYPE_EXTENSION,
    CapturedLogContext,
    ComputeIOType,
    ConfigurableClassData,
    LocalComputeLogManager,
    ensure_file,
    redirect_to_file,
    touch_file,
)

__all__ = ["MirroredComputeLogManager", "mirror_to_file"]

POLL_S = 0.1


def _fileno(stream: IO[Any] | Any) -> int | None:
    try:
        fd = stream.fileno()
    except (AttributeError, io.UnsupportedOperation, ValueError):
        return None
    return fd if isinstance(fd, int) else None


def _copy(path: str, out: int, stop: threading.Event) -> None:
    """Copy ``path`` from its start to descriptor ``out`` as it grows, until ``stop`` is set and
    everything written before it has been copied."""
    with open(path, "rb") as source:
        while True:
            chunk = source.read(65536)
            if chunk:
                view = memoryview(chunk)
                try:
                    while view:
                        view = view[os.write(out, view):]
                except OSError:  # the reader went away (a closed pipe): the file still has it
                    return
                continue
            if stop.is_set():
                return
            stop.wait(POLL_S)


@contextmanager
def mirror_to_file(stream: IO[Any], path: str) -> Iterator[None]:
    """``stream``'s descriptor redirected to ``path`` (appended) while the body runs, and what
    lands in ``path`` copied to where the descriptor pointed before. A stream without a
    descriptor (a test's captured ``sys.stdout``) is left as it is, as Dagster leaves it."""
    ensure_file(path)
    fd = _fileno(stream)
    if fd is None:
        with redirect_to_file(stream, path):
            yield
        return
    with contextlib.suppress(OSError, ValueError):
        stream.flush()
    original = os.dup(fd)
    stop = threading.Event()
    copier = threading.Thread(target=_copy, args=(path, original, stop), daemon=True,
                              name=f"compute-log-mirror-{os.path.basename(path)}")
    copier.start()
    try:
        with redirect_to_file(stream, path):
            yield
    finally:
        stop.set()
        copier.join(10)
        if not copier.is_alive():  # (a reader that stopped reading: it keeps its descriptor)
            os.close(original)


class MirroredComputeLogManager(LocalComputeLogManager):
    """:class:`LocalComputeLogManager` (the same configuration, files and reads) whose mirror
    of captured output is a thread, not ``tail`` processes."""

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None,
                          config_value: Mapping[str, Any]) -> MirroredComputeLogManager:
        return cls(inst_data=inst_data, **config_value)  # (the local one names its own class)

    @contextmanager
    def capture_logs(self, log_key: Sequence[str]) -> Generator[CapturedLogContext, None, None]:
        outpath = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDOUT])
        errpath = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDERR])
        with mirror_to_file(sys.stdout, outpath), mirror_to_file(sys.stderr, errpath):
            yield CapturedLogContext(log_key)
        # as the local manager: the marker that the capture is complete
        touch_file(self.complete_artifact_path(log_key))
