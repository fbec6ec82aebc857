"""A process's start-up imports without the cyclic garbage collector.

Importing Dagster and the definitions makes ~180k objects that live as long as the process, and
the collector, on by default, runs over the growing heap again and again while they are made:
measured on 5 December 2026 (`import fleet_pipelines.definitions`, medians of 5, quiet), 1.01
CPU-s with the collector on, 0.77 with it off (0.82 with a young-generation threshold of 10,000).
:func:`heavy_imports` turns it off for the imports, then moves every object there is into the
permanent generation (``gc.freeze``): later collections do not walk the modules' objects again,
and a process that forks (the run launcher's fork server) keeps their pages shared with its
children, as the ``gc.freeze`` documentation advises. Cyclic garbage made while the collector
was off is frozen with them instead of freed: 704 objects after the definitions' imports (of
~183k), where a collection to free them would cost 0.12 CPU-s.

Freezing is for a process fleet owns: the ``fleet`` console script, the daemon and code server it
starts, the fork server, a celery worker (each calls :func:`own_process` first). A process that
embeds fleet (a test calling ``fleet_pipelines.cli.main``) gets the collector off during the
imports and on again, but its objects are never frozen: a frozen object is never collected, and
its own garbage of the moment would be frozen with them.

A process fleet owns may also end without freeing its heap (:func:`skip_teardown`, then
:func:`end_process`): after ``fleet index`` built the graph of Django (2,899 files, ~1.4M
objects), the interpreter's own teardown took 0.20-0.25 CPU-s of a 5-second process, serial after
everything else, measured on 6 December 2026. The exit handlers still run and the output is
flushed; only the freeing is left to the kernel, as a forked child of ``fleet.graph`` already
does.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["end_process", "heavy_imports", "own_process", "skip_teardown", "terminable"]

_owned = False
_skip_teardown = False


def own_process() -> None:
    """This process is fleet's own (its entry point is fleet's): :func:`heavy_imports` freezes,
    and SIGTERM ends it even when it was started with SIGINT ignored (:func:`terminable`)."""
    global _owned
    _owned = True
    terminable()


def terminable() -> None:
    """SIGTERM ends this process even if SIGINT is ignored, while SIGINT stays ignored.

    Dagster maps SIGTERM to whatever handles SIGINT (``setup_interrupt_handlers``: at the start of
    its daemon and code servers, and again whenever ``capture_interrupts`` restores SIGINT's
    handler, as each in-process execution does). A process started with SIGINT ignored — a
    background job of a non-interactive shell (``fleet sweep &`` in a script, ``nohup ... &``),
    an ignored signal being inherited through ``exec`` — then ignores SIGTERM too: seen on 5
    December 2026, ``fleet demo`` started so and ended by SIGTERM left its code server and gRPC
    server running (SIGTERM ignored in both: the parent-death SIGTERM they were given did
    nothing), and ``fleet sweep`` itself ignored SIGTERM after its first in-process run. Here a
    handler takes SIGINT's place that does nothing for SIGINT and raises ``KeyboardInterrupt``
    for any other signal it is given: the one Dagster maps SIGTERM to, as it does in a
    foreground process whose SIGINT raises ``KeyboardInterrupt``."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers belong to the main thread; its entry runs there
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt_unless_sigint)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:  # inherited from a Dagster parent
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _interrupt_unless_sigint(signo: int, _frame: FrameType | None) -> None:
    if signo != signal.SIGINT:
        raise KeyboardInterrupt


@contextmanager
def heavy_imports() -> Iterator[None]:
    """The body's imports with the cyclic collector off, then, in a process fleet owns, all
    objects frozen (``gc.freeze``); the collector on again if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _owned:
            gc.freeze()
        if was_on:
            gc.enable()


def skip_teardown() -> None:
    """The command running says nothing it made needs freeing at exit (its files are written
    and closed, its children waited for): :func:`end_process` may then skip the teardown."""
    global _skip_teardown
    _skip_teardown = True


def end_process(code: int) -> int:
    """End the process with ``code`` without the interpreter's teardown when it is fleet's own
    (:func:`own_process`), the command allowed it (:func:`skip_teardown`) and no other thread is
    alive (the interpreter would wait for it): the exit handlers run first (``atexit``: logging's
    flush, the finalizers of temporary directories), then stdout and stderr are flushed, then
    ``os._exit``. Otherwise, or when a flush fails (a closed pipe: Python's own exit reports
    it), returns ``code`` for the caller to exit with as usual."""
    if not (_owned and _skip_teardown) or threading.active_count() != 1:
        return code
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return code
    os._exit(code)
